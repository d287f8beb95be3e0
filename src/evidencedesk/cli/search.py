"""``evidencedesk search QUERY``: rank the stored chunks inside a scope with one retrieval method."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from evidencedesk.cli.app import (
    DEFAULT_STORE,
    AudienceOpt,
    JsonOpt,
    LangOpt,
    StatusOpt,
    StoreOpt,
    TenantOpt,
    ValidAtOpt,
    app,
    console,
    fail,
    print_json,
    scope_from_options,
)
from evidencedesk.retrieval.candidates import Candidate
from evidencedesk.retrieval.factory import DEFAULT_LEGS, METHODS, make_searcher
from evidencedesk.store import Store, StoreError
from evidencedesk.store.schema import DB_NAME

EMBEDDINGS_FILE = "embeddings.sqlite"  # the embedding cache every command keeps in the store folder


def _rows(results: list[Candidate], query: str, tokenizer: Any) -> list[dict[str, Any]]:
    from evidencedesk.retrieval.explain import shared_words

    out = []
    for c in results:
        d = c.to_dict()
        d["shared_words"] = shared_words(query, c.chunk.text, tokenizer)
        out.append(d)
    return out


def _table(rows: list[dict[str, Any]], title: str, legs: list[str]) -> Table:
    table = Table(title=title)
    table.add_column("rank", justify="right")
    table.add_column("chunk id")
    table.add_column("score", justify="right")
    for leg in legs:
        table.add_column(f"{leg} rank", justify="right")
    table.add_column("source")
    table.add_column("shared words")
    for r in rows:
        loc = r["location"]
        heading = " > ".join(loc["heading_path"]) or "(top)"
        where = f"{r['source_path']} · {heading}, lines {loc['first_line']}-{loc['last_line']}"
        ranks = {p["source"]: str(p["rank"]) for p in r["parts"]}
        cells = [str(r["rank"]), r["chunk_id"], f"{r['score']:.4f}", *(ranks.get(leg, "-") for leg in legs)]
        table.add_row(*cells, where, ", ".join(r["shared_words"]))
    return table


def _params(method: str, legs: str | None, store: Path) -> dict[str, Any]:
    """Searcher parameters: dense embeddings are cached in the store folder, keyed by chunk text."""
    cache = {"cache_path": store / EMBEDDINGS_FILE}
    if method == "dense":
        return cache
    if method != "hybrid":
        return {}
    names = [n.strip() for n in legs.split(",")] if legs else list(DEFAULT_LEGS)
    return {"legs": legs or ",".join(DEFAULT_LEGS), **({"leg_params": {"dense": cache}} if "dense" in names else {})}


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="The question or keywords.")],
    method: Annotated[str, typer.Option("--method", help=f"One of {', '.join(METHODS)}.")] = "bm25",
    k: Annotated[int, typer.Option("--k", help="How many results.")] = 5,
    legs: Annotated[
        str | None, typer.Option("--legs", help="Hybrid legs, comma-separated (default bm25,dense).")
    ] = None,
    store: StoreOpt = DEFAULT_STORE,
    status: StatusOpt = None,
    audience: AudienceOpt = None,
    lang: LangOpt = None,
    tenant: TenantOpt = None,
    valid_at: ValidAtOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Search the stored chunks: only chunks inside the scope are ranked; no result is padded."""
    if method not in METHODS:
        fail(f"--method: unknown method {method!r}; choose from {', '.join(METHODS)}", 2)
    if k < 1:
        fail(f"--k: must be at least 1, got {k}", 2)
    if legs is not None and method != "hybrid":
        fail("--legs: only for --method hybrid", 2)
    scope = scope_from_options(status, audience, lang, tenant, valid_at)

    if not (store / DB_NAME).exists():
        fail(f"no store at {store} (run `evidencedesk ingest FOLDER --store {store}` first)")
    try:
        with Store(store) as db:
            chunks = db.chunks()
    except (StoreError, OSError) as exc:
        fail(f"cannot read store {store}: {exc}")
    params = _params(method, legs, store)
    try:
        searcher = make_searcher(method, chunks, **params)
        results = searcher.search(query, k, scope)
    except ValueError as exc:
        fail(str(exc), 2)
    leg_names = [s.name for s, _ in getattr(searcher, "legs", [])]
    tokenizer = next((getattr(s, "tokenizer", None) for s, _ in getattr(searcher, "legs", [])), None)
    rows = _rows(results, query, getattr(searcher, "tokenizer", tokenizer))
    if as_json:
        print_json(rows)
        return
    if not rows:
        console.print(f"no chunk inside the scope matches {query!r} ({len(chunks)} chunks stored)", highlight=False)
        return
    console.print(_table(rows, f"{method} · {query}", leg_names))
