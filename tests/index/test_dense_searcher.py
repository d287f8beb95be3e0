"""DenseSearcher on real MiniLM vectors: scope before ranking, no padding, updates, cache, contextual text."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest

from evidencedesk.documents import Chunk, Location, Metadata
from evidencedesk.index.dense import DenseIndex
from evidencedesk.retrieval.candidates import Searcher
from evidencedesk.retrieval.contextual import context_line, index_text
from evidencedesk.retrieval.dense import DenseSearcher
from evidencedesk.retrieval.scope import Scope
from tests.support.embedders import CountingEmbedder


def chunk(doc: str, n: int, text: str, **meta: object) -> Chunk:
    return Chunk(
        id=f"{doc}:c{n}",
        doc_id=doc,
        text=text,
        title=doc.replace("-", " ").title(),
        location=Location(("Policy", f"Part {n}"), 1, 2),
        metadata=Metadata(**meta),  # type: ignore[arg-type]
    )


CHUNKS = [
    chunk("returns-v3", 0, "You can return an item within 30 days for a full refund."),
    chunk("returns-v3", 1, "Refunds go back to the original payment card."),
    chunk("returns-v2", 0, "You can return an item within 14 days for a refund.", status="superseded"),
    chunk("staff", 0, "Staff may approve goodwill refunds up to 50 euros.", audience="staff"),
    chunk("draft-loyalty", 0, "Loyalty members earn points on every refund.", status="draft"),
    chunk("old-hours", 0, "The shop opens at 8 on Saturdays.", valid_to=date(2020, 1, 1)),
    chunk("torque", 0, "Tighten the rear axle nut to 45 newton metres."),
    chunk("hours", 0, "Store hours are nine to five, Monday to Friday."),
    chunk("bn", 0, "পণ্য ফেরত দেওয়ার সময়সীমা ৩০ দিন।", lang="bn"),
]


@pytest.fixture(scope="module")
def embedder() -> CountingEmbedder:
    return CountingEmbedder()


@pytest.fixture(scope="module")
def searcher(embedder: CountingEmbedder) -> DenseSearcher:
    return DenseSearcher(CHUNKS, embedder=embedder)


def test_is_a_searcher_and_ranks_by_meaning(searcher: DenseSearcher) -> None:
    assert isinstance(searcher, Searcher) and searcher.name == "dense"
    hits = searcher.search("how long do I have to send something back?", k=3)
    assert hits[0].chunk.id == "returns-v3:c0"
    assert [h.rank for h in hits] == [1, 2, 3]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(h.source == "dense" for h in hits)
    assert searcher.identity() == {
        "method": "dense",
        "embedder": "all-MiniLM-L6-v2-onnx-int8-512",
        "dim": 384,
        "contextual": False,
        "ann": False,
    }


def test_default_scope_hides_superseded_draft_staff_and_expired(searcher: DenseSearcher) -> None:
    hidden = {"returns-v2", "staff", "draft-loyalty", "old-hours"}
    for query in ("return within 14 days refund", "goodwill refund staff", "loyalty points", "shop opens Saturday"):
        hits = searcher.search(query, k=len(CHUNKS))
        assert hidden.isdisjoint(h.chunk.doc_id for h in hits)
        assert all(Scope().allows_chunk(h.chunk) for h in hits)


def test_k_whenever_k_allowed_chunks_have_a_positive_score(searcher: DenseSearcher) -> None:
    scope = Scope.everything()
    query = "refund"
    q = searcher.embed_query(query)
    vectors = searcher.embedder.embed([c.text for c in CHUNKS])
    positive = int(((vectors @ q) > 0).sum())
    for k in range(1, len(CHUNKS) + 2):
        hits = searcher.search(query, k=k, scope=scope)
        assert len(hits) == min(k, positive)
        assert all(h.score > 0 for h in hits)


def test_scope_narrowing_and_empty_scope(searcher: DenseSearcher) -> None:
    only_bn = Scope(statuses=None, audiences=None, langs=frozenset({"bn"}))
    assert [h.chunk.id for h in searcher.search("ফেরত", k=5, scope=only_bn)] == ["bn:c0"]
    nobody = Scope(tenants=frozenset({"no-such-tenant"}))
    assert searcher.search("refund", k=5, scope=nobody) == []
    assert searcher.search("   ", k=5) == []
    with pytest.raises(ValueError, match="k"):
        searcher.search("refund", k=0)


def test_updates_equal_a_fresh_build(embedder: CountingEmbedder, tmp_path) -> None:
    cache = tmp_path / "emb.sqlite"
    live = DenseSearcher(CHUNKS[:5], embedder=embedder, cache_path=cache)
    live.add(CHUNKS[5:])
    changed = chunk("torque", 0, "Tighten the front wheel bolts to 120 newton metres.")
    live.add([changed])  # same id: replaces the old chunk
    assert live.remove(["hours"]) == 1
    expected = [c for c in CHUNKS if c.doc_id not in {"torque", "hours"}] + [changed]
    fresh = DenseSearcher(expected, embedder=embedder, cache_path=cache)
    assert sorted(c.id for c in live.chunks) == sorted(c.id for c in fresh.chunks)
    for query in ("wheel bolts torque", "refund card", "opening hours", "axle nut"):
        for scope in (None, Scope.everything()):
            a, b = live.search(query, k=6, scope=scope), fresh.search(query, k=6, scope=scope)
            assert [(h.chunk.id, h.chunk.text) for h in a] == [(h.chunk.id, h.chunk.text) for h in b]
            np.testing.assert_allclose([h.score for h in a], [h.score for h in b], rtol=1e-5)
    live.close()
    fresh.close()


def test_reindexing_unchanged_text_never_re_embeds(tmp_path) -> None:
    counting = CountingEmbedder()
    cache = tmp_path / "emb.sqlite"
    DenseSearcher(CHUNKS, embedder=counting, cache_path=cache).close()
    assert counting.texts_embedded == len(CHUNKS)
    again = DenseSearcher(CHUNKS, embedder=counting, cache_path=cache)
    assert counting.texts_embedded == len(CHUNKS)  # every vector came from the cache
    again.search("refund", k=3)  # the query itself is embedded, never cached
    assert counting.texts_embedded == len(CHUNKS) + 1
    again.close()


def test_saved_index_refuses_another_embedder(embedder: CountingEmbedder, searcher: DenseSearcher, tmp_path) -> None:
    searcher.save(tmp_path / "dense")
    loaded = DenseIndex.load(tmp_path / "dense")
    reopened = DenseSearcher.from_index(CHUNKS, loaded, embedder=embedder)
    ids = [h.chunk.id for h in searcher.search("refund card", 3)]
    assert [h.chunk.id for h in reopened.search("refund card", 3)] == ids
    refused = r"index built with all-MiniLM-L6-v2-onnx-int8-512 \(dim 384\) cannot be searched"
    with pytest.raises(ValueError, match=refused):
        DenseSearcher.from_index(CHUNKS, loaded, embedder=CountingEmbedder(name="someone/else"))
    with pytest.raises(ValueError, match="do not match"):
        DenseSearcher.from_index(CHUNKS[:3], loaded, embedder=embedder)


def test_ann_searcher_returns_the_exact_results_on_a_small_corpus(embedder: CountingEmbedder) -> None:
    exact = DenseSearcher(CHUNKS, embedder=embedder)
    ann = DenseSearcher(CHUNKS, embedder=embedder, ann=True)
    for query in ("refund", "hours", "নিয়ম"):
        for scope in (None, Scope.everything()):
            expected = [h.chunk.id for h in exact.search(query, 4, scope)]
            assert [h.chunk.id for h in ann.search(query, 4, scope)] == expected


def test_contextual_text(embedder: CountingEmbedder) -> None:
    c = CHUNKS[0]
    assert context_line(c) == "Returns V3 > Policy > Part 0"
    assert index_text(c, contextual=False) == c.text
    assert index_text(c, contextual=True) == f"Returns V3 > Policy > Part 0\n{c.text}"
    titled = Chunk(id="d:c0", doc_id="d", text="Body.", title="Guide", location=Location(("Guide", "Setup")))
    assert index_text(titled, True) == "Guide > Setup\nBody."  # the title is not repeated
    bare = Chunk(id="d:c0", doc_id="d", text="Body.")
    assert index_text(bare, True) == "Body."
    already = Chunk(id="d:c0", doc_id="d", text="Guide\n\nBody.", title="Guide")
    assert index_text(already, True) == already.text  # text that starts with its context is left alone
    contextual = DenseSearcher(CHUNKS, embedder=embedder, contextual=True)
    hits = contextual.search("torque", k=1)
    assert hits[0].chunk.text == CHUNKS[6].text  # candidates carry the chunk's own text, not the prefix
