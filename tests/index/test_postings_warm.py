"""The compiled BM25 pass is loaded in the background once a process builds a large index or has
answered many queries by NumPy; searches switch to it when it is loaded, with the same results."""

from __future__ import annotations

import subprocess
import sys

import pytest

_SCRIPT = """
import numpy as np
from evidencedesk.index import postings_kernel as pk
from evidencedesk.index.bm25 import BM25Index

pk.WARM_AFTER, pk.WARM_ROWS = 3, 50
docs = [["router", "reset"], ["router", "manual", "router"], ["reset", "guide"], ["other"]]
rows = 50 if {large} else 4
index = BM25Index((docs * 13)[:rows])
tie = np.arange(rows)
assert not pk.kernel_loaded()
started = pk._loader is not None
before = [index.top(q, 3, tie) for q in (["router"], ["router", "reset"], ["guide", "other"])]
assert pk._loader is not None
assert pk.wait_loaded(600)
after = [index.top(q, 3, tie) for q in (["router"], ["router", "reset"], ["guide", "other"])]
assert all(a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist() for a, b in zip(before, after))
print(started)
"""


@pytest.mark.parametrize("large", [False, True])
def test_the_compiled_pass_loads_in_the_background(large: bool) -> None:
    # in a fresh process: another test may have loaded the compiled pass in this one
    out = subprocess.run([sys.executable, "-c", _SCRIPT.format(large=large)], capture_output=True, text=True,
                         timeout=900)  # fmt: skip
    assert out.returncode == 0, out.stderr
    # a large index starts loading as it is built; a small one after WARM_AFTER queries answered by NumPy
    assert out.stdout.strip() == str(large)
