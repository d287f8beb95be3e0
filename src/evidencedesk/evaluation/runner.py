"""evaluate: run a searcher over labelled questions and score and diagnose each one.

For every label the top ``k`` are what ``search`` shows for the same searcher, k and scope (the
searcher is asked for ``k``, as ``search`` asks it: see ``retrieval.first_stage``); the ranking then
goes on to ``depth`` chunks (at least 20, so recall curves and "found deeper" ranks are known). The
top ``k`` are scored against the label's qrels (the chunks inside the scope that hold a gold phrase,
with its grade). A retrieval-only trace is built (context = the top k at or above the score floor)
and ``diagnose`` reads it; ``Desk.diagnose`` reads the traces of real answers instead.

Metrics per question (answerable labels): ``hit@k``, ``recall@k``, ``precision@k``, ``mrr@k``,
``ndcg@k`` (linear gain), ``ndcg_exp@k`` (gain 2**grade - 1) and ``answer_recall@k`` (the share of
grade-2 phrases held whole by some top-k chunk). An answerable label whose evidence no chunk in the
scope holds scores 0 on all of them: the chunker or the scope lost it. Unanswerable labels have no
retrieval metrics; they get ``abstain`` instead (1 when the context is empty), counted apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from evidencedesk.documents import Chunk
from evidencedesk.evaluation import metrics as m
from evidencedesk.evaluation.labels import Label, chunk_text
from evidencedesk.evaluation.taxonomy import diagnose
from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.retrieval.first_stage import FirstStage
from evidencedesk.retrieval.scope import Scope
from evidencedesk.trace import Dropped, Finding, Trace

MIN_DEPTH = 20
RETRIEVAL_METRICS = ("hit", "recall", "precision", "mrr", "ndcg", "ndcg_exp", "answer_recall")


@dataclass
class QuestionResult:
    """One labelled question after evaluation."""

    id: str
    question: str
    tags: tuple[str, ...]
    answerable: bool
    k: int
    rank: int | None  # rank of the first grade-2 chunk within the searched depth; None if absent
    grades: list[int]  # grades of the top k, in rank order
    ranking: list[str]  # chunk ids in rank order, to the searched depth
    relevant: dict[str, int]  # qrels: chunk id -> grade, for chunks inside the scope
    returned: int  # how many candidates the top k held
    context: list[str]  # the ids that passed the score floor
    context_words: int
    metrics: dict[str, float | None]
    findings: list[Finding] = field(default_factory=list)
    top_score: float | None = None

    @property
    def failed(self) -> bool:
        return bool(self.findings)

    def hit(self, n: int) -> bool:
        """True when an answering (grade-2) chunk is within the top ``n``."""
        return self.rank is not None and self.rank <= n

    def to_dict(self) -> dict[str, object]:
        """Every field (lists and dicts copied), the tags as a list."""
        return {**asdict(self), "tags": list(self.tags), "findings": [f.to_dict() for f in self.findings]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> QuestionResult:
        """A row read back from its JSON."""
        return cls(
            id=d["id"],
            question=d["question"],
            tags=tuple(d.get("tags", ())),
            answerable=bool(d["answerable"]),
            k=int(d["k"]),
            rank=d.get("rank"),
            grades=list(d.get("grades", [])),
            ranking=list(d.get("ranking", [])),
            relevant={str(a): int(b) for a, b in d.get("relevant", {}).items()},
            returned=int(d.get("returned", 0)),
            context=list(d.get("context", [])),
            context_words=int(d.get("context_words", 0)),
            metrics=dict(d.get("metrics", {})),
            findings=[Finding(f["stage"], f["label"], f["detail"], f.get("cause", "")) for f in d.get("findings", [])],
            top_score=d.get("top_score"),
        )


def metric_names(k: int) -> list[str]:
    return [f"{name}@{k}" for name in RETRIEVAL_METRICS]


def answer_recall(label: Label, ranked_chunks: Sequence[Chunk]) -> float:
    """The share of the label's grade-2 phrases held whole by at least one of the chunks."""
    answers = label.answers
    if not answers:
        return 0.0
    return sum(any(g.held_by(c) for c in ranked_chunks) for g in answers) / len(answers)


def _retrieval_metrics(
    label: Label, relevant: dict[str, int], ids: list[str], top: list[Chunk], k: int
) -> dict[str, float | None]:
    qrels, run = {label.id: relevant}, {label.id: ids}
    values = {
        f"hit@{k}": m.hit(qrels, run, k),
        f"recall@{k}": m.recall(qrels, run, k),
        f"precision@{k}": m.precision(qrels, run, k),
        f"mrr@{k}": m.mrr(qrels, run, k),
        f"ndcg@{k}": m.ndcg(qrels, run, k, "linear"),
        f"ndcg_exp@{k}": m.ndcg(qrels, run, k, "exponential"),
    }
    out: dict[str, float | None] = {name: per_q.get(label.id, 0.0) for name, per_q in values.items()}
    out[f"answer_recall@{k}"] = answer_recall(label, top)
    return out


def _context(top: list[Candidate], floor: float | None) -> tuple[list[Candidate], list[Dropped]]:
    if floor is None:
        return list(top), []
    kept = [c for c in top if c.score >= floor]
    dropped = [Dropped(c.chunk.id, "floor", f"score {c.score:.3f} < {floor:g}") for c in top if c.score < floor]
    return kept, dropped


def evaluate_one(
    searcher: Searcher,
    label: Label,
    chunks: Sequence[Chunk],
    allowed: Sequence[Chunk],
    scope: Scope,
    k: int,
    floor: float | None = None,
    depth: int | None = None,
) -> QuestionResult:
    """Search, score and diagnose one label (``allowed`` = the chunks inside ``scope``). ``searcher`` is
    a ``FirstStage`` (the Desk's) or any searcher, read as a first stage without diversity."""
    stage = searcher if isinstance(searcher, FirstStage) else FirstStage(searcher)
    top, deep = stage.ranking(label.question, k, max(k, depth or MIN_DEPTH), scope)
    context, dropped = _context(top, floor)
    trace = Trace(
        query=label.question,
        scope=scope.to_dict(),
        method=getattr(searcher, "name", ""),
        retrieved=list(deep),
        context=context,
        dropped=dropped,
    )
    ids = [c.chunk.id for c in deep]
    relevant = label.qrels(allowed) if label.answerable else {}
    if label.answerable:
        metrics = _retrieval_metrics(label, relevant, ids, [c.chunk for c in top], k)
    else:
        metrics = {"abstain": 0.0 if context else 1.0}
    rank = next((i for i, c in enumerate(deep, 1) if label.grade_of(c.chunk) == 2), None)
    return QuestionResult(
        id=label.id,
        question=label.question,
        tags=label.tags,
        answerable=label.answerable,
        k=k,
        rank=rank,
        grades=[label.grade_of(c.chunk) for c in top],
        ranking=ids,
        relevant=relevant,
        returned=len(top),
        context=[c.chunk.id for c in context],
        context_words=sum(len(chunk_text(c.chunk).split()) for c in context),
        metrics=metrics,
        findings=diagnose(label, trace, chunks, k=k),
        top_score=deep[0].score if deep else None,
    )


def evaluate(
    searcher: Searcher,
    labels: Sequence[Label],
    chunks: Sequence[Chunk],
    scope: Scope | None,
    k: int,
    floor: float | None = None,
    depth: int | None = None,
) -> list[QuestionResult]:
    """Evaluate every label with ``searcher`` over ``chunks`` (all indexed chunks) inside ``scope``.

    ``scope`` None means the default ``Scope()``; pass ``Scope.everything()`` for no filter.
    """
    if k < 1:
        raise ValueError(f"k: must be at least 1, got {k}")
    if depth is not None and depth < 1:
        raise ValueError(f"depth: must be at least 1, got {depth}")
    scope = scope if scope is not None else Scope()
    allowed = [c for c in chunks if scope.allows_chunk(c)]
    return [evaluate_one(searcher, x, chunks, allowed, scope, k, floor, depth) for x in labels]


__all__ = [
    "MIN_DEPTH",
    "RETRIEVAL_METRICS",
    "QuestionResult",
    "answer_recall",
    "evaluate",
    "evaluate_one",
    "metric_names",
]
