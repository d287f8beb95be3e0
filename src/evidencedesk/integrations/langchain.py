"""A LangChain retriever over evidencedesk (``pip install 'evidencedesk[langchain]'``).

``EvidencedeskRetriever(desk=Desk(...))`` searches a store in this process;
``EvidencedeskRetriever(url="http://HOST:PORT", api_key=...)`` asks the HTTP service, inside the key's
scope. Each result is a LangChain ``Document`` whose ``id`` is the chunk id (what an evidencedesk
citation names), whose ``page_content`` is the chunk's text, and whose ``metadata`` is described in
``evidencedesk.integrations.rows.chunk_metadata``.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import model_validator

from evidencedesk.integrations.rows import check_source, chunk_metadata, search_rows


class EvidencedeskRetriever(BaseRetriever):
    """Ranked chunks of an evidencedesk store as LangChain documents.

    ``desk``: a ``Desk`` (searched in this process), or ``url`` (the service's base URL) with
    ``api_key``. ``k``: how many (default: the configured k); ``method``: bm25, tfidf, lsa, dense or
    hybrid (default: the configured method); ``scope``: a scope as a dict (``{"tenants": ["acme"]}``);
    over a Desk it replaces the configured scope, over the service it narrows the key's.
    """

    desk: Any = None
    url: str | None = None
    api_key: str | None = None
    k: int | None = None
    method: str | None = None
    scope: dict[str, Any] | None = None
    timeout: float = 60.0

    @model_validator(mode="after")
    def _one_source(self) -> EvidencedeskRetriever:
        check_source(self.desk, self.url)
        return self

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        rows = search_rows(
            query, desk=self.desk, url=self.url, api_key=self.api_key, k=self.k, method=self.method,
            scope=self.scope, timeout=self.timeout,
        )  # fmt: skip
        return [Document(page_content=hit.text, metadata=chunk_metadata(hit), id=hit.chunk_id) for hit in rows]


__all__ = ["EvidencedeskRetriever"]
