"""Turning the key/value pairs a file declares (YAML front matter, HTML meta tags) into id, title and Metadata.

Known keys: id, title, version, status, valid_from, valid_to, audience, lang, tenant, supersedes, tags.
Any other key is kept, made JSON-safe, in ``Metadata.extra``. Keys that are absent get the defaults
from :mod:`evidencedesk.documents` (status current, audience public, lang en, tenant default).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import PurePosixPath

from evidencedesk.documents import (
    DEFAULT_AUDIENCE,
    DEFAULT_LANG,
    DEFAULT_STATUS,
    DEFAULT_TENANT,
    STATUSES,
    Document,
    Metadata,
    Section,
)
from evidencedesk.ingest.errors import IngestError
from evidencedesk.json_types import JsonValue

KNOWN_KEYS = (
    "id", "title", "version", "status", "valid_from", "valid_to",
    "audience", "lang", "tenant", "supersedes", "tags",
)  # fmt: skip


@dataclass(frozen=True)
class Declared:
    """What a file says about itself; ``id`` and ``title`` are None when it does not say."""

    id: str | None
    title: str | None
    metadata: Metadata

    def document(
        self,
        rel: str,
        fmt: str,
        text: str,
        digest: str,
        sections: tuple[Section, ...],
        *titles: str | None,
        first_line: int = 1,
    ) -> Document:
        """The Document of the file at ``rel``: the declared id, else one from the path; the declared title,
        else the first of ``titles`` that is not empty (the parser's own, best first), else the file's stem."""
        from evidencedesk.ingest.raw import doc_id_from_path

        return Document(
            id=self.id or doc_id_from_path(rel),
            title=self.title or next((t for t in titles if t), None) or PurePosixPath(rel).stem,
            path=rel,
            format=fmt,
            text=text,
            content_hash=digest,
            metadata=self.metadata,
            sections=sections,
            first_line=first_line,
        )


def json_safe(value: object) -> JsonValue:
    """A copy of ``value`` that ``json.dumps`` accepts: dates become ISO strings, other objects ``str``."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, date):  # datetime is a date too
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, set | frozenset):
        # a set read from YAML holds members of one type, which sort; mixed ones raise TypeError, as before
        return sorted(json_safe(v) for v in value)  # type: ignore[type-var]
    return str(value)


def _date(rel: str, key: str, value: object) -> date | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise IngestError(rel, f"unknown date format for {key}: {value!r} (expected YYYY-MM-DD)")


def _text(rel: str, key: str, value: object, default: str = "") -> str:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise IngestError(rel, f"{key} must be a single value, got {value!r}")
    text = str(value).strip()
    return text or default


def _tags(rel: str, value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(t.strip() for t in value.split(",") if t.strip())
    if isinstance(value, list | tuple):
        return tuple(_text(rel, "tags", t) for t in value if t is not None and str(t).strip())
    raise IngestError(rel, f"tags must be a list of words, got {value!r}")


def declared(rel: str, fields: Mapping[str, object]) -> Declared:
    """Validate ``fields`` (as read from the file) and split them into id, title and Metadata."""
    fields = {str(k): v for k, v in fields.items()}
    doc_id = _text(rel, "id", fields.get("id")) or None
    if doc_id is not None and (any(c.isspace() for c in doc_id) or ":" in doc_id):
        raise IngestError(rel, f"invalid id {doc_id!r}: an id may not contain spaces or ':'")
    title = _text(rel, "title", fields.get("title")) or None
    status = _text(rel, "status", fields.get("status"), DEFAULT_STATUS).lower()
    if status not in STATUSES:
        raise IngestError(rel, f"invalid status {status!r} (expected one of {', '.join(STATUSES)})")
    extra = {k: json_safe(v) for k, v in fields.items() if k not in KNOWN_KEYS}
    try:
        metadata = Metadata(
            status=status,
            valid_from=_date(rel, "valid_from", fields.get("valid_from")),
            valid_to=_date(rel, "valid_to", fields.get("valid_to")),
            audience=_text(rel, "audience", fields.get("audience"), DEFAULT_AUDIENCE),
            lang=_text(rel, "lang", fields.get("lang"), DEFAULT_LANG),
            tenant=_text(rel, "tenant", fields.get("tenant"), DEFAULT_TENANT),
            version=_text(rel, "version", fields.get("version")),
            supersedes=_text(rel, "supersedes", fields.get("supersedes")),
            tags=_tags(rel, fields.get("tags")),
            extra=extra,
        )
    except ValueError as exc:
        raise IngestError(rel, str(exc)) from None
    return Declared(doc_id, title, metadata)
