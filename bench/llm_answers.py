"""The local language model (llama.cpp) against the extractive generator, in one run, on the same questions.

    PYTHONPATH=src nice .venv/bin/python bench/llm_answers.py --squad ../shared/datasets/squad2-dev \\
        --financebench ../shared/datasets/financebench-dev --work /tmp/llm-answers --per-class 300 --seed 31

SQuAD 2.0 dev: a seeded random sample of --per-class answerable and --per-class unanswerable
questions, asked in alternation (answerable, unanswerable, ...) so that a run stopped early still
holds both kinds in equal numbers. FinanceBench dev: every question (or --fb-limit), one after every
--fb-every SQuAD questions. Each question is asked once with each generator through ``Desk.ask_stream``
(default settings: hybrid retrieval, 800-token context; the language model behind the answerability
gate). Every answer is appended to ``--log`` (JSON lines) as soon as it is written, and a rerun skips
what the log already holds, so a long run can be stopped (``--until HH:MM`` UTC) and resumed.
``--report`` only summarises the log. Prints a table and replaces its section of bench/RESULTS.md
(--no-append to skip).

Reported: gold answer contained in the answer (of all answerable questions), median answer length
in words (answered questions, citations removed), unanswerable questions abstained, answerable
questions wrongly abstained; the FinanceBench share of answers stating the gold figure
(``evaluation.figures``, numbers normalised); for the language model, time to first token and
tokens/s (questions that reached the model), and the end-to-end ask time.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evidencedesk import AnswerDelta, AnswerDone
from evidencedesk.results.ask import AskResult
from machine_info import machine, replace_section
from squad2 import contains, load_questions, open_desk, sample, without_citations

REPO = Path(__file__).resolve().parents[1]
SECTION = "## Local language model answers: llama.cpp against extractive (bench/llm_answers.py)"
GENERATORS = ("extractive", "llama-cpp")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def ask_timed(desk: Any, question: str, generator: str) -> dict[str, Any]:
    """One ask through the stream: the result, the end-to-end seconds and the seconds to the first piece."""
    start = time.perf_counter()
    first: float | None = None
    result: AskResult | None = None
    with desk.ask_stream(question, generator=generator, save=False) as events:
        for event in events:
            if isinstance(event, AnswerDelta) and first is None:
                first = time.perf_counter() - start
            elif isinstance(event, AnswerDone):
                result = event.result
    seconds = time.perf_counter() - start
    g = dict(result.generation) if result is not None else {}
    return {
        "answer": result.answer if result is not None else "",
        "raw": result.raw_answer if result is not None else "",
        "abstained": result.abstained if result is not None else False,
        "citations": list(result.citations) if result is not None else [],
        "seconds": round(seconds, 3),
        "first_piece_s": round(first, 3) if first is not None else None,
        "gate": g.get("gate"),
        "first_token_ms": g.get("first_token_ms"),
        "tokens": g.get("tokens"),
        "tokens_per_s": g.get("tokens_per_s"),
        "finish_reason": g.get("finish_reason"),
    }


def financebench_desk(data: Path, work: Path, method: str) -> Any:
    from evidencedesk.config import parse_settings
    from evidencedesk.desk import Desk

    settings = parse_settings({"retrieval": {"legs": [{"method": method}]}}) if method != "hybrid" else None
    desk = Desk(work / "fb-store", settings=settings)
    if not desk.chunks():
        log(f"ingesting the FinanceBench filings into {work / 'fb-store'}")
        desk.ingest(data / "pdfs")
    return desk


def read_log(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def plan(args: argparse.Namespace) -> list[dict[str, Any]]:
    _, questions = load_questions(args.squad / "dev-v2.0-half.json")
    picked = sample(questions, args.per_class, args.seed)
    yes = [q for q in picked if not q.impossible]
    no = [q for q in picked if q.impossible]
    squad = [q for pair in zip(yes, no, strict=False) for q in pair]
    items = [
        {"set": "squad2", "id": q.id, "question": q.question, "gold": list(q.answers), "impossible": q.impossible}
        for q in squad
    ]
    fb: list[dict[str, Any]] = []
    if args.financebench:
        lines = (args.financebench / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        rows = [json.loads(x) for x in lines if x.strip()]
        fb = [
            {"set": "financebench", "id": r["financebench_id"], "question": r["question"], "gold": [r["answer"]],
             "impossible": False}
            for r in rows[: args.fb_limit or None]
        ]  # fmt: skip
    out: list[dict[str, Any]] = []
    while items or fb:
        out += items[: args.fb_every]
        items = items[args.fb_every :]
        if fb:
            out.append(fb.pop(0))
    return out


def run(args: argparse.Namespace) -> None:
    from evidencedesk.config import override

    done = {(r["set"], r["id"], r["generator"]) for r in read_log(args.log)}
    todo = plan(args)
    desks: dict[str, Any] = {}
    until = None
    if args.until:
        hh, mm = (int(x) for x in args.until.split(":"))
        now = datetime.now(UTC)
        until = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
    with args.log.open("a", encoding="utf-8") as out:
        for n, item in enumerate(todo, 1):
            if until is not None and datetime.now(UTC) >= until:
                log(f"stopped at {args.until} UTC with {n - 1}/{len(todo)} questions asked")
                break
            if item["set"] not in desks:
                desks[item["set"]] = (
                    open_desk(args.squad, args.work) if item["set"] == "squad2"
                    else financebench_desk(args.financebench, args.work, args.fb_method)
                )  # fmt: skip
                # a loaded machine evaluates a long prompt slowly: the deadline must not cut the answer
                desks[item["set"]].reconfigure(
                    override(desks[item["set"]].settings, **{"generator.timeout_s": args.timeout})
                )
            desk = desks[item["set"]]
            for generator in GENERATORS:
                if (item["set"], item["id"], generator) in done:
                    continue
                row = {**item, "generator": generator, **ask_timed(desk, item["question"], generator)}
                out.write(json.dumps(row) + "\n")
                out.flush()
            if n % 10 == 0:
                log(f"{n}/{len(todo)} questions asked")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def share(xs: list[bool]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def summarise(rows: list[dict[str, Any]], generator: str) -> dict[str, Any]:
    from evidencedesk.evaluation.figures import holds_gold_figure

    mine = [r for r in rows if r["generator"] == generator]
    squad = [r for r in mine if r["set"] == "squad2"]
    yes = [r for r in squad if not r["impossible"]]
    no = [r for r in squad if r["impossible"]]
    answered = [r for r in squad if not r["abstained"]]
    fb = [r for r in mine if r["set"] == "financebench"]
    fb_scored = [(r, holds_gold_figure(without_citations(r["answer"]), r["gold"][0])) for r in fb]
    fb_counted = [(r, h) for r, h in fb_scored if h is not None]
    model = [r for r in mine if r.get("tokens")]
    return {
        "n_answerable": len(yes),
        "n_unanswerable": len(no),
        "contained": share([(not r["abstained"]) and contains(without_citations(r["answer"]), r["gold"]) for r in yes]),
        "words_p50": statistics.median([len(without_citations(r["answer"]).split()) for r in answered])
        if answered
        else float("nan"),
        "unanswerable_abstained": share([r["abstained"] for r in no]),
        "wrongly_abstained": share([r["abstained"] for r in yes]),
        "fb_n": len(fb_counted),
        "fb_holds": share([bool(h) for _, h in fb_counted]),
        "model_calls": len(model),
        "gated": sum(1 for r in mine if r.get("gate") == "abstained before generation"),
        "ttft_p50": pct([r["first_token_ms"] / 1000 for r in model if r.get("first_token_ms")], 0.5),
        "ttft_p95": pct([r["first_token_ms"] / 1000 for r in model if r.get("first_token_ms")], 0.95),
        "tps_p50": pct([r["tokens_per_s"] for r in model if r.get("tokens_per_s")], 0.5),
        "tps_p95": pct([r["tokens_per_s"] for r in model if r.get("tokens_per_s")], 0.95),
        "e2e_p50": pct([r["seconds"] for r in mine], 0.5),
        "e2e_model_p50": pct([r["seconds"] for r in model], 0.5),
        "timeouts": sum(1 for r in mine if r.get("finish_reason") == "timeout"),
    }


def fmt(value: Any, kind: str) -> str:
    if isinstance(value, float) and value != value:
        return "-"
    if kind == "%":
        return f"{100 * value:.1f}%"
    if kind == "s":
        return f"{value:.1f} s"
    if kind == "f":
        return f"{value:.1f}"
    return str(value)


ROWS = (
    ("squad2 answerable questions asked", "n_answerable", "", ""),
    ("squad2 unanswerable questions asked", "n_unanswerable", "", ""),
    ("answerable: gold answer contained in the answer", "contained", "%", ">= 70%"),
    ("median answer length, words (answered)", "words_p50", "f", "<= 25"),
    ("unanswerable: abstained", "unanswerable_abstained", "%", ">= 50%"),
    ("answerable: wrongly abstained", "wrongly_abstained", "%", "<= 20%"),
    ("financebench-dev questions with a gold figure", "fb_n", "", ""),
    ("financebench-dev: answer states the gold figure", "fb_holds", "%", ""),
    ("asks that reached the language model", "model_calls", "", ""),
    ("asks the answerability gate abstained without the model", "gated", "", ""),
    ("time to first token p50 (model calls)", "ttft_p50", "s", ""),
    ("time to first token p95 (model calls)", "ttft_p95", "s", ""),
    ("tokens/s generated p50", "tps_p50", "f", ""),
    ("tokens/s generated p95", "tps_p95", "f", ""),
    ("end-to-end ask p50 (every ask)", "e2e_p50", "s", ""),
    ("end-to-end ask p50 (asks that reached the model)", "e2e_model_p50", "s", ""),
    ("replies cut by the timeout", "timeouts", "", ""),
)


def table(results: dict[str, dict[str, Any]]) -> str:
    lines = ["| measure | extractive | llama.cpp (local model) | target |", "|---|---|---|---|"]
    for label, key, kind, target in ROWS:
        a, b = (fmt(results[g][key], kind) for g in GENERATORS)
        lines.append(f"| {label} | {a} | {b} | {target} |")
    return "\n".join(lines)


def model_name() -> str:
    from evidencedesk.answer.generators.gguf_models import default_model_path

    return default_model_path().name


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--squad", type=Path, default=Path("../shared/datasets/squad2-dev"))
    ap.add_argument("--financebench", type=Path, default=None)
    ap.add_argument("--work", type=Path, default=Path("/tmp/llm-answers"))
    ap.add_argument("--per-class", type=int, default=300)
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--fb-limit", type=int, default=0, help="FinanceBench questions (0: all)")
    ap.add_argument("--fb-every", type=int, default=4, help="one FinanceBench question after this many SQuAD ones")
    ap.add_argument("--fb-method", default="hybrid", help="FinanceBench retrieval: hybrid (default) or bm25")
    ap.add_argument("--timeout", type=float, default=900.0, help="generator.timeout_s for the run")
    ap.add_argument("--log", type=Path, default=None, help="JSON lines of every answer (default: WORK/answers.jsonl)")
    ap.add_argument("--until", default="", help="stop asking at this UTC time (HH:MM), then report")
    ap.add_argument("--report", action="store_true", help="only summarise the log")
    ap.add_argument("--results", type=Path, default=REPO / "bench" / "RESULTS.md")
    ap.add_argument("--no-append", action="store_true")
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    args.log = args.log or args.work / "answers.jsonl"
    started = datetime.now(UTC)
    header = machine()
    if not args.report:
        run(args)
    rows = read_log(args.log)
    results = {g: summarise(rows, g) for g in GENERATORS}
    body = table(results)
    print(body)
    section = "\n".join(
        [
            f"{SECTION} ({started:%Y-%m-%d %H:%M} UTC)",
            "",
            f"Machine: {header}; shared with other jobs (load average well above the 2 cores), so the",
            "times are those of a loaded machine.  ",
            f"Command: `python bench/llm_answers.py {shlex.join(argv if argv is not None else sys.argv[1:])}`  ",
            f"Model: `{model_name()}` through llama-cpp-python, 2 threads, greedy, numbered-passage prompt, "
            "answerability gate on, default retrieval (hybrid, k 5, 800-token context).  ",
            f"Sample: squad2-dev, seed {args.seed}, answerable and unanswerable questions in alternation "
            f"(asked: {results['llama-cpp']['n_answerable']} + {results['llama-cpp']['n_unanswerable']} of the "
            f"{args.per_class} + {args.per_class} planned); financebench-dev interleaved (retrieval: "
            f"{args.fb_method}). Both generators answered the same questions in the same run.",
            "",
            body,
            "",
        ]
    )
    if not args.no_append:
        text = args.results.read_text(encoding="utf-8") if args.results.exists() else ""
        args.results.write_text(replace_section(text, SECTION, section).rstrip("\n") + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
