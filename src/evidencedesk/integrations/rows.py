"""Where the retriever adapters get their results: a ``Desk`` in this process, or the HTTP service's
``POST /search`` with an API key. Both give the same rows (``Desk.search_rows``), which
``chunk_metadata`` turns into the metadata the adapters attach to each chunk."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evidencedesk.errors import ConfigError, EvidencedeskError


class ServiceError(EvidencedeskError):
    """The service refused a search: the status and the service's own explanation."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"the service answered {status}: {message}")
        self.status = status


def check_source(desk: Any, url: str | None) -> None:
    """Exactly one of ``desk`` and ``url`` (ConfigError otherwise)."""
    if (desk is None) == (url is None):
        raise ConfigError("give either desk (a Desk) or url (the service's base URL, http://HOST:PORT), not both")
    if url is not None and not url.startswith(("http://", "https://")):
        raise ConfigError(f"url: expected the service's base URL (http://HOST:PORT), got {url!r}")


def search_rows(
    query: str,
    *,
    desk: Any = None,
    url: str | None = None,
    api_key: str | None = None,
    k: int | None = None,
    method: str | None = None,
    scope: Mapping[str, Any] | None = None,
    timeout: float = 60.0,
) -> list[dict[str, Any]]:
    """Ranked rows for ``query``: ``desk.search_rows`` (``scope`` default: the Desk's configured scope), or
    the service's ``POST /search`` under ``api_key`` (``scope`` can only narrow the key's scope)."""
    check_source(desk, url)
    if desk is not None:
        return desk.search_rows(query, k, method, dict(scope) if scope is not None else None)  # type: ignore[no-any-return]
    import httpx

    assert url is not None
    body: dict[str, Any] = {"query": query}
    for name, value in (("k", k), ("method", method), ("scope", dict(scope) if scope is not None else None)):
        if value is not None:
            body[name] = value
    headers = {"X-API-Key": api_key} if api_key else {}
    r = httpx.post(f"{url.rstrip('/')}/search", json=body, headers=headers, timeout=timeout)
    if r.status_code != 200:
        try:
            detail = r.json().get("detail", r.text)
        except ValueError:
            detail = r.text
        raise ServiceError(r.status_code, str(detail))
    return r.json()  # type: ignore[no-any-return]


def chunk_metadata(row: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata of one result: its document's metadata (status, audience, lang, tenant, version,
    validity, tags, extra) and the chunk's own fields, which win on a clash: ``chunk_id``, ``doc_id``,
    ``title``, ``source`` (the file), ``heading_path``, ``first_line``, ``last_line``, ``kind``,
    ``score``, ``rank`` and ``retrieved_by`` (the method or hybrid legs that ranked it)."""
    location = row.get("location") or {}
    return {
        **dict(row.get("metadata") or {}),
        "chunk_id": row["chunk_id"],
        "doc_id": row["doc_id"],
        "title": row.get("title", ""),
        "source": row.get("source_path", ""),
        "heading_path": list(location.get("heading_path") or []),
        "first_line": location.get("first_line"),
        "last_line": location.get("last_line"),
        "kind": row.get("kind", "text"),
        "score": float(row["score"]),
        "rank": int(row["rank"]),
        "retrieved_by": row.get("source", ""),
    }


__all__ = ["ServiceError", "check_source", "chunk_metadata", "search_rows"]
