"""``evidencedesk docs`` and ``evidencedesk chunks DOC_ID``: look at what the store holds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from evidencedesk.cli.app import DEFAULT_STORE, JsonOpt, StoreOpt, app, console, fail, print_json
from evidencedesk.documents import Document
from evidencedesk.store import DB_NAME, Store, StoreError

_PREVIEW = 80


def open_existing(path: Path) -> Store:
    """Open a store that already exists; exit 1 with a clear message when there is none."""
    if not (path / DB_NAME).is_file():
        fail(f"no store at {path}: run `evidencedesk ingest FOLDER --store {path}` first")
    try:
        return Store(path)
    except StoreError as exc:
        fail(str(exc))


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
def docs(store: StoreOpt = DEFAULT_STORE, as_json: JsonOpt = False) -> None:
    """List the stored documents with their metadata and chunk counts."""
    with open_existing(store) as db:
        counts = db.chunk_counts()
        rows = [_summary(d, counts.get(d.id, 0)) for d in db.documents()]
    if as_json:
        print_json(rows)
        return
    table = Table(title=f"{len(rows)} documents in {store}")
    table.add_column("id", no_wrap=True)
    table.add_column("title", ratio=1)
    for name in ("status", "audience", "lang"):
        table.add_column(name)
    table.add_column("valid", no_wrap=True)
    table.add_column("chunks", justify="right")
    for r in rows:
        valid = _validity(r["valid_from"], r["valid_to"])
        table.add_row(r["id"], r["title"], r["status"], r["audience"], r["lang"], valid, str(r["n_chunks"]))
    console.print(table)


@app.command()
def chunks(
    doc_id: Annotated[str, typer.Argument(help="Document id (see `evidencedesk docs`).")],
    store: StoreOpt = DEFAULT_STORE,
    as_json: JsonOpt = False,
) -> None:
    """List one document's chunks: id, kind, location and a preview (full text with --json)."""
    with open_existing(store) as db:
        if db.document(doc_id) is None:
            fail(f"no document with id {doc_id!r} in {store} (see `evidencedesk docs`)")
        found = db.chunks(doc_id)
    if as_json:
        print_json([c.to_dict() for c in found])
        return
    table = Table(title=f"{len(found)} chunks of {doc_id}")
    table.add_column("id", no_wrap=True)
    table.add_column("kind")
    table.add_column("location", ratio=1)
    table.add_column("text", ratio=2)
    for c in found:
        text = " ".join(c.text.split())
        table.add_row(c.id, c.kind, c.location.label, text if len(text) <= _PREVIEW else text[: _PREVIEW - 1] + "…")
    console.print(table)
