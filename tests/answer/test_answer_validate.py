"""Validation: every cited id checked, every sentence checked against the shown chunks it cites."""

from __future__ import annotations

import pytest

from evidencedesk.answer.generators.base import Generation
from evidencedesk.answer.validate import NOT_SHOWN, SHOWN, UNKNOWN, check_support, validate
from tests.support.answer import as_candidates, holding, kestrel_by_id, make_chunk

WINDOW = "within 30 days of the delivery date"


def pairs(findings: list) -> list[tuple[str, str]]:
    return [(f.stage, f.label) for f in findings]


def test_wrong_number_citing_the_current_returns_chunk_is_a_generation_finding() -> None:
    current = holding(WINDOW, "kc-returns-v3")
    shown = as_candidates([current])
    checked = validate(Generation(f"Return within 60 days. [{current.id}]", (current.id,)), shown, kestrel_by_id())
    assert pairs(checked.findings) == [("generation", "unsupported_answer")]
    assert "60" in checked.findings[0].detail
    assert checked.abstained and checked.cited == ()
    assert "60" in checked.answer  # the abstention says what is missing
    (sentence,) = checked.flagged
    assert sentence.sentence == "Return within 60 days." and sentence.cited == (current.id,)
    assert checked.citation_status == {current.id: SHOWN}


def test_correct_sentence_citing_a_chunk_that_was_not_shown_is_a_citation_finding() -> None:
    by_id = kestrel_by_id()
    current = holding(WINDOW, "kc-returns-v3")
    intro = by_id["kestrel:kc-returns-v3:c0"]
    assert intro.id != current.id
    checked = validate(
        Generation(f"Return within 30 days of delivery. [{current.id}]", (current.id,)), as_candidates([intro]), by_id
    )
    assert pairs(checked.findings) == [("citation", "unsupported_answer")]
    assert "exists but was not shown" in checked.findings[0].detail
    assert checked.citation_status == {current.id: NOT_SHOWN}
    assert checked.abstained and current.id not in checked.answer


def test_a_cited_id_that_exists_nowhere_is_reported_as_such() -> None:
    current = holding(WINDOW, "kc-returns-v3")
    answer = f"You can return most items within 30 days of the delivery date. [{current.id}][kc-returns-v9:c4]"
    checked = validate(Generation(answer), as_candidates([current]), kestrel_by_id())
    assert checked.citation_status == {current.id: SHOWN, "kc-returns-v9:c4": UNKNOWN}
    assert pairs(checked.findings) == [("citation", "unsupported_answer")]
    assert "exists nowhere" in checked.findings[0].detail
    # The supported sentence stays, citing only what was shown.
    assert not checked.abstained
    assert checked.answer == f"You can return most items within 30 days of the delivery date. [{current.id}]"
    assert checked.cited == (current.id,)


def test_each_sentence_is_checked_against_its_own_citations() -> None:
    a = make_chunk("kc-a:c0", "Stem bolts take 5 Nm on every frame size.")
    b = make_chunk("kc-b:c0", "Pedals take 35 Nm and the left pedal has a reverse thread.")
    answer = (
        "Stem bolts take 5 Nm. [kc-a:c0] Pedals take 35 Nm. [kc-a:c0] The left pedal has a reverse thread. [kc-b:c0]"
    )
    checked = validate(Generation(answer), as_candidates([a, b]), {"kc-a:c0", "kc-b:c0"})
    assert [s.supported for s in checked.sentences] == [True, False, True]
    assert checked.answer == "Stem bolts take 5 Nm. [kc-a:c0] The left pedal has a reverse thread. [kc-b:c0]"
    assert checked.cited == ("kc-a:c0", "kc-b:c0")
    assert pairs(checked.findings) == [("generation", "unsupported_answer")]


def test_citation_before_the_full_stop() -> None:
    a = make_chunk("kc-a:c0", "Gift cards are valid for 3 years.")
    b = make_chunk("kc-b:c0", "Parts ship free over 3,000 BDT.")
    answer = "Gift cards are valid for 3 years [kc-a:c0]. Parts ship free over 3,000 BDT [kc-b:c0; kc-a:c0]."
    checked = validate(Generation(answer), as_candidates([a, b]), {"kc-a:c0", "kc-b:c0"})
    assert checked.answer == (
        "Gift cards are valid for 3 years [kc-a:c0]. Parts ship free over 3,000 BDT [kc-b:c0] [kc-a:c0]."
    )
    assert [s.supported for s in checked.sentences] == [True, True] and checked.findings == []
    wrong = "Gift cards are valid for 3 years [kc-a:c0]. Parts ship free over 9,000 BDT [kc-b:c0]."
    assert validate(Generation(wrong), as_candidates([a, b]), {"kc-a:c0", "kc-b:c0"}).answer == (
        "Gift cards are valid for 3 years [kc-a:c0]."
    )


def test_uncited_sentence_is_flagged_and_dropped() -> None:
    a = make_chunk("kc-a:c0", "Gift cards are valid for 3 years.")
    checked = validate(Generation("Gift cards are valid for 3 years. [kc-a:c0] They can be swapped for cash."),
                       as_candidates([a]), {"kc-a:c0"})  # fmt: skip
    assert checked.answer == "Gift cards are valid for 3 years. [kc-a:c0]"
    assert checked.flagged[0].why == "cites no chunk"
    assert pairs(checked.findings) == [("citation", "unsupported_answer")]


def test_content_word_share_threshold_and_stemming() -> None:
    text = "Approved refunds go back to the original payment method within 5 business days."
    assert check_support("Refunds are paid to the original payment method within 5 business days.", [text])[0]
    ok, why, missing = check_support("Refunds arrive as store credit vouchers for loyal shoppers.", [text])
    assert not ok and "content words" in why and "credit" in missing
    ok, why, missing = check_support("Refunds go back within 10 business days.", [text])
    assert not ok and missing == ["10"]


def test_abstentions_pass_through() -> None:
    checked = validate(Generation("", abstained=True, reason="no return window"), [], set())
    assert checked.abstained and checked.reason == "no return window" and checked.findings == []
    llm = validate(Generation("INSUFFICIENT: the context does not mention scooters"), [], set())
    assert llm.abstained and "scooters" in llm.reason
    with pytest.raises(ValueError, match="min_share"):
        validate(Generation("x"), [], set(), min_share=0)


def test_all_chunk_ids_may_be_a_function() -> None:
    checked = validate(Generation("Fact 1. [x:c1]"), [], lambda cid: cid.startswith("x:"))
    assert checked.citation_status == {"x:c1": NOT_SHOWN}
