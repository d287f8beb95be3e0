"""LLMReranker with SmolLM2: same candidates out, in a deterministic new order."""

from __future__ import annotations

from typing import Any

import pytest

from evidencedesk.documents import Chunk
from evidencedesk.retrieval.candidates import Candidate, ranked
from evidencedesk.retrieval.rerank.base import Reranker
from evidencedesk.retrieval.rerank.llm import UNRATED, ChatModel, LLMReranker

TEXTS = {
    "kc-sizing:c0": "Frame sizes: S fits riders 155-165 cm, M fits 165-178 cm, L fits 178-190 cm.",
    "kc-returns-v3:c0": "You can return most items within 30 days of the delivery date.",
    "kc-store-hours:c0": "The Dhaka store opens 10:00-19:00 Monday to Saturday and is closed on Sunday.",
}
QUERY = "How many days do I have to return an item after delivery?"


def _candidates() -> list[Candidate]:
    chunks = [Chunk(cid, cid.split(":")[0], text) for cid, text in TEXTS.items()]
    return ranked([(c, 1.0 - n / 10) for n, c in enumerate(chunks)], "bm25")


class FirstWord:
    """A stand-in chat model that replies with the passage's first word: never a rating."""

    def chat(self, messages: list[dict[str, str]], max_tokens: int | None = None) -> str:
        return messages[-1]["content"].split("Passage:\n", 1)[1].split()[0]


def test_a_model_that_never_rates_leaves_the_first_stage_order() -> None:
    reranker = LLMReranker(FirstWord())
    before = _candidates()
    after = reranker.rerank(QUERY, before)
    assert [c.chunk.id for c in after] == [c.chunk.id for c in before]
    assert [c.score for c in after] == [UNRATED] * len(before)
    assert reranker.scored == reranker.unparsable == len(before)


def test_construction_is_validated() -> None:
    with pytest.raises(ValueError, match="model"):
        LLMReranker(object())
    with pytest.raises(ValueError, match="yes-no"):
        LLMReranker(FirstWord(), method="yes-no")
    with pytest.raises(ValueError, match="method"):
        LLMReranker(FirstWord(), method="pairwise")
    with pytest.raises(ValueError, match="max_chars"):
        LLMReranker(FirstWord(), max_chars=10)


@pytest.fixture(scope="module")
def smollm2() -> Any:
    from evidencedesk.answer.generators.gguf_models import smollm2_path
    from evidencedesk.answer.generators.llama_cpp import LlamaCppGenerator  # before llama_cpp: idle threads sleep

    pytest.importorskip("llama_cpp", reason="llama-cpp-python is an optional extra: scripts/install-llm.sh")
    return LlamaCppGenerator(smollm2_path(), n_ctx=1024, max_tokens=8)


def _ids_scores(candidates: list[Candidate]) -> list[tuple[str, float]]:
    return [(c.chunk.id, c.score) for c in candidates]


def test_smollm2_yes_no_reranking_is_deterministic_and_keeps_the_same_set(smollm2: Any) -> None:
    reranker = LLMReranker(smollm2)
    assert reranker.method == "yes-no"
    assert isinstance(reranker, Reranker) and isinstance(smollm2, ChatModel)
    before = _candidates()
    first = reranker.rerank(QUERY, before)
    assert reranker.scored == len(before)
    assert sorted(c.chunk.id for c in first) == sorted(c.chunk.id for c in before)
    assert [c.rank for c in first] == list(range(1, len(before) + 1))
    assert [c.score for c in first] == sorted((c.score for c in first), reverse=True)
    assert len({c.score for c in first}) > 1, "log-odds from different passages should differ"
    assert all(c.source == "llm" and c.parts[-1].source == "bm25" for c in first)
    # The same question again, through the bare llama_cpp.Llama, gives the same order and scores.
    again = LLMReranker(smollm2.llama).rerank(QUERY, before)
    assert _ids_scores(again) == _ids_scores(first)


def test_smollm2_rating_replies_without_a_number_keep_their_first_stage_order(smollm2: Any) -> None:
    reranker = LLMReranker(smollm2, method="rating")
    before = _candidates()
    after = reranker.rerank(QUERY, before)
    assert reranker.scored == len(before) == len(reranker.last_replies)
    rated = [c for c in after if c.score != UNRATED]
    unrated = [c for c in after if c.score == UNRATED]
    assert len(unrated) == reranker.unparsable
    assert after == [*rated, *unrated]
    first_stage = [c.chunk.id for c in before]
    assert [c.chunk.id for c in unrated] == [i for i in first_stage if i in {c.chunk.id for c in unrated}]
    assert _ids_scores(LLMReranker(smollm2, method="rating").rerank(QUERY, before)) == _ids_scores(after)
