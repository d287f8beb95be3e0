"""DocumentListing: a stored document as the listings show it (``evidencedesk docs``, ``GET /documents``):
its header without the text, and how many chunks it has."""

from __future__ import annotations

from dataclasses import dataclass

from evidencedesk.documents import Document, Metadata


@dataclass(frozen=True)
class DocumentListing:
    """One stored document in a listing: id, title, source path, format, metadata, chunk count and the
    hash of its content."""

    id: str
    title: str
    path: str
    format: str
    metadata: Metadata
    n_chunks: int
    content_hash: str

    @classmethod
    def of(cls, doc: Document, n_chunks: int) -> DocumentListing:
        """The summary of ``doc`` (a header is enough) with ``n_chunks`` stored chunks."""
        return cls(doc.id, doc.title, doc.path, doc.format, doc.metadata, n_chunks, doc.content_hash)

    def to_dict(self) -> dict[str, object]:
        """What ``GET /documents`` lists: the metadata nested, no content hash."""
        return {"id": self.id, "title": self.title, "path": self.path, "format": self.format,
                "metadata": self.metadata.to_dict(), "n_chunks": self.n_chunks}  # fmt: skip

    def to_row(self) -> dict[str, object]:
        """What ``evidencedesk docs --json`` lists: the metadata's scope fields inline, then the chunk count
        and the content hash."""
        meta = self.metadata
        return {
            "id": self.id,
            "title": self.title,
            "path": self.path,
            "format": self.format,
            "status": meta.status,
            "audience": meta.audience,
            "lang": meta.lang,
            "tenant": meta.tenant,
            "version": meta.version,
            "valid_from": meta.valid_from.isoformat() if meta.valid_from else None,
            "valid_to": meta.valid_to.isoformat() if meta.valid_to else None,
            "n_chunks": self.n_chunks,
            "content_hash": self.content_hash,
        }


__all__ = ["DocumentListing"]
