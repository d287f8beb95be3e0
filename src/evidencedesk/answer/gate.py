"""The answerability gate: abstain before a language model runs when the evidence does not answer.

The fitted answerability model (``generators.answerability``, read through the extractive
generator's ``assess``, which computes its features) gives the probability that the context answers
the question. Below the model's threshold, or with no context at all, the gate returns an abstention
and the language model is never called, so an abstention costs no generation. Otherwise it returns
None and the details (probability, threshold, scorer) go into the trace with the model's answer.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from evidencedesk.answer.generators.base import Generation
from evidencedesk.answer.generators.parse import ABSTAIN_ANSWER
from evidencedesk.retrieval.candidates import Candidate


@runtime_checkable
class Assessor(Protocol):
    """What the gate needs: the extractive generator's ``assess``."""

    def assess(self, question: str, context: list[Candidate]) -> tuple[Any, Any, dict[str, Any]]: ...


class AnswerabilityGate:
    """``check(question, context)``: an abstention when the evidence does not answer, else None."""

    def __init__(self, assessor: Assessor) -> None:
        self.assessor = assessor
        self.last: dict[str, Any] = {}

    def check(self, question: str, context: list[Candidate]) -> tuple[Generation | None, dict[str, Any]]:
        """``(abstention or None, details for the trace)``."""
        if not context:
            why = "no chunk of the documents reached the context"
            empty: dict[str, Any] = {"gate": "abstained before generation", "gate_reason": why}
            return Generation(ABSTAIN_ANSWER, (), True, why, ABSTAIN_ANSWER, empty), empty
        _, _, assessed = self.assessor.assess(question, context)
        probability, threshold = float(assessed["answerability"]), float(assessed["threshold"])
        details = {
            "answerability": probability,
            "threshold": threshold,
            "answerability_model": assessed.get("answerability_model", ""),
            "scorer": assessed.get("scorer", ""),
        }
        if probability >= threshold:
            return None, {**details, "gate": "passed"}
        why = (
            f"the evidence shown does not answer the question (answerability {probability:.2f}, "
            f"needed {threshold:.2f}); the language model was not asked"
        )
        details = {**details, "gate": "abstained before generation", "gate_reason": why}
        return Generation(ABSTAIN_ANSWER, (), True, why, ABSTAIN_ANSWER, details), details


__all__ = ["AnswerabilityGate", "Assessor"]
