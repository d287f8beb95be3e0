"""FinanceBench filings: does the gold page that retrieval finds reach the context the generator is shown?

    PYTHONPATH=src .venv/bin/python bench/context_reach.py --data ../shared/datasets/financebench-dev

Every filing is read by the PDFium reader (documents cached in --cache-dir, as bench/financebench_answers.py
does) and chunked with the default chunker into one collection, searched with BM25 (--method) collapsed
by page, without a reranker. For each question:

- gold page in the top 10 / top k: a listed chunk comes from the question's filing and lies on an
  evidence page (the collapsed list, as ``search`` shows it);
- gold page in the context: a chunk of the context ``prepare`` assembles (default context settings,
  top k, folded same-page neighbours after) lies on an evidence page;
- gold figure in the context: the context text states one of the gold answer's figures
  (``evaluation.figures``; only questions whose answer holds a figure count);
- with --answers, the extractive generator answers and the answer states a gold figure.

The headline is the share of questions whose gold page reaches the context among those whose gold
page is in the top 10. With --sweep, the context is also assembled without trimming and with each
``unit_share`` listed (``answer.context.assemble``), at top 5 and top 10: how its default was chosen.
Per-question rows go to --out (JSON) so two runs can be compared; the tables are printed and written
to their section of bench/RESULTS.md unless --no-append.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evidencedesk.answer.pipeline import prepare
from evidencedesk.chunking import chunk_document
from evidencedesk.config import Settings
from evidencedesk.desk import searcher_params
from evidencedesk.documents import Chunk
from evidencedesk.evaluation.figures import figures_found
from evidencedesk.ingest.raw import doc_id_from_path
from evidencedesk.retrieval.collapse import collapsed
from evidencedesk.retrieval.factory import make_searcher
from evidencedesk.wiring import context_options
from financebench_answers import chunk_pages, documents
from machine_info import machine, write_section

REPO = Path(__file__).resolve().parents[1]
SECTION = "## FinanceBench: the gold page from retrieval to the context"


class Bench:
    """The collection, its collapsed BM25 searcher and the questions, built once."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.files = sorted((args.data / "pdfs").glob("*.pdf"))
        settings = Settings()
        config = settings.chunker.to_chunking()
        self.chunks = [c for d in documents(self.files, args.cache_dir) for c in chunk_document(d, config)]
        lines = (args.data / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        self.questions = [json.loads(line) for line in lines if line.strip()]
        params = searcher_params(settings, args.method, args.cache_dir / "embeddings.sqlite")
        self.searcher = collapsed(make_searcher(args.method, self.chunks, **params.as_kwargs()), "page")
        self.scope = settings.scope.to_scope()
        self.options = context_options(settings).as_kwargs()


def on_gold_page(q: dict[str, Any]) -> Callable[[Chunk], bool]:
    """Whether a chunk comes from the question's filing and lies on an evidence page."""
    filing = doc_id_from_path(q["doc_name"] + ".pdf")
    gold = {int(e["evidence_page_num"]) + 1 for e in q["evidence"]}
    return lambda c: c.doc_id == filing and bool(chunk_pages(c) & gold)


def reach(bench: Bench, q: dict[str, Any], k: int, generator: Any = None, **context: Any) -> dict[str, Any]:
    """Whether the gold page and a gold figure reach the context of one question."""
    on_gold = on_gold_page(q)
    top = bench.searcher.search(q["question"], 10, bench.scope)
    prepared = prepare(q["question"], bench.searcher, generator, bench.scope, k=k, **bench.options, **context)
    context_text = "\n".join(c.chunk.parent_text or c.chunk.text for c in prepared.context)
    found, total = figures_found(context_text, q["answer"])
    return {
        "id": q["financebench_id"],
        "top10": next((i for i, c in enumerate(top, 1) if on_gold(c.chunk)), None),
        "in_context": any(on_gold(c.chunk) for c in prepared.context),
        "figure_in_context": None if total == 0 else found > 0,
        "context_tokens": prepared.trace.context_tokens,
        "dropped": [d.to_dict() for d in prepared.trace.dropped],
        "prepared": prepared,
    }


def question_rows(bench: Bench, args: argparse.Namespace) -> list[dict[str, Any]]:
    generator: Any = None
    by_id = {c.id: c for c in bench.chunks}
    if args.answers:
        from evidencedesk.answer.generators import get_generator

        generator = get_generator("extractive")
    rows = []
    for q in bench.questions:
        row = reach(bench, q, args.k, generator)
        prepared = row.pop("prepared")
        if generator is not None:
            from evidencedesk.answer.pipeline import finish

            generation = generator.generate(prepared.question, prepared.context, prepared.trace.prompt)
            checked, _ = finish(prepared, generation, generator, by_id)
            got, total = figures_found("" if checked.abstained else checked.answer, q["answer"])
            row["answer_figure"] = None if total == 0 else got > 0
        rows.append(row)
    return rows


def sweep(bench: Bench, shares: list[float]) -> list[str]:
    """Table lines: gold page and gold figure in the context without trimming and per ``unit_share``."""
    variants: list[tuple[str, dict[str, Any]]] = [("no trimming", {"trim": False})]
    variants += [(f"unit_share {s:g}", {"unit_share": s}) for s in shares]
    lines = [
        "| context | top 5: gold page in context (of top 10) | top 5: gold figure in context "
        "| top 10: gold page in context (of top 10) | top 10: gold figure in context |",
        "|---|---|---|---|---|",
    ]
    for name, context in variants:
        cells = []
        for k in (5, 10):
            rows = [reach(bench, q, k, **context) for q in bench.questions]
            listed = [r for r in rows if r["top10"] is not None]
            figured = [r for r in rows if r["figure_in_context"] is not None]
            cells += [share(sum(r["in_context"] for r in listed), len(listed)),
                      share(sum(bool(r["figure_in_context"]) for r in figured), len(figured))]  # fmt: skip
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.2f})" if whole else "0/0"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/datasets/financebench-dev"))
    ap.add_argument("--method", default="bm25")
    ap.add_argument("--k", type=int, default=Settings().retrieval.k, help="candidates that reach the context stage")
    ap.add_argument("--answers", action="store_true", help="also answer with the extractive generator")
    ap.add_argument("--cache-dir", type=Path, default=Path(".bench-cache/financebench"))
    ap.add_argument("--out", type=Path, default=None, help="per-question rows as JSON")
    ap.add_argument("--label", default="this build", help="the row's name in the table")
    ap.add_argument("--results", type=Path, default=REPO / "bench" / "RESULTS.md")
    ap.add_argument("--no-append", action="store_true")
    ap.add_argument("--sweep", default="", help="comma-separated unit_share values to compare (and no trimming)")
    args = ap.parse_args(argv)
    bench = Bench(args)
    rows = question_rows(bench, args)
    n_files, n_chunks = len(bench.files), len(bench.chunks)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    listed10 = [r for r in rows if r["top10"] is not None]
    listed_k = [r for r in rows if r["top10"] is not None and r["top10"] <= args.k]
    figured = [r for r in rows if r["figure_in_context"] is not None]
    cells = [
        share(len(listed10), len(rows)),
        share(sum(r["in_context"] for r in listed10), len(listed10)),
        share(sum(r["in_context"] for r in listed_k), len(listed_k)),
        share(sum(bool(r["figure_in_context"]) for r in figured), len(figured)),
    ]
    head = ["gold page in top 10", "of those, gold page in context", f"gold page in top {args.k}: in context",
            "gold figure in context"]  # fmt: skip
    if args.answers:
        answered = [r for r in rows if r.get("answer_figure") is not None]
        cells.append(share(sum(bool(r["answer_figure"]) for r in answered), len(answered)))
        head.append("answer states the gold figure")
    reasons: dict[str, int] = {}
    for r in rows:
        for d in r["dropped"]:
            reasons[d["reason"]] = reasons.get(d["reason"], 0) + 1
    table = "\n".join([
        "| build | " + " | ".join(head) + " |",
        "|---|" + "---|" * len(head),
        f"| {args.label} | " + " | ".join(cells) + " |",
    ])  # fmt: skip
    text = "\n".join([
        f"{SECTION} ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)",
        "",
        f"Machine: {machine()}.  ",
        f"Command: `python bench/context_reach.py {shlex.join(argv if argv is not None else sys.argv[1:])}`  ",
        f"Data: {n_files} filings, {n_chunks:,} chunks (default chunker), {len(rows)} questions; {args.method} "
        f"collapsed by page, no reranker, top {args.k}, default context settings.",
        "",
        table,
        "",
        "Dropped before the prompt, all questions: " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())),
        "",
    ])  # fmt: skip
    if args.sweep:
        shares = [float(x) for x in args.sweep.split(",") if x.strip()]
        lines = ["", "How the context is filled (same list; no answers):", "", *sweep(bench, shares), ""]
        text += "\n".join(lines) + "\n"
    print(text)
    if not args.no_append:
        write_section(args.results, SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
