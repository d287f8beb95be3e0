"""Queries from threads and processes while ingests alternate two versions of a corpus.

Every chunk of version N carries the word ``vmarkN``. A torn read would show up as one listing or one
result list holding two markers. No reader may fail, every ingest must be recorded as a build, and the
final store must equal a clean ingest of the last version.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.config import Settings
from evidencedesk.desk import Desk
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.server.app import create_app
from evidencedesk.server.settings import no_keys_file
from evidencedesk.server.state import ServiceState
from evidencedesk.store import Store
from tests.support.reliability import COUNTS, marker_of, snapshot, write_versioned

N_DOCS = 30
INGESTS = 8  # at least; more while a reader thread has fewer than MIN_READS reads
MAX_INGESTS = 60
MIN_READS = 10
N_PROCESSES = 2

# A reader process: lists chunks and searches until the stop file appears; prints its counts as JSON.
READER = textwrap.dedent(
    """
    import json, os, sys
    from pathlib import Path
    from evidencedesk.desk import Desk
    from evidencedesk.store import Store

    store, stop = Path(sys.argv[1]), Path(sys.argv[2])

    def markers(texts):
        return {w.strip(".,:;#") for t in texts for w in t.split() if w.startswith("vmark")}

    reads, torn = 0, []
    with Store(store) as s, Desk(store) as desk:
        print("ready", flush=True)
        while not stop.exists() or reads < 5:
            m = markers(c.text for c in s.chunks())
            hits = desk.search("refunds policy rule", k=20, method="bm25")
            h = markers(c.chunk.text for c in hits)
            reads += 2
            tmp = stop.with_name(f"reads-{os.getpid()}.tmp")
            tmp.write_text(str(reads))
            tmp.replace(stop.with_name(f"reads-{os.getpid()}"))
            if len(m) != 1 or len(h) != 1:
                torn.append([sorted(m), sorted(h)])
    print(json.dumps({"reads": reads, "torn": torn}))
    """
)


def process_reads(folder: Path) -> list[int]:
    """How many reads each reader process has reported so far."""
    counts = [int(p.read_text() or 0) for p in folder.glob("reads-*") if not p.name.endswith(".tmp")]
    return counts + [0] * (N_PROCESSES - len(counts))


def one_version(texts: list[str]) -> str:
    found = {marker_of(t) for t in texts} - {None}
    assert len(found) == 1, f"one read saw versions {sorted(m for m in found if m)}"
    return found.pop()  # type: ignore[return-value]


@pytest.mark.slow
def test_reads_during_ingests_see_one_build_and_no_write_is_lost(tmp_path: Path) -> None:
    folders = [tmp_path / "v1", tmp_path / "v2"]
    for version, folder in enumerate(folders, start=1):
        write_versioned(folder, version, N_DOCS)
    store, stop = tmp_path / "store", tmp_path / "stop"
    config = ChunkingConfig(name="structure", size=60)
    with Store(store) as s:
        ingest_folder(s, folders[0], config)

    procs = [
        subprocess.Popen([sys.executable, "-c", READER, str(store), str(stop)], stdout=subprocess.PIPE, text=True)
        for _ in range(N_PROCESSES)
    ]
    for p in procs:  # start writing once every reader process is reading
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    done = threading.Event()
    errors: list[BaseException] = []
    reads: Counter[str] = Counter()
    app = create_app(ServiceState(store, Settings(), no_keys_file()))  # as `serve` without a keys file

    def loop(name: str, read: Callable[[], list[str]]) -> None:
        try:
            while not done.is_set():
                one_version(read())
                reads[name] += 1
                COUNTS[f"concurrency: reads ({name})"] += 1
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    with Store(store) as reader_store, Desk(store, settings=Settings()) as desk, TestClient(app) as client:

        def service_search() -> list[str]:
            r = client.post("/search", json={"query": "refunds policy rule", "k": 20, "method": "bm25"})
            assert r.status_code == 200, r.text
            return [hit["text"] for hit in r.json()]

        readers = {
            "store.chunks thread": lambda: [c.text for c in reader_store.chunks()],
            "desk.search thread": lambda: [c.chunk.text for c in desk.search("refunds rule", k=20, method="bm25")],
            "service /search thread": service_search,
        }
        threads = [threading.Thread(target=loop, args=item) for item in readers.items()]
        for t in threads:
            t.start()
        try:
            with Store(store) as writer:
                n = 0
                while n < INGESTS or (
                    n < MAX_INGESTS and min(process_reads(tmp_path) + [reads[r] for r in readers]) < MIN_READS
                ):
                    report = ingest_folder(writer, folders[(n + 1) % 2], config)
                    assert len(report.updated) == N_DOCS and not report.failed
                    n += 1
                COUNTS["concurrency: ingests while reading"] += n
        finally:
            done.set()
            stop.write_text("stop")
            for t in threads:
                t.join(timeout=120)
            outputs = [p.communicate(timeout=120)[0] for p in procs]
    assert not errors, errors
    for p, out in zip(procs, outputs, strict=True):
        assert p.returncode == 0
        result = json.loads(out)
        assert result["torn"] == [], result["torn"][:3]
        COUNTS["concurrency: reads (reader processes)"] += result["reads"]

    assert min(reads.values()) >= 1 and len(reads) == len(readers)
    last = folders[n % 2]
    with Store(store) as s:
        builds = s.builds()
        assert len(builds) == n + 1  # no lost write: every ingest is a build
        assert one_version([c.text for c in s.chunks()]) == f"vmark{n % 2 + 1}"
    clean = tmp_path / "clean"
    with Store(clean) as s:
        ingest_folder(s, last, config)
    assert snapshot(store) == snapshot(clean)
