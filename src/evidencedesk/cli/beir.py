"""``evidencedesk beir DATASET_DIR``: run a retrieval method on a BEIR dataset and print nDCG@10, recall@100, MRR@10."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from evidencedesk.cli import options as opt
from evidencedesk.cli.app import app, check_method, console, err_console, fail, print_json
from evidencedesk.constants import METHODS

DEFAULT_BEIR_STORES = Path(".evidencedesk-beir")


@app.command()
def beir(
    dataset_dir: Annotated[Path, typer.Argument(help="A BEIR folder: corpus.jsonl[.gz], queries.jsonl, qrels/.")],
    method: Annotated[str, typer.Option("--method", help=f"One of {', '.join(METHODS)}.")] = "bm25",
    split: Annotated[str, typer.Option("--split", help="The qrels split to score (qrels/SPLIT.tsv).")] = "test",
    store: Annotated[
        Path | None,
        typer.Option("--store", help="Store for the corpus and its embeddings. Default: .evidencedesk-beir/NAME."),
    ] = None,
    run_out: Annotated[Path | None, typer.Option("--run-out", help="Write a TREC run file here.")] = None,
    k1: Annotated[float | None, typer.Option("--k1", help="BM25 k1 (default 1.5).")] = None,
    b: Annotated[float | None, typer.Option("--b", help="BM25 b (default 0.75).")] = None,
    stem: Annotated[
        bool | None, typer.Option("--stem/--no-stem", help="Stemming for lexical methods (default: the settings').")
    ] = None,
    stopwords: Annotated[
        bool | None,
        typer.Option("--stopwords/--no-stopwords", help="Drop stopwords in lexical methods (default: the settings')."),
    ] = None,
    contextual: Annotated[
        bool | None,
        typer.Option(
            "--contextual/--no-contextual",
            help="Index and embed 'title > headings' before each chunk (default: the legs' contextual setting).",
        ),
    ] = None,
    fusion: Annotated[
        str | None, typer.Option("--fusion", help="Hybrid fusion: rrf or normalized (default: the settings').")
    ] = None,
    as_json: opt.Json = False,
) -> None:
    """Score a method on a BEIR dataset; the corpus is stored once and its embeddings cached in the store.

    Every setting not given as a flag comes from the configuration (evidencedesk.yaml or the defaults).
    """
    from evidencedesk.config import load_settings
    from evidencedesk.desk import Desk

    settings = load_settings()
    fusion = fusion or settings.retrieval.fusion.method
    check_method(method)
    if fusion not in ("rrf", "normalized"):
        fail(f"--fusion: must be rrf or normalized, got {fusion!r}", 2)
    if fusion != settings.retrieval.fusion.method and method != "hybrid":
        fail("--fusion: only for --method hybrid", 2)
    if (k1 is not None or b is not None) and method not in ("bm25", "hybrid"):
        fail("--k1/--b: only for --method bm25 or hybrid", 2)
    if not dataset_dir.is_dir():
        fail(f"DATASET_DIR: {dataset_dir} is not a folder", 2)
    store_dir = store if store is not None else DEFAULT_BEIR_STORES / dataset_dir.resolve().name
    if not as_json:
        err_console.print(f"running {method} on {dataset_dir} ({split}); store {store_dir}", highlight=False)
    try:
        summary = Desk.beir(
            settings, dataset_dir, method, store_dir, split=split, run_out=run_out, k1=k1, b=b, stem=stem,
            stopwords=stopwords, contextual=contextual, fusion=fusion, progress=not as_json,
        )  # fmt: skip
    except ValueError as exc:  # a dataset that cannot be read (a missing split, a bad line): not a usage error
        fail(str(exc))
    if as_json:
        print_json(summary.to_dict())
        return
    table = Table(title=f"{dataset_dir.name} · {method} · {split}")
    columns = ["method", "split", "n_queries", "n_docs", *summary.scores, "seconds"]
    for key in columns:
        table.add_column(key, justify="right")
    cells = [summary.method, summary.split, str(summary.n_queries), str(summary.n_docs)]
    table.add_row(*cells, *(f"{v:.4f}" for v in summary.scores.values()), str(summary.seconds))
    console.print(table)
    if run_out is not None:
        console.print(f"run file: {run_out}", highlight=False)
