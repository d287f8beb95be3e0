"""``evidencedesk search QUERY``: rank the stored chunks inside a scope with one retrieval method."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from evidencedesk.cli import options as opt
from evidencedesk.cli.app import (
    app,
    check_method,
    config_scope,
    console,
    fail,
    load_config,
    open_desk,
    print_json,
    scope_flags,
)


def place(location: dict[str, Any]) -> str:
    """Where a chunk is: its page(s) when its source has pages (a PDF), else its lines."""
    pages = location.get("pages") or []
    if pages:
        return f"page {pages[0]}" if pages[0] == pages[-1] else f"pages {pages[0]}-{pages[-1]}"
    first, last = location["first_line"], location["last_line"]
    return f"line {first}" if first == last else f"lines {first}-{last}"


def _table(rows: list[dict[str, Any]], title: str, legs: list[str]) -> Table:
    """Rank, chunk id (never cut: it is what ``chunks`` and citations name), score and leg ranks keep their
    width; the source (path, heading, page or lines) and the shared words wrap."""
    table = Table(title=title)
    table.add_column("rank", justify="right", no_wrap=True)
    table.add_column("chunk id", no_wrap=True, overflow="fold", min_width=max(len(r["chunk_id"]) for r in rows))
    table.add_column("score", justify="right", no_wrap=True)
    for leg in legs:
        table.add_column(f"{leg} rank", justify="right")
    table.add_column("source", ratio=3, overflow="fold")
    table.add_column("shared words", ratio=2)
    for r in rows:
        loc = r["location"]
        heading = " > ".join(loc["heading_path"]) or "(top)"
        where = f"{r['source_path']} · {place(loc)} · {heading}"
        ranks = {p["source"]: str(p["rank"]) for p in r["parts"]}
        cells = [str(r["rank"]), r["chunk_id"], f"{r['score']:.4f}", *(ranks.get(leg, "-") for leg in legs)]
        table.add_row(*cells, Text(where), Text(", ".join(r["shared_words"])))  # text, never markup
    return table


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="The question or keywords.")],
    method: opt.Method = None,
    k: Annotated[
        int | None, typer.Option("--k", help="How many results. Default: the config's retrieval.k (5).")
    ] = None,
    legs: Annotated[
        str | None, typer.Option("--legs", help="Hybrid legs, comma-separated (default: the config's, bm25,dense).")
    ] = None,
    store: opt.Store = None,
    config: opt.Config = None,
    status: opt.Status = None,
    audience: opt.Audience = None,
    lang: opt.Lang = None,
    tenant: opt.Tenant = None,
    valid_at: opt.ValidAt = None,
    as_json: opt.Json = False,
) -> None:
    """Search the stored chunks: only chunks inside the scope are ranked; no result is padded."""
    from evidencedesk.desk import leg_names

    check_method(method)
    if k is not None and k < 1:
        fail(f"--k: must be at least 1, got {k}", 2)
    settings = load_config(config, {"--k": ("retrieval.k", k), **scope_flags(status, audience, lang, tenant)})
    method = method or settings.retrieval.method
    if legs is not None and method != "hybrid":
        fail("--legs: only for --method hybrid", 2)
    names = [n.strip() for n in legs.split(",") if n.strip()] if legs is not None else None
    if names is not None and len(names) < 2:
        fail(f"--legs: a hybrid fuses at least two legs, got {legs!r}", 2)
    scope = config_scope(settings, valid_at)

    with open_desk(settings, store, lines=not as_json) as desk:
        rows = desk.search_rows(query, settings.retrieval.k, method, scope, names)
        legs_shown = leg_names(desk.searcher(method, names))
        stored = sum(desk.store.chunk_counts().values()) if not rows else 0
    if as_json:
        print_json(rows)
        return
    if not rows:
        console.print(f"no chunk inside the scope matches {query!r} ({stored} chunks stored)", highlight=False)
        return
    console.print(_table(rows, f"{method} · {query}", legs_shown))
