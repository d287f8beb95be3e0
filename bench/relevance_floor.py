"""Choosing ``retrieval.rerank.min_score``: how low the bundled cross-encoder scores a passage that is
not about the question, against how low it scores the best passage of a question the store answers.

    PYTHONPATH=src:bench .venv/bin/python bench/relevance_floor.py --work /tmp/evidencedesk-rerank \\
        --scifact ../shared/datasets/scifact --squad ../shared/datasets/squad2-dev \\
        --squad-store STORE --financebench ../shared/datasets/financebench-dev

For every question the default first stage (hybrid) ranks 10 candidates (``retrieval.rerank.candidates``)
and the cross-encoder reads them (scores cached in ``--work``, shared with bench/rerank.py). A floor
``t`` makes ``ask`` abstain on a question when every candidate scores below ``t``. Rows:

- answerable questions of each development set whose evidence is among the candidates (the example
  corpus's labels, a seeded squad2-dev sample, a seeded SciFact train sample, financebench-dev; SciFact
  test reported, never tuned on): the share a floor would turn into an abstention, losing an answer
  the context held (should be 0); and, for two sets, every answerable question, evidence found or not;
- questions asked of a collection that is about something else (squad2-dev, SciFact and FinanceBench
  questions over the example corpus, the example's questions over the FinanceBench filings): the
  share abstained (should be high);
- the example corpus's unanswerable labels and squad2-dev's unanswerable questions (on the topic of
  their collection, so a relevance floor is not expected to catch many).

The floor is the highest value tried at which no development set loses more than one in twenty of the
answers its candidates held (issue 30 allowed 15% of answerable questions wrongly abstained; a table
page of a filing can score low, so no floor above -11 loses none). Prints the table and replaces this bench's section of
bench/RESULTS.md (--no-append to skip).
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import rerank_sets
from evidencedesk.retrieval.rerank.cross_encoder import CrossEncoderReranker
from machine_info import machine, write_section
from rerank import ScoreCache, log
from rerank_sets import Set, first_stage

REPO = Path(__file__).resolve().parents[1]
SECTION = "## Relevance floor for ask (bench/relevance_floor.py)"
FLOORS = [-11.0, -10.5, -10.0, -9.5, -9.0, -8.0, -6.0, -4.0]
DEPTH = 10


def best_scores(s: Set, ce: CrossEncoderReranker, cache: ScoreCache, findable: bool = False) -> list[float]:
    """Per question, the cross-encoder's best score over the first stage's top DEPTH candidates; with
    ``findable``, only the questions with their evidence among those candidates (where an abstention
    loses an answer the context could have given)."""
    log(f"{s.name}: {len(s.questions)} questions")
    firsts = first_stage(s, DEPTH)
    out = []
    for qid, text in s.questions:
        cands = firsts[qid]
        if findable and not s.hit(qid, [c.chunk for c in cands]):
            continue
        cache.fill(ce, s.name, qid, text, cands)
        out.append(max((cache.get(s.name, qid, c.chunk.id, ce.max_tokens) for c in cands), default=-1e9))
    return out


def asked_of(questions: list[tuple[str, str]], target: Set, name: str) -> Set:
    """``questions`` put to ``target``'s collection (its first stage and scope)."""
    return Set(name, target.chunks, questions, target.searcher, target.judge, target.scope, target.hit)


def sample(questions: list[tuple[str, str]], n: int, seed: int = 7) -> list[tuple[str, str]]:
    return random.Random(seed).sample(questions, n) if 0 < n < len(questions) else questions


def squad_unanswerable(folder: Path, n: int) -> list[tuple[str, str]]:
    data = json.loads((folder / "dev-v2.0-half.json").read_text(encoding="utf-8"))
    rows = [(qa["id"], qa["question"]) for a in data["data"] for p in a["paragraphs"] for qa in p["qas"]
            if qa.get("is_impossible")]  # fmt: skip
    return sample(rows, n)


def kestrel_unanswerable(root: Path) -> list[tuple[str, str]]:
    from evidencedesk.evaluation.labels import load_labels

    return [(f"u{i}", x.question) for i, x in enumerate(load_labels(root / "labels.jsonl")) if not x.answerable]


def abstained(store: Path, questions: list[str], floor: float | None) -> int:
    """How many of ``questions`` ``Desk.ask`` (default settings, this ``min_score``) abstains on over ``store``."""
    from evidencedesk.config import parse_settings
    from evidencedesk.desk import Desk

    settings = parse_settings({"retrieval": {"rerank": {"min_score": floor}}})
    with Desk(store, settings) as desk:
        return sum(desk.ask(q, save=False).abstained for q in questions)


def answer_rows(checks: list[tuple[str, Path, list[str]]], floor: float) -> list[str]:
    """Markdown rows: each check's abstentions at the answer (extractive generator) without and with ``floor``."""
    out = [
        "",
        f"Answers (`Desk.ask`, default settings, extractive generator) without a floor and at {floor:g}:",
        "",
        f"| questions | n | abstained, min_score null | abstained, min_score {floor:g} |",
        "|---|---:|---:|---:|",
    ]
    for name, store, questions in checks:
        log(f"answers: {name}")
        out.append(f"| {name} | {len(questions)} | {abstained(store, questions, None)} | "
                   f"{abstained(store, questions, floor)} |")  # fmt: skip
    return out


def share_below(values: list[float], floor: float) -> float:
    return sum(v < floor for v in values) / len(values) if values else 0.0


def choose(answerable: dict[str, list[float]], loss: float = 0.05) -> float:
    """The highest floor in FLOORS at which no set loses more than ``loss`` of its findable answers."""
    fitting = [f for f in FLOORS if all(share_below(v, f) <= loss for v in answerable.values())]
    return max(fitting) if fitting else min(FLOORS)


def render(rows: list[tuple[str, str, list[float]]], chosen: float, argv: list[str], minutes: float,
           answers: list[str]) -> str:  # fmt: skip
    head = "| questions | kind | n | lowest best score | " + " | ".join(f"{f:g}" for f in FLOORS) + " |"
    lines = [
        f"{SECTION} ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)",
        "",
        f"Machine: {machine()}.  ",
        f"Command: `python bench/relevance_floor.py {shlex.join(argv)}` ({minutes:.0f} min)  ",
        f"Each cell: the share of questions whose {DEPTH} candidates all score below that floor (ask abstains",
        "on them). The cross-encoder is the bundled ms-marco-MiniLM-L-12-v2 (logits); the first stage is the",
        "default hybrid.",
        "",
        head,
        "|---|---|---:|---:|" + "---:|" * len(FLOORS),
    ]
    for name, kind, values in rows:
        cells = " | ".join(f"{share_below(values, f):.3f}" for f in FLOORS)
        lines.append(f"| {name} | {kind} | {len(values)} | {min(values):.2f} | {cells} |")
    lines += [
        "",
        "Chosen on the development rows with the evidence among the candidates (SciFact test excluded): the",
        f"highest floor tried at which none loses more than 5% of them is **{chosen:g}**",
        "(`retrieval.rerank.min_score`).",
        *answers,
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path("/tmp/evidencedesk-rerank"))
    ap.add_argument("--scifact", type=Path, required=True)
    ap.add_argument("--squad", type=Path, required=True)
    ap.add_argument("--squad-store", type=Path, required=True, help="a store of the squad2-dev articles")
    ap.add_argument("--financebench", type=Path, required=True)
    ap.add_argument("--kestrel", type=Path, default=REPO / "examples" / "kestrel")
    ap.add_argument("--limit", type=int, default=120, help="questions per sampled set")
    ap.add_argument("--financebench-store", type=Path, help="a store of the filings (`evidencedesk ingest PDFS`)")
    ap.add_argument("--results", type=Path, default=REPO / "bench" / "RESULTS.md")
    ap.add_argument("--no-append", action="store_true")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    ce = CrossEncoderReranker()
    cache = ScoreCache(args.work / "cross-encoder-scores.jsonl")

    kestrel = rerank_sets.kestrel(args.kestrel, args.work)
    squad = rerank_sets.squad_store(args.squad, args.squad_store, args.limit)
    train = rerank_sets.scifact(args.scifact, args.work, "train", args.limit)
    test = rerank_sets.scifact(args.scifact, args.work, "test")
    finance = rerank_sets.financebench(args.financebench, args.work)

    answerable = {s.name: best_scores(s, ce, cache, findable=True) for s in (kestrel, squad, train, finance)}
    rows = [(name, "evidence among the candidates (tuning)", v) for name, v in answerable.items()]
    rows += [(s.name, "answerable, evidence or not", best_scores(s, ce, cache)) for s in (finance, kestrel)]
    rows.append((test.name, "evidence among the candidates (never tuned on)", best_scores(test, ce, cache, True)))
    elsewhere = [
        asked_of(sample(squad.questions, 60), kestrel, "squad2-dev questions on the example corpus"),
        asked_of(sample(train.questions, 60), kestrel, "SciFact claims on the example corpus"),
        asked_of(finance.questions, kestrel, "FinanceBench questions on the example corpus"),
        asked_of(kestrel.questions, finance, "example questions on the FinanceBench filings"),
    ]
    rows += [(s.name, "about something else", best_scores(s, ce, cache)) for s in elsewhere]
    on_topic = [
        asked_of(kestrel_unanswerable(args.kestrel), kestrel, "example corpus, unanswerable labels"),
        asked_of(squad_unanswerable(args.squad, args.limit), squad, "squad2-dev, unanswerable"),
    ]
    rows += [(s.name, "unanswerable, on topic", best_scores(s, ce, cache)) for s in on_topic]

    chosen = choose(answerable)
    example_store = args.work / "example-store"
    if not (example_store / "evidencedesk.sqlite").exists():
        from evidencedesk.desk import Desk

        with Desk(example_store) as desk:
            desk.ingest(args.kestrel / "docs")
    checks = [("squad2-dev questions on the example corpus", example_store, [q for _, q in elsewhere[0].questions])]
    if args.financebench_store:
        checks += [("example questions on the FinanceBench filings", args.financebench_store,
                    [q for _, q in kestrel.questions]),
                   ("financebench-dev questions on their filings", args.financebench_store,
                    [q for _, q in finance.questions])]  # fmt: skip
    answers = answer_rows(checks, chosen)
    report = render(rows, chosen, argv, (time.perf_counter() - started) / 60, answers)
    print(report)
    if not args.no_append:
        write_section(args.results, SECTION, report)
        log(f"wrote {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
