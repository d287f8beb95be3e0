"""The Generator protocol every answer generator implements, and what it returns."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict, runtime_checkable

from evidencedesk.retrieval.candidates import Candidate


class GenerationDict(TypedDict):
    """A Generation as JSON."""

    answer: str
    cited: list[str]
    abstained: bool
    reason: str
    raw: str
    details: dict[str, object]  # each generator's own: scorer, answerability, reader, tokens ...


@dataclass(frozen=True)
class Generation:
    """A generator's raw output, before validation.

    ``cited`` holds the chunk ids the answer cites, in order of first use. An abstention has
    ``abstained=True`` and ``reason`` says what is missing from the context.
    """

    answer: str
    cited: tuple[str, ...] = ()
    abstained: bool = False
    reason: str = ""
    raw: str = ""  # the model's unparsed text, kept for the trace
    details: dict[str, Any] = field(default_factory=dict)  # what decided it (scorer, answerability), for the trace

    def to_dict(self) -> GenerationDict:
        return {
            "answer": self.answer,
            "cited": list(self.cited),
            "abstained": self.abstained,
            "reason": self.reason,
            "raw": self.raw,
            "details": dict(self.details),
        }


@runtime_checkable
class Generator(Protocol):
    """Turns a question and its labelled context into an answer that cites chunk ids, or an abstention.

    ``context`` is what the model is shown, in order; ``prompt`` is the full labelled prompt text
    (system rules + untrusted context block + question) that a language model would receive.
    """

    name: str

    def generate(self, question: str, context: list[Candidate], prompt: str) -> Generation: ...


@runtime_checkable
class StreamingGenerator(Generator, Protocol):
    """A generator that can also hand out its answer as it is written.

    ``stream`` yields text pieces (``str``) in order and then exactly one :class:`Generation`, the
    same one ``generate`` returns for the same input. ``max_tokens`` (None: the generator's own
    limit) caps this request's reply; ``should_stop`` is asked before every further token, and
    when it returns True the generator stops and returns without a Generation. Closing the
    iterator stops generation too.
    """

    def stream(
        self,
        question: str,
        context: list[Candidate],
        prompt: str,
        *,
        max_tokens: int | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[str | Generation]: ...
