"""``evidencedesk ingest PATH``: parse a folder, chunk what changed, store it, and report per file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from evidencedesk.cli import options as opt
from evidencedesk.cli.app import DEFAULT_MAX_BYTES, app, console, err_console, fail, load_config, open_desk, print_json
from evidencedesk.constants import CHUNKERS, UNITS
from evidencedesk.results.ingest import IngestReport, SnapshotNotUpdated, SnapshotUpdate, StepProgress

_NAMED = 20  # documents named per line of the report (all of them with --json)


def _print_report(report: IngestReport) -> None:
    chunking = report.chunking
    table = Table(
        title=f"build {report.build_id} · chunking {chunking.name if chunking else None} "
        f"{chunking.hash if chunking else None}"
    )
    for name in ("added", "updated", "unchanged", "removed", "failed", "skipped"):
        table.add_column(name, justify="right")
    table.add_row(*(str(len(ids)) for ids in (report.added, report.updated, report.unchanged, report.removed,
                                              report.failed, report.skipped)))  # fmt: skip
    console.print(table)
    console.print(f"store: {report.n_documents} documents, {report.n_chunks} chunks", highlight=False)
    progress = report.progress
    if progress.files is not None:
        _print_step("files", progress.files, "files")
    if progress.index is not None:
        _print_index(progress.index)
    if progress.embedding is not None:
        _print_step("embedding", progress.embedding, "chunks embedded")
    for name, colour, ids in (("added", "green", report.added), ("updated", "cyan", report.updated),
                              ("removed", "magenta", report.removed), ("skipped", "dim", report.skipped)):  # fmt: skip
        if ids:
            shown = ", ".join(ids[:_NAMED]) + (f" and {len(ids) - _NAMED} more" if len(ids) > _NAMED else "")
            console.print(f"[{colour}]{name}[/] ({len(ids)}): {shown}", highlight=False, markup=True)
    for failure in report.failed:
        kept = f" (stored version of {failure.kept} kept)" if failure.kept else ""
        console.print(f"[red]failed[/] {failure.path}: {failure.reason}{kept}", highlight=False)
    for unknown in report.unknown_supersedes:
        console.print(
            f"[yellow]unknown supersedes[/] {unknown.path}: supersedes {unknown.supersedes!r}, "
            "which names no document in the store (check the id)",
            highlight=False,
        )


def _print_step(step: str, done: StepProgress, unit: str) -> None:
    console.print(f"{step}: {done.count} {unit} in {done.seconds:.1f} s ({done.per_second:.1f}/s)")


def _print_index(done: SnapshotUpdate | SnapshotNotUpdated) -> None:
    if isinstance(done, SnapshotNotUpdated):
        console.print(f"[yellow]index[/]: {done.error}", highlight=False)
        return
    merged = f", {len(done.merged)} merge(s)" if done.merged else ""
    console.print(
        f"index: {done.added} chunks added, {done.deleted} deleted in {done.seconds:.1f} s; "
        f"{done.segments} segments{merged}",
        highlight=False,
    )


@app.command()
def ingest(
    path: Annotated[
        Path, typer.Argument(help="Folder of documents (.md, .txt, .html, .pdf, .docx, .pptx, .xlsx, .eml).")
    ],
    store: opt.Store = None,
    config: opt.Config = None,
    chunker: Annotated[
        str | None, typer.Option("--chunker", help=f"One of {', '.join(CHUNKERS)}. Default: the config's (structure).")
    ] = None,
    size: Annotated[
        int | None, typer.Option("--size", help="Chunk size, in --unit. Default: the config's (120).")
    ] = None,
    overlap: Annotated[
        int | None, typer.Option("--overlap", help="Overlap between chunks, in --unit. Default: the config's (0).")
    ] = None,
    unit: Annotated[
        str | None, typer.Option("--unit", help=f"One of {', '.join(UNITS)}. Default: the config's (words).")
    ] = None,
    max_bytes: Annotated[int, typer.Option("--max-bytes", help="Files larger than this fail.")] = DEFAULT_MAX_BYTES,
    keep_missing: Annotated[
        bool, typer.Option("--keep-missing", help="Keep stored documents whose file is gone.")
    ] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 when any file failed (the others are still stored).")
    ] = False,
    embed: Annotated[
        bool,
        typer.Option(
            "--embed", help="Also compute the dense embeddings now, so the first dense or hybrid query does not."
        ),
    ] = False,
    as_json: opt.Json = False,
) -> None:
    """Ingest a folder: unchanged files are skipped by hash, changed files re-chunked, removed files dropped."""
    from evidencedesk.cli.waits import Waits
    from evidencedesk.config import Overrides

    flags = {
        "--chunker": Overrides(chunker=chunker),
        "--size": Overrides(size=size),
        "--overlap": Overrides(overlap=overlap),
        "--unit": Overrides(unit=unit),
    }
    settings = load_config(config, flags)
    if max_bytes < 1:
        fail(f"--max-bytes: must be at least 1, got {max_bytes}", 2)
    if not path.exists():
        fail(f"no such folder: {path}")
    if not path.is_dir():
        fail(f"not a folder: {path}")
    with open_desk(settings, store, existing=False) as desk, Waits(err_console, lines=not as_json) as waits:
        report = desk.ingest(
            path,
            max_bytes=max_bytes,
            progress=waits.step("reading files"),
            remove_missing=not keep_missing,
            embed=embed,
            embed_progress=waits.step("embedding chunks"),
        )
    if as_json:
        print_json(report.to_dict())
    else:
        _print_report(report)
    if strict and report.failed:
        fail(f"--strict: {len(report.failed)} file(s) failed to ingest", 1)
