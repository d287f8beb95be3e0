"""``evidencedesk docs`` and ``evidencedesk chunks DOC_ID``: look at what the store holds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from evidencedesk.cli import options as opt
from evidencedesk.cli.app import app, console, fail, load_config, open_desk, print_json

if TYPE_CHECKING:
    from evidencedesk.documents import Document

_PREVIEW = 80


def _validity(valid_from: str | None, valid_to: str | None) -> str:
    if valid_from and valid_to:
        return f"{valid_from} to {valid_to}"
    if valid_from or valid_to:
        return f"from {valid_from}" if valid_from else f"until {valid_to}"
    return "always"


def _summary(doc: Document, n_chunks: int) -> dict[str, Any]:
    meta = doc.metadata.to_dict()
    return {
        "id": doc.id,
        "title": doc.title,
        "path": doc.path,
        "format": doc.format,
        **{k: meta[k] for k in ("status", "audience", "lang", "tenant", "version", "valid_from", "valid_to")},
        "n_chunks": n_chunks,
        "content_hash": doc.content_hash,
    }


@app.command()
def docs(store: opt.Store = None, config: opt.Config = None, as_json: opt.Json = False) -> None:
    """List the stored documents with their metadata and chunk counts."""
    from evidencedesk.cli.app import store_label

    settings = load_config(config)
    with open_desk(settings, store) as desk:
        counts = desk.chunk_counts()
        rows = [_summary(d, counts.get(d.id, 0)) for d in desk.documents()]
    if as_json:
        print_json(rows)
        return
    console.print(docs_table(rows, f"{len(rows)} documents in {store_label(store or settings.store)}"))


def docs_table(rows: list[dict[str, Any]], title: str) -> Table:
    """Id, status, tenant and chunk count never shrink (an id folds onto a second line rather than being
    cut); title, audience, language, version and validity share the last column, which wraps."""
    table = Table(title=title, show_lines=False)
    widest = min(max((len(r["id"]) for r in rows), default=2), 30)
    table.add_column("id", no_wrap=True, overflow="fold", min_width=widest)
    table.add_column("status", no_wrap=True, min_width=max((len(r["status"]) for r in rows), default=6))
    table.add_column("tenant", no_wrap=True, overflow="fold")
    table.add_column("chunks", justify="right", no_wrap=True)
    table.add_column("title; audience · lang · valid", ratio=1, overflow="fold")
    for r in rows:
        details = [r["audience"], r["lang"], _validity(r["valid_from"], r["valid_to"])]
        if r.get("version"):
            details.insert(2, f"v{r['version']}")
        about = Text(r["title"] or "")
        about.append("\n" + " · ".join(details), style="dim")
        table.add_row(r["id"], r["status"], r["tenant"], str(r["n_chunks"]), about)
    return table


@app.command()
def chunks(
    doc_id: Annotated[str, typer.Argument(help="Document id (see `evidencedesk docs`).")],
    store: opt.Store = None,
    config: opt.Config = None,
    as_json: opt.Json = False,
) -> None:
    """List one document's chunks: id, kind, location and a preview (full text with --json)."""
    from evidencedesk.cli.app import store_label

    settings = load_config(config)
    with open_desk(settings, store) as desk:
        if desk.document(doc_id) is None:
            where = store_label(store or settings.store)
            fail(f"no document with id {doc_id!r} in {where} (see `evidencedesk docs`)")
        found = desk.chunks(doc_id)
    if as_json:
        print_json([c.to_dict() for c in found])
        return
    table = Table(title=f"{len(found)} chunks of {doc_id}")
    table.add_column("id", no_wrap=True, overflow="fold")
    table.add_column("kind", no_wrap=True)
    table.add_column("location", ratio=1)
    table.add_column("text", ratio=2)
    for c in found:
        text = " ".join(c.text.split())
        table.add_row(c.id, c.kind, c.location.label, text if len(text) <= _PREVIEW else text[: _PREVIEW - 1] + "…")
    console.print(table)
