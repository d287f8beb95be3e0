"""Answering: context assembly, the prompt contract, generators, validation and the ``ask`` pipeline."""

from evidencedesk.answer.context import AssembledContext, assemble
from evidencedesk.answer.generators import get_generator
from evidencedesk.answer.generators.base import Generation, Generator
from evidencedesk.answer.generators.extractive import ExtractiveGenerator
from evidencedesk.answer.pipeline import ask, ask_result
from evidencedesk.answer.prompt import ABSTAIN_PREFIX, build_prompt, prompt_text
from evidencedesk.answer.validate import SentenceCheck, ValidatedAnswer, validate

__all__ = [
    "ABSTAIN_PREFIX",
    "AssembledContext",
    "ExtractiveGenerator",
    "Generation",
    "Generator",
    "SentenceCheck",
    "ValidatedAnswer",
    "ask",
    "ask_result",
    "assemble",
    "build_prompt",
    "get_generator",
    "prompt_text",
    "validate",
]
