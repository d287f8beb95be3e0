"""What ``search --json`` and ``ask --json`` return, as plain functions the HTTP service shares.

``search_rows`` is one ranked list with the words each chunk shares with the query; ``answer``
runs the answering pipeline and returns ``result_dict`` beside the trace. The service calls these
so ``POST /search`` and ``POST /ask`` answer with the same objects as the command line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evidencedesk.answer.generators.base import Generator
from evidencedesk.answer.pipeline import AskTrace, ask, result_dict
from evidencedesk.documents import Chunk
from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.retrieval.explain import shared_words
from evidencedesk.retrieval.scope import Scope


def searcher_tokenizer(searcher: Searcher) -> Any:
    """The tokenizer that decides shared words: the searcher's own, else its first leg's (None: the default)."""
    first_leg = next((getattr(s, "tokenizer", None) for s, _ in getattr(searcher, "legs", [])), None)
    return getattr(searcher, "tokenizer", first_leg)


def leg_names(searcher: Searcher) -> list[str]:
    """The names of a hybrid searcher's legs (empty for a single method)."""
    return [s.name for s, _ in getattr(searcher, "legs", [])]


def candidate_rows(results: list[Candidate], query: str, tokenizer: Any = None) -> list[dict[str, Any]]:
    """``Candidate.to_dict()`` of each result plus ``shared_words`` (the query words it holds)."""
    rows = []
    for c in results:
        row = c.to_dict()
        row["shared_words"] = shared_words(query, c.chunk.text, tokenizer)
        rows.append(row)
    return rows


def search_rows(searcher: Searcher, query: str, k: int, scope: Scope) -> list[dict[str, Any]]:
    """Rank inside ``scope`` and return what ``evidencedesk search --json`` prints."""
    if k < 1:
        raise ValueError(f"k: must be at least 1, got {k}")
    results = searcher.search(query, k, scope)
    return candidate_rows(results, query, searcher_tokenizer(searcher))


def answer(
    question: str,
    searcher: Searcher,
    chunks_by_id: Mapping[str, Chunk],
    generator: Generator,
    scope: Scope,
    **options: Any,
) -> tuple[dict[str, Any], AskTrace]:
    """Run ``ask`` and return what ``evidencedesk ask --json`` prints, with the trace it came from.

    ``options`` are ``ask``'s keyword arguments (k, candidates, reranker, budget_tokens, floor,
    dedup_threshold, order, rewrite, label).
    """
    checked, trace = ask(question, searcher, chunks_by_id, generator, scope, **options)
    return result_dict(checked, trace, chunks_by_id), trace


__all__ = ["answer", "candidate_rows", "leg_names", "search_rows", "searcher_tokenizer"]
