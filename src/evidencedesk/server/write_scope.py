"""Scoped writes: what an ingest key may add or replace, checked before anything is written.

A key may ingest only documents whose tenant and audience lie inside its scope, and may never
replace a stored document whose audience lies outside it. Ids are scoped by tenant (see
``documents.stored_id``), so another tenant's document can be neither reached nor blocked by
reusing its id. Either refusal is made as a whole, before the store is touched. The report then
names only what the key may see.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from evidencedesk import Scope
from evidencedesk.desk import documents_in
from evidencedesk.documents import Document, Metadata
from evidencedesk.errors import WriteRefused
from evidencedesk.results.ingest import IngestReport
from evidencedesk.server.access import StoredRecords


def writable(scope: Scope, meta: Metadata) -> bool:
    """May a key with ``scope`` write a document with this metadata? Its tenant and audience must be allowed."""
    if scope.tenants is not None and meta.tenant not in scope.tenants:
        return False
    return scope.audiences is None or meta.audience in scope.audiences


def check_writes(
    folder: Path, scope: Scope, stored: Callable[[str], Document | None], *, name_files: bool = True
) -> None:
    """Parse every file under ``folder`` and refuse (WriteRefused) a document outside ``scope`` or one
    that would replace a stored document outside it. ``stored(doc_id)`` returns the stored Document or None.
    Files that fail to parse are left to the ingest, which reports them without writing anything for them.

    Ids are scoped by tenant, so a stored document found here is of the same tenant (one the key may
    write); only an audience outside the scope can refuse it. With ``name_files`` (the caller's own
    uploads) the message names the file; a server-side folder may hold files the caller may not
    see, so then it names nothing: no file, tenant, audience or id.
    """
    for rel, doc in documents_in(folder):
        old = stored(doc.id)
        if writable(scope, doc.metadata) and (old is None or writable(scope, old.metadata)):
            continue
        if not name_files:
            raise WriteRefused("path: the folder holds documents outside this key's scope; nothing was ingested")
        if not writable(scope, doc.metadata):
            raise WriteRefused(
                f"{rel}: tenant {doc.metadata.tenant!r} / audience {doc.metadata.audience!r} "
                "lies outside this key's scope"
            )
        raise WriteRefused(f"{rel}: document id {doc.id!r} belongs to a document outside this key's scope")


def visible_report(report: IngestReport, scope: Scope, stored: StoredRecords) -> IngestReport:
    """The ingest report as the key may see it: ids outside ``scope`` left out, store counts inside it."""

    def shown(doc_id: str | None) -> bool:
        doc = stored.document(doc_id) if doc_id is not None else None
        return doc is not None and scope.allows(doc.metadata, doc.id)

    def seen(ids: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(i for i in ids if shown(i))

    docs = [d for d in stored.documents() if scope.allows(d.metadata, d.id)]
    counts = stored.chunk_counts()
    return replace(
        report,
        added=seen(report.added),
        updated=seen(report.updated),
        unchanged=seen(report.unchanged),
        removed=seen(report.removed),
        failed=tuple(replace(f, kept=f.kept if shown(f.kept) else None) for f in report.failed),
        unknown_supersedes=tuple(u for u in report.unknown_supersedes if shown(u.doc_id)),
        n_documents=len(docs),
        n_chunks=sum(counts.get(d.id, 0) for d in docs),
    )


__all__ = ["WriteRefused", "check_writes", "visible_report", "writable"]
