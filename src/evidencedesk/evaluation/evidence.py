"""The chunks an evaluation needs: those that hold a label's gold phrase, found in one pass over the store.

Scoring and diagnosing a labelled question look at the ranked chunks (which the searcher returns)
and at the chunks that hold its gold phrases (its qrels; whether its answer was indexed at all,
and whether only outside the scope). No other chunk changes a metric or a finding, so evaluation
reads the store in batches, keeps only those chunks, and never holds the whole store in memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evidencedesk.documents import Chunk
from evidencedesk.evaluation.labels import Label, chunk_text
from evidencedesk.retrieval.scope import Scope
from evidencedesk.text.match import holds_phrase, match_form


@dataclass(frozen=True)
class Evidence:
    """What one pass over the store found for a set of labels."""

    chunks: list[Chunk]  # every chunk read that holds some label's gold phrase (inside the scope, if one was given)
    read: int  # chunks read
    in_scope: int  # of those, the ones inside the scope (all of them when no scope was given)


def gather_evidence(
    batches: Iterable[Sequence[Chunk]], labels: Sequence[Label], scope: Scope | None = None
) -> Evidence:
    """The chunks of ``batches`` that hold a gold phrase (with its companions, and from its document
    when it names one) of any of ``labels``; with ``scope``, only chunks inside it are kept."""
    golds = list(dict.fromkeys(g for label in labels for g in label.gold))
    kept: list[Chunk] = []
    read = in_scope = 0
    for batch in batches:
        for chunk in batch:
            read += 1
            if scope is not None and not scope.allows_chunk(chunk):
                continue
            in_scope += 1
            text = match_form(chunk_text(chunk))  # as Gold.held_by compares
            if any(g.from_document(chunk) and all(holds_phrase(text, n) for n in g.needles) for g in golds):
                kept.append(chunk)
    return Evidence(kept, read, in_scope)


__all__ = ["Evidence", "gather_evidence"]
