"""A ``supersedes:`` id that names no document of the tenant is reported at ingest, naming the file and
the id, on both backends and in the command line's report; a known one is not."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.cli import app
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.store import Store
from evidencedesk.store.contract import StoreProtocol
from tests.support.paths import KESTREL_DOCS


def _doc(ident: str, text: str, *, supersedes: str = "", tenant: str = "") -> str:
    extra = (f"supersedes: {supersedes}\n" if supersedes else "") + (f"tenant: {tenant}\n" if tenant else "")
    return f"---\nid: {ident}\ntitle: {ident}\n{extra}---\n# {ident}\n\n{text}\n"


def _folder(root: Path) -> Path:
    folder = root / "docs"
    folder.mkdir()
    (folder / "returns-v1.md").write_text(_doc("returns-v1", "Returns within 60 days.", supersedes=""), "utf-8")
    (folder / "returns-v2.md").write_text(
        _doc("returns-v2", "Returns within 30 days.", supersedes="returns-v1"), "utf-8"
    )
    (folder / "hours.md").write_text(_doc("hours", "Open at nine.", supersedes="hours-2019"), "utf-8")
    (folder / "acme.md").write_text(_doc("acme-terms", "Terms.", supersedes="returns-v1", tenant="acme"), "utf-8")
    return folder


def test_an_unknown_supersedes_is_reported_with_its_file(each_store: StoreProtocol, tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    report = ingest_folder(each_store, folder, ChunkingConfig())
    # returns-v1 is a document of the default tenant; acme's document names it, but within acme it is unknown
    assert report.unknown_supersedes == [
        {"path": "acme.md", "doc_id": "acme:acme-terms", "supersedes": "returns-v1"},
        {"path": "hours.md", "doc_id": "hours", "supersedes": "hours-2019"},
    ]
    assert report.to_dict()["unknown_supersedes"] == report.unknown_supersedes
    # reported again on the next run while the files still say so (the documents are unchanged)
    again = ingest_folder(each_store, folder, ChunkingConfig())
    assert sorted(again.unchanged) == sorted(report.added) and len(again.unknown_supersedes) == 2
    # the superseded document arrives: that line of the report goes away
    (folder / "hours-2019.md").write_text(_doc("hours-2019", "Open at ten."), "utf-8")
    assert [u["doc_id"] for u in ingest_folder(each_store, folder, ChunkingConfig()).unknown_supersedes] == [
        "acme:acme-terms"
    ]
    # a document that supersedes one removed in this run is reported
    (folder / "returns-v1.md").unlink()
    last = ingest_folder(each_store, folder, ChunkingConfig())
    assert "returns-v1" in last.removed
    assert {u["doc_id"] for u in last.unknown_supersedes} == {"acme:acme-terms", "returns-v2"}


def test_the_example_corpus_has_none_and_its_json_has_no_such_key(tmp_path: Path) -> None:
    with Store(tmp_path / "store") as store:
        report = ingest_folder(store, KESTREL_DOCS, ChunkingConfig())
    assert report.unknown_supersedes == [] and "unknown_supersedes" not in report.to_dict()


def test_the_command_line_names_the_file_and_the_id(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    result = CliRunner().invoke(app, ["ingest", str(folder), "--store", str(tmp_path / "store")])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "unknown supersedes hours.md: supersedes 'hours-2019', which names no document in the store" in text
