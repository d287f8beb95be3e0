"""Scope: what one request is allowed to see, applied BEFORE any ranking.

A searcher turns a Scope into a boolean mask over its rows (``Scope.mask``) and ranks only the
rows the mask allows, so stale or forbidden text never competes for a place in the top k.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import numpy as np

from evidencedesk.documents import Chunk, Metadata
from evidencedesk.json_types import JsonObject, JsonValue


def _set(values: Iterable[str] | None) -> frozenset[str] | None:
    if values is None:
        return None
    if isinstance(values, str):
        raise ValueError("scope values must be a list of strings, not one string")
    out = frozenset(values)
    if not out:
        raise ValueError("an empty scope set would allow nothing; use None to allow any value")
    return out


@dataclass(frozen=True)
class Scope:
    """Allowed statuses, audiences, languages, tenants, document ids and the validity date.

    ``None`` means "any value". ``valid_at=None`` means today; ``check_validity=False`` turns the
    date check off (an auditor looking at history).
    """

    statuses: frozenset[str] | None = frozenset({"current"})
    audiences: frozenset[str] | None = frozenset({"public"})
    langs: frozenset[str] | None = None
    tenants: frozenset[str] | None = None
    doc_ids: frozenset[str] | None = None
    valid_at: date | None = None
    check_validity: bool = True

    def __post_init__(self) -> None:
        for name in ("statuses", "audiences", "langs", "tenants", "doc_ids"):
            object.__setattr__(self, name, _set(getattr(self, name)))

    @classmethod
    def everything(cls) -> Scope:
        """No filter at all: every status, audience and date. For audits and tests only."""
        return cls(statuses=None, audiences=None, check_validity=False)

    @property
    def day(self) -> date:
        return self.valid_at or date.today()

    def allows(self, meta: Metadata, doc_id: str | None = None) -> bool:
        if self.statuses is not None and meta.status not in self.statuses:
            return False
        if self.audiences is not None and meta.audience not in self.audiences:
            return False
        if self.langs is not None and meta.lang not in self.langs:
            return False
        if self.tenants is not None and meta.tenant not in self.tenants:
            return False
        if self.doc_ids is not None and doc_id not in self.doc_ids:
            return False
        return not self.check_validity or meta.valid_on(self.day)

    def allows_chunk(self, chunk: Chunk) -> bool:
        return self.allows(chunk.metadata, chunk.doc_id)

    def excludes(self, meta: Metadata, doc_id: str | None = None) -> str | None:
        """Why this scope leaves a document out ("status superseded", "valid until 2024-01-31"...), or None."""
        for name, allowed, value in (("status", self.statuses, meta.status), ("audience", self.audiences,
                                     meta.audience), ("lang", self.langs, meta.lang), ("tenant", self.tenants,
                                     meta.tenant)):  # fmt: skip
            if allowed is not None and value not in allowed:
                return f"{name} {value}"
        if self.doc_ids is not None and doc_id not in self.doc_ids:
            return "not among the documents asked for"
        if self.check_validity and not meta.valid_on(self.day):
            if meta.valid_to is not None and self.day > meta.valid_to:
                return f"valid until {meta.valid_to.isoformat()}"
            return f"valid from {meta.valid_from.isoformat() if meta.valid_from else '?'}"
        return None

    def mask(self, chunks: Sequence[Chunk]) -> np.ndarray:
        """A boolean array, True where the chunk at that row may be shown."""
        return np.fromiter((self.allows_chunk(c) for c in chunks), dtype=bool, count=len(chunks))

    def narrow(self, other: Scope) -> Scope:
        """The intersection of two scopes: a request can narrow a key's scope, never widen it."""

        def meet(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
            if a is None:
                return b
            if b is None:
                return a
            both = a & b
            return both if both else frozenset({"\x00nothing"})

        return Scope(
            statuses=meet(self.statuses, other.statuses),
            audiences=meet(self.audiences, other.audiences),
            langs=meet(self.langs, other.langs),
            tenants=meet(self.tenants, other.tenants),
            doc_ids=meet(self.doc_ids, other.doc_ids),
            valid_at=other.valid_at or self.valid_at,
            check_validity=self.check_validity or other.check_validity,
        )

    def to_dict(self) -> JsonObject:
        """The scope as JSON: each set as a sorted list (None: no restriction), the date in ISO form."""

        def lst(v: frozenset[str] | None) -> list[JsonValue] | None:
            return list(sorted(v)) if v is not None else None

        return {
            "statuses": lst(self.statuses),
            "audiences": lst(self.audiences),
            "langs": lst(self.langs),
            "tenants": lst(self.tenants),
            "doc_ids": lst(self.doc_ids),
            "valid_at": self.valid_at.isoformat() if self.valid_at else None,
            "check_validity": self.check_validity,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> Scope:
        known = {"statuses", "audiences", "langs", "tenants", "doc_ids", "valid_at", "check_validity"}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown scope field(s): {', '.join(sorted(unknown))}")
        base = cls()
        kwargs: dict[str, Any] = {}
        for name in ("statuses", "audiences", "langs", "tenants", "doc_ids"):
            if name in d:
                kwargs[name] = d[name]
            else:
                kwargs[name] = getattr(base, name)
        valid_at = d.get("valid_at")
        try:
            if valid_at and not isinstance(valid_at, str):
                raise TypeError(valid_at)
            kwargs["valid_at"] = date.fromisoformat(valid_at) if isinstance(valid_at, str) and valid_at else None
        except (TypeError, ValueError) as exc:
            raise ValueError(f"scope field valid_at: not an ISO date: {valid_at!r}") from exc
        kwargs["check_validity"] = bool(d.get("check_validity", True))
        return cls(**kwargs)
