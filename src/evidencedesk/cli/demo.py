"""``evidencedesk demo``: the main job on the bundled example corpus, end to end."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from evidencedesk.cli.app import ConfigOpt, app, console, fail, load_config, open_desk

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


def _ingest(store: Any, docs: Path, chunking: Any) -> None:
    report = store.ingest(docs, chunking)
    table = Table("added", "updated", "unchanged", "removed", "failed", "documents", "chunks", "build")
    table.add_row(
        *(str(len(getattr(report, f))) for f in ("added", "updated", "unchanged", "removed", "failed")),
        str(report.n_documents),
        str(report.n_chunks),
        str(report.build_id),
    )
    console.print(table)
    for failure in report.failed:
        console.print(f"  [red]failed[/] {failure['path']}: {failure['reason']}")


def _whole_evidence(docs: Path, rows: list[dict[str, Any]]) -> None:
    from evidencedesk.chunking import ChunkingConfig, chunk_document
    from evidencedesk.chunking.evidence import whole_evidence
    from evidencedesk.ingest import parse_folder

    documents = parse_folder(docs).documents
    table = Table("chunker", "size", "chunks", "answers whole in one chunk")
    for name, size, unit in CHUNKER_GRID:
        config = ChunkingConfig(name=name, size=size, unit=unit)
        chunks = [c for d in documents for c in chunk_document(d, config)]
        whole, total = whole_evidence(chunks, rows)
        colour = "green" if whole == total else "red"
        table.add_row(name, f"{size} {unit}", str(len(chunks)), f"[{colour}]{whole}/{total}[/]")
    console.print(table)


def _strategies(desk: Any, chunks: list[Any], labels: list[Any], k: int) -> dict[str, Any]:
    from evidencedesk.evaluation.strategies import compare_strategies

    searchers = {m: desk.searcher(m) for m in ("bm25", "dense", "hybrid")}
    rows, _ = compare_strategies(searchers, labels, chunks, None, k=k)
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
    return searchers


def _diagnosis(searcher: Any, chunks: list[Any], labels: list[Any], k: int) -> None:
    from evidencedesk.evaluation.runner import evaluate

    results = evaluate(searcher, labels, chunks, None, k)
    failing = [r for r in results if r.failed]
    table = Table("question", "stage", "label", "detail")
    for r in failing:
        f = r.findings[0]
        table.add_row(r.id, f.stage, f.label, f.detail)
    console.print(f"{len(failing)} of {len(results)} questions fail with {searcher.name} at k={k}")
    if failing:
        console.print(table)


def _answers(searcher: Any, chunks: list[Any], labels: list[Any]) -> None:
    from evidencedesk.answer.generators import get_generator
    from evidencedesk.answer.pipeline import ask
    from evidencedesk.evaluation.taxonomy import diagnose

    by_id = {c.id: c for c in chunks}
    by_label = {x.id: x for x in labels}
    generator = get_generator("extractive")
    for qid, why in DEMO_QUESTIONS:
        label = by_label[qid]
        findings = partial(diagnose, label, indexed=chunks, k=5)
        checked, trace = ask(label.question, searcher, by_id, generator, k=5, diagnose=findings)
        console.print(f"[bold]{label.question}[/]  [dim]({why})[/]")
        if checked.abstained:
            console.print(f"  [yellow]abstains:[/] {checked.reason}")
        else:
            console.print(f"  {checked.answer}")
            for cid in checked.cited:
                chunk = by_id[cid]
                console.print(
                    f"  [cyan]\\[{cid}][/] {chunk.source} {chunk.location.label} (status {chunk.metadata.status})"
                )
        console.print()


@app.command()
def demo(
    store: Annotated[
        str | None,
        typer.Option(
            "--store", help="Store for the demo: a folder or a postgresql:// URL. Default: .evidencedesk-demo."
        ),
    ] = None,
    config: ConfigOpt = None,
    corpus: Annotated[Path, typer.Option("--corpus", help="Example folder holding docs/ and labels.jsonl.")] = Path(
        "examples/kestrel"
    ),
    k: Annotated[int, typer.Option("--k", min=1, max=50, help="Results per question.")] = 5,
) -> None:
    """Ingest the bundled example corpus, compare chunkers and strategies, diagnose failures and answer.

    The demo keeps its own store (default .evidencedesk-demo, not the config's); the configured chunker
    builds it.
    """
    from evidencedesk.evaluation.labels import load_labels

    docs, labels_path = corpus / "docs", corpus / "labels.jsonl"
    if not docs.is_dir() or not labels_path.is_file():
        fail(f"{corpus}: expected a docs/ folder and labels.jsonl (run from the repository root)")
    settings = load_config(config)
    rows = [json.loads(line) for line in labels_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    labels = load_labels(labels_path)
    with open_desk(settings, store or DEMO_STORE, existing=False) as desk:
        _section("1. Ingest")
        _ingest(desk.store, docs, settings.chunker.to_chunking())
        chunks = desk.chunks()
        _section("2. Answers whole inside one chunk, per chunker")
        _whole_evidence(docs, rows)
        _section(f"3. Strategies on {len(labels)} labelled questions (default scope: current, public)")
        searchers = _strategies(desk, chunks, labels, k)
        _section("4. Diagnosis: the first failing stage of each question")
        _diagnosis(searchers["bm25"], chunks, labels, 3)
        _section("5. Answers with validated citations (hybrid search, extractive generator)")
        _answers(searchers["hybrid"], chunks, labels)
