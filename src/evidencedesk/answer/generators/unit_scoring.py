"""Scoring the units of a context against a question, for the extractive generator.

Each quotable unit (sentence, table row with its header, code line) gets evidence of four kinds:

* words: the idf-weighted share of the question's content words the unit holds, its chunk's
  heading path included (``lexical_match``);
* meaning: the cosine similarity of the question with the unit (its heading + text) and with the
  unit's whole chunk, under the bundled MiniLM embedder (``dense_match``), for questions written
  mostly in Latin letters: a customer who asks to "send back" a bike is asking about returns;
* table rows: how fully the question names the row's key cell (``table_rows``), so "stem bolts"
  picks the stem bolts row, not the page's introduction. A named row counts in full once its
  words (header and heading included) cover half the question, so naming "Sylhet" alone does not
  make a delivery-fee row the answer to a question about renting bikes;
* answer kind: the unit states a quantity of the dimension the question asks about, or is code
  when a command is asked for (``answer_types``).

The total is a weighted sum (``Weights``); with no dense evidence the word share carries its own
weight. Units that read as instructions to an assistant are left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from evidencedesk.answer.context import shown_text
from evidencedesk.answer.generators.answer_types import asked, offers
from evidencedesk.answer.generators.dense_match import DenseScorer
from evidencedesk.answer.generators.lexical_match import LexicalScorer, text_terms
from evidencedesk.answer.generators.paragraphs import paragraph_ids
from evidencedesk.answer.generators.table_rows import key_match
from evidencedesk.answer.injection import looks_like_instruction
from evidencedesk.answer.units import Unit, split_units
from evidencedesk.documents import Chunk
from evidencedesk.retrieval.candidates import Candidate

KEY_WORDS_SCALE = 2.0  # a named row gets its full key weight once its words cover half the question


@dataclass(frozen=True)
class Weights:
    """How much each kind of evidence adds to a unit's score."""

    dense: float = 1.0  # cosine(question, heading + unit)
    chunk: float = 1.0  # cosine(question, the unit's whole chunk)
    words: float = 0.3  # idf-weighted word coverage, when dense evidence applies
    words_alone: float = 1.0  # word coverage, when it does not (another script, or no embedder)
    key: float = 0.8  # the question names the row's key cell
    kind: float = 0.3  # the unit offers the kind of answer asked for (a time, an amount, a command)

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if not isinstance(value, int | float) or value < 0:
                raise ValueError(f"weights.{name}: must be a number >= 0, got {value!r}")


@dataclass(frozen=True)
class UnitScore:
    """A unit's evidence (word coverage, dense similarities or None, row-key match, answer kind) and its total."""

    unit: Unit
    paragraph: int  # which paragraph of its chunk the unit starts in
    words: float
    dense: float | None
    chunk: float | None
    key: float
    kind: float
    total: float
    owner: int = 0  # position of the unit's chunk in the context

    def to_dict(self) -> dict[str, object]:
        return {
            "chunk_id": self.unit.chunk_id,
            "kind": self.unit.kind,
            "text": self.unit.text,
            "words": self.words,
            "dense": self.dense,
            "chunk": self.chunk,
            "key": self.key,
            "answer_kind": self.kind,
            "score": self.total,
        }


def _embedding_text(unit: Unit, heading: str) -> str:
    return f"{heading}: {unit.text}" if heading else unit.text


def chunk_embedding_texts(chunk: Chunk) -> list[str]:
    """The texts ``score_units`` embeds for ``chunk``: each quotable unit (with its heading), then the chunk."""
    path = chunk.location.heading_path
    heading = path[-1] if path else ""
    units = [u for u in split_units(chunk) if not looks_like_instruction(u.text)]
    return [_embedding_text(u, heading) for u in units] + [shown_text(chunk)]


def score_units(
    question: str,
    context: list[Candidate],
    weights: Weights,
    dense: DenseScorer | None,
    languages: tuple[str, ...] = (),
) -> tuple[list[UnitScore], LexicalScorer]:
    """Every quotable unit of ``context`` with its evidence, in context order, and the word scorer.

    ``dense`` None scores words, row keys and answer kinds only. ``languages`` (the chunks' ``lang``)
    add their unit names to the answer kinds recognised.
    """
    units: list[Unit] = []
    headings: list[str] = []
    owner: list[int] = []
    unit_terms: list[frozenset[str]] = []
    paragraphs: list[int] = []
    for n, cand in enumerate(context):
        path = cand.chunk.location.heading_path
        path_terms = text_terms(" ".join(path))
        every = split_units(cand.chunk)
        for u, para in zip(every, paragraph_ids(shown_text(cand.chunk), every), strict=True):
            if looks_like_instruction(u.text):
                continue
            units.append(u)
            paragraphs.append(para)
            headings.append(path[-1] if path else "")
            owner.append(n)
            unit_terms.append(text_terms(u.text) | path_terms)
    lexical = LexicalScorer.build(question, unit_terms)
    sims: list[float | None] = [None] * len(units)
    chunk_sims: list[float | None] = [None] * len(context)
    if dense is not None and units:
        texts = [_embedding_text(u, h) for u, h in zip(units, headings, strict=True)]
        both = dense.similarities(question, texts + [shown_text(c.chunk) for c in context])
        sims, chunk_sims = list(both[: len(units)]), list(both[len(units) :])
    wanted = asked(question, languages)
    w = weights
    out: list[UnitScore] = []
    for i, u in enumerate(units):
        words = lexical.coverage(i)
        key = key_match(question, u.text) * min(1.0, KEY_WORDS_SCALE * words) if u.kind == "row" else 0.0
        kind = 1.0 if offers(u.text, u.kind, wanted, languages) else 0.0
        sim, chunk_sim = sims[i], chunk_sims[owner[i]]
        total = w.key * key + w.kind * kind
        if sim is None or chunk_sim is None:
            total += w.words_alone * words
        else:
            total += w.dense * sim + w.chunk * chunk_sim + w.words * words
        out.append(
            UnitScore(u, paragraphs[i], round(words, 4), sim, chunk_sim, round(key, 4), kind, round(total, 4), owner[i])
        )
    return out, lexical


__all__ = ["KEY_WORDS_SCALE", "UnitScore", "Weights", "chunk_embedding_texts", "score_units"]
