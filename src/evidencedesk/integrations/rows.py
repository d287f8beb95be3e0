"""Where the retriever adapters get their results: a ``Desk`` in this process, or the HTTP service's
``POST /search`` with an API key. Both give the same hits (``Desk.search_rows``; the service's JSON is
read back into ``SearchHit``), which ``chunk_metadata`` turns into the metadata the adapters attach to
each chunk."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evidencedesk.errors import ConfigError, EvidencedeskError
from evidencedesk.results.search import SearchHit

if TYPE_CHECKING:
    from evidencedesk.desk import Desk


class ServiceError(EvidencedeskError):
    """The service refused a search: the status and the service's own explanation."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"the service answered {status}: {message}")
        self.status = status


def check_source(desk: Desk | None, url: str | None) -> None:
    """Exactly one of ``desk`` and ``url`` (ConfigError otherwise)."""
    if (desk is None) == (url is None):
        raise ConfigError("give either desk (a Desk) or url (the service's base URL, http://HOST:PORT), not both")
    if url is not None and not url.startswith(("http://", "https://")):
        raise ConfigError(f"url: expected the service's base URL (http://HOST:PORT), got {url!r}")


def search_rows(
    query: str,
    *,
    desk: Desk | None = None,
    url: str | None = None,
    api_key: str | None = None,
    k: int | None = None,
    method: str | None = None,
    scope: Mapping[str, Any] | None = None,
    timeout: float = 60.0,
) -> list[SearchHit]:
    """Ranked hits for ``query``: ``desk.search_rows`` (``scope`` default: the Desk's configured scope), or
    the service's ``POST /search`` under ``api_key`` (``scope`` can only narrow the key's scope)."""
    check_source(desk, url)
    if desk is not None:
        return desk.search_rows(query, k, method, dict(scope) if scope is not None else None)
    import httpx

    assert url is not None
    body: dict[str, object] = {"query": query}
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
    return [SearchHit.from_dict(row) for row in r.json()]


def chunk_metadata(hit: SearchHit) -> dict[str, object]:
    """The metadata of one result: its document's metadata (status, audience, lang, tenant, version,
    validity, tags, extra) and the chunk's own fields, which win on a clash: ``chunk_id``, ``doc_id``,
    ``title``, ``source`` (the file), ``heading_path``, ``first_line``, ``last_line``, ``kind``,
    ``score``, ``rank`` and ``retrieved_by`` (the method or hybrid legs that ranked it)."""
    location = hit.location
    return {
        **hit.metadata.to_dict(),
        "chunk_id": hit.chunk_id,
        "doc_id": hit.doc_id,
        "title": hit.title,
        "source": hit.source_path,
        "heading_path": list(location.heading_path),
        "first_line": location.first_line,
        "last_line": location.last_line,
        "kind": hit.kind,
        "score": float(hit.score),
        "rank": int(hit.rank),
        "retrieved_by": hit.source,
    }


__all__ = ["ServiceError", "check_source", "chunk_metadata", "search_rows"]
