"""Desk.ask_stream: text deltas, then one final event carrying exactly what Desk.ask returns.

The extractive generator cannot stream, so its validated answer comes as one delta. Closing the
stream stops the ask and stores no trace. (The streaming language-model generator is exercised with
the real llama.cpp runtime in test_llm_streaming.py.)
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import evidencedesk
from evidencedesk import AnswerDelta, AnswerDone, AskStream, ConfigError, Desk
from evidencedesk.config import parse_settings
from evidencedesk.results.ask import AskResult

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "examples" / "kestrel" / "docs"
QUESTION = "How many days do I have to return an item?"
UNANSWERABLE = "Which airline flies the bikes to Iceland?"
# what legitimately differs between two asks of the same question: the trace id and the clock
VARYING = ("trace_id", "timings")


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desk]:
    settings = parse_settings({"retrieval": {"legs": [{"method": "bm25"}], "k": 3}})
    d = Desk(tmp_path_factory.mktemp("store"), settings=settings)
    d.ingest(DOCS)
    yield d
    d.close()


def _steady(result: AskResult) -> dict[str, Any]:
    return {k: v for k, v in result.to_dict().items() if k not in VARYING}


@pytest.mark.parametrize("question", [QUESTION, UNANSWERABLE])
def test_deltas_then_one_done_event_equal_to_ask(desk: Desk, question: str) -> None:
    events = list(desk.ask_stream(question, save=False))
    assert [type(e) for e in events] == [AnswerDelta, AnswerDone]
    delta, done = events
    assert isinstance(delta, AnswerDelta) and isinstance(done, AnswerDone)
    # a generator that cannot stream hands out its validated answer whole, as one delta
    assert delta.text == done.result.answer and delta.text
    assert _steady(done.result) == _steady(desk.ask(question, save=False))
    assert done.result.abstained is (question == UNANSWERABLE)


def test_the_final_event_carries_citations_validation_and_trace_id(desk: Desk) -> None:
    with desk.ask_stream(QUESTION) as events:
        done = [e for e in events if isinstance(e, AnswerDone)]
    assert len(done) == 1
    result = done[0].result
    assert result.citations and set(result.citations) <= set(result.context)
    assert result.validation.citations == result.citations
    assert desk.trace(result.trace_id) == result.to_dict()  # saved as returned
    assert done[0].to_dict() == {"type": "done", "result": result.to_dict()}


def test_closing_the_stream_stops_the_ask_and_stores_no_trace(desk: Desk) -> None:
    before = len(desk.traces(limit=1000))
    stream = desk.ask_stream(QUESTION)
    assert isinstance(stream, AskStream) and not stream.cancelled
    stream.close()
    assert stream.cancelled
    with pytest.raises(StopIteration):
        next(stream)
    assert len(desk.traces(limit=1000)) == before


def test_cancelling_before_the_generator_runs_ends_without_a_final_event(desk: Desk) -> None:
    before = len(desk.traces(limit=1000))
    stream = desk.ask_stream(QUESTION)
    stream.cancel()  # what the service does when its client goes away
    assert list(stream) == []
    assert len(desk.traces(limit=1000)) == before


def test_bad_arguments_raise_when_the_stream_is_asked_for(desk: Desk) -> None:
    with pytest.raises(ConfigError, match="question"):
        desk.ask_stream("   ")
    with pytest.raises(ConfigError, match="candidates"):
        desk.ask_stream(QUESTION, k=4, candidates=2)
    with pytest.raises(ConfigError, match="generator.name"):
        desk.ask_stream(QUESTION, generator="no-such-generator")


def test_events_are_public_and_serialise() -> None:
    assert {"AnswerDelta", "AnswerDone", "AskEvent", "AskStream"} <= set(evidencedesk.__all__)
    assert AnswerDelta("30 days").to_dict() == {"type": "delta", "text": "30 days"}
    assert AnswerDelta("x").type == "delta" and AnswerDone({}).type == "done"
