"""What the web lab shows beside a search, for the Desk: the stored documents re-chunked, an in-memory
searcher over any chunks configured as the Desk's, the context and prompt a search would hand the
generator, and the words a query shares with a passage (read with the searcher's own tokenizer).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evidencedesk.chunking import ChunkingConfig, chunk_document
from evidencedesk.config import Settings
from evidencedesk.documents import Chunk, Document
from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.wiring import context_options, hybrid_legs, searcher_params

if TYPE_CHECKING:
    from evidencedesk.answer.context import AssembledContext
    from evidencedesk.text.tokenizer import Tokenizer


def rechunk(documents: Iterable[Document], chunking: ChunkingConfig) -> list[Chunk]:
    """Every chunk of ``documents`` under ``chunking``, in document order."""
    return [c for d in documents for c in chunk_document(d, chunking)]


def memory_searcher(
    settings: Settings,
    chunks: Sequence[Chunk],
    method: str,
    legs: Sequence[str] | None,
    cache_path: Path,
    tenant_statistics: bool,
) -> Searcher:
    """A ``method`` searcher built in memory over ``chunks`` with the settings' parameters (a hybrid's
    legs: ``legs``, else the configured ones)."""
    from evidencedesk.retrieval.factory import make_searcher

    names = tuple(legs) if legs else tuple(hybrid_legs(settings)) if method == "hybrid" else ()
    params = searcher_params(settings, method, cache_path, names or None)
    return make_searcher(method, list(chunks), tenant_statistics=tenant_statistics, **params.as_kwargs())


@dataclass(frozen=True)
class PromptPreview:
    """What a search would hand the generator: the context its results assemble into, and the prompt."""

    context: AssembledContext  # the results assembled under the settings' ``context.*``
    prompt: str  # the prompt text a generator would be given over that context


def prompt_preview(settings: Settings, query: str, results: list[Candidate]) -> PromptPreview:
    """The context ``results`` assemble into under the settings, and the prompt a generator would be
    given for ``query`` over it."""
    from evidencedesk.answer.context import assemble
    from evidencedesk.answer.prompt import build_prompt, prompt_text

    assembled = assemble(results, **context_options(settings).as_kwargs())
    return PromptPreview(assembled, prompt_text(build_prompt(query, assembled)))


def searcher_tokenizer(searcher: Searcher) -> Tokenizer | None:
    """The tokenizer that decides shared words: the searcher's own, else its first leg's (None: the default)."""
    from evidencedesk.text.tokenizer import Tokenizer

    first_leg = next((getattr(s, "tokenizer", None) for s, _ in getattr(searcher, "legs", None) or []), None)
    found = getattr(searcher, "tokenizer", first_leg)
    return found if isinstance(found, Tokenizer) else None


def leg_names(searcher: Searcher) -> list[str]:
    """The names of a hybrid searcher's legs (empty for a single method)."""
    return [s.name for s, _ in getattr(searcher, "legs", None) or []]


def words_shared(query: str, text: str, searcher: Searcher | None = None) -> list[str]:
    """The query's words whose term also occurs in ``text``, as ``searcher`` tokenizes (default: the
    default tokenizer)."""
    from evidencedesk.retrieval.explain import shared_words

    return shared_words(query, text, searcher_tokenizer(searcher) if searcher is not None else None)


def candidate_rows(results: list[Candidate], query: str, tokenizer: Tokenizer | None = None) -> list[dict[str, Any]]:
    """``Candidate.to_dict()`` of each result plus ``shared_words`` (the query words it holds)."""
    from evidencedesk.retrieval.explain import shared_words

    rows = []
    for c in results:
        row = c.to_dict()
        row["shared_words"] = shared_words(query, c.chunk.text, tokenizer)
        rows.append(row)
    return rows


__all__ = [
    "PromptPreview",
    "candidate_rows",
    "leg_names",
    "memory_searcher",
    "prompt_preview",
    "rechunk",
    "searcher_tokenizer",
    "words_shared",
]
