"""Query rewriting, each step optional and recorded: normalise, decompose, multi-query, HyDE.

* ``normalise``: collapse whitespace and expand abbreviations ("w/" -> "with", "pls" -> "please"),
  keeping the case of what the user typed.
* ``decompose``: split a compound question ("Which size do I need and what's the delivery
  charge?") into sub-questions when every part reads as a question; statements before them are
  kept as shared context for each part.
* ``multi_query``: the question plus paraphrases given by the user, a function, or a chat model;
  each is searched on its own and the lists are fused by RRF.
* ``hyde``: a chat model writes a hypothetical answer passage that is searched instead of the
  question. A generator without a ``chat`` method (the extractive generator quotes documents and
  knows nothing of its own) makes HyDE a no-op, and the rewrite notes say so.

``Rewriter`` chains the steps a request asks for and returns ``Rewritten``: the queries to search
and one note per step (input, output, remark) for the trace.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

DEFAULT_ABBREVIATIONS: dict[str, str] = {
    "w/o": "without",
    "w/": "with",
    "pls": "please",
    "plz": "please",
    "thx": "thanks",
    "b/c": "because",
    "approx": "approximately",
    "qty": "quantity",
    "info": "information",
    "yr": "year",
    "yrs": "years",
    "mo": "month",
    "mos": "months",
}
_QUESTION_START = re.compile(
    r"^(what|what's|whats|which|who|whom|whose|when|where|why|how|can|could|do|does|did|is|are|was|were|will|"
    r"would|should|shall|may|might|must|have|has|had|am|(please\s+)?(tell|show|explain|list|give)\s+me)\b",
    re.IGNORECASE,
)

Paraphraser = Sequence[str] | Callable[[str], Sequence[str]] | Any


def _expand(expansion: str, match: re.Match[str]) -> str:
    return _cased(expansion, match.group(0))


def _cased(expansion: str, typed: str) -> str:
    if typed.isupper() and len(typed) > 1:
        return expansion.upper()
    if typed[:1].isupper():
        return expansion[:1].upper() + expansion[1:]
    return expansion


def normalise(query: str, abbreviations: Mapping[str, str] | None = None) -> str:
    """Collapse whitespace and expand whole-word abbreviations (longest first), keeping their case."""
    table = DEFAULT_ABBREVIATIONS if abbreviations is None else abbreviations
    text = " ".join(query.split())
    for short in sorted(table, key=len, reverse=True):
        if not short.strip():
            raise ValueError("abbreviations: keys must not be empty")
        pattern = re.compile(rf"(?<![\w/]){re.escape(short)}(?=$|[\s,.;:!?)])", re.IGNORECASE)
        text = pattern.sub(functools.partial(_expand, table[short]), text)
    return text


def _starts_question(text: str) -> bool:
    return _QUESTION_START.match(text.strip().strip(",;")) is not None


def _is_question(text: str) -> bool:
    text = text.strip().strip(",;")
    return bool(text) and (text.endswith("?") or _starts_question(text))


def _as_question(text: str) -> str:
    text = text.strip().strip(",;").strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith("?") else text.rstrip(".") + "?"


def decompose(query: str) -> list[str]:
    """Sub-questions of a compound question, or ``[query]`` when it asks one thing.

    The text is cut into sentences; a sentence that ends with "?" or starts with a question word
    ("how", "can", "tell me" ...) is a question. Each question is cut at "; ", and at " and " /
    ", and " when every part starts with a question word ("bikes and helmets" stays whole).
    Statements are prefixed to every sub-question so each keeps its context.
    """
    sentences = [s for s in re.split(r"(?<=[.?!])\s+", query.strip()) if s.strip()]
    context: list[str] = []
    parts: list[str] = []
    for sentence in sentences:
        if not _is_question(sentence):
            context.append(sentence.strip())
            continue
        pieces = [p for p in re.split(r";\s+", sentence) if p.strip()]
        for piece in pieces:
            split = re.split(r",?\s+and\s+", piece)
            if len(split) > 1 and all(_starts_question(p) for p in split):
                parts.extend(split)
            else:
                parts.append(piece)
    if len(parts) < 2:
        return [query]
    prefix = " ".join(context)
    return [f"{prefix} {_as_question(p)}".strip() for p in parts]


def _chat_lines(model: Any, system: str, user: str) -> list[str]:
    reply = model.chat([{"role": "system", "content": system}, {"role": "user", "content": user}])
    return [re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip() for line in str(reply or "").splitlines()]


def multi_query(query: str, paraphrases: Paraphraser, n: int = 3) -> list[str]:
    """``[query, *paraphrases]`` without repeats; paraphrases may come from a list, a function or a chat model."""
    if n < 1:
        raise ValueError(f"n: must be >= 1, got {n}")
    if isinstance(paraphrases, str):
        raise ValueError("paraphrases: give a list of strings, a function or a chat model, not one string")
    if hasattr(paraphrases, "chat"):
        system = f"Rewrite the user's question in {n} different ways, one per line, with no numbering or comments."
        given: Sequence[str] = _chat_lines(paraphrases, system, query)[:n]
    elif callable(paraphrases):
        given = list(paraphrases(query))
    else:
        given = list(paraphrases)
    out: dict[str, None] = {query: None}
    for p in given:
        p = " ".join(str(p).split())
        if p and p.lower() not in {q.lower() for q in out}:
            out[p] = None
    return list(out)


HYDE_SYSTEM = (
    "Write one short factual passage (two or three sentences) that could appear in a customer-service "
    "document and would answer the user's question. Write only the passage."
)


def hyde(query: str, generator: Any) -> str:
    """The hypothetical answer passage a chat model writes for ``query``, to be searched instead of it.

    A generator without a ``chat`` method (such as the extractive generator, which only quotes the
    documents) cannot imagine an answer: the query comes back unchanged.
    """
    if generator is None or not hasattr(generator, "chat"):
        return query
    text = " ".join(line for line in _chat_lines(generator, HYDE_SYSTEM, query) if line)
    return text or query


class RewrittenDict(TypedDict):
    """A Rewritten as JSON."""

    original: str
    question: str
    queries: list[str]
    steps: list[dict[str, object]]  # each step: step, input, output and, when it did nothing, a note


@dataclass(frozen=True)
class Rewritten:
    """The queries to search (fused by RRF when there are several) and one note per step taken.

    ``question`` is the question as the later stages (reranker, generator) should read it: the
    original after normalisation, never a sub-question or a hypothetical answer.
    """

    original: str
    queries: list[str]
    steps: list[dict[str, object]] = field(default_factory=list)
    question: str = ""

    def __post_init__(self) -> None:
        if not self.question:
            object.__setattr__(self, "question", self.original)

    def to_dict(self) -> RewrittenDict:
        return {
            "original": self.original,
            "question": self.question,
            "queries": list(self.queries),
            "steps": list(self.steps),
        }


@dataclass
class Rewriter:
    """The rewriting steps one request asks for, applied in order: normalise, decompose, multi-query, HyDE."""

    normalise: bool = False
    abbreviations: Mapping[str, str] | None = None
    decompose: bool = False
    paraphrases: Paraphraser | None = None
    hyde: Any = None  # a generator; HyDE is a no-op unless it has a ``chat`` method

    def __call__(self, query: str) -> Rewritten:
        if not query.strip():
            raise ValueError("query: must not be empty")
        steps: list[dict[str, object]] = []
        current = query
        if self.normalise:
            current = normalise(query, self.abbreviations)
            steps.append({"step": "normalise", "input": query, "output": [current]})
        queries = [current]
        if self.decompose:
            queries = decompose(current)
            note = "" if len(queries) > 1 else "one question: nothing to split"
            steps.append({"step": "decompose", "input": current, "output": list(queries), "note": note})
        if self.paraphrases is not None:
            more = multi_query(current, self.paraphrases)
            steps.append({"step": "multi_query", "input": current, "output": more})
            queries = list(dict.fromkeys([*queries, *more[1:]]))
        if self.hyde is not None:
            text = hyde(current, self.hyde)
            name = getattr(self.hyde, "name", type(self.hyde).__name__)
            note = "" if text != current else f"no-op: generator {name!r} cannot write a hypothetical answer"
            steps.append({"step": "hyde", "input": current, "output": [text], "note": note})
            queries = [text if q == current else q for q in queries]
        return Rewritten(query, list(dict.fromkeys(queries)), steps, current)


__all__ = [
    "DEFAULT_ABBREVIATIONS",
    "HYDE_SYSTEM",
    "Rewriter",
    "Rewritten",
    "RewrittenDict",
    "decompose",
    "hyde",
    "multi_query",
    "normalise",
]
