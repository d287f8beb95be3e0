"""Public benchmarks run with the configured retrieval: a BEIR dataset, indexed once in its own store
and scored with nDCG@10, recall@100 and MRR@10 (``evaluation.beir``). What the command line does not
name (BM25's k1 and b, stemming, stopwords, the contextual line, fusion) comes from the settings."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from evidencedesk.config import Settings

if TYPE_CHECKING:
    from evidencedesk.results.evaluation import BeirSummary


def beir_params(
    settings: Settings,
    method: str,
    store_dir: str | Path,
    *,
    k1: float | None = None,
    b: float | None = None,
    stem: bool | None = None,
    stopwords: bool | None = None,
    contextual: bool | None = None,
    fusion: str | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """The searcher parameters of a BEIR run of ``method``: each argument left None from ``settings``."""
    from evidencedesk.evaluation.beir import searcher_params

    bm25_leg = next((x for x in settings.retrieval.legs if x.method == "bm25"), None)
    dense_leg = next((x for x in settings.retrieval.legs if x.method == "dense"), None)
    params: dict[str, Any] = searcher_params(
        method,
        store_dir,
        k1=k1 if k1 is not None else (bm25_leg.k1 if bm25_leg else None),
        b=b if b is not None else (bm25_leg.b if bm25_leg else None),
        stem=stem if stem is not None else (bm25_leg.stem if bm25_leg else True),
        stopwords=stopwords if stopwords is not None else (bm25_leg is None or bm25_leg.stopwords is not None),
        stopword_list=(bm25_leg.stopwords if bm25_leg and bm25_leg.stopwords else "english"),
        language=bm25_leg.language if bm25_leg else "english",
        contextual=contextual if contextual is not None else any(x.contextual for x in (dense_leg, bm25_leg) if x),
        embedder=dense_leg.model if dense_leg else None,
        progress=progress,
    )
    if method == "hybrid":
        fusion = fusion or settings.retrieval.fusion.method
        params["fusion"] = fusion
        params["depth"] = max(x.depth for x in settings.retrieval.legs)
        if fusion == "rrf":
            params["rrf_k"] = settings.retrieval.fusion.k
        elif settings.retrieval.fusion.weights is not None:
            params["weights"] = settings.retrieval.fusion.weights
    return params


def run_beir(
    dataset_dir: str | Path,
    method: str,
    store_dir: str | Path,
    params: dict[str, Any],
    split: str = "test",
    run_out: str | Path | None = None,
) -> BeirSummary:
    """Index (once) and score ``method`` on the BEIR dataset; returns the summary row."""
    from evidencedesk.evaluation import beir

    return beir.run_beir(dataset_dir, method, store_dir, split=split, run_out=run_out, params=params)


__all__ = ["beir_params", "run_beir"]
