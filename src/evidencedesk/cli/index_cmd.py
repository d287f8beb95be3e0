"""``evidencedesk index``: save the store's index as a memory-mapped, segmented snapshot."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from evidencedesk.cli import options as opt
from evidencedesk.cli.app import app, console, fail, load_config, open_desk, print_json


@app.command()
def index(
    store: opt.Store = None,
    config: opt.Config = None,
    dense: Annotated[bool, typer.Option("--dense/--no-dense", help="Also save the dense vectors.")] = True,
    ann: Annotated[bool, typer.Option("--ann/--exact", help="Build HNSW graphs over the vectors.")] = True,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Write the snapshot whole, as one segment, even if it could be updated.")
    ] = False,
    merge: Annotated[
        bool, typer.Option("--merge", help="Merge every segment into one, dropping deleted rows.")
    ] = False,
    as_json: opt.Json = False,
) -> None:
    """Write or update <store>/snapshot: segments of BM25 term counts, vectors and HNSW graphs, opened
    memory-mapped by later searches.

    With a snapshot that matches the latest build and the configured BM25/dense settings, `search`,
    `ask`, `eval` and `diagnose` open the index in milliseconds and read chunk text only for results.
    Once written, every `ingest` keeps it up to date: the changed documents go into one new segment,
    their old rows are marked deleted, and segments of a similar size are merged automatically. Rerun
    `index` to bring a snapshot up to date by hand, `--merge` to merge it into one segment, or
    `--rebuild` to write it anew (needed after changing the BM25 or dense settings).
    """
    settings = load_config(config)
    with open_desk(settings, store) as desk:
        if desk.is_postgres:
            fail("index: a PostgreSQL store keeps its indexes in the database; nothing to write", 2)
        timings: dict[str, float] = {}
        report: dict[str, object] = {}
        start = time.perf_counter()
        try:
            path = desk.write_index(
                dense=dense, ann=ann and dense, timings=timings, rebuild=rebuild, merge=merge, report=report
            )
        except ValueError as exc:
            fail(str(exc))
        seconds = time.perf_counter() - start
        status = desk.snapshot_status()
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    out = {"path": str(path), "status": status, "seconds": round(seconds, 3), "bytes": size, **report,
           "timings": {k: round(v, 3) for k, v in timings.items()}}  # fmt: skip
    if as_json:
        print_json(out)
        return
    how = "rewrote" if report.get("mode") == "rebuild" else "updated"
    console.print(f"{how} {path} ({size / 2**20:.1f} MiB) in {seconds:.1f} s: {status}", highlight=False)
