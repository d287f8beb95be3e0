"""post_filter: the anti-pattern kept for comparison. Rank everything, then drop what the scope forbids.

It leaks nothing (forbidden chunks are dropped), but it loses results: when forbidden chunks
take places in the top k, fewer than k come back, and none at all when only forbidden chunks
match. Searchers filter before ranking instead; this function exists so tests and the lab can show
the difference.
"""

from __future__ import annotations

from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.retrieval.scope import Scope


def post_filter(searcher: Searcher, query: str, k: int, scope: Scope | None = None) -> list[Candidate]:
    """The top ``k`` over every chunk, minus the ones outside ``scope``, renumbered from 1."""
    scope = scope if scope is not None else Scope()
    kept = [c for c in searcher.search(query, k, Scope.everything()) if scope.allows_chunk(c.chunk)]
    return [Candidate(c.chunk, c.score, n, c.source, c.parts) for n, c in enumerate(kept, 1)]
