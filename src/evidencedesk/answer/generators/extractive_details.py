"""The shapes of what the extractive generator reports: the evidence it weighs and the details it leaves
in the trace (``Generation.details``) for each of its two paths, scored units and the reader."""

from __future__ import annotations

from typing import NotRequired, TypedDict


class UnitEvidence(TypedDict):
    """The best unit's evidence beyond its scores: the answerability features of the same names."""

    question_terms: int
    paragraph_words: NotRequired[float]
    chunk_words: NotRequired[float]
    type_span: NotRequired[bool]


class Reading(TypedDict):
    """The cross-encoder's reading: its best passage and unit scores, and the unit that should lead."""

    ce_passage: float
    ce_sentence: float
    best: int  # index of the unit that leads the answer


class AssessDetails(TypedDict):
    """How the scored-units path decided: scorer, answerability model, probability, threshold, features."""

    scorer: str
    answerability_model: str
    answerability: float
    threshold: float
    languages: list[str]
    features: dict[str, float]
    reader_best: NotRequired[int]  # taken out again before the details reach the trace
    dense_error: NotRequired[str]
    short_answer: NotRequired[str]


class ReaderDetails(TypedDict):
    """How the reader path decided: the reader, its best unit score and threshold, the units it read."""

    scorer: str
    reader: str
    reader_score: float | None
    threshold: float
    languages: list[str]
    list_question: bool
    units_read: int
    top_units: list[dict[str, object]]


__all__ = ["AssessDetails", "Reading", "ReaderDetails", "UnitEvidence"]
