"""``evidencedesk search QUERY``: rank the stored chunks inside a scope with one retrieval method."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

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
from evidencedesk.cli.plain import snippet, wrap
from evidencedesk.documents import Location

if TYPE_CHECKING:  # the CLI's --help loads no numerical library
    from evidencedesk.results.search import SearchHit


def place(location: Location) -> str:
    """Where a chunk is: its page(s) when its source has pages (a PDF), else its lines."""
    pages = location.pages
    if pages:
        return f"page {pages[0]}" if pages[0] == pages[-1] else f"pages {pages[0]}-{pages[-1]}"
    first, last = location.first_line, location.last_line
    return f"line {first}" if first == last else f"lines {first}-{last}"


def result_lines(hits: list[SearchHit], legs: list[str], width: int) -> list[str]:
    """Each result as a short block: rank, whole chunk id and score; where it is (file, page or lines,
    headings); the leg ranks and shared words; two lines of its text. Fits ``width`` columns."""
    out: list[str] = []
    pad = len(str(hits[-1].rank)) + 2
    indent = " " * pad
    for hit in hits:
        loc = hit.location
        heading = " > ".join(loc.heading_path) or "(top)"
        out.append(f"{str(hit.rank).rjust(pad - 2)}  {hit.chunk_id}  score {hit.score:.4f}")
        out += wrap(f"{hit.source_path} · {place(loc)} · {heading}", width, indent)
        ranks = {p.source: p.rank for p in hit.parts}
        why = [f"{leg} #{ranks[leg]}" if leg in ranks else f"{leg} -" for leg in legs] if len(legs) > 1 else []
        if hit.shared_words:
            why.append("shared: " + ", ".join(hit.shared_words))
        if why:
            out += wrap(" · ".join(why), width, indent)
        out += snippet(hit.text or "", width, indent=indent)
        out.append("")
    return out[:-1]


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
    from evidencedesk.config import Overrides

    settings = load_config(config, {"--k": Overrides(k=k), **scope_flags(status, audience, lang, tenant)})
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
        stored = sum(desk.chunk_counts().values()) if not rows else 0
    if as_json:
        print_json([hit.to_dict() for hit in rows])
        return
    if not rows:
        console.print(f"no chunk inside the scope matches {query!r} ({stored} chunks stored)", highlight=False)
        return
    width = console.width
    head = f"{method} · {query} · {len(rows)} result{'s' if len(rows) != 1 else ''}"
    lines = [*wrap(head, width), "", *result_lines(rows, legs_shown, width)]
    console.print("\n".join(lines), markup=False, highlight=False, soft_wrap=True)
