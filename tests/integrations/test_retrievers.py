"""The LangChain and LlamaIndex retrievers, with the real libraries: over a Desk in this process and over
the service on a real socket (inside the key's scope), returning the libraries' own types with our
chunk ids and metadata. Each half is skipped where its extra is not installed."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evidencedesk import Desk
from tests.support.live_server import live_service
from tests.support.security import (
    KEYS,
    QUERY,
    SCOPES,
    all_markers,
    allowed_markers,
    build_store,
    service_settings,
    stored_doc_id,
    write_labels,
)

EVERYTHING = {"statuses": None, "audiences": None}  # a Desk's own scope: every tenant, status and audience


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_store(tmp_path_factory.mktemp("retrievers-three-tenants"))


@pytest.fixture(scope="module")
def service(store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    labels = write_labels(tmp_path_factory.mktemp("labels") / "labels.jsonl")
    with live_service(store, service_settings(labels)) as url:
        yield url


def allowed_docs(name: str) -> set[str]:
    tenants, audiences = SCOPES[name]
    return {stored_doc_id(t, a) for t in tenants for a in audiences}


def expected_rows(store: Path, k: int, scope: dict[str, Any]) -> list[dict[str, Any]]:
    with Desk(store) as desk:
        return [hit.to_dict() for hit in desk.search_rows(QUERY, k, "bm25", scope)]


def check_metadata(meta: dict[str, Any], row: dict[str, Any]) -> None:
    assert meta["chunk_id"] == row["chunk_id"] and meta["doc_id"] == row["doc_id"]
    own_id = row["doc_id"].rpartition(":")[2]
    assert meta["title"] == row["title"] and meta["source"] == row["source_path"] == f"{own_id}.md"
    assert meta["score"] == pytest.approx(row["score"]) and meta["rank"] == row["rank"]
    assert meta["retrieved_by"] == "bm25" and meta["heading_path"] == row["location"]["heading_path"]
    assert meta["first_line"] == row["location"]["first_line"] and meta["last_line"] == row["location"]["last_line"]
    for key in ("tenant", "audience", "status", "lang"):  # the document's metadata, flat
        assert meta[key] == row["metadata"][key]


# -- LangChain -------------------------------------------------------------------------------------


def test_langchain_over_a_desk(store: Path) -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document

    from evidencedesk.integrations.langchain import EvidencedeskRetriever

    rows = expected_rows(store, 5, EVERYTHING)
    with Desk(store) as desk:
        retriever = EvidencedeskRetriever(desk=desk, k=5, method="bm25", scope=EVERYTHING)
        docs = retriever.invoke(QUERY)
        again = asyncio.run(retriever.ainvoke(QUERY))
        only_acme = EvidencedeskRetriever(desk=desk, k=20, method="bm25", scope={**EVERYTHING, "tenants": ["acme"]})
        acme = only_acme.invoke(QUERY)
    assert all(isinstance(d, Document) for d in docs)
    assert [d.id for d in docs] == [r["chunk_id"] for r in rows] == [d.id for d in again]
    for d, r in zip(docs, rows, strict=True):
        assert d.page_content == r["text"]
        check_metadata(d.metadata, r)
    assert acme and {d.metadata["tenant"] for d in acme} == {"acme"}


@pytest.mark.parametrize("name", ["acme-staff", "initech-public"])
def test_langchain_over_the_service_sees_only_the_key_s_scope(service: str, name: str) -> None:
    pytest.importorskip("langchain_core")
    from evidencedesk.integrations.langchain import EvidencedeskRetriever

    docs = EvidencedeskRetriever(url=service, api_key=KEYS[name], k=20, method="bm25").invoke(QUERY)
    assert {d.metadata["doc_id"] for d in docs} == allowed_docs(name)
    assert [d.metadata["rank"] for d in docs] == list(range(1, len(docs) + 1))
    forbidden = all_markers() - allowed_markers(name)
    assert not [m for d in docs for m in forbidden if m in d.page_content or m in d.metadata["title"]]
    # a scope only narrows the key's: asking for every tenant changes nothing, one audience narrows
    wide = EvidencedeskRetriever(url=service, api_key=KEYS[name], k=20, method="bm25",
                                 scope={"tenants": ["acme", "globex", "initech"]}).invoke(QUERY)  # fmt: skip
    assert [d.id for d in wide] == [d.id for d in docs]
    public = EvidencedeskRetriever(url=service, api_key=KEYS[name], k=20, method="bm25",
                                   scope={"audiences": ["public"]}).invoke(QUERY)  # fmt: skip
    assert {d.metadata["audience"] for d in public} == {"public"}


def test_langchain_refusals_are_clear(service: str, store: Path) -> None:
    pytest.importorskip("langchain_core")
    from evidencedesk.integrations.langchain import EvidencedeskRetriever
    from evidencedesk.integrations.rows import ServiceError

    with pytest.raises(ServiceError, match="401: unknown API key") as caught:
        EvidencedeskRetriever(url=service, api_key="not-a-key-0123456789").invoke(QUERY)
    assert caught.value.status == 401
    with pytest.raises(ValueError, match="either desk"):
        EvidencedeskRetriever()
    with Desk(store) as desk, pytest.raises(ValueError, match="either desk"):
        EvidencedeskRetriever(desk=desk, url=service)
    with pytest.raises(ValueError, match="url: expected the service's base URL"):
        EvidencedeskRetriever(url="localhost:8000")


# -- LlamaIndex ------------------------------------------------------------------------------------


def test_llamaindex_over_a_desk(store: Path) -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode

    from evidencedesk.integrations.llamaindex import EvidencedeskRetriever

    rows = expected_rows(store, 5, EVERYTHING)
    with Desk(store) as desk:
        retriever = EvidencedeskRetriever(desk, k=5, method="bm25", scope=EVERYTHING)
        nodes = retriever.retrieve(QUERY)
        again = asyncio.run(retriever.aretrieve(QUERY))
    assert all(isinstance(n, NodeWithScore) and isinstance(n.node, TextNode) for n in nodes)
    assert [n.node.node_id for n in nodes] == [r["chunk_id"] for r in rows] == [n.node.node_id for n in again]
    for n, r in zip(nodes, rows, strict=True):
        assert n.node.get_content() == r["text"] and n.score == pytest.approx(r["score"])
        check_metadata(n.node.metadata, r)
    shown = nodes[0].node.get_content(metadata_mode=MetadataMode.LLM)
    assert f"chunk_id: {rows[0]['chunk_id']}" in shown and "tenant:" not in shown


@pytest.mark.parametrize("name", ["globex-staff", "acme-public"])
def test_llamaindex_over_the_service_sees_only_the_key_s_scope(service: str, name: str) -> None:
    pytest.importorskip("llama_index.core")
    from evidencedesk.integrations.llamaindex import EvidencedeskRetriever
    from evidencedesk.integrations.rows import ServiceError

    nodes = EvidencedeskRetriever(url=service, api_key=KEYS[name], k=20, method="bm25").retrieve(QUERY)
    assert {n.node.metadata["doc_id"] for n in nodes} == allowed_docs(name)
    forbidden = all_markers() - allowed_markers(name)
    assert not [m for n in nodes for m in forbidden if m in n.node.get_content(metadata_mode="all")]
    with pytest.raises(ServiceError, match="401"):
        EvidencedeskRetriever(url=service, api_key="not-a-key-0123456789").retrieve(QUERY)
    with pytest.raises(ValueError, match="either desk"):
        EvidencedeskRetriever()
