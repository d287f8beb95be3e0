"""Recall against context size: re-chunk the same documents several ways and measure each.

For every chunking config the documents are chunked with ``chunk_document``, a searcher of one
method is built over the chunks, and for each k the mean number of words in the top k (x) is paired
with the mean answer recall@k (y) over answerable labels. Small chunks buy recall with fewer words
until they start cutting the evidence in two; the chart shows where.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evidencedesk.chunking import ChunkingConfig, chunk_document
from evidencedesk.documents import Chunk, Document
from evidencedesk.evaluation.labels import Label, chunk_text
from evidencedesk.evaluation.report_html import SizeSeries
from evidencedesk.evaluation.runner import answer_recall
from evidencedesk.retrieval.factory import make_searcher
from evidencedesk.retrieval.scope import Scope

DEFAULT_CONFIGS = (
    ChunkingConfig("fixed", size=40, unit="words"),
    ChunkingConfig("fixed", size=120, unit="words"),
    ChunkingConfig("structure", size=60, unit="words"),
    ChunkingConfig("structure", size=200, unit="words"),
)
DEFAULT_KS = (1, 2, 3, 5, 8, 10)


def config_name(config: ChunkingConfig) -> str:
    return f"{config.name} {config.size} {config.unit}"


def rechunk(documents: Sequence[Document], config: ChunkingConfig) -> list[Chunk]:
    return [c for doc in documents for c in chunk_document(doc, config)]


def size_points(
    chunks: Sequence[Chunk],
    labels: Sequence[Label],
    scope: Scope | None,
    method: str,
    ks: Sequence[int] = DEFAULT_KS,
    **params: Any,
) -> list[tuple[float, float, int]]:
    """``(mean words in the top k, mean answer recall@k, k)`` for each k, over answerable labels."""
    answerable = [x for x in labels if x.answerable]
    if not answerable or not ks:
        return []
    searcher = make_searcher(method, chunks, **params)
    deepest = max(ks)
    found = {x.id: [c.chunk for c in searcher.search(x.question, deepest, scope)] for x in answerable}
    points = []
    for k in sorted(ks):
        words = [sum(len(chunk_text(c).split()) for c in found[x.id][:k]) for x in answerable]
        recall = [answer_recall(x, found[x.id][:k]) for x in answerable]
        points.append((sum(words) / len(words), sum(recall) / len(recall), k))
    return points


def chunk_size_series(
    documents: Sequence[Document],
    labels: Sequence[Label],
    scope: Scope | None,
    method: str = "bm25",
    configs: Sequence[ChunkingConfig] = DEFAULT_CONFIGS,
    ks: Sequence[int] = DEFAULT_KS,
    **params: Any,
) -> list[SizeSeries]:
    """One series per chunking config, all measured with the same method, labels and scope."""
    out = []
    for config in configs:
        points = size_points(rechunk(documents, config), labels, scope, method, ks, **params)
        out.append(SizeSeries(config_name(config), tuple(points)))
    return out


__all__ = ["DEFAULT_CONFIGS", "DEFAULT_KS", "chunk_size_series", "config_name", "rechunk", "size_points"]
