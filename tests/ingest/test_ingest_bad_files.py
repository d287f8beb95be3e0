"""A folder of broken files: each fails once with a clear reason; the good files are stored."""

from collections.abc import Callable
from pathlib import Path

import pytest

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.ingest import parse_folder
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.store import Store

GOOD_MD = "---\nid: good-md\ntitle: Good\nvalid_from: 2025-01-01\n---\n\n# Good\n\nReturns within 30 days.\n"


@pytest.fixture
def mixed(tmp_path: Path, text_pdf: Callable[..., bytes], drawing_pdf: bytes) -> Path:
    folder = tmp_path / "mixed"
    (folder / "sub").mkdir(parents=True)
    (folder / "good.md").write_text(GOOD_MD, encoding="utf-8")
    (folder / "sub" / "page.html").write_text(
        "<html><head><title>Hours</title></head><body><h1>Hours</h1><p>Open 9 to 5.</p></body></html>",
        encoding="utf-8",
    )
    (folder / "manual.pdf").write_bytes(text_pdf(["Brake pads last 2000 km."], title="Manual"))
    (folder / "plain.txt").write_text("Plain text is fine.\n", encoding="utf-8")
    (folder / "binary.txt").write_bytes(b"MZ\x90\x00\x03\x00\x00\x00")
    (folder / "latin1.md").write_bytes("Caf\u00e9 cr\u00e8me\n".encode("latin-1"))
    (folder / "broken-yaml.md").write_text("---\nid: b\ntitle: [oops\nstatus: current\n---\nbody\n", encoding="utf-8")
    (folder / "empty.md").write_bytes(b"")
    (folder / "scan.pdf").write_bytes(drawing_pdf)
    (folder / "huge.txt").write_text("word " * 1000, encoding="utf-8")  # 5000 bytes
    (folder / "bad-date.md").write_text("---\nvalid_to: 31/12/2026\n---\nbody\n", encoding="utf-8")
    (folder / "bad-status.md").write_text("---\nstatus: archived\n---\nbody\n", encoding="utf-8")
    (folder / "image.png").write_bytes(b"\x89PNG\r\n")
    (folder / ".hidden").mkdir()
    (folder / ".hidden" / "secret.md").write_text("never visited\n", encoding="utf-8")
    return folder


EXPECTED_FAILURES = {
    "binary.txt": "binary file: NUL byte at offset 3",
    "latin1.md": "not UTF-8: invalid byte 0xe9 at offset 3",
    "broken-yaml.md": "broken front matter at line 4: expected ',' or ']', but got ':'",
    "empty.md": "empty file",
    "scan.pdf": "PDF has no text layer (1 page(s) without extractable text)",
    "huge.txt": "file too large: 5000 bytes, over the limit of 3000 bytes",
    "bad-date.md": "unknown date format for valid_to: '31/12/2026' (expected YYYY-MM-DD)",
    "bad-status.md": "invalid status 'archived' (expected one of current, superseded, draft)",
}


def test_each_bad_file_fails_once_with_its_reason(mixed: Path, tmp_path: Path) -> None:
    with Store(tmp_path / "store") as store:
        report = ingest_folder(store, mixed, ChunkingConfig(), max_bytes=3000)
        assert {f["path"]: f["reason"] for f in report.failed} == EXPECTED_FAILURES
        assert len(report.failed) == len(EXPECTED_FAILURES)
        assert sorted(report.added) == ["good-md", "manual", "plain", "sub-page"]
        assert report.skipped == ["image.png"]
        docs = {d.id: d for d in store.documents()}
        assert docs["manual"].format == "pdf" and "Brake pads last 2000 km." in docs["manual"].text
        assert docs["sub-page"].format == "html" and docs["sub-page"].title == "Hours"
        assert all(store.chunks(doc_id) for doc_id in docs)
        assert any("Open 9 to 5." in c.text for c in store.chunks("sub-page"))


def test_parse_folder_reports_the_same_without_a_store(mixed: Path) -> None:
    result = parse_folder(mixed, max_bytes=3000)
    assert {e.path: e.reason for e in result.failures} == EXPECTED_FAILURES
    assert sorted(d.id for d in result.documents) == ["good-md", "manual", "plain", "sub-page"]
    assert result.skipped == ["image.png"]


def test_size_limit_default_lets_normal_files_through(mixed: Path) -> None:
    result = parse_folder(mixed)
    assert "huge.txt" not in {e.path for e in result.failures}
