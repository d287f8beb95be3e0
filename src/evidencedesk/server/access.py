"""Who is calling and what they may see: API keys to scopes, narrowing, and visibility of stored records.

A key's scope is a ceiling. A request's own scope is intersected with it (``Scope.narrow``), so it
can only see less. Stored traces and evaluation runs belong to the key that made them: a caller
sees one only when it made it (or holds an admin key), its scope covers the scope the record was
made under, AND every chunk the record names is allowed by today's metadata of that chunk.
``check_startup`` refuses settings that would serve more than intended (secure by default).
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any, Protocol

from evidencedesk import Scope
from evidencedesk.config import Overrides, Settings
from evidencedesk.documents import Chunk, Document, Metadata
from evidencedesk.errors import AccessError, ConfigError
from evidencedesk.server.settings import LimitSpec, ServiceSettings, digest

ANONYMOUS = "anonymous"
HOW_TO_SEND = "send a key from the service's keys file as X-API-Key or Authorization: Bearer KEY"


class StoredRecords(Protocol):
    """What the access checks read of what is stored (the Desk offers it)."""

    def chunk(self, chunk_id: str) -> Chunk | None: ...

    def document(self, doc_id: str) -> Document | None: ...

    def documents(self) -> list[Document]: ...

    def chunk_counts(self) -> dict[str, int]: ...


SCOPE_SETS = ("statuses", "audiences", "langs", "tenants", "doc_ids")


@dataclass(frozen=True)
class Caller:
    """The key a request came with (or anonymous) and what it allows."""

    name: str
    scope: Scope
    ingest: bool = False
    choose_date: bool = False
    admin: bool = False
    limits: LimitSpec = LimitSpec()

    @property
    def anonymous(self) -> bool:
        return self.name == ANONYMOUS

    def owns(self, owner: str | None) -> bool:
        """May this caller see a record made by ``owner``? Its own (never anonymous ones), or any with admin."""
        return self.admin or (not self.anonymous and owner == self.name)

    @property
    def owner_filter(self) -> str | None:
        """The owner to ask the store for: None (every record) for an admin key, else this key's name."""
        return None if self.admin else self.name


class KeyRing:
    """The configured keys as digests; ``identify`` compares a presented key with every one in constant time."""

    def __init__(self, settings: ServiceSettings) -> None:
        self.settings = settings
        self._keys = [
            (
                spec.secret_digest(),
                Caller(
                    spec.name,
                    spec.scope.to_scope(),
                    spec.ingest,
                    spec.choose_date,
                    spec.admin,
                    spec.limits or settings.limits,
                ),
            )
            for spec in settings.keys
        ]
        self.anonymous = Caller(
            ANONYMOUS, settings.anonymous_scope.to_scope(), limits=settings.anonymous_limits or settings.limits
        )

    @property
    def keyless(self) -> bool:
        """No key configured and anonymous callers served: ``serve`` without a keys file (loopback only)."""
        return not self._keys and self.settings.allow_anonymous

    def identify(self, presented: str | None) -> Caller:
        """The caller for a presented key (None: no key given); AccessError(401) for a wrong, blank or
        malformed key, or for none when anonymous access is off. A bad key never falls back to anonymous,
        except on a keyless service: there no key exists to mistake it for, and OpenAI clients always
        send one (a placeholder such as ``none``), so any well-formed key is the anonymous caller it
        would be without one, and gets nothing more."""
        if presented is None:
            if not self.settings.allow_anonymous:
                raise AccessError(401, f"an API key is required; {HOW_TO_SEND}")
            return self.anonymous
        if not presented.strip():
            raise AccessError(401, f"malformed API key: blank; {HOW_TO_SEND}")
        if self.keyless:
            return self.anonymous
        wanted = digest(presented.strip())
        found: Caller | None = None
        for key_digest, caller in self._keys:  # no early exit: every key is compared
            if hmac.compare_digest(key_digest, wanted):
                found = caller
        if found is None:
            instead = " or send none for the anonymous scope" if self.settings.allow_anonymous else ""
            raise AccessError(401, f"unknown API key: use a key from the service's keys file{instead}")
        return found


def parse_credentials(api_key: str | None, authorization: str | None) -> str | None:
    """The key a request presents, from ``X-API-Key`` or ``Authorization: Bearer KEY`` (None: no key).

    A header that is present but malformed (another scheme, a missing or blank token, two different
    keys) is an AccessError(401): it never counts as "no key", which would grant the anonymous scope.
    """
    bearer: str | None = None
    if authorization is not None:
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise AccessError(401, "malformed Authorization header: expected 'Bearer <API key>'")
        bearer = token.strip()
    if api_key is not None and bearer is not None and api_key != bearer:
        raise AccessError(401, "two different API keys in X-API-Key and Authorization")
    return api_key if api_key is not None else bearer


def is_loopback(host: str) -> bool:
    """True for an address only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(settings: ServiceSettings, host: str) -> None:
    """Without any API key configured the service may listen on loopback only (ConfigError otherwise)."""
    if not settings.keys and not is_loopback(host):
        raise ConfigError(
            f"--host {host}: without a keys file (--keys) naming API keys the service listens on loopback "
            "only (127.0.0.1, ::1 or localhost), so no other machine can read the store anonymously"
        )


def check_startup(settings: ServiceSettings, tenants: Collection[str]) -> None:
    """Refuse settings that would let a caller without a key see several tenants' documents.

    ``tenants`` are the tenants the store holds. When it holds more than one and anonymous access is
    on, the anonymous scope must name its tenants (``anonymous_scope.tenants`` in the keys file, or
    ``evidencedesk serve --anonymous-tenant``).
    """
    if not settings.allow_anonymous or len(set(tenants)) <= 1:
        return
    if settings.anonymous_scope.tenants is None:
        raise ConfigError(
            f"the store holds {len(set(tenants))} tenants and a caller without a key would see all of them: "
            "name the tenants an anonymous caller may see (anonymous_scope.tenants in the keys file, or "
            "--anonymous-tenant), or turn anonymous access off (allow_anonymous: false in a keys file)"
        )


def names_tenants(settings: ServiceSettings) -> bool:
    """Does any key's scope (or the anonymous one) limit tenants?"""
    scopes = [k.scope for k in settings.keys] + ([settings.anonymous_scope] if settings.allow_anonymous else [])
    return any(s.tenants is not None for s in scopes)


def with_tenant_statistics(settings: Settings, service: ServiceSettings) -> Settings:
    """The shared settings with ``retrieval.tenant_statistics`` turned on when it is left unset and
    the keys name tenants: then no tenant's scores may depend on another tenant's text."""
    if settings.retrieval.tenant_statistics is None and names_tenants(service):
        return Overrides(tenant_statistics=True).apply(settings)
    return settings


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
    every chunk id it names must pass ``chunk_ok`` (a callable id -> bool: the chunk exists today and
    its current metadata is allowed) when one is given. Ownership is checked by the caller first.
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


def current_chunk_ok(stored: StoredRecords, scope: Scope) -> Callable[[str], bool]:
    """``chunk_id -> bool``: the chunk's metadata as stored today is inside ``scope``. A chunk id no
    longer stored (a lab re-chunking, or a replaced version) is judged by its document's metadata;
    one whose document is gone too is refused."""

    def ok(cid: str) -> bool:
        chunk = stored.chunk(cid)
        if chunk is not None:
            return bool(scope.allows_chunk(chunk))
        doc_id, sep, _ = cid.rpartition(":c")
        doc = stored.document(doc_id) if sep else None
        return doc is not None and bool(scope.allows(doc.metadata, doc.id))

    return ok


def _named_ids(record: Mapping[str, Any]) -> Iterable[str]:
    for item in _chunk_dicts(record):
        if item.get("chunk_id") is not None:
            yield str(item["chunk_id"])
    yield from (str(c) for c in record.get("context") or [] if isinstance(c, str))
    yield from (str(c) for c in record.get("citations") or [])
    for q in record.get("questions") or []:
        yield from (str(c) for c in q.get("ranking") or [])


__all__ = [
    "ANONYMOUS",
    "AccessError",
    "Caller",
    "StoredRecords",
    "KeyRing",
    "check_bind",
    "check_startup",
    "covers",
    "current_chunk_ok",
    "is_loopback",
    "names_tenants",
    "parse_credentials",
    "record_visible",
    "request_scope",
    "with_tenant_statistics",
]
