"""Progress of ingest and of the first embedding; embeddings computed at ingest time so the first query does not pay."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from evidencedesk import Desk
from evidencedesk.cli import app
from evidencedesk.config import Settings
from evidencedesk.desk import EMBEDDINGS_FILE
from evidencedesk.index.embedding_cache import EmbeddingCache
from evidencedesk.progress import Meter


def _folder(tmp_path: Path, n: int = 6) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(n):
        (folder / f"note-{i}.md").write_text(f"# Note {i}\n\nRoom {i} opens at {8 + i} o'clock.\n", encoding="utf-8")
    return folder


class StepClock:
    """A clock that reads what the test sets."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_meter_reports_rate_and_time_left() -> None:
    calls: list[tuple[int, int, str]] = []
    clock = StepClock(100.0)
    meter = Meter(10, callback=lambda d, t, label: calls.append((d, t, label)), clock=clock)
    assert meter.started == 100.0
    clock.now = 102.0
    assert meter.rate == 0.0 and meter.seconds_left is None  # no step yet
    meter.update(4, label="a.md")
    assert calls == [(4, 10, "a.md")]
    assert meter.seconds == 2.0 and meter.rate == 2.0  # 4 steps in 2 s
    assert meter.seconds_left == 3.0  # 6 more at 2 a second
    assert meter.summary() == {"count": 4, "total": 10, "seconds": 2.0, "per_second": 2.0}
    meter.update(10)
    clock.now = 104.0
    assert meter.rate == 2.5 and meter.seconds_left == 0.0
    assert meter.summary()["seconds"] == 4.0


def test_meter_with_an_unknown_total_has_no_time_left() -> None:
    clock = StepClock(0.0)
    meter = Meter(clock=clock)
    clock.now = 1.0
    meter.update(3)
    assert meter.rate == 3.0 and meter.seconds_left is None
    meter.update(5, total=20)
    assert meter.seconds_left == 3.0  # 5 steps in 1 s, 15 more to go


def test_ingest_reports_progress_and_embed_fills_the_cache(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    files: list[tuple[int, int]] = []
    chunks_done: list[tuple[int, int]] = []
    with Desk(tmp_path / "store", Settings()) as desk:
        report = desk.ingest(
            folder,
            embed=True,
            progress=lambda d, t, _: files.append((d, t)),
            embed_progress=lambda d, t, _: chunks_done.append((d, t)),
        )
        n = report.n_chunks
        assert files[-1] == (6, 6) and report.progress.files is not None and report.progress.files.count == 6
        assert chunks_done[-1] == (n, n) and report.progress.embedding is not None
        assert report.progress.embedding.count == n
        with EmbeddingCache(tmp_path / "store" / EMBEDDINGS_FILE) as cache:
            assert cache.count() == n
        # the first hybrid query finds every vector in the cache: nothing left to embed
        assert desk.embed().count == 0
        assert desk.search("When does room 3 open?", method="hybrid")[0].chunk.doc_id == "note-3"


def test_cli_ingest_embed_json_report(tmp_path: Path) -> None:
    folder = _folder(tmp_path, 3)
    store = tmp_path / "store"
    result = CliRunner().invoke(app, ["ingest", str(folder), "--store", str(store), "--embed", "--json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["progress"]["files"]["count"] == 3
    assert report["progress"]["embedding"]["count"] == report["n_chunks"] == 3
    again = CliRunner().invoke(app, ["ingest", str(folder), "--store", str(store), "--embed", "--json"])
    assert json.loads(again.stdout)["progress"]["embedding"]["count"] == 0
