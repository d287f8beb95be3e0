"""AskResult: what Desk.ask returns, typed; its ``to_dict()`` is the ask JSON, key for key and in order.

Both an answered and an abstained question on the example corpus: the dict is what the store saves
and what ``evidencedesk ask --json`` prints, and it reads back into an equal AskResult.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from evidencedesk import Desk
from evidencedesk.results.ask import AskResult, Citation, OutsideScope, Passage, Validation
from tests.support.paths import KESTREL_DOCS, kestrel_available

ANSWERED = "Can I still send back a bike I bought five weeks ago?"
ABSTAINED = "What is the capital of Mongolia?"
KEYS = [
    "trace_id", "query", "rewritten", "scope", "method", "retrieved", "reranked", "context", "context_candidates",
    "dropped", "prompt", "answer", "abstained", "abstain_reason", "citations", "findings", "timings",
    "rewrite_steps", "context_tokens", "raw_answer", "generation", "validation", "sources", "searcher",
]  # fmt: skip
PASSAGE_KEYS = [
    "rank", "chunk_id", "doc_id", "score", "source", "text", "kind", "title", "location", "source_path", "metadata",
    "parts",
]  # fmt: skip


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desk]:
    if not kestrel_available():
        pytest.skip(f"example corpus missing: {KESTREL_DOCS}")
    with Desk(tmp_path_factory.mktemp("store")) as d:
        d.ingest(KESTREL_DOCS)
        yield d


def _round_trip(desk: Desk, result: AskResult) -> None:
    data = result.to_dict()
    text = json.dumps(data, ensure_ascii=False, indent=2)
    assert json.dumps(desk.trace(result.trace_id), ensure_ascii=False, indent=2) == text  # saved as returned
    again = AskResult.from_dict(json.loads(text))
    assert again == result
    assert json.dumps(again.to_dict(), ensure_ascii=False, indent=2) == text


def test_an_answered_question_round_trips(desk: Desk) -> None:
    result = desk.ask(ANSWERED, explain_abstention=True)
    assert not result.abstained and result.citations and result.outside_scope is None
    assert list(result.to_dict()) == KEYS
    assert all(isinstance(p, Passage) for p in result.retrieved)
    assert list(result.retrieved[0].to_dict())[: len(PASSAGE_KEYS)] == PASSAGE_KEYS
    assert isinstance(result.validation, Validation) and result.validation.citations == result.citations
    cited = result.citations[0]
    assert isinstance(result.sources[cited], Citation) and cited in result.context
    assert result.cited()[0] == {"chunk_id": cited, **result.sources[cited].fields()}
    assert result.answer == result.validation.answer and result.trace_id
    _round_trip(desk, result)


def test_an_abstained_question_round_trips_with_what_lies_outside_the_scope(desk: Desk) -> None:
    result = desk.ask(ABSTAINED, scope={"tenants": ["nobody"]}, explain_abstention=True)
    assert result.abstained and result.abstain_reason and not result.citations and not result.sources
    assert result.outside_scope and all(isinstance(o, OutsideScope) for o in result.outside_scope)
    assert list(result.to_dict()) == [*KEYS, "outside_scope"]
    assert result.scope.tenants == ("nobody",)
    _round_trip(desk, result)


def test_a_plain_abstention_has_no_outside_scope_key(desk: Desk) -> None:
    result = desk.ask(ABSTAINED, save=False)
    assert result.abstained and result.outside_scope is None and list(result.to_dict()) == KEYS
