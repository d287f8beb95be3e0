"""diagnose: which stage lost the evidence for one labelled question, read off its trace.

A finding is a (stage, label) pair with a detail. Stages are checked in pipeline order and the
findings come back sorted by stage, so the first one is the root cause: a fact lost early cannot be
repaired later.

Checks, in stage order:

- ingestion/missed_evidence: a grade-2 phrase is whole in no indexed chunk.
- retrieval/missed_evidence: the answer is indexed but in none of the top k, with what lost it (``cause``):
  the first stage (its deeper rank, if any), the reranker (below its min_score, or moved below the top
  k) or collapsing (folded into another chunk of its page that the list kept).
- retrieval/irrelevant_match: rank 1 has grade 0 while an answer sits lower in the top k.
- retrieval/stale_document: a top-k candidate is not ``current`` or not valid on the scope's date.
- context/missed_evidence: an answer in the top k, or folded into one as a same-page neighbour, did not
  reach the context; ``trace.dropped`` says why and the ``cause`` is its reason (floor, duplicate,
  budget; collapse for a neighbour).
- context/irrelevant_match: an unanswerable question got a non-empty context.
- context/duplicate_chunks: two context chunks with ``word_overlap`` at or above the threshold.
- generation/missed_evidence: the generator abstained although the context held the answer.
- generation/unsupported_answer: numbers of the answer absent from its cited (shown) chunks, or under
  half of its content words there; or an answer to a question the documents cannot answer.
- citation/unsupported_answer: no citation, or a cited id that was not shown (found elsewhere in the
  index, or nowhere).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from evidencedesk.documents import Chunk
from evidencedesk.evaluation.labels import Gold, Label, chunk_text
from evidencedesk.retrieval.candidates import Candidate
from evidencedesk.retrieval.scope import Scope
from evidencedesk.text import content_words, numbers, share_present
from evidencedesk.text.overlap import DUPLICATE_THRESHOLD, word_overlap
from evidencedesk.trace import Dropped, Finding, Trace

STAGES = ("ingestion", "retrieval", "context", "generation", "citation")  # in pipeline order: the first is the root
# what was seen, independent of where
LABELS = ("missed_evidence", "irrelevant_match", "stale_document", "duplicate_chunks", "unsupported_answer")
# what lost an answer phrase (``Finding.cause``): the chunker, the first-stage ranking, collapsing to one
# chunk per page, the reranker's min_score, the reranker's order, and the context's own reasons
# (``answer.context``: the floor, a duplicate, the token budget, a chunk shown in part), or the generator
CAUSES = (
    "chunking",
    "first_stage",
    "collapse",
    "not_relevant",
    "rerank",
    "floor",
    "duplicate",
    "budget",
    "trimmed",
    "generation",
)
MIN_WORD_SUPPORT = 0.5  # share of the answer's content words its cited chunks must hold
_ORDER = {s: i for i, s in enumerate(STAGES)}


def _short(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _first_rank(gold: Gold, cands: Sequence[Candidate]) -> int | None:
    return next((i for i, c in enumerate(cands, 1) if gold.held_by(c.chunk)), None)


def _scope_of(trace: Trace) -> Scope | None:
    try:
        return Scope.from_dict(trace.scope) if trace.scope else None
    except (ValueError, TypeError):
        return None


@dataclass(frozen=True)
class _Loss:
    """Where one answer phrase that reached neither the top k nor the context was lost."""

    stage: str  # retrieval or context
    cause: str  # one of CAUSES
    detail: str


def _dropped(trace: Trace, chunk_id: str) -> Dropped | None:
    return next((d for d in trace.dropped if d.chunk_id == chunk_id), None)


def _why(dropped: Dropped | None) -> str:
    if dropped is None:
        return ""
    return f" ({dropped.reason}{': ' + dropped.detail if dropped.detail else ''})"


def _folded_home(gold: Gold, trace: Trace, top: Sequence[Candidate]) -> tuple[int | None, Candidate, Candidate] | None:
    """``(rank in the top k or None, the candidate kept for the page, the folded chunk)`` for a chunk holding
    ``gold`` that collapsing folded away (a reranker's candidates no longer carry their folds: the
    first stage's do)."""
    folds = {c.chunk.id: c.folded for c in trace.retrieved if c.folded}
    for rank, kept in enumerate(top, 1):
        for folded in kept.folded or folds.get(kept.chunk.id, ()):
            if gold.held_by(folded.chunk):
                return rank, kept, folded
    for kept in trace.retrieved:
        for folded in kept.folded:
            if gold.held_by(folded.chunk):
                return None, kept, folded
    return None


def _loss(gold: Gold, trace: Trace, top: Sequence[Candidate], k: int) -> _Loss:
    """Why ``gold`` (indexed, but in neither the top k nor the context) was lost, read off the trace: the
    first stage ranked it too low, the reranker scored it below its min_score or moved it below the top k,
    or collapsing folded it into another chunk of its page (which then never reached the context, or
    reached it while the folded chunk was dropped as a neighbour: for the budget, as a duplicate...)."""
    home = _folded_home(gold, trace, top)
    if home is not None:
        rank, kept, folded = home
        pages = folded.chunk.location.pages
        where, unit = (f"page {pages[0]}", "page") if pages else ("its document", "document")
        if rank is None:
            detail = f"collapsed away: {folded.chunk.id} holds it but shares {where} with {kept.chunk.id}, "
            return _Loss("retrieval", "collapse", detail + f"which did not reach the top {k}")
        detail = (
            f"collapsed away: {folded.chunk.id} holds it but shares {where} with rank {rank} "
            f"({kept.chunk.id}), and retrieval.collapse keeps one chunk per {unit} in the list"
        )
        dropped = _dropped(trace, folded.chunk.id)
        if dropped is not None:
            return _Loss("context", "collapse", f"{detail}; as a same-{unit} neighbour it was dropped before the "
                         f"prompt{_why(dropped)}")  # fmt: skip
        return _Loss("retrieval", "collapse", f"{detail}; it did not reach the context")
    first = _first_rank(gold, trace.retrieved)
    if first is None:
        return _Loss("retrieval", "first_stage", "")
    dropped = _dropped(trace, trace.retrieved[first - 1].chunk.id)
    if dropped is not None and dropped.reason == "not_relevant":
        return _Loss("retrieval", "not_relevant", f"first-stage rank {first}, then {dropped.detail}")
    if trace.reranked and first <= k:  # the reranker (or diversity) picked the top k from deeper candidates
        return _Loss("retrieval", "rerank", f"first-stage rank {first}, then the reranker moved it below the top {k}")
    if first > k:
        return _Loss("retrieval", "first_stage", f"found at rank {first}")
    return _Loss("retrieval", "first_stage", "")


def _answer_path(label: Label, trace: Trace, top: list[Candidate], k: int, indexed: Sequence[Chunk]) -> list[Finding]:
    out: list[Finding] = []
    answers = label.answers
    lost = [g for g in answers if not any(g.held_by(c) for c in indexed)]
    if lost:
        what = f"{len(lost)} of {len(answers)} answer phrases are" if len(answers) > 1 else "the answer is"
        detail = f"{what} whole in no indexed chunk: {_short(lost[0].evidence)!r}"
        out.append(Finding("ingestion", "missed_evidence", detail, "chunking"))
    present = [g for g in answers if g not in lost]
    if not present:
        return out
    ranks = {g: _first_rank(g, top) for g in present}
    shown = {g: any(g.held_by(c.chunk) for c in trace.context) for g in present}
    missing = [g for g in present if ranks[g] is None and not shown[g]]  # a folded neighbour may have shown it
    losses = {g: _loss(g, trace, top, k) for g in missing}
    unlisted = [g for g in missing if losses[g].stage == "retrieval"]
    if unlisted:
        loss = losses[unlisted[0]]
        if len(unlisted) < len(present):
            detail = (
                f"{len(unlisted)} of {len(present)} answer phrases not in the top {k}: {_short(unlisted[0].evidence)!r}"
            )
        elif not top:
            detail = f"answer not in the top {k}; nothing was retrieved"
        else:
            detail = f"answer not in the top {k}; rank 1 is {top[0].chunk.id}"
        detail += f"; {loss.detail}" if loss.detail else ""
        scope = _scope_of(trace)
        if scope is not None and not any(g.held_by(c) and scope.allows_chunk(c) for g in unlisted for c in indexed):
            detail += "; it is only in chunks outside the scope"
        out.append(Finding("retrieval", "missed_evidence", detail, loss.cause))
    found = sorted(r for r in ranks.values() if r is not None)
    if found and label.grade_of(top[0].chunk) == 0:
        out.append(
            Finding("retrieval", "irrelevant_match", f"answer outranked: rank {found[0]}; rank 1 is {top[0].chunk.id}")
        )
    gone = [g for g in present if ranks[g] is not None and not shown[g]]
    folded_out = [g for g in missing if losses[g].stage == "context"]
    if gone:
        rank = ranks[gone[0]] or 0
        why = _dropped(trace, top[rank - 1].chunk.id)
        cause = why.reason if why is not None else ""
        if cause == "trimmed":  # the chunk reached the context, but only its other units did
            detail = f"retrieved at rank {rank} and shown in part, without the units that hold it{_why(why)}"
        else:
            detail = f"retrieved at rank {rank} but dropped before the prompt{_why(why)}"
        stage = "retrieval" if cause == "not_relevant" else "context"  # the reranker's min_score: a retrieval step
        out.append(Finding(stage, "missed_evidence", detail, cause))
    elif folded_out:
        loss = losses[folded_out[0]]
        out.append(Finding("context", "missed_evidence", loss.detail, loss.cause))
    elif trace.abstained and any(shown.values()):
        where = f"rank {found[0]}" if found else "a same-page neighbour of a listed chunk"
        detail = f"abstained although the context held the answer ({where})"
        out.append(Finding("generation", "missed_evidence", detail, "generation"))
    return out


def _stale(top: list[Candidate], day: date) -> list[Finding]:
    stale = []
    for rank, c in enumerate(top, 1):
        meta = c.chunk.metadata
        if meta.status != "current":
            stale.append(f"{meta.status} {c.chunk.id} at rank {rank}")
        elif not meta.valid_on(day):
            stale.append(f"{c.chunk.id} at rank {rank} is not valid on {day.isoformat()}")
    if not stale:
        return []
    return [Finding("retrieval", "stale_document", "; ".join(stale))]


def _duplicates(context: list[Candidate], threshold: float) -> list[Finding]:
    pairs = []
    for i, a in enumerate(context):
        for b in context[i + 1 :]:
            share = word_overlap(chunk_text(a.chunk), chunk_text(b.chunk))
            if share >= threshold:
                pairs.append(f"{a.chunk.id} and {b.chunk.id} share {share:.0%} of their words")
    if not pairs:
        return []
    more = f" (+{len(pairs) - 1} more pair(s))" if len(pairs) > 1 else ""
    return [Finding("context", "duplicate_chunks", pairs[0] + more)]


def _strip_citations(answer: str, cited: Iterable[str]) -> str:
    for cid in cited:
        answer = answer.replace(cid, " ")
    return re.sub(r"\[[^\]]*\]", " ", answer)


def _generation(answer: str, trace: Trace) -> list[Finding]:
    shown = {c.chunk.id: c for c in trace.context}
    cited_shown = [shown[i] for i in trace.cited if i in shown]
    basis = cited_shown or list(trace.context)  # a wrong citation is the citation stage's finding
    if not basis:
        return [Finding("generation", "unsupported_answer", "answered with an empty context")]
    support = " ".join(chunk_text(c.chunk) for c in basis)
    claim = _strip_citations(answer, trace.cited)
    whose = "its cited chunks" if cited_shown else "the context"
    missing = [n for n in numbers(claim) if n not in set(numbers(support))]
    if missing:
        return [
            Finding(
                "generation", "unsupported_answer", f"number(s) {', '.join(missing)} of the answer are not in {whose}"
            )
        ]
    share = share_present(content_words(claim), set(content_words(support)))
    if share < MIN_WORD_SUPPORT:
        return [
            Finding("generation", "unsupported_answer", f"only {share:.0%} of the answer's key words are in {whose}")
        ]
    return []


def _citations(trace: Trace, indexed_ids: Container[str]) -> list[Finding]:
    if not trace.cited:
        return [Finding("citation", "unsupported_answer", "the answer cites no chunk")]
    shown = {c.chunk.id for c in trace.context}
    out = []
    for cid in trace.cited:
        if cid in shown:
            continue
        where = "it exists in the index" if cid in indexed_ids else "it exists nowhere in the index"
        out.append(f"cites {cid}, which was not shown to the model ({where})")
    return [Finding("citation", "unsupported_answer", "; ".join(out))] if out else []


def diagnose(
    label: Label,
    trace: Trace,
    indexed: Sequence[Chunk],
    k: int | None = None,
    overlap_threshold: float = DUPLICATE_THRESHOLD,
    day: date | None = None,
    known_ids: Container[str] | None = None,
) -> list[Finding]:
    """Findings for one question, sorted by stage (the first is the root cause).

    ``indexed`` is every chunk the index holds, or at least every one that holds a gold phrase of the
    label (no other chunk changes a finding); then ``known_ids`` answers "is this chunk id indexed?"
    for a citation (default: the ids of ``indexed``). ``k`` cuts the final ranked list (reranked if the trace
    has it, else retrieved); None keeps all of it. ``trace.retrieved`` may run deeper than k, so a
    missed answer can be given its deeper rank. ``day`` is the validity date for stale checks
    (default: the trace scope's ``valid_at``, else today).
    """
    if k is not None and k < 1:
        raise ValueError(f"k: must be at least 1, got {k}")
    if not 0 < overlap_threshold <= 1:
        raise ValueError(f"overlap_threshold: must be in (0, 1], got {overlap_threshold}")
    final = list(trace.reranked or trace.retrieved)
    top = final[:k] if k is not None else final
    cut = k if k is not None else len(final)
    answered = bool(trace.answer and trace.answer.strip()) and not trace.abstained
    if not label.answerable and trace.abstained:
        return []
    findings: list[Finding] = []
    if label.answerable:
        findings += _answer_path(label, trace, top, cut, indexed)
    else:
        if trace.context:
            n = len(trace.context)
            findings.append(
                Finding("context", "irrelevant_match", f"{n} chunk(s) shown; no document answers the question")
            )
        if answered:
            findings.append(
                Finding("generation", "unsupported_answer", "answered a question the documents do not answer")
            )
    scope = _scope_of(trace)
    findings += _stale(top, day or (scope.valid_at if scope and scope.valid_at else date.today()))
    findings += _duplicates(list(trace.context), overlap_threshold)
    if answered and label.answerable:
        findings += _generation(trace.answer or "", trace)
    if answered:
        findings += _citations(trace, known_ids if known_ids is not None else {c.id for c in indexed})
    return sorted(findings, key=lambda f: _ORDER[f.stage])


def label_counts(rows: Iterable[Any]) -> Counter[tuple[str, str]]:
    """How many questions have each (stage, label); a question counts once per pair.

    ``rows`` holds objects with a ``findings`` attribute (``QuestionResult``) or lists of findings.
    """
    counts: Counter[tuple[str, str]] = Counter()
    for row in rows:
        found = getattr(row, "findings", row)
        counts.update({(f.stage, f.label) for f in found})
    return counts


__all__ = ["CAUSES", "LABELS", "MIN_WORD_SUPPORT", "STAGES", "diagnose", "label_counts"]
