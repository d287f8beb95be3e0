"""A store of three tenants and two audiences, built from small Markdown files, and keys over it.

Every document holds a marker word found nowhere else (in its title, its text and its labelled
question), so a raw response that contains a marker proves that the document reached the caller.
Requests never contain a marker: a query for "warranty refund policy" reaches every document.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.documents import stored_id
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.store import Store

TENANTS = ("acme", "globex", "initech")
AUDIENCES = ("public", "staff")
QUERY = "warranty refund policy for bicycles"


def marker(tenant: str, audience: str) -> str:
    return f"zq{tenant}{audience}mark"


def doc_id(tenant: str, audience: str) -> str:
    # ids name no tenant: a look-up echoes the id it was asked for, which is not a leak
    return f"d{TENANTS.index(tenant)}{AUDIENCES.index(audience)}"


def stored_doc_id(tenant: str, audience: str) -> str:
    """The id a document is stored and cited under: its own id scoped by its tenant."""
    return stored_id(doc_id(tenant, audience), tenant)


def note(tenant: str, audience: str, extra: str = "", *, claim: tuple[str, str] | None = None, ident: str = "") -> str:
    t, a = claim or (tenant, audience)
    m = marker(tenant, audience)
    return (
        f"---\nid: {ident or doc_id(tenant, audience)}\ntitle: Handbook {m}\nstatus: current\n"
        f"audience: {a}\nlang: en\ntenant: {t}\n---\n\n# Handbook {m}\n\n"
        f"The warranty and refund policy for bicycles says {m} covers frames for five years. {extra}\n\n"
        f"## Returns\n\nA refund under this policy needs the receipt and the {m} form within 30 days.\n"
    )


def write_corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for t in TENANTS:
        for a in AUDIENCES:
            (folder / f"{doc_id(t, a)}.md").write_text(note(t, a), encoding="utf-8")
    return folder


def write_labels(path: Path) -> Path:
    rows = [
        {
            "id": f"q-{doc_id(t, a)}",
            "question": f"How long does the {marker(t, a)} warranty cover frames?",
            "tags": ["staff"] if a == "staff" else ["exact_term"],
            "answerable": True,
            "gold": [{"evidence": f"says {marker(t, a)} covers frames for five years", "grade": 2, "with": []}],
            "answer": "five years",
            "reason": "stated in the handbook",
        }
        for t in TENANTS
        for a in AUDIENCES
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def build_store(root: Path) -> Path:
    store = root / "store"
    with Store(store) as db:
        ingest_folder(db, write_corpus(root / "docs"), ChunkingConfig())
    return store


KEYS = {
    "acme-public": "acme-public-key-0123456789",
    "acme-staff": "acme-staff-key-0123456789",
    "globex-staff": "globex-staff-key-0123456789",
    "initech-public": "initech-public-key-0123456789",
    "admin": "admin-all-tenants-key-0123456789",
}
# name -> (tenants, audiences) each key may see; None: anonymous
SCOPES: dict[str | None, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "acme-public": (("acme",), ("public",)),
    "acme-staff": (("acme",), ("public", "staff")),
    "globex-staff": (("globex",), ("public", "staff")),
    "initech-public": (("initech",), ("public",)),
    "admin": (TENANTS, AUDIENCES),
    None: (("initech",), ("public",)),
}


def service_settings(labels: Path, ingest_root: Path | None = None) -> dict[str, Any]:
    def scope(name: str) -> dict[str, Any]:
        tenants, audiences = SCOPES[name]
        return {"tenants": list(tenants), "audiences": list(audiences)}

    return {
        "allow_anonymous": True,
        "anonymous_scope": {"tenants": ["initech"], "audiences": ["public"]},
        "labels": str(labels),
        "ingest_root": str(ingest_root) if ingest_root else None,
        "keys": [
            {"name": name, "key": key, "scope": scope(name), "ingest": name.endswith("staff"), "admin": name == "admin"}
            for name, key in KEYS.items()
        ],
    }


def allowed_markers(name: str | None) -> set[str]:
    tenants, audiences = SCOPES[name]
    return {marker(t, a) for t in tenants for a in audiences}


def all_markers() -> set[str]:
    return {marker(t, a) for t in TENANTS for a in AUDIENCES}


def auth(name: str | None) -> dict[str, str]:
    return {"X-API-Key": KEYS[name]} if name else {}
