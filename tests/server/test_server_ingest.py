"""``POST /ingest``: uploads and server-side folders; traversal, links out and bad names are refused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.support.paths import KESTREL_LABELS
from tests.support.server import KEYS, PUBLIC_KEY, STAFF_KEY, headers

STAFF = headers(STAFF_KEY)
# the example corpus's main tenant: per-tenant statistics rank a note against its own tenant's text
NOTE = "---\nid: {id}\ntitle: {title}\naudience: public\ntenant: kestrel\n---\n\n# {title}\n\n{body}\n"


def note(doc_id: str, body: str) -> str:
    return NOTE.format(id=doc_id, title=doc_id.replace("-", " ").title(), body=body)


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """An allowed root with a docs folder, and a secret folder beside it (outside the root)."""
    root, secret = tmp_path / "root", tmp_path / "secret"
    (root / "docs").mkdir(parents=True)
    secret.mkdir()
    (root / "docs" / "loaner.md").write_text(note("kc-loaner", "Loaner bikes cost 300 BDT per day."), "utf-8")
    (secret / "secret.md").write_text(note("kc-secret", "The vault code is 4417."), "utf-8")
    return {"root": root, "secret": secret}


@pytest.fixture
def ingesting(store_copy: Path, layout: dict[str, Path], client_for: Callable[..., TestClient]) -> TestClient:
    return client_for(store_copy, {**KEYS, "ingest_root": str(layout["root"])})


def test_upload_adds_documents_that_search_finds(ingesting: TestClient) -> None:
    files = [
        ("files", ("tyres.md", note("kc-tyres", "Tubeless tyres are set to 45 psi at the workshop."), "text/markdown")),
        ("files", ("notes.txt", b"Bell fitting is free with every city bike.", "text/plain")),
    ]
    r = ingesting.post("/ingest", files=files, data={"chunker": '{"name": "paragraph", "size": 80}'}, headers=STAFF)
    assert r.status_code == 200, r.text
    report = r.json()
    assert set(report["added"]) >= {"kestrel:kc-tyres"} and len(report["added"]) == 2 and report["removed"] == []
    # 20 documents are stored now; the report counts the 18 the staff key may see (not the superseded or draft)
    assert report["n_documents"] == 18
    hits = ingesting.post("/search", json={"query": "tubeless tyres psi", "k": 1}).json()
    assert hits[0]["doc_id"] == "kestrel:kc-tyres"
    assert ingesting.get("/documents/kestrel:kc-tyres").json()["path"] == "tyres.md"


def test_path_ingest_inside_the_root(ingesting: TestClient, layout: dict[str, Path]) -> None:
    r = ingesting.post("/ingest", json={"path": "docs"}, headers=STAFF)
    assert r.status_code == 200, r.text
    assert r.json()["added"] == ["kestrel:kc-loaner"]
    absolute = ingesting.post("/ingest", json={"path": str(layout["root"] / "docs")}, headers=STAFF)
    assert absolute.status_code == 200 and absolute.json()["unchanged"] == ["kestrel:kc-loaner"]


@pytest.mark.parametrize("path", ["../secret", "docs/../../secret", "/etc", "{secret}", "docs/../.."])
def test_paths_outside_the_root_are_refused(ingesting: TestClient, layout: dict[str, Path], path: str) -> None:
    r = ingesting.post("/ingest", json={"path": path.format(secret=layout["secret"])}, headers=STAFF)
    assert r.status_code == 403, r.text
    assert "outside the allowed root" in r.json()["detail"]
    assert ingesting.get("/documents/kestrel:kc-secret", headers=STAFF).status_code == 404


def test_links_out_of_the_root_are_refused(ingesting: TestClient, layout: dict[str, Path]) -> None:
    root, secret = layout["root"], layout["secret"]
    (root / "linked").symlink_to(secret, target_is_directory=True)
    r = ingesting.post("/ingest", json={"path": "linked"}, headers=STAFF)
    assert r.status_code == 403 and "outside the allowed root" in r.json()["detail"]
    (root / "docs" / "sneaky.md").symlink_to(secret / "secret.md")
    r = ingesting.post("/ingest", json={"path": "docs"}, headers=STAFF)
    assert r.status_code == 403 and "sneaky.md" in r.json()["detail"]
    assert ingesting.get("/documents/kestrel:kc-secret", headers=STAFF).status_code == 404


def test_other_refusals(ingesting: TestClient, store_copy: Path, client_for: Callable[..., TestClient]) -> None:
    assert ingesting.post("/ingest", json={"path": "docs"}, headers=headers(PUBLIC_KEY)).status_code == 403
    assert ingesting.post("/ingest", json={"path": "docs"}).status_code == 403  # anonymous may not ingest
    missing = ingesting.post("/ingest", json={"path": "nowhere"}, headers=STAFF)
    assert missing.status_code == 404
    assert ingesting.post("/ingest", json={"path": "docs/loaner.md"}, headers=STAFF).status_code == 400
    assert ingesting.post("/ingest", json={"path": "a\x00b"}, headers=STAFF).status_code == 400
    assert (
        ingesting.post("/ingest", content=b"path=docs", headers={**STAFF, "content-type": "text/plain"}).status_code
        == 415
    )
    for name in ("../evil.md", ".hidden.md", "tool.exe", "a\\b.md"):
        r = ingesting.post("/ingest", files=[("files", (name, b"# x\n\ntext", "text/plain"))], headers=STAFF)
        assert r.status_code == 400, (name, r.text)
    twice = [("files", ("a.md", b"# a", "text/plain")), ("files", ("a.md", b"# b", "text/plain"))]
    assert ingesting.post("/ingest", files=twice, headers=STAFF).status_code == 400
    uploads = store_copy / "uploads"  # names are checked before anything is staged
    assert not uploads.exists() or not any(uploads.iterdir())  # refused uploads leave nothing behind
    no_root = client_for(store_copy)
    r = no_root.post("/ingest", json={"path": "docs"}, headers=STAFF)
    assert r.status_code == 403 and "disabled" in r.json()["detail"]


def test_eval_reads_a_labels_file_inside_the_root(ingesting: TestClient, layout: dict[str, Path]) -> None:
    lines = KESTREL_LABELS.read_text(encoding="utf-8").splitlines()[:3]
    (layout["root"] / "mine.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (layout["secret"] / "theirs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert ingesting.post("/eval", json={"labels": "mine.jsonl", "k": 3}).status_code == 403  # needs a key
    r = ingesting.post("/eval", json={"labels": "mine.jsonl", "k": 3}, headers=STAFF)
    assert r.status_code == 200, r.text
    assert r.json()["n_questions"] == 3 and r.json()["labels"] == "mine.jsonl"
    assert ingesting.post("/eval", json={"labels": "../secret/theirs.jsonl"}, headers=STAFF).status_code == 403
    assert ingesting.post("/eval", json={"labels": "docs"}, headers=STAFF).status_code == 400
    (layout["root"] / "bad.jsonl").write_text('{"id": "x"}\n', encoding="utf-8")
    bad = ingesting.post("/eval", json={"labels": "bad.jsonl"}, headers=STAFF)
    assert bad.status_code == 400 and "question" in bad.json()["detail"]


def test_ingest_can_embed_now_as_the_cli_does(ingesting: TestClient) -> None:
    """``embed`` (JSON or form field) computes the dense embeddings at ingest, reported with their count."""
    plain = ingesting.post("/ingest", json={"path": "docs"}, headers=STAFF)
    assert plain.status_code == 200, plain.text
    assert "embedding" not in plain.json()["progress"]
    first = ingesting.post("/ingest", json={"path": "docs", "embed": True}, headers=STAFF)
    assert first.status_code == 200, first.text
    done = first.json()["progress"]["embedding"]
    assert done["count"] > 0 and done["total"] >= done["count"] and done["model"]
    again = ingesting.post("/ingest", json={"path": "docs", "embed": True}, headers=STAFF).json()
    assert again["progress"]["embedding"]["count"] == 0  # every chunk already embedded
    files = [("files", ("bells.txt", b"Bell fitting is free with every city bike.", "text/plain"))]
    upload = ingesting.post("/ingest", files=files, data={"embed": "true"}, headers=STAFF)
    assert upload.status_code == 200, upload.text
    assert upload.json()["progress"]["embedding"]["count"] == 1  # only the new chunk
    bad = ingesting.post("/ingest", files=files, data={"embed": "maybe"}, headers=STAFF)
    assert bad.status_code == 400 and "embed" in bad.text
