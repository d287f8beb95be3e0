"""Answer generators by name: ``extractive`` (default, offline), ``llama-cpp`` and ``openai``.

``get_generator(name, **params)`` builds one. The language-model generators are imported only when
asked for, so their optional dependencies are never needed for the extractive default.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from evidencedesk.answer.generators.base import Generation, Generator
from evidencedesk.answer.generators.extractive import ExtractiveGenerator

# name -> (module, class); the module is imported on first use
GENERATORS: dict[str, tuple[str, str]] = {
    "extractive": ("evidencedesk.answer.generators.extractive", "ExtractiveGenerator"),
    "llama-cpp": ("evidencedesk.answer.generators.llama_cpp", "LlamaCppGenerator"),
    "openai": ("evidencedesk.answer.generators.openai_compat", "OpenAIGenerator"),
}
DEFAULT_GENERATOR = "extractive"


def get_generator(name: str = DEFAULT_GENERATOR, **params: Any) -> Generator:
    """The generator registered as ``name``, built with ``params``; ValueError for an unknown name."""
    key = name.strip().lower().replace("_", "-")
    if key in ("llama", "llamacpp"):
        key = "llama-cpp"
    if key not in GENERATORS:
        raise ValueError(f"generator: unknown name {name!r}; choose from {', '.join(GENERATORS)}")
    module, cls = GENERATORS[key]
    built: Generator = getattr(import_module(module), cls)(**params)
    return built


__all__ = ["DEFAULT_GENERATOR", "GENERATORS", "ExtractiveGenerator", "Generation", "Generator", "get_generator"]
