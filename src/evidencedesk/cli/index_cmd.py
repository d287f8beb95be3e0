"""``evidencedesk index``: save the store's index as a memory-mapped snapshot for fast opening."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from evidencedesk.cli.app import ConfigOpt, JsonOpt, StoreOpt, app, console, fail, load_config, open_desk, print_json


@app.command()
def index(
    store: StoreOpt = None,
    config: ConfigOpt = None,
    dense: Annotated[bool, typer.Option("--dense/--no-dense", help="Also save the dense vectors.")] = True,
    ann: Annotated[bool, typer.Option("--ann/--exact", help="Build an HNSW graph over the vectors.")] = True,
    as_json: JsonOpt = False,
) -> None:
    """Write <store>/snapshot: BM25 postings, vectors and HNSW graph, opened memory-mapped by later searches.

    With a snapshot that matches the latest build and the configured BM25/dense settings, `search`,
    `ask`, `eval` and `diagnose` open the index in milliseconds and read chunk text only for results.
    An ingest makes it stale: searches then build the index in memory again until you rerun `index`.
    """
    settings = load_config(config)
    with open_desk(settings, store) as desk:
        if desk.is_postgres:
            fail("index: a PostgreSQL store keeps its indexes in the database; nothing to write", 2)
        timings: dict[str, float] = {}
        start = time.perf_counter()
        try:
            path = desk.write_index(dense=dense, ann=ann and dense, timings=timings)
        except ValueError as exc:
            fail(str(exc))
        seconds = time.perf_counter() - start
        status = desk.snapshot_status()
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    out = {"path": str(path), "status": status, "seconds": round(seconds, 3), "bytes": size,
           "timings": {k: round(v, 3) for k, v in timings.items()}}  # fmt: skip
    if as_json:
        print_json(out)
        return
    console.print(f"wrote {path} ({size / 2**20:.1f} MiB) in {seconds:.1f} s: {status}", highlight=False)
