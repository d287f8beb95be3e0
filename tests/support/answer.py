"""The Kestrel example corpus, parsed and chunked once, for the answering tests."""

from __future__ import annotations

from functools import cache

from evidencedesk.chunking import ChunkingConfig, chunk_document
from evidencedesk.documents import Chunk, Location, Metadata
from evidencedesk.ingest.folder import parse_folder
from evidencedesk.retrieval.candidates import Candidate, ranked
from tests.support.paths import KESTREL_DOCS


@cache
def kestrel_chunks() -> tuple[Chunk, ...]:
    result = parse_folder(KESTREL_DOCS)
    assert result.documents, f"no documents parsed from {KESTREL_DOCS}"
    return tuple(c for d in result.documents for c in chunk_document(d, ChunkingConfig()))


def kestrel_by_id() -> dict[str, Chunk]:
    return {c.id: c for c in kestrel_chunks()}


def holding(phrase: str, doc_id: str | None = None) -> Chunk:
    """The one Kestrel chunk whose text holds ``phrase`` (within ``doc_id`` when given: the document's own
    id, as its front matter declares it, or the id it is stored under, scoped by its tenant)."""
    found = [
        c for c in kestrel_chunks()
        if phrase in c.text and (doc_id is None or doc_id in (c.doc_id, c.doc_id.rpartition(":")[2]))
    ]  # fmt: skip
    assert len(found) == 1, f"expected one chunk holding {phrase!r}, found {[c.id for c in found]}"
    return found[0]


def make_chunk(cid: str, text: str, *, audience: str = "public", status: str = "current", kind: str = "text") -> Chunk:
    doc = cid.split(":")[0]
    meta = Metadata(status=status, audience=audience)
    return Chunk(cid, doc, text, kind=kind, location=Location((doc.title(), "Section"), 3, 9), metadata=meta,
                 title=doc, source=f"docs/{doc}.md")  # fmt: skip


def as_candidates(chunks: list[Chunk], scores: list[float] | None = None) -> list[Candidate]:
    scores = scores if scores is not None else [1.0 - i / 100 for i in range(len(chunks))]
    return ranked(zip(chunks, scores, strict=True), "test")
