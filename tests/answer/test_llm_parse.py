"""Reading model replies, building the messages, and configuring the OpenAI-compatible generator.

None of these need a model: they pin what the LLM generators do around the model call.
"""

from __future__ import annotations

import socket

import pytest

from evidencedesk.answer.context import CONTEXT_OPEN
from evidencedesk.answer.generators.openai_compat import OpenAIGenerator, api_root
from evidencedesk.answer.generators.parse import ABSTAIN_ANSWER, GenerationError, chat_messages, parse_reply
from evidencedesk.answer.prompt import SYSTEM_RULES, system_rules
from evidencedesk.answer.validate import NOT_SHOWN, UNKNOWN, validate
from evidencedesk.documents import Chunk
from evidencedesk.retrieval.candidates import ranked
from evidencedesk.retrieval.rerank.llm import parse_rating

RETURNS = Chunk(
    "kc-returns-v3:c0",
    "kc-returns-v3",
    "You can return most items within 30 days of the delivery date.",
    source="returns-v3.md",
)
ALL_IDS = {"kc-returns-v3:c0", "kc-staff-goodwill:c0"}


def test_citations_are_read_in_order_of_first_use_and_kept_as_written() -> None:
    reply = "Returns take 30 days [kc-returns-v3:c0]. Refunds are quick [kc-pay:c2; kc-returns-v3:c0] [see 1]."
    gen = parse_reply(reply)
    assert gen.cited == ("kc-returns-v3:c0", "kc-pay:c2")
    assert gen.answer == reply
    assert not gen.abstained
    assert gen.raw == reply


def test_bracketed_text_that_is_not_a_chunk_id_cites_nothing() -> None:
    gen = parse_reply("See section [2] and [the returns page] or [doc:7].")
    assert gen.cited == ()


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("INSUFFICIENT: the price of a frame", "the price of a frame"),
        ("  **INSUFFICIENT:** opening hours on Sunday", "opening hours on Sunday"),
        ("I am not sure.\nInsufficient: the warranty length", "the warranty length"),
    ],
)
def test_an_insufficient_reply_is_an_abstention_with_the_models_reason(reply: str, reason: str) -> None:
    gen = parse_reply(reply)
    assert gen.abstained
    assert gen.reason == reason
    assert gen.answer == ABSTAIN_ANSWER
    assert gen.cited == ()
    assert gen.raw == reply


def test_an_empty_reply_is_an_abstention_and_a_word_that_merely_starts_a_sentence_is_not() -> None:
    assert parse_reply("   \n").abstained
    gen = parse_reply("Insufficient packaging voids the return [kc-returns-v3:c0].")
    assert not gen.abstained
    assert gen.cited == ("kc-returns-v3:c0",)


def test_a_planted_citation_is_parsed_then_rejected_by_validation() -> None:
    """The parser keeps what the model wrote; validation drops ids that were not shown."""
    reply = "Yes [kc-secret:c9]. Returns are accepted within 30 days [kc-returns-v3:c0] [kc-staff-goodwill:c0]."
    gen = parse_reply(reply)
    assert gen.cited == ("kc-secret:c9", "kc-returns-v3:c0", "kc-staff-goodwill:c0")
    checked = validate(gen, ranked([(RETURNS, 1.0)], "test"), ALL_IDS)
    assert checked.citation_status["kc-secret:c9"] == UNKNOWN
    assert checked.citation_status["kc-staff-goodwill:c0"] == NOT_SHOWN
    assert set(checked.cited) <= {"kc-returns-v3:c0"}
    assert "kc-secret:c9" not in checked.answer and "kc-staff-goodwill:c0" not in checked.answer


def test_chat_messages_hold_the_rules_then_the_labelled_context_and_question() -> None:
    messages = chat_messages("How long do I have to return a bike?", ranked([(RETURNS, 1.0)], "test"))
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == system_rules("kc-returns-v3:c0") != SYSTEM_RULES
    user = messages[1]["content"]
    assert user.index(CONTEXT_OPEN) < user.index("[kc-returns-v3:c0]") < user.index("How long do I have")


@pytest.mark.parametrize(
    ("reply", "rating"),
    [("7", 7), ("Rating: 10/10", 10), ("I'd say 3.", 3), ("100", None), ("8.5", None), ("relevant", None)],
)
def test_parse_rating(reply: str, rating: int | None) -> None:
    assert parse_rating(reply) == rating


def test_api_root_adds_v1_only_when_the_url_has_no_path() -> None:
    assert api_root("http://127.0.0.1:8080") == "http://127.0.0.1:8080/v1"
    assert api_root("http://127.0.0.1:8080/v1/") == "http://127.0.0.1:8080/v1"
    assert api_root("https://example.org/openai/v2") == "https://example.org/openai/v2"
    with pytest.raises(ValueError, match="http"):
        api_root("127.0.0.1:8080")


def test_openai_generator_needs_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EVIDENCEDESK_OPENAI_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="base_url"):
        OpenAIGenerator()


def test_openai_generator_reads_the_environment_and_hides_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVIDENCEDESK_OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("EVIDENCEDESK_OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("EVIDENCEDESK_OPENAI_MODEL", "smol")
    gen = OpenAIGenerator()
    assert gen.base_url == "http://127.0.0.1:9/v1"
    assert gen.model == "smol"
    assert "sk-test" not in repr(gen)
    monkeypatch.setenv("EVIDENCEDESK_OPENAI_BASE_URL", "http://127.0.0.1:10")
    assert OpenAIGenerator().base_url == "http://127.0.0.1:10/v1"


@pytest.mark.parametrize("kwargs", [{"timeout": 0}, {"max_tokens": 0}, {"temperature": 3.0}])
def test_openai_generator_rejects_bad_settings(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        OpenAIGenerator(base_url="http://127.0.0.1:9/v1", **kwargs)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_endpoint_is_a_clear_error_naming_the_url_not_the_key() -> None:
    port = _closed_port()
    gen = OpenAIGenerator(base_url=f"http://127.0.0.1:{port}/v1", model="m", api_key="sk-secret-123", timeout=2)
    with pytest.raises(GenerationError, match=f"127.0.0.1:{port}/v1/chat/completions") as err:
        gen.chat([{"role": "user", "content": "hi"}])
    assert "sk-secret-123" not in str(err.value)


def test_an_endpoint_that_never_replies_times_out() -> None:
    with socket.socket() as listener:  # accepts connections (backlog) but never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        gen = OpenAIGenerator(base_url=f"http://127.0.0.1:{port}", model="m", api_key="sk-secret-123", timeout=0.3)
        with pytest.raises(GenerationError, match="no reply within 0.3 s") as err:
            gen.chat([{"role": "user", "content": "hi"}])
    assert f"127.0.0.1:{port}/v1/chat/completions" in str(err.value)
    assert "sk-secret-123" not in str(err.value)
