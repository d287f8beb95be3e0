"""Who is calling and what they may see: API keys to scopes, narrowing, and visibility of stored records.

A key's scope is a ceiling. A request's own scope is intersected with it (``Scope.narrow``), so it
can only see less. Stored traces and evaluation runs remember the scope they were made under; a
caller sees one only when its scope covers that scope AND every chunk the record holds.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from evidencedesk.documents import Metadata
from evidencedesk.errors import AccessError
from evidencedesk.retrieval.scope import Scope
from evidencedesk.server.settings import ServiceSettings, digest

ANONYMOUS = "anonymous"
SCOPE_SETS = ("statuses", "audiences", "langs", "tenants", "doc_ids")


@dataclass(frozen=True)
class Caller:
    """The key a request came with (or anonymous) and what it allows."""

    name: str
    scope: Scope
    ingest: bool = False
    choose_date: bool = False


class KeyRing:
    """The configured keys as digests; ``identify`` compares a presented key with every one in constant time."""

    def __init__(self, settings: ServiceSettings) -> None:
        self.settings = settings
        self._keys = [
            (spec.secret_digest(), Caller(spec.name, spec.scope.to_scope(), spec.ingest, spec.choose_date))
            for spec in settings.keys
        ]
        self.anonymous = Caller(ANONYMOUS, settings.anonymous_scope.to_scope())

    def identify(self, presented: str | None) -> Caller:
        """The caller for a presented key; AccessError(401) for a wrong key, or for none when anonymous is off."""
        if presented is None or not presented.strip():
            if not self.settings.allow_anonymous:
                raise AccessError(401, "an API key is required (X-API-Key header or Authorization: Bearer)")
            return self.anonymous
        wanted = digest(presented.strip())
        found: Caller | None = None
        for key_digest, caller in self._keys:  # no early exit: every key is compared
            if hmac.compare_digest(key_digest, wanted):
                found = caller
        if found is None:
            raise AccessError(401, "unknown API key")
        return found


def request_scope(caller: Caller, requested: Mapping[str, Any] | None) -> Scope:
    """The caller's scope narrowed by the request's. A missing request field adds no limit.

    A request may set ``valid_at`` only with a key allowed to choose the date (or one that already
    ignores dates); anything else is refused rather than silently ignored.
    """
    if not requested:
        return caller.scope
    unknown = set(requested) - {*SCOPE_SETS, "valid_at", "check_validity"}
    if unknown:
        raise ValueError(f"scope: unknown field(s) {', '.join(sorted(unknown))}")
    valid_at = requested.get("valid_at")
    day: date | None = None
    if valid_at:
        if caller.scope.check_validity and not caller.choose_date:
            raise AccessError(403, "scope.valid_at: this key may not choose the validity date")
        day = valid_at if isinstance(valid_at, date) else _iso_date(valid_at)
    sets: dict[str, Any] = {}
    for name in SCOPE_SETS:
        value = requested.get(name)
        sets[name] = None if value is None else frozenset(value) if not isinstance(value, str) else value
    asked = Scope(**sets, valid_at=day, check_validity=bool(requested.get("check_validity", True)))
    return caller.scope.narrow(asked)


def _iso_date(value: Any) -> date:
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise ValueError(f"scope.valid_at: not an ISO date (YYYY-MM-DD): {value!r}") from None


def covers(outer: Scope, inner: Scope) -> bool:
    """True when everything ``inner`` allows, ``outer`` allows too (set by set, and for dates)."""
    for name in SCOPE_SETS:
        o, i = getattr(outer, name), getattr(inner, name)
        if o is not None and (i is None or not i <= o):
            return False
    if outer.check_validity:
        if not inner.check_validity:
            return False
        if inner.valid_at is not None and inner.valid_at != outer.day:
            return False
    return True


def _chunk_dicts(record: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    for key in ("retrieved", "reranked", "context_candidates"):
        for item in record.get(key) or []:
            if isinstance(item, Mapping):
                yield item


def record_visible(scope: Scope, record: Mapping[str, Any], chunk_ok: Any = None) -> bool:
    """May a caller with ``scope`` see a stored trace or evaluation run?

    Its recorded scope must be covered, every chunk it embeds (with metadata) must be allowed, and
    every chunk id it names must pass ``chunk_ok`` (a callable id -> bool) when one is given.
    """
    try:
        made_under = Scope.from_dict(dict(record.get("scope") or {}))
    except (ValueError, TypeError):
        return False
    if not record.get("scope") or not covers(scope, made_under):
        return False
    for item in _chunk_dicts(record):
        try:
            meta = Metadata.from_dict(item.get("metadata") or {})
        except (ValueError, TypeError, KeyError):
            return False
        if not scope.allows(meta, item.get("doc_id")):
            return False
    if chunk_ok is not None:
        for cid in _named_ids(record):
            if not chunk_ok(cid):
                return False
    return True


def _named_ids(record: Mapping[str, Any]) -> Iterable[str]:
    yield from (str(c) for c in record.get("context") or [] if isinstance(c, str))
    yield from (str(c) for c in record.get("citations") or [])
    for q in record.get("questions") or []:
        yield from (str(c) for c in q.get("ranking") or [])


__all__ = [
    "ANONYMOUS",
    "AccessError",
    "Caller",
    "KeyRing",
    "covers",
    "record_visible",
    "request_scope",
]
