"""``evidencedesk docs`` and ``evidencedesk chunks DOC_ID``: look at what the store holds."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from evidencedesk.cli import options as opt
from evidencedesk.cli.app import app, console, fail, load_config, open_desk, print_json
from evidencedesk.documents import Metadata
from evidencedesk.results.records import DocumentListing

_PREVIEW = 80


def _validity(metadata: Metadata) -> str:
    valid_from, valid_to = metadata.valid_from, metadata.valid_to
    if valid_from and valid_to:
        return f"{valid_from} to {valid_to}"
    if valid_from or valid_to:
        return f"from {valid_from}" if valid_from else f"until {valid_to}"
    return "always"


@app.command()
def docs(store: opt.Store = None, config: opt.Config = None, as_json: opt.Json = False) -> None:
    """List the stored documents with their metadata and chunk counts."""
    from evidencedesk.cli.app import store_label

    settings = load_config(config)
    with open_desk(settings, store) as desk:
        counts = desk.chunk_counts()
        rows = [DocumentListing.of(d, counts.get(d.id, 0)) for d in desk.documents()]
    if as_json:
        print_json([r.to_row() for r in rows])
        return
    console.print(docs_table(rows, f"{len(rows)} documents in {store_label(store or settings.store)}"))


def docs_table(rows: list[DocumentListing], title: str) -> Table:
    """Id, status, tenant and chunk count never shrink (an id folds onto a second line rather than being
    cut); title, audience, language, version and validity share the last column, which wraps."""
    table = Table(title=title, show_lines=False)
    widest = min(max((len(r.id) for r in rows), default=2), 30)
    table.add_column("id", no_wrap=True, overflow="fold", min_width=widest)
    table.add_column("status", no_wrap=True, min_width=max((len(r.metadata.status) for r in rows), default=6))
    table.add_column("tenant", no_wrap=True, overflow="fold")
    table.add_column("chunks", justify="right", no_wrap=True)
    table.add_column("title; audience · lang · valid", ratio=1, overflow="fold")
    for r in rows:
        meta = r.metadata
        details = [meta.audience, meta.lang, _validity(meta)]
        if meta.version:
            details.insert(2, f"v{meta.version}")
        about = Text(r.title or "")
        about.append("\n" + " · ".join(details), style="dim")
        table.add_row(r.id, meta.status, meta.tenant, str(r.n_chunks), about)
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
