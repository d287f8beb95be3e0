"""The retrieval-by-answer table: did the gold reach the context, and was the answer right and supported?

Two yes/no questions per answerable label give four cells:

=====================  ==============================  ==============================
                       answer correct and supported    answer wrong or unsupported
=====================  ==============================  ==============================
gold in context        working                         generation or context failure
gold not in context    right without evidence          retrieval miss
=====================  ==============================  ==============================

"Correct" is ``answer_matches(label.answer, trace.answer)`` (and no abstention); "supported" means
diagnosis found no generation or citation problem for the trace. When the gold never reached the
context the answer cannot be supported by it, so that row asks only whether the answer is correct:
a correct answer there came from somewhere else (the model's memory, or a chunk the labels missed)
and is counted as "right without evidence".
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from evidencedesk.documents import Chunk
from evidencedesk.evaluation.labels import Label
from evidencedesk.evaluation.taxonomy import diagnose
from evidencedesk.text import content_words, numbers, share_present
from evidencedesk.trace import Trace

CELLS = ("working", "generation or context failure", "retrieval miss", "right without evidence")
MIN_SHARE_WITH_NUMBERS = 0.25
MIN_SHARE_WORDS_ONLY = 0.5


def answer_matches(expected: str, got: str | None) -> bool:
    """True when ``got`` carries the key facts of ``expected``.

    Key facts are the numbers of ``expected`` (all must appear in ``got``, Bangla digits and thousands
    commas normalised) and its content words (stemmed, stopwords removed). When ``expected`` has
    numbers they carry the fact, so a quarter of its content words is enough; without numbers at
    least half must appear. An empty ``got`` never matches.
    """
    if not got or not got.strip():
        return False
    need_numbers = numbers(expected)
    have_numbers = set(numbers(got))
    if any(n not in have_numbers for n in need_numbers):
        return False
    share = share_present(content_words(expected), set(content_words(got)))
    return share >= (MIN_SHARE_WITH_NUMBERS if need_numbers else MIN_SHARE_WORDS_ONLY)


def gold_in_context(label: Label, trace: Trace) -> bool:
    """True when some context chunk holds a grade-2 phrase of the label."""
    return any(label.grade_of(c.chunk) == 2 for c in trace.context)


def cell_of(label: Label, trace: Trace, indexed: list[Chunk], known_ids: Container[str] | None = None) -> str:
    """The table cell of one answerable question."""
    if not label.answerable:
        raise ValueError(f"label {label.id}: the retrieval-by-answer table is for answerable labels only")
    correct = answer_matches(label.answer, trace.answer) and not trace.abstained
    if not gold_in_context(label, trace):
        return CELLS[3] if correct else CELLS[2]
    found = diagnose(label, trace, indexed, known_ids=known_ids)
    supported = not any(f.stage in ("generation", "citation") for f in found)
    return CELLS[0] if correct and supported else CELLS[1]


@dataclass
class AnswerTable:
    """Counts and question ids per cell, plus how the unanswerable questions were handled."""

    cells: dict[str, list[str]] = field(default_factory=lambda: {c: [] for c in CELLS})
    abstained_correctly: list[str] = field(default_factory=list)
    answered_unanswerable: list[str] = field(default_factory=list)

    def count(self, cell: str) -> int:
        return len(self.cells[cell])

    def to_dict(self) -> dict[str, object]:
        return {
            "cells": {c: {"count": len(ids), "ids": list(ids)} for c, ids in self.cells.items()},
            "abstained_correctly": list(self.abstained_correctly),
            "answered_unanswerable": list(self.answered_unanswerable),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> AnswerTable:
        """A table read back from its JSON."""
        return cls(
            {str(c): [str(i) for i in cell["ids"]] for c, cell in d["cells"].items()},
            [str(i) for i in d["abstained_correctly"]],
            [str(i) for i in d["answered_unanswerable"]],
        )


def retrieval_by_answer(
    pairs: Iterable[tuple[Label, Trace]], indexed: list[Chunk], known_ids: Container[str] | None = None
) -> AnswerTable:
    """Sort each (label, answered trace) into its cell; unanswerable labels are tallied apart.
    ``indexed`` and ``known_ids`` as for ``diagnose``."""
    table = AnswerTable()
    for label, trace in pairs:
        if label.answerable:
            table.cells[cell_of(label, trace, indexed, known_ids)].append(label.id)
        elif trace.abstained or not (trace.answer and trace.answer.strip()):
            table.abstained_correctly.append(label.id)
        else:
            table.answered_unanswerable.append(label.id)
    return table


__all__ = ["CELLS", "AnswerTable", "answer_matches", "cell_of", "gold_in_context", "retrieval_by_answer"]
