"""Scoped writes: what an ingest key may add or replace, checked before anything is written.

A key may ingest only documents whose tenant and audience lie inside its scope, and may never
replace a stored document whose tenant or audience lies outside it (the store keys documents by
id, so reusing another tenant's id would overwrite that tenant's text). Either is refused as a
whole, before the store is touched. The report then names only what the key may see.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from evidencedesk.documents import Metadata
from evidencedesk.errors import WriteRefused
from evidencedesk.ingest.errors import IngestError
from evidencedesk.ingest.folder import parse_file, scan
from evidencedesk.retrieval.scope import Scope
from evidencedesk.store.contract import StoreProtocol


def writable(scope: Scope, meta: Metadata) -> bool:
    """May a key with ``scope`` write a document with this metadata? Its tenant and audience must be allowed."""
    if scope.tenants is not None and meta.tenant not in scope.tenants:
        return False
    return scope.audiences is None or meta.audience in scope.audiences


def check_writes(folder: Path, scope: Scope, stored: Callable[[str], Any]) -> None:
    """Parse every file under ``folder`` and refuse (WriteRefused) a document outside ``scope`` or one
    that would replace a stored document outside it. ``stored(doc_id)`` returns the stored Document or None.
    Files that fail to parse are left to the ingest, which reports them without writing anything for them."""
    for path, rel in scan(folder).files:
        try:
            doc = parse_file(path, rel)
        except IngestError:
            continue
        if not writable(scope, doc.metadata):
            raise WriteRefused(
                f"{rel}: tenant {doc.metadata.tenant!r} / audience {doc.metadata.audience!r} "
                "lies outside this key's scope"
            )
        old = stored(doc.id)
        if old is not None and not writable(scope, old.metadata):
            raise WriteRefused(f"{rel}: document id {doc.id!r} belongs to a document outside this key's scope")


def visible_report(report: dict[str, Any], scope: Scope, store: StoreProtocol) -> dict[str, Any]:
    """The ingest report as the key may see it: ids outside ``scope`` left out, store counts inside it."""

    def shown(doc_id: Any) -> bool:
        doc = store.document(str(doc_id)) if doc_id is not None else None
        return doc is not None and scope.allows(doc.metadata, doc.id)

    out = dict(report)
    for name in ("added", "updated", "unchanged", "removed"):
        out[name] = [i for i in report.get(name) or [] if shown(i)]
    out["failed"] = [{**f, "kept": f.get("kept") if shown(f.get("kept")) else None} for f in report.get("failed") or []]
    docs = [d for d in store.document_headers() if scope.allows(d.metadata, d.id)]
    counts = store.chunk_counts()
    out["n_documents"] = len(docs)
    out["n_chunks"] = sum(counts.get(d.id, 0) for d in docs)
    return out


__all__ = ["WriteRefused", "check_writes", "visible_report", "writable"]
