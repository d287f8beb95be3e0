"""ExtractiveGenerator: answer by quoting the context's best units, or abstain.

Deterministic, offline and grounded by construction: every answer is one to three units of the
context (sentences, table rows with their header, code lines) copied verbatim, each followed by
the id of the chunk it came from. Nothing else is written, so no instruction inside the context
can change what it does; units that read as instructions are never quoted, and citation-shaped
markers inside quoted text are removed, so a document cannot plant a citation.

Units are scored by ``unit_scoring`` (word coverage, dense similarity of unit and chunk, row keys,
answer kind). The answer is built from the ranking:

1. Sufficiency: the best unit must reach ``threshold`` (``word_threshold`` when there is no dense
   evidence: a question in another script, or no embedder). Otherwise the generator abstains and
   names the question's words that no unit holds.
2. The best unit comes with its better neighbour in the same paragraph when that one reaches
   ``neighbour_ratio`` of its score: "Do not put an old battery in household waste." needs the
   next sentence, "Bring it to the Dhanmondi showroom ...".
3. Further units join, best first, while they reach ``extra_ratio`` of the best score, up to
   ``max_sentences`` units in all (a two-part question often needs two places).

Both thresholds were chosen on one half of the Kestrel labels and checked on the other (see
``THRESHOLD``); the calibration is specific to the bundled embedder and weights.
"""

from __future__ import annotations

from typing import Any

from evidencedesk.answer.citations import strip_citations
from evidencedesk.answer.generators.base import Generation
from evidencedesk.answer.generators.dense_match import DenseScorer, default_dense_scorer
from evidencedesk.answer.generators.lexical_match import QUESTION_FILLER, question_terms
from evidencedesk.answer.generators.paragraphs import neighbours
from evidencedesk.answer.generators.unit_scoring import UnitScore, Weights, score_units
from evidencedesk.retrieval.candidates import Candidate

ABSTAIN_TEMPLATE = "The documents shown do not say anything about: {missing}."
WEIGHTS = Weights()
# Sufficiency thresholds. Chosen on the odd-numbered Kestrel labels and checked on the even ones,
# then the other way round (hybrid search, k=5): the two folds chose 1.266 and 1.288 with dense
# evidence, 0.29 and 0.39 for word evidence alone (0.35 on all labels).
THRESHOLD = 1.28
WORD_THRESHOLD = 0.35
EXTRA_RATIO = 0.85  # a further unit needs this share of the best unit's score
NEIGHBOUR_RATIO = 0.5  # the best sentence's neighbour in its paragraph needs this share


def _reading_order(picked: list[int], scores: list[UnitScore]) -> list[int]:
    """The best unit's paragraph first, in reading order; then the other units, best first."""
    head = scores[picked[0]]
    where = (head.unit.chunk_id, head.paragraph)
    group = [i for i in picked if (scores[i].unit.chunk_id, scores[i].paragraph) == where]
    rest = [i for i in picked if i not in group]
    return sorted(group, key=lambda i: scores[i].unit.position) + rest


class ExtractiveGenerator:
    """Quote the context units that best answer the question, each with its ``[chunk_id]``.

    ``dense``: ``True`` (default) uses the bundled MiniLM embedder (words only when it cannot be
    loaded: ``dense_error`` then says why), ``False`` word evidence only, or a ``DenseScorer`` over
    another embedder (recalibrate the thresholds for it).
    """

    name = "extractive"

    def __init__(
        self,
        threshold: float = THRESHOLD,
        max_sentences: int = 3,
        word_threshold: float = WORD_THRESHOLD,
        extra_ratio: float = EXTRA_RATIO,
        neighbour_ratio: float = NEIGHBOUR_RATIO,
        dense: bool | DenseScorer = True,
        weights: Weights = WEIGHTS,
    ) -> None:
        if not isinstance(dense, bool | DenseScorer):
            raise ValueError(f"dense: must be True, False or a DenseScorer, got {type(dense).__name__}")
        if not isinstance(weights, Weights):
            raise ValueError(f"weights: must be a Weights, got {type(weights).__name__}")
        for field_name, value in (("threshold", threshold), ("word_threshold", word_threshold)):
            if not 0.0 < value <= 3.0:
                raise ValueError(f"{field_name}: must be in (0, 3], got {value}")
        for field_name, value in (("extra_ratio", extra_ratio), ("neighbour_ratio", neighbour_ratio)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{field_name}: must be in [0, 1], got {value}")
        if max_sentences < 1:
            raise ValueError(f"max_sentences: must be >= 1, got {max_sentences}")
        self.threshold = threshold
        self.word_threshold = word_threshold
        self.max_sentences = max_sentences
        self.extra_ratio = extra_ratio
        self.neighbour_ratio = neighbour_ratio
        self.weights = weights
        self.dense_error = ""
        self._dense = dense

    @property
    def dense(self) -> DenseScorer | None:
        """The dense scorer in use (the bundled one is loaded on first use), or None for words only."""
        if self._dense is True:
            try:
                self._dense = default_dense_scorer()
            except (ImportError, RuntimeError, ValueError, OSError) as exc:
                self.dense_error = f"the bundled embedder could not be loaded: {exc}"
                self._dense = False
        return self._dense if isinstance(self._dense, DenseScorer) else None

    def scorer_for(self, question: str) -> DenseScorer | None:
        """The dense scorer for ``question``: None when there is none or the question is not mostly Latin script."""
        return self.dense if self._dense is not False and DenseScorer.applies(question) else None

    def needed(self, question: str) -> float:
        """The score the best unit must reach for ``question`` (which threshold applies)."""
        return self.threshold if self.scorer_for(question) is not None else self.word_threshold

    def score(self, question: str, context: list[Candidate]) -> list[UnitScore]:
        """Every quotable unit of ``context`` with its evidence, in context order."""
        return score_units(question, context, self.weights, self.scorer_for(question))[0]

    def generate(self, question: str, context: list[Candidate], prompt: str = "") -> Generation:
        if not question_terms(question):
            return self._abstain("the question has no content words to look for", [])
        scores, lexical = score_units(question, context, self.weights, self.scorer_for(question))
        ranked = sorted(range(len(scores)), key=lambda i: (-scores[i].total, i))
        needed = self.needed(question)
        if not ranked or scores[ranked[0]].total < needed:
            best_score = scores[ranked[0]].total if ranked else 0.0
            missing = lexical.absent()
            if not missing and ranked:
                missing = [w for t, w in lexical.surface.items() if t not in lexical.found[ranked[0]]]
            why = (
                f"no unit of the {len(context)} chunk(s) shown answers the question well enough "
                f"(best score {best_score:.2f}, needed {needed:.2f})"
            )
            return self._abstain(why, missing)
        picked = self._pick(ranked, scores)
        chosen = [scores[i].unit for i in _reading_order(picked, scores)]
        parts = [f"{strip_citations(u.text)} [{u.chunk_id}]" for u in chosen]
        answer = ("\n" if any("\n" in u.text for u in chosen) else " ").join(parts)
        cited = tuple(dict.fromkeys(u.chunk_id for u in chosen))
        return Generation(answer=answer, cited=cited, raw=answer)

    def _pick(self, ranked: list[int], scores: list[UnitScore]) -> list[int]:
        best = ranked[0]
        picked = [best]
        beside = neighbours(best, [s.unit for s in scores], [s.paragraph for s in scores])
        beside.sort(key=lambda j: (-scores[j].total, j))
        if beside and self.max_sentences > 1 and scores[beside[0]].total >= self.neighbour_ratio * scores[best].total:
            picked.append(beside[0])
        floor = self.extra_ratio * scores[best].total
        for i in ranked[1:]:
            if len(picked) >= self.max_sentences or scores[i].total < floor:
                break
            if i not in picked:
                picked.append(i)
        return picked

    def explain(self, question: str, context: list[Candidate], top: int = 5) -> list[dict[str, Any]]:
        """The ``top`` scored units, best first, with their evidence (for traces and tuning)."""
        best = sorted(self.score(question, context), key=lambda s: -s.total)[:top]
        return [s.to_dict() for s in best]

    @staticmethod
    def _abstain(why: str, missing: list[str]) -> Generation:
        listed = ", ".join(missing) if missing else "what the question asks"
        answer = ABSTAIN_TEMPLATE.format(missing=listed)
        return Generation(answer=answer, abstained=True, reason=f"{why}; missing: {listed}", raw=answer)


__all__ = ["ABSTAIN_TEMPLATE", "QUESTION_FILLER", "THRESHOLD", "WORD_THRESHOLD", "ExtractiveGenerator", "Weights"]
