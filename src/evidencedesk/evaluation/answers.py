"""Answer-level evaluation: score the answers ``ask`` gave to every label.

The Desk answers each label through its own ``ask`` (``Desk.evaluate(answers=...)``: the same
searcher, reranker, floors, gate, generator and validation) and hands the answers to
``score_answers``; ``evaluate_answers`` answers with ``answer.pipeline.ask`` over a searcher given
here. Then:

* the retrieval-by-answer table (``table.retrieval_by_answer``): did the gold reach the context,
  and was the answer correct and supported;
* faithfulness: the share of answer sentences that their cited chunks support after validation.
  Sentences validation flagged or dropped count as unsupported; abstentions have no sentences;
* citation validity: the share of answers (the generator did not abstain) that cite at least one
  chunk and whose every cited id was shown to the generator;
* abstention precision (abstained and unanswerable / abstained) and recall (abstained and
  unanswerable / unanswerable), "abstained" meaning the validated answer is an abstention;
* answer accuracy: the share of answerable labels answered correctly (``answer_matches`` on the
  label's ``answer``, and no abstention);
* selective answering (``evaluation.selective``): coverage, accuracy among answered, answered-but-wrong,
  and the risk-coverage curve over the reader's threshold with a suggested threshold for these labels,
  from each record's ``reader_score`` (the reader's best unit score, in the trace's generation details).

A ratio whose denominator is zero is ``None`` (nothing to measure), never 0 or 1.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from evidencedesk.answer.generators.base import Generator
from evidencedesk.answer.pipeline import ask
from evidencedesk.answer.validate import SHOWN, ValidatedAnswer
from evidencedesk.documents import Chunk
from evidencedesk.evaluation.labels import Label
from evidencedesk.evaluation.selective import Selective, SelectiveReport, assess
from evidencedesk.evaluation.table import AnswerTable, answer_matches, gold_in_context, retrieval_by_answer
from evidencedesk.retrieval.candidates import Searcher
from evidencedesk.retrieval.scope import Scope
from evidencedesk.trace import Finding, Trace


def ratio(part: int, whole: int) -> float | None:
    """``part / whole``, or None when ``whole`` is 0."""
    return part / whole if whole else None


@dataclass(frozen=True)
class AnswerRecord:
    """One label after answering: what came back and how it scored."""

    id: str
    answerable: bool
    answer: str
    abstained: bool
    correct: bool  # answerable, matched the label's answer and did not abstain
    gold_in_context: bool
    cell: str | None  # the retrieval-by-answer cell (answerable labels only)
    sentences: int  # sentences of the generator's answer that validation checked
    supported: int  # of those, the ones their cited chunks support
    generated: bool  # the generator answered (it did not abstain itself)
    citations_valid: bool  # it cited something and every cited id was shown
    cited: tuple[str, ...] = ()
    context: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()  # the answer's trace's findings (its diagnosis), root cause first
    reader_score: float | None = None  # the reader's best unit score (None: no reader ran)
    best_unit_correct: bool = False  # the reader's best unit alone matches the label's answer

    def to_dict(self) -> dict[str, object]:
        return {
            **asdict(self),
            "cited": list(self.cited),
            "context": list(self.context),
            "findings": [f.to_dict() for f in self.findings],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> AnswerRecord:
        """A record read back from its JSON."""
        score = d.get("reader_score")
        return cls(
            id=str(d["id"]),
            answerable=bool(d["answerable"]),
            answer=str(d["answer"]),
            abstained=bool(d["abstained"]),
            correct=bool(d["correct"]),
            gold_in_context=bool(d["gold_in_context"]),
            cell=d.get("cell"),
            sentences=int(d["sentences"]),
            supported=int(d["supported"]),
            generated=bool(d["generated"]),
            citations_valid=bool(d["citations_valid"]),
            cited=tuple(d.get("cited", ())),
            context=tuple(d.get("context", ())),
            findings=tuple(Finding(**f) for f in d.get("findings", ())),
            reader_score=float(score) if score is not None else None,
            best_unit_correct=bool(d.get("best_unit_correct", False)),
        )


def record(label: Label, checked: ValidatedAnswer, trace: Trace, cell: str | None = None) -> AnswerRecord:
    """Score one answered label; ``cell`` is its retrieval-by-answer cell when known."""
    generated = bool(checked.sentences or checked.citation_status)
    statuses = checked.citation_status.values()
    return AnswerRecord(
        id=label.id,
        answerable=label.answerable,
        answer=checked.answer,
        abstained=checked.abstained,
        correct=label.answerable and not checked.abstained and answer_matches(label.answer, checked.answer),
        gold_in_context=label.answerable and gold_in_context(label, trace),
        cell=cell,
        sentences=len(checked.sentences),
        supported=sum(s.supported for s in checked.sentences),
        generated=generated,
        citations_valid=generated and bool(statuses) and all(s == SHOWN for s in statuses),
        cited=tuple(checked.cited),
        context=tuple(c.chunk.id for c in trace.context),
        findings=tuple(trace.findings),
        **reader_evidence(label, getattr(trace, "generation", None) or {}),
    )


def reader_evidence(label: Label, details: Mapping[str, Any]) -> dict[str, Any]:
    """``reader_score`` and ``best_unit_correct`` of one answered label, from its generation details (the trace's
    ``generation``, or ``ask``'s result ``generation``): the reader's best unit score and its best unit."""
    score = details.get("reader_score")
    units = details.get("top_units") or []
    best = str(units[0].get("text", "")) if units and isinstance(units[0], Mapping) else ""
    return {
        "reader_score": float(score) if isinstance(score, int | float) else None,
        "best_unit_correct": bool(label.answerable and best and answer_matches(label.answer, best)),
    }


def selective_records(records: Sequence[AnswerRecord]) -> list[Selective]:
    """The records as selective answering reads them."""
    return [Selective(r.answerable, not r.abstained, r.correct, r.reader_score, r.best_unit_correct) for r in records]


@dataclass
class AnswerEvaluation:
    """Answer-level results for a set of labels: the table, the rates and one record per label."""

    generator: str
    records: list[AnswerRecord]
    table: AnswerTable = field(default_factory=AnswerTable)

    @property
    def answerable(self) -> list[AnswerRecord]:
        return [r for r in self.records if r.answerable]

    @property
    def unanswerable(self) -> list[AnswerRecord]:
        return [r for r in self.records if not r.answerable]

    @property
    def faithfulness(self) -> float | None:
        return ratio(sum(r.supported for r in self.records), sum(r.sentences for r in self.records))

    @property
    def citation_validity(self) -> float | None:
        generated = [r for r in self.records if r.generated]
        return ratio(sum(r.citations_valid for r in generated), len(generated))

    @property
    def abstention_precision(self) -> float | None:
        abstained = [r for r in self.records if r.abstained]
        return ratio(sum(not r.answerable for r in abstained), len(abstained))

    @property
    def abstention_recall(self) -> float | None:
        return ratio(sum(r.abstained for r in self.unanswerable), len(self.unanswerable))

    @property
    def accuracy(self) -> float | None:
        return ratio(sum(r.correct for r in self.answerable), len(self.answerable))

    @property
    def selective(self) -> SelectiveReport:
        """Coverage, accuracy among answered, answered-but-wrong, the risk-coverage curve, a suggested threshold."""
        return assess(selective_records(self.records))

    @property
    def n_answerable(self) -> int:
        return len(self.answerable)

    @property
    def n_unanswerable(self) -> int:
        return len(self.unanswerable)

    @property
    def correct(self) -> int:
        """Answerable questions answered correctly."""
        return sum(r.correct for r in self.answerable)

    @property
    def abstained_answerable(self) -> int:
        return sum(r.abstained for r in self.answerable)

    @property
    def abstained_unanswerable(self) -> int:
        """Abstentions on questions the documents cannot answer: the right ones."""
        return sum(r.abstained for r in self.unanswerable)

    @property
    def answered_unanswerable(self) -> int:
        return sum(not r.abstained for r in self.unanswerable)

    @property
    def sentences(self) -> int:
        """Answer sentences that validation checked."""
        return sum(r.sentences for r in self.records)

    @property
    def supported_sentences(self) -> int:
        return sum(r.supported for r in self.records)

    @property
    def answers_generated(self) -> int:
        """Answers the generator gave (it did not abstain itself)."""
        return sum(r.generated for r in self.records)

    @property
    def citations_valid(self) -> int:
        """Answers that cite something and only chunks they were shown."""
        return sum(r.citations_valid for r in self.records)

    def to_dict(self) -> dict[str, object]:
        return {
            "generator": self.generator,
            "n_answerable": self.n_answerable,
            "n_unanswerable": self.n_unanswerable,
            "correct": self.correct,
            "accuracy": self.accuracy,
            "abstained_answerable": self.abstained_answerable,
            "abstained_unanswerable": self.abstained_unanswerable,
            "answered_unanswerable": self.answered_unanswerable,
            "abstention_precision": self.abstention_precision,
            "abstention_recall": self.abstention_recall,
            "sentences": self.sentences,
            "supported_sentences": self.supported_sentences,
            "faithfulness": self.faithfulness,
            "answers_generated": self.answers_generated,
            "citations_valid": self.citations_valid,
            "citation_validity": self.citation_validity,
            "selective": self.selective.to_dict(),
            "table": self.table.to_dict(),
            "questions": [r.to_dict() for r in self.records],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> AnswerEvaluation:
        """An answer evaluation read back from its JSON (the rates are computed again from its records)."""
        records = [AnswerRecord.from_dict(r) for r in d.get("questions", [])]
        return cls(str(d["generator"]), records, AnswerTable.from_dict(d["table"]))


def evaluate_answers(
    searcher: Searcher,
    labels: Sequence[Label],
    chunks: Sequence[Chunk] | Mapping[str, Chunk],
    generator: Generator,
    scope: Scope | None = None,
    k: int = 5,
    evidence: Sequence[Chunk] | None = None,
    **ask_options: Any,
) -> AnswerEvaluation:
    """Answer every label with ``ask`` (same searcher, scope and k for all) and score the answers.

    ``chunks`` is every indexed chunk: a list, or a mapping by id (such as one that reads the store
    on demand, then ``evidence`` names the chunks that hold the labels' gold phrases, so nothing
    iterates the whole mapping). ``ask_options`` go to ``ask`` unchanged (``candidates``,
    ``reranker``, ``budget_tokens``, ``floor``, ``order`` ...).
    """
    if k < 1:
        raise ValueError(f"k: must be at least 1, got {k}")
    by_id: Mapping[str, Chunk] = chunks if isinstance(chunks, Mapping) else {c.id: c for c in chunks}
    indexed = list(evidence) if evidence is not None else list(by_id.values())
    scope = scope if scope is not None else Scope()
    answered = [
        (label, *ask(label.question, searcher, by_id, generator, scope=scope, k=k, **ask_options)) for label in labels
    ]
    return score_answers(getattr(generator, "name", type(generator).__name__), answered, indexed, by_id)


def score_answers(
    generator: str,
    answered: Sequence[tuple[Label, ValidatedAnswer, Trace]],
    indexed: Sequence[Chunk],
    known_ids: Container[str] | None = None,
) -> AnswerEvaluation:
    """Score answers already given: ``(label, validated answer, trace)`` per label, as ``ask`` made them.
    ``indexed`` holds (at least) every chunk with a gold phrase of the labels; ``known_ids`` answers "is
    this cited id indexed?" (default: the ids of ``indexed``), as for ``diagnose``."""
    table = retrieval_by_answer([(label, trace) for label, _, trace in answered], list(indexed), known_ids)
    cells = {qid: cell for cell, ids in table.cells.items() for qid in ids}
    records = [record(label, checked, trace, cells.get(label.id)) for label, checked, trace in answered]
    return AnswerEvaluation(generator, records, table)


__all__ = [
    "AnswerEvaluation",
    "AnswerRecord",
    "evaluate_answers",
    "ratio",
    "reader_evidence",
    "record",
    "score_answers",
    "selective_records",
]
