"""A SIGKILL in the middle of an ingest leaves the previous content exactly as it was."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.store import DB_NAME, Store

N_FILES = 300
CONFIG = ChunkingConfig(name="structure", size=60)

# Runs an ingest in a child process; after each file it writes how many files it has processed and
# dawdles a little. Progress is reported inside the transaction, before COMMIT, and the child waits
# after the last file, so a kill once the marker is seen always lands inside the open transaction.
CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from evidencedesk.chunking.config import ChunkingConfig
    from evidencedesk.ingest.sync import ingest_folder
    from evidencedesk.store import Store

    store, folder, marker = sys.argv[1:4]

    def progress(done, total, path):
        tmp = Path(marker + ".tmp")
        tmp.write_text(str(done))
        tmp.replace(marker)
        time.sleep(60 if done == total else 0.001)  # after the last file, hold the transaction open

    with Store(store) as s:
        ingest_folder(s, Path(folder), ChunkingConfig(name="structure", size=60), progress=progress)
    Path(marker + ".done").write_text("committed")
    """
)


def write_corpus(folder: Path, edition: int) -> None:
    folder.mkdir(exist_ok=True)
    for i in range(N_FILES):
        sections = "\n\n".join(
            f"## Part {j}\n\n" + " ".join(f"Edition {edition} policy {i} part {j} sentence {k}." for k in range(8))
            for j in range(4)
        )
        text = f"---\nid: doc-{i:03d}\nstatus: current\nversion: {edition}\n---\n\n# Policy {i}\n\n{sections}\n"
        (folder / f"doc-{i:03d}.md").write_text(text, encoding="utf-8")


def snapshot(path: Path) -> dict[str, Any]:
    with Store(path) as s:
        return {
            "documents": [d.to_dict() for d in s.documents()],
            "chunks": [c.to_dict() for c in s.chunks()],
            "builds": [b.to_dict() for b in s.builds()],
        }


def kill_midway(store: Path, folder: Path, marker: Path, after: int, before_kill: Callable[[], object]) -> int:
    """Start the child, call ``before_kill`` once it has processed ``after`` files, then SIGKILL it.

    Returns how many files the child had processed."""
    for p in (marker, Path(f"{marker}.done")):
        p.unlink(missing_ok=True)
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(store), str(folder), str(marker)])
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and child.poll() is None:
            if marker.exists() and int(marker.read_text() or 0) >= after:
                break
            time.sleep(0.002)
        if child.poll() is None:
            before_kill()
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    return int(marker.read_text() or 0) if marker.exists() else 0


@pytest.mark.slow
def test_sigkill_mid_ingest_leaves_previous_content_intact(tmp_path: Path) -> None:
    folder, store, marker = tmp_path / "corpus", tmp_path / "store", tmp_path / "progress"
    write_corpus(folder, edition=1)
    with Store(store) as s:
        first = ingest_folder(s, folder, CONFIG)
    assert first.n_documents == N_FILES
    before = snapshot(store)
    assert all("Edition 1" in c["text"] or c["text"].startswith("#") for c in before["chunks"])

    write_corpus(folder, edition=2)
    (folder / "doc-000.md").unlink()
    n_now = N_FILES - 1
    rng = random.Random(7)
    # Once part way, once with every file written but not committed (the most uncommitted data).
    for after in (rng.randint(5, n_now // 2), n_now):
        seen: list[dict[str, Any]] = []  # what a reader sees while the ingest transaction is open
        done = kill_midway(store, folder, marker, after, lambda seen=seen: seen.append(snapshot(store)))
        assert done >= after, "the child died before reaching the kill point"
        assert not Path(f"{marker}.done").exists()
        assert seen == [before]
        assert snapshot(store) == before
        conn = sqlite3.connect(store / DB_NAME)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            conn.close()

    with Store(store) as s:  # the store is not left locked, and a full run then applies every change
        report = ingest_folder(s, folder, CONFIG)
        assert report.removed == ["doc-000"] and len(report.updated) == n_now
        assert [b.id for b in s.builds()] == [first.build_id, first.build_id + 1]
        assert all("Edition 1" not in c.text for c in s.chunks())
