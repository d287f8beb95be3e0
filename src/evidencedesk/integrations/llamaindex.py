"""A LlamaIndex retriever over evidencedesk (``pip install 'evidencedesk[llamaindex]'``).

``EvidencedeskRetriever(desk=Desk(...))`` searches a store in this process;
``EvidencedeskRetriever(url="http://HOST:PORT", api_key=...)`` asks the HTTP service, inside the key's
scope. Each result is a ``NodeWithScore`` holding a ``TextNode`` whose ``id_`` is the chunk id (what an
evidencedesk citation names), whose text is the chunk's, and whose metadata is described in
``evidencedesk.integrations.rows.chunk_metadata``; the score is the ranking's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from evidencedesk.integrations.rows import check_source, chunk_metadata, search_rows
from evidencedesk.results.search import SearchHit

if TYPE_CHECKING:
    from evidencedesk import Desk

SHOWN = ("chunk_id", "title", "source")  # the metadata a LlamaIndex prompt shows with a node's text


class EvidencedeskRetriever(BaseRetriever):
    """Ranked chunks of an evidencedesk store as LlamaIndex nodes.

    ``desk``: a ``Desk`` (searched in this process), or ``url`` (the service's base URL) with
    ``api_key``. ``k``: how many (default: the configured k); ``method``: bm25, tfidf, lsa, dense or
    hybrid (default: the configured method); ``scope``: a scope as a dict (``{"tenants": ["acme"]}``);
    over a Desk it replaces the configured scope, over the service it narrows the key's.
    """

    def __init__(
        self,
        desk: Desk | None = None,
        *,
        url: str | None = None,
        api_key: str | None = None,
        k: int | None = None,
        method: str | None = None,
        scope: Mapping[str, Any] | None = None,
        timeout: float = 60.0,
        **kwargs: Any,
    ) -> None:
        check_source(desk, url)
        self.desk = desk
        self.url = url
        self.api_key = api_key
        self.k = k
        self.method = method
        self.scope = dict(scope) if scope is not None else None
        self.timeout = timeout
        super().__init__(**kwargs)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        rows = search_rows(
            query_bundle.query_str, desk=self.desk, url=self.url, api_key=self.api_key, k=self.k,
            method=self.method, scope=self.scope, timeout=self.timeout,
        )  # fmt: skip
        return [NodeWithScore(node=_node(hit), score=float(hit.score)) for hit in rows]


def _node(hit: SearchHit) -> TextNode:
    """A node for one result; a prompt built from it shows only the chunk id, title and source file."""
    meta = chunk_metadata(hit)
    hidden = [key for key in meta if key not in SHOWN]
    return TextNode(
        id_=hit.chunk_id, text=hit.text, metadata=meta,
        excluded_llm_metadata_keys=hidden, excluded_embed_metadata_keys=hidden,
    )  # fmt: skip


__all__ = ["SHOWN", "EvidencedeskRetriever"]
