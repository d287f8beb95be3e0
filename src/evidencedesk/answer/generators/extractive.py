"""ExtractiveGenerator: answer by quoting the context's best sentences, or abstain.

Deterministic, offline and grounded by construction: every answer is one to three units of the
context (sentences, table rows with their header, code lines) copied verbatim, each followed by
the id of the chunk it came from. Nothing else is written, so no instruction inside the context
can change what it does.

Scoring: the question's content words (stemmed, stopwords and question filler removed) are matched
against each unit's words plus its chunk's heading path (a table row under "Bolt torque chart" is
about torque), weighted by an inverse document frequency over the units shown, ``ln(1 + (N + 1) /
(df + 0.5))``, so a word found nowhere in the context weighs the most. A unit's score is the
weighted share of the question it covers. The best unit must reach ``threshold``; up to two more
are added when each covers a further ``min_gain`` of the question and itself reaches
``extra_threshold``. Below the threshold the generator abstains and names the question's words the
context lacks.

Units that read as instructions to an assistant are never quoted, and citation-shaped markers
inside quoted text are removed, so a document cannot plant a citation.
"""

from __future__ import annotations

import math
from collections import Counter

from evidencedesk.answer.citations import strip_citations
from evidencedesk.answer.generators.base import Generation
from evidencedesk.answer.injection import looks_like_instruction
from evidencedesk.answer.units import Unit, split_units
from evidencedesk.evaluation.text import STOPWORDS, content_words, stem, words
from evidencedesk.retrieval.candidates import Candidate

ABSTAIN_TEMPLATE = "The documents shown do not say anything about: {missing}."

# Words that shape a question without naming what it is about; never required of an answer.
QUESTION_FILLER = frozenset(
    {
        "about", "actually", "again", "ago", "am", "any", "anyone", "anything", "anyway", "back", "been", "being",
        "bit", "could", "currently", "dear", "does", "doesn", "don", "else", "even", "ever", "every", "exactly", "get",
        "gets", "getting", "got", "hello", "help", "hi", "isn", "know", "let", "like", "ll", "lot", "lots", "make",
        "many", "might", "much", "need", "needs", "now", "ok", "okay", "please", "pls", "plz", "possible", "re",
        "really", "should",
        "some", "someone", "something", "still", "sure", "tell", "thank", "thanks", "there", "ve", "very", "want",
        "wanted", "wants", "way", "well", "won", "yet",
    }
)


def _surface(question: str) -> dict[str, str]:
    """Each content stem of ``question`` mapped to the first word that produced it."""
    out: dict[str, str] = {}
    for w in words(question):
        if w in STOPWORDS or w in QUESTION_FILLER or w.isdigit() or (w.isascii() and len(w) < 2):
            continue
        out.setdefault(stem(w), w)
    return out


class ExtractiveGenerator:
    """Quote the context sentences that best cover the question, each with its ``[chunk_id]``."""

    name = "extractive"

    def __init__(
        self,
        threshold: float = 0.5,
        max_sentences: int = 3,
        extra_threshold: float = 0.3,
        min_gain: float = 0.15,
    ) -> None:
        for field_name, value in (("threshold", threshold), ("extra_threshold", extra_threshold)):
            if not 0.0 < value <= 1.0:
                raise ValueError(f"{field_name}: must be in (0, 1], got {value}")
        if not 0.0 <= min_gain <= 1.0:
            raise ValueError(f"min_gain: must be in [0, 1], got {min_gain}")
        if max_sentences < 1:
            raise ValueError(f"max_sentences: must be >= 1, got {max_sentences}")
        self.threshold = threshold
        self.max_sentences = max_sentences
        self.extra_threshold = extra_threshold
        self.min_gain = min_gain

    def generate(self, question: str, context: list[Candidate], prompt: str = "") -> Generation:
        surface = _surface(question)
        if not surface:
            return self._abstain("the question has no content words to look for", [])
        units = [u for c in context for u in split_units(c.chunk) if not looks_like_instruction(u.text)]
        headings = {c.chunk.id: set(content_words(" ".join(c.chunk.location.heading_path))) for c in context}
        terms = {id(u): set(content_words(u.text)) | headings.get(u.chunk_id, set()) for u in units}
        df = Counter(t for u in units for t in terms[id(u)] & surface.keys())
        n = len(units)
        weight = {t: math.log(1 + (n + 1) / (df[t] + 0.5)) for t in surface}
        total = sum(weight.values())

        def covers(u: Unit, wanted: set[str]) -> float:
            return sum(weight[t] for t in wanted & terms[id(u)]) / total

        everything = set(surface)
        ranked = sorted(enumerate(units), key=lambda iu: (-covers(iu[1], everything), iu[0]))
        if not ranked or covers(ranked[0][1], everything) < self.threshold:
            absent = [surface[t] for t in surface if df[t] == 0]
            if not absent and ranked:
                absent = [surface[t] for t in surface if t not in terms[id(ranked[0][1])]]
            best = covers(ranked[0][1], everything) if ranked else 0.0
            why = (
                f"no sentence of the {len(context)} chunk(s) shown covers enough of the question "
                f"(best {best:.0%}, needed {self.threshold:.0%})"
            )
            return self._abstain(why, absent)
        picked = [ranked[0][1]]
        left = everything - terms[id(picked[0])]
        while len(picked) < self.max_sentences and left:
            pool = [(i, u) for i, u in ranked if u not in picked and covers(u, everything) >= self.extra_threshold]
            gains = [(covers(u, left), -i, u) for i, u in pool]
            if not gains:
                break
            gain, _, unit = max(gains, key=lambda g: (g[0], g[1]))
            if gain < self.min_gain:
                break
            picked.append(unit)
            left -= terms[id(unit)]
        parts = [f"{strip_citations(u.text)} [{u.chunk_id}]" for u in picked]
        multiline = any("\n" in u.text for u in picked)
        answer = ("\n" if multiline else " ").join(parts)
        cited = tuple(dict.fromkeys(u.chunk_id for u in picked))
        return Generation(answer=answer, cited=cited, raw=answer)

    @staticmethod
    def _abstain(why: str, missing: list[str]) -> Generation:
        listed = ", ".join(missing) if missing else "what the question asks"
        answer = ABSTAIN_TEMPLATE.format(missing=listed)
        return Generation(answer=answer, abstained=True, reason=f"{why}; missing: {listed}", raw=answer)


__all__ = ["ABSTAIN_TEMPLATE", "ExtractiveGenerator"]
