"""``evidencedesk demo``: the main job on the bundled example corpus, end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from evidencedesk.cli import options as opt
from evidencedesk.cli.app import app, console, fail, load_config, open_desk

if TYPE_CHECKING:
    from evidencedesk import Desk, Label

DEMO_QUESTIONS = (
    ("q03", "the superseded policy allowed 100 km, the current one 20 km"),
    ("q39", "nothing in the documents answers it"),
    ("q16", "the answer sits in a torque table"),
)
DEMO_STORE = ".evidencedesk-demo"
CHUNKER_GRID = (
    ("fixed", 60, "chars"),
    ("fixed", 120, "words"),
    ("recursive", 120, "words"),
    ("section", 120, "words"),
    ("paragraph", 120, "words"),
    ("structure", 120, "words"),
    ("parent_child", 120, "words"),
)


def _section(title: str) -> None:
    console.rule(f"[bold]{title}")


def _ingest(desk: Desk, docs: Path) -> None:
    report = desk.ingest(docs)
    table = Table("added", "updated", "unchanged", "removed", "failed", "documents", "chunks", "build")
    table.add_row(
        *(str(len(ids)) for ids in (report.added, report.updated, report.unchanged, report.removed, report.failed)),
        str(report.n_documents),
        str(report.n_chunks),
        str(report.build_id),
    )
    console.print(table)
    for failure in report.failed:
        console.print(f"  [red]failed[/] {failure.path}: {failure.reason}")


def _whole_evidence(desk: Desk, rows: list[dict[str, object]]) -> None:
    from evidencedesk import ChunkingConfig

    table = Table("chunker", "size", "chunks", "answers whole in one chunk")
    for name, size, unit in CHUNKER_GRID:
        n_chunks, whole, total = desk.lab.whole_answers(ChunkingConfig(name=name, size=size, unit=unit), rows)
        colour = "green" if whole == total else "red"
        table.add_row(name, f"{size} {unit}", str(n_chunks), f"[{colour}]{whole}/{total}[/]")
    console.print(table)


def _strategies(desk: Desk, labels: list[Label], k: int) -> None:
    rows = desk.strategies(labels, ("bm25", "dense", "hybrid"), k)
    table = Table(
        "strategy", "hit@1", "hit@3", "hit@5", "answer outranked", f"no answer in {k}", "junk for unanswerable"
    )
    for row in rows:
        table.add_row(
            row.method,
            *(f"{row.hits[f'hit@{n}']}/{row.n_answerable}" for n in (1, 3, 5)),
            str(row.outranked),
            str(row.no_answer_in_k),
            f"{row.junk}/{row.n_unanswerable}",
        )
    console.print(table)


def _diagnosis(desk: Desk, labels: list[Label], method: str, k: int) -> None:
    failing = desk.diagnose(labels, method, k)
    table = Table("question", "stage", "label", "detail")
    for d in failing:
        table.add_row(d.question_id, d.root.stage, d.root.label, d.root.detail)
    console.print(f"{len(failing)} of {len(labels)} questions fail with {desk.searcher(method).name} at k={k}")
    if failing:
        console.print(table)


def _answers(desk: Desk, labels: list[Label]) -> None:
    by_label = {x.id: x for x in labels}
    for qid, why in DEMO_QUESTIONS:
        label = by_label[qid]
        out = desk.ask(label.question, generator="extractive", method="hybrid", k=5, label=label, save=False)
        console.print(f"[bold]{label.question}[/]  [dim]({why})[/]")
        if out.abstained:
            console.print(f"  [yellow]abstains:[/] {out.abstain_reason}")
        else:
            console.print(f"  {out.answer}")
            context = {c.chunk_id: c for c in out.context_candidates}
            for cid in out.citations:
                chunk, where = context[cid], out.sources[cid]
                status = chunk.metadata.get("status")
                console.print(f"  [cyan]\\[{cid}][/] {chunk.source_path} {where.location} (status {status})")
        console.print()


@app.command()
def demo(
    store: Annotated[
        str | None,
        typer.Option(
            "--store", help="Store for the demo: a folder or a postgresql:// URL. Default: .evidencedesk-demo."
        ),
    ] = None,
    config: opt.Config = None,
    corpus: Annotated[Path, typer.Option("--corpus", help="Example folder holding docs/ and labels.jsonl.")] = Path(
        "examples/kestrel"
    ),
    k: Annotated[int, typer.Option("--k", min=1, max=50, help="Results per question.")] = 5,
) -> None:
    """Ingest the bundled example corpus, compare chunkers and strategies, diagnose failures and answer.

    The demo keeps its own store (default .evidencedesk-demo, not the config's); the configured chunker
    builds it.
    """
    from evidencedesk import load_labels

    docs, labels_path = corpus / "docs", corpus / "labels.jsonl"
    if not docs.is_dir() or not labels_path.is_file():
        fail(f"{corpus}: expected a docs/ folder and labels.jsonl (run from the repository root)")
    settings = load_config(config)
    rows = [json.loads(line) for line in labels_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    labels = load_labels(labels_path)
    with open_desk(settings, store or DEMO_STORE, existing=False) as desk:
        _section("1. Ingest")
        _ingest(desk, docs)
        _section("2. Answers whole inside one chunk, per chunker")
        _whole_evidence(desk, rows)
        _section(f"3. Strategies on {len(labels)} labelled questions (default scope: current, public)")
        _strategies(desk, labels, k)
        _section("4. Diagnosis: the first failing stage of each question")
        _diagnosis(desk, labels, "bm25", 3)
        _section("5. Answers with validated citations (hybrid search, extractive generator)")
        _answers(desk, labels)
