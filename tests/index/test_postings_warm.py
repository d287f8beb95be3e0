"""A process that has answered many BM25 queries by NumPy loads the compiled pass in the background;
searches switch to it when it is loaded, with the same rows and scores. A one-shot search never loads it."""

from __future__ import annotations

import subprocess
import sys

_SCRIPT = """
import numpy as np
from evidencedesk.index import postings_kernel as pk
from evidencedesk.index.bm25 import BM25Index

pk.WARM_AFTER = 3
docs = [["router", "reset"], ["router", "manual", "router"], ["reset", "guide"], ["other"]] * 1000
index = BM25Index(docs)
tie = np.arange(len(docs))
queries = (["router"], ["router", "reset"], ["guide", "other"])
first = index.top(queries[0], 3, tie)
assert pk._loader is None and not pk.kernel_loaded()  # neither a large index nor one query loads it
before = [index.top(q, 3, tie) for q in queries]
assert pk._loader is not None  # the third query answered by NumPy started the load
assert pk.wait_loaded(600)
after = [index.top(q, 3, tie) for q in queries]
assert all(a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist() for a, b in zip(before, after))
print("ok")
"""


def test_the_compiled_pass_loads_in_the_background_after_many_queries() -> None:
    # in a fresh process: another test may have loaded the compiled pass in this one
    out = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
