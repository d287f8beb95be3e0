"""Bringing a store written before ids were scoped by tenant up to date, once per backend.

Before, every tenant's documents shared one id space, so one tenant could overwrite, block or
detect another's ids. Now a document of any tenant but ``default`` is stored as ``<tenant>:<id>``
(``documents.stored_id``). Opening an older store renames those documents and their chunks (chunk
ids are ``<document id>:c<n>``, so they follow) in the same transaction as the schema upgrade, and
records a build naming the old and new ids, so a snapshot or a cached index of the old build is
never read as current. A store of the ``default`` tenant only is left exactly as it was (no build).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from evidencedesk.documents import stored_id
from evidencedesk.store.ingest_plan import now
from evidencedesk.store.json_data import JsonObject
from evidencedesk.store.records import IngestReport


def renames(documents: Iterable[tuple[str, str]]) -> dict[str, str]:
    """``{old id: new id}`` for the ``(id, tenant)`` pairs whose stored id changes."""
    return {doc_id: new for doc_id, tenant in documents if (new := stored_id(doc_id, tenant)) != doc_id}


def migration_build(moved: dict[str, str], chunking: JsonObject, size: tuple[int, int]) -> IngestReport:
    """The report of the build recording the renaming: the new ids added, the old ones removed."""
    return IngestReport(
        added=sorted(moved.values()), removed=sorted(moved), chunking=chunking, n_documents=size[0], n_chunks=size[1]
    )


def build_row(report: IngestReport, chunking_hash: str) -> tuple[str, str, str, int, int, str]:
    """The builds row of the renaming (created_at, chunking, chunking_hash, n_documents, n_chunks, report)."""
    chunking = {k: v for k, v in report.chunking.items() if k != "hash"}
    payload = {**report.to_dict(), "migration": "document ids scoped by tenant"}
    return (now(), json.dumps(chunking), chunking_hash, report.n_documents, report.n_chunks, json.dumps(payload))


__all__ = ["build_row", "migration_build", "renames"]
