"""SIGKILL an ingest (and the dense embedding cache it feeds) at random moments, then check the store.

After every kill the store opens, passes SQLite's integrity check, holds every document either fully
at its old version or fully at its new one, and answers searches (lexical, and dense through the
embedding cache in the store folder). After all trials a last ingest equals a clean ingest.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.retrieval.factory import make_searcher
from evidencedesk.store import DB_NAME, Store
from tests.support.reliability import COUNTS, chunk_sets, snapshot, write_versioned

N_DOCS = 30
TRIALS = 20  # every fifth one with the dense embedding cache being written after the ingest
CONFIG = ChunkingConfig(name="structure", size=60)
EMBEDDINGS = "embeddings.sqlite"

CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from evidencedesk.chunking.config import ChunkingConfig
    from evidencedesk.ingest.sync import ingest_folder
    from evidencedesk.store import Store

    store, folder, dense = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
    print("ready", flush=True)
    start = time.monotonic()
    with Store(store) as s:
        ingest_folder(s, Path(folder), ChunkingConfig(name="structure", size=60))
        chunks = s.chunks()
    print("committed", time.monotonic() - start, flush=True)
    if dense:
        from evidencedesk.retrieval.factory import make_searcher

        make_searcher("dense", chunks, cache_path=Path(store) / "embeddings.sqlite")
    print("done", flush=True)
    """
)


def run_child(store: Path, folder: Path, dense: bool, kill_after: float | None) -> tuple[float, list[str]]:
    """Run one ingest child; SIGKILL it ``kill_after`` seconds after it is ready (None: let it finish).

    Returns the seconds from ready to the end, and the lines it printed."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(store), str(folder), "1" if dense else "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    lines = [child.stdout.readline().strip()]
    assert lines == ["ready"], lines
    start = time.monotonic()
    if kill_after is None:
        out, _ = child.communicate(timeout=300)
        assert child.returncode == 0
    else:
        try:
            child.wait(timeout=kill_after)
        except subprocess.TimeoutExpired:
            os.kill(child.pid, signal.SIGKILL)
        out, _ = child.communicate(timeout=60)
    return time.monotonic() - start, lines + out.split()


def reference(tmp: Path, folder: Path) -> tuple[Path, dict[str, set[tuple[str, str]]]]:
    store = tmp / f"clean-{folder.name}"
    with Store(store) as s:
        ingest_folder(s, folder, CONFIG)
    return store, chunk_sets(store)


def check_store(store: Path, old: dict[str, set[tuple[str, str]]], new: dict[str, set[tuple[str, str]]]) -> str:
    """Verify the store after a kill; returns which version it holds ("old" or "new")."""
    conn = sqlite3.connect(store / DB_NAME)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    now = chunk_sets(store)
    at: set[str] = set()
    for doc_id in set(old) | set(new):
        held = now.get(doc_id, set())
        states = {name for name, ref in (("old", old), ("new", new)) if held == ref.get(doc_id, set())}
        assert states, f"{doc_id}: neither fully old nor fully new ({len(held)} chunks)"
        if len(states) == 1:
            at |= states
    assert set(now) <= set(old) | set(new)
    assert len(at) == 1, f"documents at different versions after one killed ingest: {sorted(at)}"
    with Store(store) as s:
        chunks = s.chunks()
    assert make_searcher("bm25", chunks).search("refunds policy", 5)
    return at.pop()


@pytest.mark.slow
def test_sigkill_at_random_points_never_tears_a_document(tmp_path: Path) -> None:
    old_folder, new_folder = tmp_path / "old", tmp_path / "new"
    write_versioned(old_folder, 1, N_DOCS)
    write_versioned(new_folder, 2, N_DOCS + 1)  # one document more ...
    (new_folder / "doc-000.md").unlink()  # ... one less ...
    for i in range(1, 10):  # ... and some unchanged
        (new_folder / f"doc-{i:03d}.md").write_text((old_folder / f"doc-{i:03d}.md").read_text())
    old_store, old = reference(tmp_path, old_folder)
    new_store, new = reference(tmp_path, new_folder)
    assert old != new

    store = tmp_path / "store"
    with Store(store) as s:
        ingest_folder(s, old_folder, CONFIG)
    # How long a run takes here until its commit, and in all (with the dense cache written after the commit).
    timing = {dense: run_child(tmp_path / f"timing-{dense}", old_folder, dense, None) for dense in (False, True)}
    commit = float(timing[False][1][timing[False][1].index("committed") + 1])
    span = timing[True][0]
    rng = random.Random(20261130)
    state, outcomes = "old", {"committed": 0, "killed before commit": 0}
    for trial in range(TRIALS):
        dense = trial % 5 == 4
        target = new_folder if state == "old" else old_folder
        # Plain trials kill anywhere up to just past the commit; dense ones anywhere in the cache writes.
        kill_after = rng.uniform(commit, span) if dense else rng.uniform(0, commit * 1.1)
        _, lines = run_child(store, target, dense, kill_after)
        outcomes["committed" if "committed" in lines else "killed before commit"] += 1
        state = check_store(store, old, new)
        assert state == ("new" if target == new_folder else "old") or "committed" not in lines
        if dense:  # the embedding cache a kill may have cut short still opens and serves
            with Store(store) as s:
                searcher = make_searcher("dense", s.chunks(), cache_path=store / EMBEDDINGS)
            assert searcher.search("refunds", 3)
            searcher.close() if hasattr(searcher, "close") else None
        COUNTS["crash: SIGKILL trials"] += 1
        COUNTS["crash: SIGKILL trials with the dense cache"] += dense
    for name, n in outcomes.items():
        COUNTS[f"crash: trials {name}"] += n
    assert outcomes["killed before commit"] >= 3, outcomes  # most plain kills land inside the transaction

    with Store(store) as s:  # nothing lost: a last ingest equals a clean ingest of the same files
        ingest_folder(s, new_folder, CONFIG)
    assert snapshot(store) == snapshot(new_store)
    assert old_store.exists()
