"""Desk runs the whole pipeline on the example corpus through one object."""

from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from evidencedesk import Desk, Settings
from evidencedesk.config import parse_settings
from evidencedesk.evaluation.taxonomy import STAGES
from evidencedesk.wiring_params import HybridParams, LegParams

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "examples" / "kestrel" / "docs"
LABELS = ROOT / "examples" / "kestrel" / "labels.jsonl"


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Desk:
    settings = parse_settings({"retrieval": {"legs": [{"method": "bm25"}], "k": 3}})
    d = Desk(tmp_path_factory.mktemp("store"), settings=settings)
    d.ingest(DOCS)
    yield d
    d.close()


def test_search_respects_the_default_scope(desk: Desk) -> None:
    found = desk.search("goodwill refund store manager discount code", k=5)
    assert found, "expected public chunks sharing a word with the query"
    assert all(c.chunk.metadata.audience == "public" and c.chunk.metadata.status == "current" for c in found)
    wider = desk.search("goodwill refund store manager discount code", k=5, scope={"audiences": ["public", "staff"]})
    assert any(c.chunk.doc_id == "kestrel:kc-staff-goodwill" for c in wider)


def test_ask_cites_only_what_it_was_shown(desk: Desk) -> None:
    out = desk.ask("How tight should the stem bolts be on a size M Ridgeline?")
    assert not out.abstained
    assert set(out.citations) <= set(out.context)
    assert desk.store.load_trace(out.trace_id) == out.to_dict()


def test_evaluate_diagnose_and_compare(desk: Desk) -> None:
    run = desk.evaluate(LABELS, k=3)
    assert run.method == "bm25" and run.k == 3 and run.run_id
    failing = desk.diagnose(LABELS, k=3)  # each question answered as ask answers it, its trace diagnosed
    assert failing and all(d.root.stage in STAGES for d in failing)
    unfound = {r.id for r in run.questions if r.answerable and r.rank is None}
    assert {d.question_id for d in failing} >= unfound
    assert not desk.compare(run.run_id, run.run_id).regressed
    assert desk.eval_run(run.run_id).to_dict() == run.to_dict()  # read back as it was returned


def test_chunker_override_is_recorded_as_a_new_build(desk: Desk, tmp_path: Path) -> None:
    d = Desk(tmp_path / "s", settings=Settings())
    first = d.ingest(DOCS)
    second = d.ingest(DOCS, name="fixed", size=60, unit="chars")
    assert first.chunking is not None and second.chunking is not None
    assert first.chunking.hash != second.chunking.hash
    d.close()


def test_unsupported_store_urls_are_refused_with_a_clear_message() -> None:
    with pytest.raises(ValueError, match="postgresql://"):
        Desk("mysql://u@127.0.0.1:1/db")


def test_searcher_params_follow_the_settings(tmp_path: Path) -> None:
    from evidencedesk.desk import searcher_params

    settings = parse_settings(
        {
            "retrieval": {
                "legs": [{"method": "bm25", "stem": False, "depth": 30}, {"method": "lsa", "rank": 20, "depth": 25}]
            }
        }
    )
    params = searcher_params(settings, "hybrid", tmp_path / "e.sqlite")
    assert isinstance(params, HybridParams)
    assert params.names == ("bm25", "lsa") and params.fusion.depth == 30 and params.fusion.method == "normalized"
    bm25 = params.leg("bm25")
    assert bm25.tokens is not None and bm25.tokens.stem is False and params.leg("lsa") == LegParams("lsa", rank=20)
    kwargs = params.as_kwargs()  # what make_searcher takes
    assert kwargs["legs"] == ["bm25", "lsa"] and kwargs["depth"] == 30 and kwargs["fusion"] == "normalized"
    assert kwargs["leg_params"] == {"bm25": bm25.as_kwargs(), "lsa": {"rank": 20}}
    assert kwargs["depths"] == {"bm25": 30, "lsa": 25}
    chosen = searcher_params(settings, "hybrid", tmp_path / "e.sqlite", legs=["bm25", "tfidf"])
    assert isinstance(chosen, HybridParams)
    assert chosen.names == ("bm25", "tfidf") and chosen.leg("tfidf").as_kwargs() == {}
    dense = searcher_params(settings, "dense", tmp_path / "e.sqlite")
    assert isinstance(dense, LegParams) and dense.as_kwargs() == {"cache_path": tmp_path / "e.sqlite"}


def test_searcher_params_are_frozen_and_tenant_statistics_is_given_when_built(tmp_path: Path) -> None:
    from evidencedesk.wiring import pg_searcher_params

    params = pg_searcher_params(Settings(), "hybrid", tmp_path / "e.sqlite", tenant_statistics=True)
    assert isinstance(params, HybridParams)
    with pytest.raises(FrozenInstanceError):
        params.leg("bm25").tenant_statistics = False  # type: ignore[misc]
    legs = params.as_kwargs()["leg_params"]
    assert legs["bm25"] == {"tenant_statistics": True} and "tenant_statistics" not in legs["dense"]
    legs["bm25"]["k1"] = 9.0  # a caller's copy: the parameters themselves stay as built
    assert params.leg("bm25").as_kwargs() == {"tenant_statistics": True}


def test_searcher_with_chosen_legs(desk: Desk) -> None:
    searcher = desk.searcher("hybrid", ["bm25", "tfidf"])
    assert [leg.name for leg, _ in searcher.legs] == ["bm25", "tfidf"]
    assert desk.searcher("hybrid", ["bm25", "tfidf"]) is searcher  # built once per build


def test_what_is_stored_is_read_through_the_desk(desk: Desk) -> None:
    headers = desk.documents()
    assert [d.id for d in headers] == sorted(d.id for d in headers) and all(d.text == "" for d in headers)
    counts = desk.chunk_counts()
    doc = desk.document("kestrel:kc-returns-v3")
    assert doc is not None and doc.text and desk.document("no-such-doc") is None
    own = desk.chunks(doc.id)
    assert own and all(c.doc_id == doc.id for c in own) and len(own) == counts[doc.id]
    assert desk.chunk(own[0].id) == own[0] and desk.chunk("no-such-doc:c1") is None
    assert sum(counts.values()) == len(desk.chunks()) and desk.chunks("no-such-doc") == []


def test_the_lab_tools_rechunk_search_and_preview_under_the_desks_settings(desk: Desk) -> None:
    from evidencedesk import ChunkingConfig

    chunks = desk.lab.rechunk(ChunkingConfig(name="fixed", size=40, unit="words"))
    assert {c.doc_id for c in chunks} == {d.id for d in desk.documents()}
    searcher = desk.lab.searcher_over(chunks, "bm25")
    results = desk.first_stage(over=searcher).search("return an item days", 3, desk.scope())
    assert results and all(r.chunk in chunks for r in results)
    preview = desk.lab.prompt_preview("How many days do I have to return an item?", results)
    assert "How many days do I have to return an item?" in preview.prompt
    assert preview.context.ids and set(preview.context.ids) <= {r.chunk.id for r in results}
    assert desk.lab.answerability_gate(desk.generator("extractive")) is None  # extractive decides itself
