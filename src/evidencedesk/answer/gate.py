"""The answerability gate: abstain before a language model runs when the evidence does not answer.

The fitted answerability model (``generators.answerability``, read through the extractive
generator's ``assess``, which computes its features) gives the probability that the context answers
the question. Below the model's threshold, or with no context at all, the gate returns an abstention
and the language model is never called, so an abstention costs no generation. Otherwise it returns
None and the details (probability, threshold, scorer) go into the trace with the model's answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NotRequired, Protocol, TypedDict, runtime_checkable

from evidencedesk.answer.generators.base import Generation
from evidencedesk.answer.generators.parse import ABSTAIN_ANSWER
from evidencedesk.retrieval.candidates import Candidate


class GateDetails(TypedDict):
    """What the gate adds to the trace's generation details: its verdict and, when it assessed, the figures."""

    gate: str  # "passed" or "abstained before generation"
    gate_reason: NotRequired[str]
    answerability: NotRequired[float]
    threshold: NotRequired[float]
    answerability_model: NotRequired[object]
    scorer: NotRequired[object]


def _number(value: object) -> float:
    if not isinstance(value, int | float | str):
        raise TypeError(f"the assessor gave {value!r} where a number belongs")
    return float(value)


@runtime_checkable
class Assessor(Protocol):
    """What the gate needs: the extractive generator's ``assess``."""

    def assess(self, question: str, context: list[Candidate]) -> tuple[object, object, Mapping[str, object]]: ...


class AnswerabilityGate:
    """``check(question, context)``: an abstention when the evidence does not answer, else None."""

    def __init__(self, assessor: Assessor) -> None:
        self.assessor = assessor

    def check(self, question: str, context: list[Candidate]) -> tuple[Generation | None, GateDetails]:
        """``(abstention or None, details for the trace)``."""
        if not context:
            why = "no chunk of the documents reached the context"
            empty: GateDetails = {"gate": "abstained before generation", "gate_reason": why}
            return Generation(ABSTAIN_ANSWER, (), True, why, ABSTAIN_ANSWER, dict(empty)), empty
        _, _, assessed = self.assessor.assess(question, context)
        probability, threshold = _number(assessed["answerability"]), _number(assessed["threshold"])
        details: GateDetails = {
            "answerability": probability,
            "threshold": threshold,
            "answerability_model": assessed.get("answerability_model", ""),
            "scorer": assessed.get("scorer", ""),
            "gate": "passed",
        }
        if probability >= threshold:
            return None, details
        why = (
            f"the evidence shown does not answer the question (answerability {probability:.2f}, "
            f"needed {threshold:.2f}); the language model was not asked"
        )
        details = {**details, "gate": "abstained before generation", "gate_reason": why}
        return Generation(ABSTAIN_ANSWER, (), True, why, ABSTAIN_ANSWER, dict(details)), details


__all__ = ["AnswerabilityGate", "Assessor", "GateDetails"]
