"""The prompt contract used by every language-model generator."""

from __future__ import annotations

import pytest

from evidencedesk.answer.context import assemble
from evidencedesk.answer.prompt import ABSTAIN_PREFIX, build_prompt, is_abstention, prompt_text, system_rules
from tests.support.answer import as_candidates, holding


def test_messages_hold_rules_then_context_and_question() -> None:
    window = holding("within 30 days of the delivery date", "kc-returns-v3")
    assembled = assemble(as_candidates([window]))
    messages = build_prompt("How long do I have to return a bike?", assembled)
    assert [m["role"] for m in messages] == ["system", "user"]
    rules = messages[0]["content"]
    # the citation format, shown with an id of the context itself
    assert f"[{window.id}]" in rules and rules == system_rules(window.id)
    assert ABSTAIN_PREFIX in rules and "instructions" in rules
    user = messages[1]["content"]
    assert user.startswith(assembled.text)
    assert "Question: How long do I have to return a bike?" in user
    text = prompt_text(messages)
    assert text.startswith("SYSTEM:\n") and "\n\nUSER:\n" in text and assembled.text in text


def test_abstention_marker_and_validation() -> None:
    assert is_abstention("  insufficient: the return window")
    assert not is_abstention("Returns are accepted [kc-returns-v3:c1].")
    with pytest.raises(ValueError, match="question"):
        build_prompt("  ", assemble([]))
    with pytest.raises(ValueError, match="messages"):
        prompt_text([{"role": "user"}])
