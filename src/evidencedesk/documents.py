"""The records every stage passes along: Metadata, Section, Document, Location, Chunk.

They are frozen dataclasses: a stage never edits what the stage before handed it.
Each has ``to_dict``/``from_dict`` so it can be stored, sent as JSON and read back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import date
from typing import Any
from urllib.parse import quote

from evidencedesk.json_types import JsonValue

STATUSES = ("current", "superseded", "draft")
CHUNK_KINDS = ("text", "table", "code")

# Defaults for a document whose front matter (or lack of it) does not say.
DEFAULT_STATUS = "current"
DEFAULT_AUDIENCE = "public"
DEFAULT_LANG = "en"
DEFAULT_TENANT = "default"


def _iso(value: date | None) -> str | None:
    return value.isoformat() if value else None


def _date(value: str | None) -> date | None:
    return date.fromisoformat(value) if value else None


def _fields(obj: Any) -> dict[str, object]:
    """A dataclass's fields by name, in declaration order, values as they are (``asdict`` would turn the
    nested dataclasses into dicts its own way, not with their ``to_dict``)."""
    return {f.name: getattr(obj, f.name) for f in fields(obj)}


@dataclass(frozen=True)
class Metadata:
    """What a document says about itself; every chunk inherits it unchanged."""

    status: str = DEFAULT_STATUS
    valid_from: date | None = None
    valid_to: date | None = None
    audience: str = DEFAULT_AUDIENCE
    lang: str = DEFAULT_LANG
    tenant: str = DEFAULT_TENANT
    version: str = ""
    supersedes: str = ""
    tags: tuple[str, ...] = ()
    extra: dict[str, JsonValue] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, got {self.status!r}")
        if self.valid_from and self.valid_to and self.valid_to < self.valid_from:
            raise ValueError(f"valid_to {self.valid_to} is before valid_from {self.valid_from}")

    def valid_on(self, day: date) -> bool:
        """True when ``valid_from <= day <= valid_to`` (an open end always passes)."""
        return (self.valid_from is None or self.valid_from <= day) and (self.valid_to is None or day <= self.valid_to)

    def to_dict(self) -> dict[str, JsonValue]:
        d = asdict(self)
        d["valid_from"], d["valid_to"] = _iso(self.valid_from), _iso(self.valid_to)
        d["tags"] = list(self.tags)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Metadata:
        d = dict(d)
        d["valid_from"], d["valid_to"] = _date(d.get("valid_from")), _date(d.get("valid_to"))
        d["tags"] = tuple(d.get("tags") or ())
        d["extra"] = dict(d.get("extra") or {})
        return cls(**d)


@dataclass(frozen=True)
class Section:
    """A heading and the source lines it spans (1-based, inclusive).

    ``page`` is the 1-based page of a paged source (a PDF) the lines come from, 0 when the source has
    no pages; a paged document starts a new section on every page.
    """

    heading_path: tuple[str, ...]
    first_line: int
    last_line: int
    page: int = 0

    def to_dict(self) -> dict[str, object]:
        d: dict[str, object] = {
            "heading_path": list(self.heading_path), "first_line": self.first_line, "last_line": self.last_line,
        }  # fmt: skip
        if self.page:
            d["page"] = self.page
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Section:
        return cls(tuple(d["heading_path"]), int(d["first_line"]), int(d["last_line"]), int(d.get("page", 0)))


@dataclass(frozen=True)
class Document:
    """One parsed source file.

    ``text`` is the body (front matter removed) and ``first_line`` is the source line on which
    the body starts, so ``first_line + i`` is the source line of the body's line ``i`` (0-based).
    """

    id: str
    title: str
    path: str
    format: str  # markdown, text, html, pdf, docx, pptx, xlsx, eml
    text: str
    content_hash: str
    metadata: Metadata
    sections: tuple[Section, ...] = ()
    first_line: int = 1

    def to_dict(self) -> dict[str, object]:
        return {**_fields(self), "metadata": self.metadata.to_dict(), "sections": [s.to_dict() for s in self.sections]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Document:
        return cls(
            id=d["id"],
            title=d["title"],
            path=d["path"],
            format=d["format"],
            text=d["text"],
            content_hash=d["content_hash"],
            metadata=Metadata.from_dict(d["metadata"]),
            sections=tuple(Section.from_dict(s) for s in d.get("sections", ())),
            first_line=int(d.get("first_line", 1)),
        )


@dataclass(frozen=True)
class Location:
    """Where a chunk came from: its heading path, first and last source line (1-based) and, for a paged
    source such as a PDF, the pages it spans (first and last, 1-based; empty when the source has no pages)."""

    heading_path: tuple[str, ...] = ()
    first_line: int = 0
    last_line: int = 0
    pages: tuple[int, ...] = ()

    @property
    def label(self) -> str:
        heading = " > ".join(self.heading_path) or "(top)"
        where = f"{heading}, lines {self.first_line}-{self.last_line}"
        if self.pages:
            first, last = self.pages[0], self.pages[-1]
            where += f", page {first}" if first == last else f", pages {first}-{last}"
        return where

    def to_dict(self) -> dict[str, object]:
        d: dict[str, object] = {
            "heading_path": list(self.heading_path), "first_line": self.first_line, "last_line": self.last_line,
        }  # fmt: skip
        if self.pages:
            d["pages"] = list(self.pages)
        return d

    def stored_heading(self) -> list[str] | dict[str, list[Any]]:
        """The value a store keeps in its ``heading_path`` column: the heading path, or with pages
        ``{"path": [...], "pages": [...]}`` (so stores written before pages existed read unchanged)."""
        if self.pages:
            return {"path": list(self.heading_path), "pages": list(self.pages)}
        return list(self.heading_path)

    @classmethod
    def from_stored(cls, heading: Any, first_line: int, last_line: int) -> Location:
        """The Location of a stored chunk: ``heading`` as :meth:`stored_heading` wrote it."""
        if isinstance(heading, dict):
            pages = tuple(int(p) for p in heading.get("pages", ()))
            return cls(tuple(heading.get("path", ())), first_line, last_line, pages)
        return cls(tuple(heading), first_line, last_line)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Location:
        return cls(
            tuple(d.get("heading_path", ())),
            int(d.get("first_line", 0)),
            int(d.get("last_line", 0)),
            tuple(int(p) for p in d.get("pages", ())),
        )


@dataclass(frozen=True)
class Chunk:
    """A piece of a document that is indexed, ranked and cited. Its id is ``<doc_id>:c<n>``."""

    id: str
    doc_id: str
    text: str
    kind: str = "text"
    location: Location = field(default_factory=Location)
    metadata: Metadata = field(default_factory=Metadata)
    title: str = ""
    source: str = ""  # the document's source path
    parent_id: str | None = None  # parent-child: the id of the parent chunk returned in place of this one
    parent_text: str | None = None  # parent-child: the parent section's text

    def __post_init__(self) -> None:
        if self.kind not in CHUNK_KINDS:
            raise ValueError(f"chunk kind must be one of {', '.join(CHUNK_KINDS)}, got {self.kind!r}")

    def to_dict(self) -> dict[str, object]:
        return {**_fields(self), "location": self.location.to_dict(), "metadata": self.metadata.to_dict()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Chunk:
        return cls(
            id=d["id"],
            doc_id=d["doc_id"],
            text=d["text"],
            kind=d.get("kind", "text"),
            location=Location.from_dict(d.get("location", {})),
            metadata=Metadata.from_dict(d.get("metadata", {})),
            title=d.get("title", ""),
            source=d.get("source", ""),
            parent_id=d.get("parent_id"),
            parent_text=d.get("parent_text"),
        )


def tenant_prefix(tenant: str) -> str:
    """What a tenant's document ids start with (before ``:``): the tenant, percent-encoded where it holds
    anything but letters, digits and ``._-~`` (so a tenant holding ``:`` or spaces still cannot collide)."""
    return quote(tenant, safe="")


def stored_id(doc_id: str, tenant: str) -> str:
    """The id a document of ``tenant`` is stored, retrieved and cited under: ids are scoped by tenant.

    A document of the ``default`` tenant keeps its own id (a store of one tenant reads as it always
    did); any other tenant's is ``<tenant>:<id>``. A document's own id may not hold ``:``, so two
    tenants' ids never meet: one tenant can neither overwrite, block nor detect another's id. An id
    that already carries its tenant's prefix is returned as it is.
    """
    if tenant == DEFAULT_TENANT:
        return doc_id
    prefix = tenant_prefix(tenant) + ":"
    return doc_id if doc_id.startswith(prefix) else prefix + doc_id


def tenant_scoped(doc: Document) -> Document:
    """``doc`` under its :func:`stored_id` (the same object when that is already its id)."""
    scoped = stored_id(doc.id, doc.metadata.tenant)
    return doc if scoped == doc.id else replace(doc, id=scoped)


def chunk_id(doc_id: str, n: int) -> str:
    """The stable id of the ``n``-th chunk (0-based) of a document."""
    return f"{doc_id}:c{n}"
