"""``AskRequest``: one question and how to answer it, the one place ``Desk.ask`` and ``Desk.ask_stream``
declare their arguments.

>>> AskRequest("Can I return a bike after five weeks?", method="bm25", k=3).k
3
>>> AskRequest.of("How long do refunds take?", None, save=False).save
False
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from evidencedesk.constants import METHODS
from evidencedesk.documents import Chunk
from evidencedesk.errors import ConfigError
from evidencedesk.retrieval.candidates import Searcher
from evidencedesk.retrieval.scope import Scope
from evidencedesk.wiring import RewriteOptions

if TYPE_CHECKING:
    from evidencedesk.evaluation.labels import Label


@dataclass(frozen=True)
class AskRequest:
    """A question and how to answer it. Fields left None take the configured values when it runs
    (``retrieval.k``, ``retrieval.rerank``, ``context.*``, ``generator.name``); a value the settings
    reject (``order="middle"``) raises ConfigError naming the settings key then.

    - ``question``: what to answer; ``scope``: what it may see (a Scope or its dict; default: the
      configured scope).
    - ``generator``: a generator name; ``method``: the retrieval method; ``k``: chunks passed on to the
      context; ``candidates``: first-stage depth (at least ``k``); ``rerank``: none, overlap, llm or
      cross-encoder:MODEL.
    - ``budget_tokens``, ``floor``, ``dedup_threshold``, ``order``: the context's ``context.*`` settings.
    - ``rewrite``: query rewriting steps; ``label``: a labelled question, whose diagnosis the trace then
      carries; ``over``: a searcher and its chunks to answer from instead of the store's (the web lab's
      re-chunkings).
    - ``save``: store the trace, as made by the API key ``owner`` when one is named.
    - ``explain_abstention``: on an abstention, name the documents outside the scope that matched and
      why they are out (for whoever owns the store: it tells about hidden documents).
    - ``max_tokens``: a lower token limit for a language model's answer (never above
      ``generator.max_tokens``).

    Raises ConfigError for an empty question, an unknown method, ``k``, ``candidates`` or ``max_tokens``
    below 1, or fewer candidates than ``k``; TypeError for a scope, rewrite or ``over`` of the wrong kind.
    """

    question: str
    scope: Scope | Mapping[str, Any] | None = None
    _: KW_ONLY
    # what answers, and from which chunks
    generator: str | None = None
    method: str | None = None
    k: int | None = None
    candidates: int | None = None
    rerank: str | None = None
    # the context handed to the generator
    budget_tokens: int | None = None
    floor: float | None = None
    dedup_threshold: float | None = None
    order: str | None = None
    # the lab and the diagnosis
    rewrite: RewriteOptions | None = None
    label: Label | None = None
    over: tuple[Searcher, Sequence[Chunk]] | None = None
    # the trace, and who sees what
    save: bool = True
    owner: str | None = None
    explain_abstention: bool = False
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.question, str):
            raise TypeError(f"question: must be a string, got {type(self.question).__name__}")
        if not self.question.strip():
            raise ConfigError("question: must not be empty")
        if self.scope is not None and not isinstance(self.scope, Scope | Mapping):
            raise TypeError(f"scope: must be a Scope or a mapping, got {type(self.scope).__name__}")
        if self.method is not None and self.method not in METHODS:
            raise ConfigError(f"method: unknown method {self.method!r}; choose from {', '.join(METHODS)}")
        for name in ("k", "candidates", "max_tokens"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ConfigError(f"{name}: must be >= 1, got {value}")
        if self.k is not None and self.candidates is not None and self.candidates < self.k:
            raise ConfigError(f"candidates: must be at least k ({self.k}), got {self.candidates}")
        if self.rewrite is not None and not isinstance(self.rewrite, RewriteOptions):
            raise TypeError(f"rewrite: must be RewriteOptions, got {type(self.rewrite).__name__}")
        if self.over is not None and len(self.over) != 2:
            raise TypeError("over: must be a (searcher, chunks) pair")

    @classmethod
    def of(
        cls, question: AskRequest | str, scope: Scope | Mapping[str, Any] | None = None, **changes: Any
    ) -> AskRequest:
        """A request from a question (or a request) and keyword fields, as ``Desk.ask`` takes them: with a
        request, ``scope`` and the keywords replace its fields. An unknown keyword raises TypeError naming it.
        """
        unknown = [name for name in changes if name not in FIELDS[1:]]
        if unknown:
            raise TypeError(f"unknown argument {unknown[0]!r}; the fields after the question: {', '.join(FIELDS[1:])}")
        if scope is not None:
            changes["scope"] = scope
        if isinstance(question, AskRequest):
            return replace(question, **changes) if changes else question
        return cls(question, **changes)


FIELDS: tuple[str, ...] = tuple(f.name for f in fields(AskRequest))  # the question first

__all__ = ["FIELDS", "AskRequest"]
