"""Answerability: the probability that the best unit of a context answers the question.

A small logistic regression over evidence the extractive generator already has (``FEATURES``):
the best unit's dense similarity and its chunk's, the word coverage of the best unit and of the
whole context, the weight of question words that no unit holds, whether the best unit offers the
kind of answer asked for, the dense margin over the runner-up, how the retrieval ranked the best
unit's chunk, whether the top units agree on one chunk, the word coverage of the best unit's
paragraph and chunk, the dense margin of its chunk over the other chunks, whether it holds a span
of the kind the question asks for (a date for "when", a name for "who"), and the question's length.

The coefficients are data, not code: ``answerability.json`` beside this module is written by
``scripts/fit_answerability.py`` from development questions (SQuAD 2.0 dev articles of the fit
split plus the example corpus's labels), one model per scorer (``minilm`` for English text,
``e5`` for the multilingual embedder, ``words`` when no embedder can run), each with the threshold
chosen for a stated abstention precision. ``AnswerabilityModel.load()`` reads the shipped file;
pass another path to use your own fit.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from evidencedesk.json_types import JsonObject

FEATURES = (
    "dense",  # cosine(question, best unit)
    "chunk",  # cosine(question, best unit's chunk)
    "words",  # word coverage of the best unit
    "words_max",  # the best word coverage of any unit
    "context_words",  # share of question-word weight held anywhere in the context
    "missing",  # share of question-word weight held nowhere
    "kind_asked",  # the question asks for a kind of answer (time, amount, name, place, yes/no)
    "kind",  # the best unit offers that kind
    "margin",  # dense score of the best unit minus the runner-up
    "retrieval_rank",  # 1 / (1 + rank of the best unit's chunk in the context)
    "agreement",  # share of the top three units that come from the best unit's chunk
    "unit_words",  # log(1 + words in the best unit)
    "paragraph_words",  # word coverage of the best unit's paragraph (the unit and its neighbours)
    "chunk_words",  # word coverage of the best unit's whole chunk
    "chunk_margin",  # dense score of the best unit's chunk minus the best other chunk's
    "type_span",  # the best unit holds a span of the kind asked (a number, date, amount, name) the question lacks
    "question_terms",  # log(1 + content terms of the question)
    "ce_passage",  # the cross-encoder's score (logit) of the best context passage
    "ce_sentence",  # the cross-encoder's score (logit) of the best of the top-scored units
)
READER_FEATURES = ("ce_passage", "ce_sentence")  # only the ``*-reader`` models take these
MODEL_FILE = "answerability.json"


@dataclass(frozen=True)
class ScorerModel:
    """One scorer's fitted model: standardisation, coefficients, intercept and decision threshold."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float

    def probability(self, values: Mapping[str, float]) -> float:
        z = self.intercept
        for name, m, s, c in zip(self.features, self.mean, self.scale, self.coef, strict=True):
            z += c * (float(values.get(name, 0.0)) - m) / (s or 1.0)
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str) -> ScorerModel:
        try:
            features = tuple(str(x) for x in data["features"])
            model = cls(
                features,
                tuple(float(x) for x in data["mean"]),
                tuple(float(x) for x in data["scale"]),
                tuple(float(x) for x in data["coef"]),
                float(data["intercept"]),
                float(data["threshold"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{where}: needs features, mean, scale, coef, intercept and threshold ({exc})") from None
        if not (len(model.mean) == len(model.scale) == len(model.coef) == len(features)):
            raise ValueError(f"{where}: features, mean, scale and coef must have the same length")
        unknown = [f for f in features if f not in FEATURES]
        if unknown:
            raise ValueError(f"{where}: unknown feature(s) {', '.join(unknown)}; known: {', '.join(FEATURES)}")
        if not 0.0 < model.threshold < 1.0:
            raise ValueError(f"{where}.threshold: must be in (0, 1), got {model.threshold}")
        return model


@dataclass(frozen=True)
class AnswerabilityModel:
    """The fitted models by scorer name, and how they were fitted (``info``)."""

    models: dict[str, ScorerModel]
    info: JsonObject  # how the models were fitted, as the model file says
    source: str

    def for_scorer(self, scorer: str) -> ScorerModel:
        if scorer not in self.models:
            raise ValueError(f"{self.source}: no answerability model for scorer {scorer!r}; has {sorted(self.models)}")
        return self.models[scorer]

    @classmethod
    def load(cls, path: str | Path | None = None) -> AnswerabilityModel:
        """The model in ``path`` (default: the shipped ``answerability.json``)."""
        if path is None:
            return _shipped()
        return _read(Path(path).read_text(encoding="utf-8"), str(path))


def _read(text: str, where: str) -> AnswerabilityModel:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise ValueError(f"{where}: must be an object with a 'models' object")
    models = {name: ScorerModel.from_dict(m, f"{where}: models.{name}") for name, m in data["models"].items()}
    return AnswerabilityModel(models, dict(data.get("info", {})), where)


@lru_cache(maxsize=1)
def _shipped() -> AnswerabilityModel:
    ref = resources.files("evidencedesk.answer.generators").joinpath(MODEL_FILE)
    return _read(ref.read_text(encoding="utf-8"), f"evidencedesk/answer/generators/{MODEL_FILE}")


def feature_values(
    totals: Sequence[float],
    dense: Sequence[float | None],
    chunk: Sequence[float | None],
    words: Sequence[float],
    kinds: Sequence[float],
    owners: Sequence[int],
    context_words: float,
    kind_asked: bool,
    unit_lengths: Sequence[int],
    paragraph_words: float = 0.0,
    chunk_words: float = 0.0,
    type_span: bool = False,
    question_terms: int = 0,
) -> dict[str, float]:
    """The ``FEATURES`` of a scored context (per-unit lists in context order; ``owners`` is each unit's
    context position; the word coverage of the best unit's paragraph and chunk, whether it holds a span of
    the kind asked, and the number of question terms come computed). An empty context gives zeros."""
    n_terms = math.log1p(question_terms)
    if not totals:
        return {name: 0.0 for name in FEATURES if name not in READER_FEATURES} | {
            "missing": 1.0 - context_words,
            "kind_asked": float(kind_asked),
            "question_terms": n_terms,
        }
    order = sorted(range(len(totals)), key=lambda i: (-totals[i], i))
    best = order[0]
    sims = [d if d is not None else 0.0 for d in dense]
    by_sim = sorted(sims, reverse=True)
    top = order[:3]
    best_chunk = chunk[best]
    return {
        "dense": sims[best],
        "chunk": best_chunk if best_chunk is not None else 0.0,
        "words": words[best],
        "words_max": max(words),
        "context_words": context_words,
        "missing": 1.0 - context_words,
        "kind_asked": float(kind_asked),
        "kind": kinds[best],
        "margin": sims[best] - (by_sim[1] if len(by_sim) > 1 else 0.0),
        "retrieval_rank": 1.0 / (1.0 + owners[best]),
        "agreement": sum(owners[i] == owners[best] for i in top) / len(top),
        "unit_words": math.log1p(unit_lengths[best]),
        "paragraph_words": paragraph_words,
        "chunk_words": chunk_words,
        "chunk_margin": _chunk_margin(chunk, owners, best),
        "type_span": float(type_span),
        "question_terms": n_terms,
    }


def _chunk_margin(chunk: Sequence[float | None], owners: Sequence[int], best: int) -> float:
    by_owner: dict[int, float] = {}
    for sim, owner in zip(chunk, owners, strict=True):
        by_owner[owner] = sim if sim is not None else 0.0
    others = [v for o, v in by_owner.items() if o != owners[best]]
    return by_owner[owners[best]] - max(others) if others else 0.0


__all__ = ["FEATURES", "MODEL_FILE", "READER_FEATURES", "AnswerabilityModel", "ScorerModel", "feature_values"]
