"""`evidencedesk ingest`, `docs` and `chunks` through the real Typer app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evidencedesk.cli import app

KESTREL = Path(__file__).resolve().parents[2] / "examples" / "kestrel" / "docs"
runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The bundled example corpus when present, else a small stand-in."""
    if KESTREL.is_dir() and any(KESTREL.iterdir()):
        return KESTREL
    f = tmp_path / "docs"
    f.mkdir()
    (f / "returns.md").write_text("---\nid: kc-returns\n---\n# Returns\n\nThirty days.\n", encoding="utf-8")
    (f / "hours.txt").write_text("Open nine to five.\n", encoding="utf-8")
    return f


def supported(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.suffix in {".md", ".txt", ".html", ".pdf", ".docx", ".eml"}]


def test_ingest_json_report_then_unchanged(folder: Path, tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    code, out, err = run("ingest", str(folder), "--store", store, "--json")
    assert code == 0 and err == ""  # no progress bar with --json
    report = json.loads(out)
    assert set(report) == {
        "added", "updated", "unchanged", "removed", "failed", "skipped",
        "build_id", "chunking", "n_documents", "n_chunks", "progress",
    }  # fmt: skip
    assert report["progress"]["files"]["count"] == len(supported(folder))
    assert report["failed"] == [] and report["build_id"] == 1
    assert len(report["added"]) == report["n_documents"] == len(supported(folder))
    assert report["n_chunks"] >= report["n_documents"]
    assert report["chunking"]["name"] == "structure" and len(report["chunking"]["hash"]) == 16

    code, out, _ = run("ingest", str(folder), "--store", store, "--json")
    again = json.loads(out)
    assert code == 0 and sorted(again["unchanged"]) == sorted(report["added"]) and again["build_id"] == 2

    code, out, _ = run("ingest", str(folder), "--store", store, "--json", "--chunker", "fixed", "--size", "300")
    rechunked = json.loads(out)
    assert code == 0 and sorted(rechunked["updated"]) == sorted(report["added"])
    assert rechunked["chunking"]["hash"] != report["chunking"]["hash"] and rechunked["chunking"]["size"] == 300


def test_docs_and_chunks_json(folder: Path, tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    _, out, _ = run("ingest", str(folder), "--store", store, "--json")
    report = json.loads(out)
    code, out, _ = run("docs", "--store", store, "--json")
    docs = json.loads(out)
    assert code == 0 and sorted(d["id"] for d in docs) == sorted(report["added"])
    for d in docs:
        assert {"id", "title", "path", "status", "audience", "lang", "valid_from", "valid_to", "n_chunks"} <= set(d)
        assert d["n_chunks"] >= 1
    assert sum(d["n_chunks"] for d in docs) == report["n_chunks"]

    target = docs[0]
    code, out, _ = run("chunks", target["id"], "--store", store, "--json")
    chunks = json.loads(out)
    assert code == 0 and len(chunks) == target["n_chunks"]
    assert [c["id"] for c in chunks] == [f"{target['id']}:c{n}" for n in range(len(chunks))]
    source = (folder / target["path"]).read_text(encoding="utf-8")
    assert all(c["source"] == target["path"] and c["text"] for c in chunks)
    if target["path"].endswith((".md", ".txt")):  # chunk text is the source text, whole
        assert all(c["text"] in source for c in chunks if c["kind"] == "text")


def test_tables_show_counts_and_each_failure(tmp_path: Path) -> None:
    f = tmp_path / "mixed"
    f.mkdir()
    (f / "ok.md").write_text("# Fine\n\nA good file.\n", encoding="utf-8")
    (f / "bad.md").write_text("---\nvalid_from: tomorrow\n---\nbody\n", encoding="utf-8")
    store = str(tmp_path / "store")
    code, out, _ = run("ingest", str(f), "--store", store)
    assert code == 0
    assert "added" in out and "failed" in out
    assert "bad.md: unknown date format for valid_from: 'tomorrow'" in " ".join(out.split())
    code, out, _ = run("docs", "--store", store)
    assert code == 0 and "ok" in out and "Fine" in out
    code, out, _ = run("chunks", "ok", "--store", store)
    assert code == 0 and "ok:c0" in out and "A good file." in out


def test_exit_codes(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    f = tmp_path / "f"
    f.mkdir()
    (f / "a.md").write_text("# A\n\ntext\n", encoding="utf-8")
    code, _, err = run("ingest", str(tmp_path / "nope"), "--store", store)
    assert code == 1 and "no such folder" in err
    code, _, err = run("ingest", str(f / "a.md"), "--store", store)
    assert code == 1 and "not a folder" in err
    for bad in (
        ["--size", "0"],
        ["--chunker", "magic"],
        ["--unit", "lines"],
        ["--overlap", "200"],
        ["--max-bytes", "0"],
    ):
        code, _, err = run("ingest", str(f), "--store", store, *bad)
        assert code == 2, bad
        assert bad[0].lstrip("-").split("-")[0] in err.lower()
    (tmp_path / "file").write_text("x")
    code, _, err = run("ingest", str(f), "--store", str(tmp_path / "file"))
    assert code == 1 and "not a folder" in err
    code, _, err = run("docs", "--store", str(tmp_path / "empty"))
    assert code == 1 and "no store" in err
    assert not (tmp_path / "empty").exists()  # reading never creates a store
    assert run("ingest", str(f), "--store", store, "--json")[0] == 0
    code, _, err = run("chunks", "missing-doc", "--store", store)
    assert code == 1 and "no document with id 'missing-doc'" in err
