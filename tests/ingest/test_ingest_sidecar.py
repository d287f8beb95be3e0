"""Metadata declared outside files: sidecars, folder defaults, a manifest, their precedence and re-indexing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.ingest import IngestError, parse_file, parse_folder, scan
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.store import Store


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_precedence_front_matter_sidecar_manifest_folder_defaults(tmp_path: Path) -> None:
    _write(tmp_path / "_meta.yaml", "tenant: acme\naudience: staff\nlang: de\nversion: '1'\n")
    _write(tmp_path / "hr" / "_meta.yaml", "audience: hr\nversion: '2'\n")
    manifest = 'path,version,tags,status\nhr/leave.md,3,"leave, hr",\nhr/pay.txt,,pay,draft\n'
    _write(tmp_path / "_manifest.csv", manifest)
    _write(tmp_path / "hr" / "leave.md.meta.yaml", "version: '4'\nvalid_from: 2024-01-01\n")
    _write(tmp_path / "hr" / "leave.md", "---\nvalid_from: 2024-03-01\n---\n# Leave\n\nTwenty days.\n")
    _write(tmp_path / "hr" / "pay.txt", "Paid monthly.\n")
    result = parse_folder(tmp_path)
    assert not result.failures and result.skipped == []
    docs = {d.path: d for d in result.documents}
    assert set(docs) == {"hr/leave.md", "hr/pay.txt"}  # meta files are never documents
    leave = docs["hr/leave.md"].metadata
    assert leave.tenant == "acme" and leave.lang == "de"  # top folder defaults
    assert leave.audience == "hr"  # the nearer folder wins
    assert leave.version == "4"  # sidecar over manifest over folder defaults
    assert str(leave.valid_from) == "2024-03-01"  # front matter over sidecar
    assert leave.tags == ("leave", "hr")
    pay = docs["hr/pay.txt"].metadata
    assert pay.status == "draft" and pay.version == "2" and pay.tags == ("pay",)


def test_jsonl_manifest_and_sidecar_on_any_format(tmp_path: Path, text_pdf: Callable[..., bytes]) -> None:
    (tmp_path / "report.pdf").write_bytes(text_pdf(["Quarterly results were strong."]))
    _write(tmp_path / "_manifest.jsonl", json.dumps({"path": "report.pdf", "tenant": "globex", "id": "q1"}) + "\n")
    _write(tmp_path / "report.pdf.meta.yaml", "status: superseded\nowner: finance\n")
    doc = parse_folder(tmp_path).documents[0]
    assert doc.id == "globex:q1" and doc.metadata.tenant == "globex" and doc.metadata.status == "superseded"
    assert doc.metadata.extra["owner"] == "finance"


def test_bad_metadata_files_fail_the_documents_they_apply_to(tmp_path: Path) -> None:
    _write(tmp_path / "a.md", "# A\n\nText.\n")
    _write(tmp_path / "b.md", "# B\n\nText.\n")
    _write(tmp_path / "a.md.meta.yaml", "status: [unclosed\n")
    _write(tmp_path / "sub" / "_meta.yaml", "id: everyone\n")
    _write(tmp_path / "sub" / "c.md", "# C\n\nText.\n")
    _write(tmp_path / "b.md.meta.yaml", "status: retired\n")
    result = parse_folder(tmp_path)
    reasons = {f.path: f.reason for f in result.failures}
    assert reasons["a.md"].startswith("broken metadata in a.md.meta.yaml at line")
    assert reasons["sub/c.md"] == "broken metadata in sub/_meta.yaml: folder defaults may not set id"
    assert reasons["b.md"].startswith("invalid status 'retired'")
    assert result.documents == []
    _write(tmp_path / "_manifest.csv", "file,status\na.md,draft\n")
    with pytest.raises(IngestError, match="_manifest.csv: the header row needs a 'path' column"):
        parse_file(tmp_path / "b.md", "b.md")


def test_meta_files_are_not_listed_as_skipped(tmp_path: Path) -> None:
    _write(tmp_path / "a.md", "# A\n")
    _write(tmp_path / "a.md.meta.yaml", "tenant: x\n")
    _write(tmp_path / "_meta.yaml", "tenant: y\n")
    _write(tmp_path / "_manifest.csv", "path,tenant\na.md,z\n")
    _write(tmp_path / "notes.yaml", "not metadata: true\n")
    listing = scan(tmp_path)
    assert [rel for _, rel in listing.files] == ["a.md"] and listing.skipped == ["notes.yaml"]


def test_a_change_to_metadata_alone_reindexes_the_document(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    _write(folder / "policy.md", "# Policy\n\nReturns within 30 days.\n")
    _write(folder / "other.md", "# Other\n\nUnrelated.\n")
    config = ChunkingConfig("structure")
    with Store(tmp_path / "store") as store:
        ingest_folder(store, folder, config)
        _write(folder / "policy.md.meta.yaml", "status: superseded\n")
        report = ingest_folder(store, folder, config)
        assert report.updated == ["policy"] and report.unchanged == ["other"]
        assert {c.metadata.status for c in store.chunks("policy")} == {"superseded"}
        _write(folder / "_meta.yaml", "tenant: acme\n")
        report = ingest_folder(store, folder, config)  # ids are scoped by tenant: a new tenant is a new document
        assert sorted(report.added) == ["acme:other", "acme:policy"] and sorted(report.removed) == ["other", "policy"]
        assert {c.metadata.tenant for c in store.chunks()} == {"acme"}
        report = ingest_folder(store, folder, config)
        assert report.updated == [] and sorted(report.unchanged) == ["acme:other", "acme:policy"]


def test_email_messages_take_subject_sender_date_and_outside_metadata(tmp_path: Path) -> None:
    from email.message import EmailMessage

    msg = EmailMessage()
    msg["Subject"] = "New travel allowance"
    msg["From"] = "hr@acme.example"
    msg["Date"] = "Tue, 05 Mar 2024 09:30:00 +0000"
    msg.set_content("From April, meals are refunded up to 55 euros a day.\n")
    msg.add_alternative("<p>From April, meals are refunded up to <b>55 euros</b> a day.</p>", subtype="html")
    (tmp_path / "mail").mkdir()
    (tmp_path / "mail" / "allowance.eml").write_bytes(bytes(msg))
    _write(tmp_path / "mail" / "_meta.yaml", "tenant: acme\n")
    (tmp_path / "mail" / "empty.eml").write_bytes(b"Subject: nothing\n\n")
    result = parse_folder(tmp_path)
    doc = result.documents[0]
    assert doc.format == "email" and doc.title == "New travel allowance"
    assert doc.text.strip() == "From April, meals are refunded up to 55 euros a day."
    assert doc.metadata.extra == {"from": "hr@acme.example", "sent": "2024-03-05"}
    assert doc.metadata.tenant == "acme"
    assert [(f.path, f.reason) for f in result.failures] == [
        ("mail/empty.eml", "empty file: the message has no text body")
    ]
