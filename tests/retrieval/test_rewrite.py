"""Query rewriting: normalise, decompose, multi-query and HyDE, each recorded step by step."""

from __future__ import annotations

import pytest

from evidencedesk.answer.generators.extractive import ExtractiveGenerator
from evidencedesk.retrieval.rewrite import Rewriter, Rewritten, decompose, hyde, multi_query, normalise


class EchoChat:
    """A chat model stand-in that answers with fixed lines (the rewrite code only needs ``chat``)."""

    name = "echo"

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.seen: list[list[dict[str, str]]] = []

    def chat(self, messages: list[dict[str, str]], max_tokens: int | None = None) -> str:
        self.seen.append(messages)
        return self.reply


def test_normalise_expands_abbreviations_keeping_case() -> None:
    assert normalise("  bike   w/ box,  pls ") == "bike with box, please"
    assert normalise("Pls refund w/o box") == "Please refund without box"
    assert normalise("PLS HELP") == "PLEASE HELP"
    assert normalise("the w/o-box rule") == "the w/o-box rule"  # not a whole word
    assert normalise("return asap", {"asap": "as soon as possible"}) == "return as soon as possible"
    assert normalise("pls", {}) == "pls"
    with pytest.raises(ValueError, match="abbreviations"):
        normalise("x", {" ": "y"})


@pytest.mark.parametrize(
    ("query", "parts"),
    [
        (
            "I'm 165 cm and want a Metro delivered to Chattogram. Which size do I need and what's the delivery charge?",
            [
                "I'm 165 cm and want a Metro delivered to Chattogram. Which size do I need?",
                "I'm 165 cm and want a Metro delivered to Chattogram. What's the delivery charge?",
            ],
        ),
        (
            "How do I start a return, and do I get the delivery fee refunded?",
            ["How do I start a return?", "Do I get the delivery fee refunded?"],
        ),
        (
            "What is the battery warranty? How should I store it?",
            ["What is the battery warranty?", "How should I store it?"],
        ),
        ("Can I return bikes and helmets?", ["Can I return bikes and helmets?"]),  # one question
        ("Do you sell electric scooters?", ["Do you sell electric scooters?"]),
    ],
)
def test_decompose(query: str, parts: list[str]) -> None:
    assert decompose(query) == parts


def test_multi_query_from_a_list_a_function_or_a_chat_model() -> None:
    q = "How do I get my money back?"
    assert multi_query(q, ["refund to original payment method", " How do I get my money back? ", ""]) == [
        q,
        "refund to original payment method",
    ]
    assert multi_query(q, lambda s: [s.lower(), "refund policy"]) == [q, "refund policy"]
    chat = EchoChat("1. refund payment method\n- money back policy\n\n")
    assert multi_query(q, chat) == [q, "refund payment method", "money back policy"]
    assert chat.seen[0][1]["content"] == q
    with pytest.raises(ValueError, match="paraphrases"):
        multi_query(q, "one string")


def test_hyde_needs_a_chat_model_and_is_a_no_op_for_the_extractive_generator() -> None:
    q = "How long do I have to return a bike?"
    assert hyde(q, ExtractiveGenerator()) == q
    assert hyde(q, EchoChat("Bikes can be returned within 30 days.\n")) == "Bikes can be returned within 30 days."
    assert hyde(q, EchoChat("   ")) == q

    out = Rewriter(hyde=ExtractiveGenerator())(q)
    assert out.queries == [q]
    assert out.steps[0]["step"] == "hyde" and "no-op" in out.steps[0]["note"] and "extractive" in out.steps[0]["note"]


def test_rewriter_chains_the_steps_and_records_each() -> None:
    q = "Pls tell me the battery warranty and how should I store it?"
    out = Rewriter(normalise=True, decompose=True, paraphrases=["e-bike battery warranty years"])(q)
    assert isinstance(out, Rewritten) and out.original == q
    assert [s["step"] for s in out.steps] == ["normalise", "decompose", "multi_query"]
    assert out.steps[0]["output"] == ["Please tell me the battery warranty and how should I store it?"]
    assert out.queries == [
        "Please tell me the battery warranty?",
        "How should I store it?",
        "e-bike battery warranty years",
    ]
    assert Rewriter()(q).queries == [q] and Rewriter()(q).steps == []
    with pytest.raises(ValueError, match="query"):
        Rewriter()("  ")
