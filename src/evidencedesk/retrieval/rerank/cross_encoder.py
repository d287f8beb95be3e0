"""CrossEncoderReranker: a model that reads the query and each chunk together and scores the pair.

Any sentence-transformers ``CrossEncoder`` model works: a local folder or a model name. Models
are read from local files only unless ``local_files_only=False`` is passed, so nothing is
downloaded at run time by default. sentence-transformers (and torch) are imported only when a
reranker is built; without them the constructor says how to install them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evidencedesk.retrieval.candidates import Candidate
from evidencedesk.retrieval.rerank.base import reordered

INSTALL_HINT = (
    "the cross-encoder reranker needs sentence-transformers: "
    "pip install torch==2.13.0 && pip install sentence-transformers==6.2.0"
)


def _cross_encoder_class() -> Any:
    try:
        from sentence_transformers import CrossEncoder
    except ImportError as exc:  # pragma: no cover - exercised only where the extra is missing
        raise RuntimeError(INSTALL_HINT) from exc
    return CrossEncoder


class CrossEncoderReranker:
    """Rescore candidates with ``CrossEncoder.predict([(query, chunk_text), ...])``.

    Scores are the model's outputs after its own activation (a sigmoid for one-label models), so
    they match what the model returns when called directly.
    """

    def __init__(
        self,
        model_name_or_path: str | Path,
        *,
        batch_size: int = 16,
        max_length: int | None = None,
        device: str | None = "cpu",
        local_files_only: bool = True,
    ) -> None:
        if not str(model_name_or_path).strip():
            raise ValueError("model_name_or_path: must name a cross-encoder model or a folder holding one")
        if batch_size < 1:
            raise ValueError(f"batch_size: must be >= 1, got {batch_size}")
        if max_length is not None and max_length < 8:
            raise ValueError(f"max_length: must be >= 8 or None, got {max_length}")
        cls = _cross_encoder_class()
        self.model_name_or_path = str(model_name_or_path)
        self.batch_size = batch_size
        self.name = f"cross-encoder:{Path(self.model_name_or_path).name or self.model_name_or_path}"
        try:
            self.model = cls(
                self.model_name_or_path, device=device, max_length=max_length, local_files_only=local_files_only
            )
        except OSError as exc:
            raise ValueError(
                f"model_name_or_path: cannot load a cross-encoder from {self.model_name_or_path!r} "
                f"(local files only: {local_files_only}): {exc}"
            ) from exc

    def scores(self, query: str, texts: list[str]) -> list[float]:
        """The model's score for each ``(query, text)`` pair, in the order given."""
        if not texts:
            return []
        out = self.model.predict(
            [(query, t) for t in texts], batch_size=self.batch_size, show_progress_bar=False, convert_to_numpy=True
        )
        return [float(s) for s in out.reshape(len(texts), -1)[:, 0]]

    def rerank(self, query: str, candidates: list[Candidate]) -> list[Candidate]:
        return reordered(candidates, self.scores(query, [c.chunk.text for c in candidates]), self.name)


__all__ = ["INSTALL_HINT", "CrossEncoderReranker"]
