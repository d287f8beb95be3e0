"""AskRequest: the one declaration of what Desk.ask and Desk.ask_stream take, checked when it is made."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from evidencedesk import AskRequest, ConfigError, Desk, Scope
from evidencedesk.desk.request import FIELDS


def test_fields_left_out_stay_none_and_the_rest_are_kept() -> None:
    request = AskRequest("How long do refunds take?", {"statuses": ["current"]}, method="bm25", k=3, save=False)
    assert (request.method, request.k, request.save) == ("bm25", 3, False)
    assert request.scope == {"statuses": ["current"]}
    assert request.generator is None and request.candidates is None and request.explain_abstention is False


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"question": "  "}, "question"),
        ({"method": "grep"}, "method"),
        ({"k": 0}, "k"),
        ({"candidates": 0}, "candidates"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"k": 5, "candidates": 3}, "candidates"),
    ],
)
def test_a_bad_field_raises_config_error_naming_it(fields: dict[str, object], named: str) -> None:
    values = {"question": "What is the warranty?", **fields}
    with pytest.raises(ConfigError, match=rf"^{named}: "):
        AskRequest(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fields", "named"),
    [({"question": 3}, "question"), ({"scope": ["current"]}, "scope"), ({"rewrite": "hyde"}, "rewrite")],
)
def test_a_field_of_the_wrong_kind_raises_type_error(fields: dict[str, object], named: str) -> None:
    with pytest.raises(TypeError, match=rf"^{named}: "):
        AskRequest(**{"question": "What is the warranty?", **fields})  # type: ignore[arg-type]


def test_of_builds_from_a_question_or_replaces_the_fields_of_a_request() -> None:
    made = AskRequest.of("What is the warranty?", Scope.everything(), k=2)
    assert made.k == 2 and isinstance(made.scope, Scope)
    again = AskRequest.of(made, None, method="dense")
    assert (again.k, again.method, again.question) == (2, "dense", made.question)
    assert AskRequest.of(made) is made
    with pytest.raises(ConfigError, match="candidates"):
        AskRequest.of(made, candidates=1)  # the replaced request is checked again


def test_an_unknown_keyword_is_a_type_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="'top_k'"):
        AskRequest.of("What is the warranty?", top_k=3)
    with pytest.raises(TypeError, match="'question'"):
        AskRequest.of(AskRequest("What is the warranty?"), question="Another?")
    with Desk(tmp_path / "store") as desk:
        for ask in (desk.ask, desk.ask_stream):
            with pytest.raises(TypeError, match="'budget'"):
                ask("What is the warranty?", budget=300)


def test_ask_and_ask_stream_take_the_request_not_their_own_parameter_lists() -> None:
    for method in (Desk.ask, Desk.ask_stream):
        params = list(inspect.signature(method).parameters)
        assert params == ["self", "question", "scope", "fields"], method.__name__
    assert FIELDS[:2] == ("question", "scope") and "max_tokens" in FIELDS
