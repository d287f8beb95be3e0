"""Dense models side by side: all-MiniLM-L6-v2 (the default) against bge-small-en-v1.5, in one run.

    PYTHONPATH=src nice .venv/bin/python bench/embedders.py --scifact ../shared/datasets/scifact \\
        --squad ../shared/datasets/squad2-dev --store .evidencedesk-beir/scifact

For each model (``retrieval.legs[].model``: ``minilm``, ``bge-small``):

- SciFact nDCG@10, dense and hybrid, on the train split (809 queries: where a default is chosen) and
  the test split (300 queries: reported, never used for the choice). Each figure is the output of
  ``evidencedesk beir DATASET --split S --method M --json --store STORE`` run in a folder whose
  ``evidencedesk.yaml`` names the model, so it is what a user gets with that one line of YAML. The
  store's embedding cache keeps each model's vectors under its own name: a second run embeds nothing.
- squad2-dev: the 301 paragraphs as one chunk each (title as context line) and the 1,299 answerable
  questions, as in bench/defaults.py; hit@1 and hit@5 of the question's own paragraph, dense alone and
  in the default hybrid (BM25 + dense, normalized fusion 0.5/0.5, depth 100).
- kestrel (examples/kestrel with its labels, default scope): recall@5 and nDCG@5, dense and hybrid.
- docs/s: the first 64 SciFact abstracts embedded afresh (no cache, batches of 32, after a warm-up);
  ms/query: the median time to embed one SciFact query (30 queries), the model's instruction included;
  both by the wall clock and by the process's CPU time, the models taking turns, best of 2 rounds.

Prints a table and replaces its section of bench/RESULTS.md (--no-write to skip).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from defaults import FUSIONS, Bench, Replay, fuse, is_default_fusion, kestrel, lists_of, squad
from evidencedesk.config import Settings
from evidencedesk.evaluation.beir import load_beir
from evidencedesk.index.embedders import embed_query, embedder_from_name
from evidencedesk.retrieval.dense import DenseSearcher
from evidencedesk.retrieval.lexical import BM25Searcher
from evidencedesk.text.tokenizer import Tokenizer
from machine_info import machine, write_section

REPO = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).with_name("RESULTS.md")
SECTION = "## Dense models: MiniLM against bge-small"
MODELS = {
    "minilm": "all-MiniLM-L6-v2 (int8 ONNX, 512 tokens)",
    "bge-small": "bge-small-en-v1.5 (int8 ONNX, 512 tokens)",
}
SPEED_TEXTS, SPEED_QUERIES, ROUNDS = 64, 30, 2
SPEEDS = ("docs/s", "docs/CPU-s", "ms/query", "CPU ms/query")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def beir_cli(model: str, dataset: Path, split: str, method: str, store: Path) -> dict[str, Any]:
    """``evidencedesk beir`` as a user runs it, with ``model`` named in evidencedesk.yaml."""
    with tempfile.TemporaryDirectory() as folder:
        legs = [{"method": "bm25"}, {"method": "dense", "model": model}]
        (Path(folder) / "evidencedesk.yaml").write_text(json.dumps({"retrieval": {"legs": legs}}), "utf-8")
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        command = [sys.executable, "-c", "from evidencedesk.cli import main; main()", "beir", str(dataset.resolve()),
                   "--split", split, "--method", method, "--store", str(store.resolve()), "--json"]  # fmt: skip
        done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed: {done.stderr[-2000:]}")
        return dict(json.loads(done.stdout))


def squad_scores(bench: Bench, gold: dict[str, str], searcher: Any) -> dict[str, float]:
    """hit@1 and hit@5 of each answerable question's own paragraph (``bench`` from defaults.squad)."""
    ranked = {q: [c.chunk.id for c in searcher.search(q, 5, bench.scope)] for q in bench.queries}
    return {
        "hit@1": sum(ranked[q][:1] == [gold[q]] for q in bench.queries) / len(bench.queries),
        "hit@5": sum(gold[q] in ranked[q] for q in bench.queries) / len(bench.queries),
    }


def speed(model: Any, texts: list[str], queries: list[str]) -> dict[str, float]:
    """Wall-clock and CPU-time rates of one model: documents per second and per CPU second (the
    process's CPU time, steadier than the wall clock on a shared machine), and the median ms to embed
    one query, wall and CPU."""
    model.embed(texts[:2])  # load and warm
    wall, cpu = time.perf_counter(), time.process_time()
    model.embed(texts, batch_size=32)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    walls, cpus = [], []
    for q in queries:
        one, one_cpu = time.perf_counter(), time.process_time()
        embed_query(model, q)
        walls.append((time.perf_counter() - one) * 1000)
        cpus.append((time.process_time() - one_cpu) * 1000)
    return {"docs/s": len(texts) / wall, "docs/CPU-s": len(texts) / cpu,
            "ms/query": statistics.median(walls), "CPU ms/query": statistics.median(cpus)}  # fmt: skip


def measure(args: argparse.Namespace, work: Path) -> dict[str, dict[str, float]]:
    defaults = Settings()
    bm25_leg = next(x for x in defaults.retrieval.legs if x.method == "bm25")
    dense_leg = next(x for x in defaults.retrieval.legs if x.method == "dense")
    tokenizer = Tokenizer(stem=bm25_leg.stem, stopwords=bm25_leg.stopwords, language=bm25_leg.language)
    spec = next(s for s in FUSIONS.values() if is_default_fusion(s, defaults))
    sets: list[Bench] = [squad(args.squad), kestrel(args.kestrel, work)]
    gold = squad_gold(args.squad)
    bm25 = {b.name: lists_of(BM25Searcher(b.chunks, tokenizer, contextual=bm25_leg.contextual), b.queries, b.scope)
            for b in sets}  # fmt: skip
    sci = load_beir(args.scifact, "test")
    abstracts = [d.text for d in sci.documents[:SPEED_TEXTS]]
    queries = list(sci.queries.values())[:SPEED_QUERIES]
    out: dict[str, dict[str, float]] = {}
    # the SciFact runs are separate processes: --jobs of them run while this one scores the other sets
    runs = [(m, split, method) for m in MODELS for split in ("train", "test") for method in ("dense", "hybrid")]
    pool = ThreadPoolExecutor(max_workers=args.jobs)
    pending = {run: pool.submit(beir_cli, run[0], args.scifact, run[1], run[2], args.store) for run in runs}
    for model in MODELS:
        row: dict[str, float] = {}
        embedder = embedder_from_name(model)
        for bench in sets:
            log(f"{model}: {bench.name}")
            searcher = DenseSearcher(
                bench.chunks, embedder, work / "embeddings.sqlite", contextual=dense_leg.contextual
            )
            dense = lists_of(searcher, bench.queries, bench.scope)
            hybrid = {q: fuse(bm25[bench.name][q], dense[q], spec, 100) for q in dense}
            for method, lists in (("dense", dense), ("hybrid", hybrid)):
                replay = Replay(lists)
                scores = squad_scores(bench, gold, replay) if bench.name == "squad2-dev" else bench.score(replay)
                for metric in ("hit@1", "hit@5", "recall@5", "nDCG@5"):
                    if metric in scores:
                        row[f"{bench.name} {method} {metric}"] = scores[metric]
            searcher.close()
        out[model] = row
    for (model, split, method), future in pending.items():
        out[model][f"SciFact {split} {method} nDCG@10"] = float(future.result()["ndcg@10"])
        log(f"{model}: SciFact {split} {method} done")
    pool.shutdown()
    for model in MODELS:  # the SciFact rows first
        out[model] = dict(sorted(out[model].items(), key=lambda kv: not kv[0].startswith("SciFact")))
        log(f"{model}: {out[model]}")
    # speed last, the models taking turns (ROUNDS times each), the best round of each kept: the load of
    # a shared machine comes and goes, and both models then see the same part of it
    for n in range(ROUNDS):
        for model in MODELS:
            log(f"{model}: speed, round {n + 1}")
            got = speed(embedder_from_name(model), abstracts, queries)
            for key, value in got.items():
                best = max if key.startswith("docs") else min
                out[model][key] = best(out[model].get(key, value), value)
    return out


def squad_gold(folder: Path) -> dict[str, str]:
    data = json.loads((folder / "dev-v2.0-half.json").read_text(encoding="utf-8"))
    gold: dict[str, str] = {}
    for a, article in enumerate(data["data"]):
        for p, para in enumerate(article["paragraphs"]):
            for qa in para["qas"]:
                if not qa.get("is_impossible"):
                    gold[qa["question"]] = f"a{a}:c{p}"
    return gold


def render(results: dict[str, dict[str, float]]) -> str:
    metrics = list(next(iter(results.values())))
    head = [
        "measure",
        *(f"{MODELS[m]}" + (" (default)" if m == "minilm" else "") for m in results),
        "bge-small - MiniLM",
    ]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(results) + 1)]
    for metric in metrics:
        values = [results[m][metric] for m in results]
        fmt = "{:.1f}" if metric in SPEEDS else "{:.4f}"
        diff = values[-1] - values[0]
        delta = f"{diff:+.1f}" if metric in SPEEDS else f"{diff:+.4f}"
        lines.append("| " + " | ".join([metric, *(fmt.format(v) for v in values), delta]) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scifact", type=Path, default=Path("../shared/datasets/scifact"))
    parser.add_argument("--squad", type=Path, default=Path("../shared/datasets/squad2-dev"))
    parser.add_argument("--kestrel", type=Path, default=Path("examples/kestrel"))
    parser.add_argument("--store", type=Path, default=Path(".evidencedesk-beir/scifact"),
                        help="the SciFact store (its embedding cache holds both models' vectors)")  # fmt: skip
    parser.add_argument("--work", type=Path, default=Path(".evidencedesk-beir/embedders"),
                        help="embedding cache and store of squad2-dev and kestrel")  # fmt: skip
    parser.add_argument("--jobs", type=int, default=2, help="SciFact runs (processes) at a time")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    where = machine()
    args.work.mkdir(parents=True, exist_ok=True)
    results = measure(args, args.work)
    markdown = render(results)
    print(markdown)
    if args.no_write:
        return 0
    command = "python bench/embedders.py " + " ".join(argv if argv is not None else sys.argv[1:])
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    end_load = os.getloadavg()[0]
    section = (
        f"{SECTION} (bench/embedders.py, {stamp})\n\n"
        f"- command: `{command.strip()}`\n"
        f"- machine: {where}, load avg {end_load:.1f} at the end (shared with other work); wall time "
        f"{(time.perf_counter() - started) / 60:.1f} min. Both models run on ONNX Runtime with 2 threads.\n"
        "- SciFact rows: `evidencedesk beir DATASET --split S --method M` with `retrieval.legs[].model` set in "
        "evidencedesk.yaml (train: 809 queries, where the default is chosen; test: 300 queries, reported only). "
        "squad2-dev: 301 paragraphs, 1,299 answerable questions, the question's own paragraph at rank 1 / in "
        "the top 5. kestrel: the example corpus and its labels. Hybrid: the default BM25 + dense fusion. Vectors "
        "already in an embedding cache (the SciFact store's, --work's) are read from it, not embedded again.\n"
        "- docs/s: 64 SciFact abstracts embedded afresh in batches of 32; ms/query: median time to embed one "
        "query (bge-small reads it after its instruction); by the wall clock and per CPU second of the process "
        "(steadier on a shared machine), the two models taking turns, best of 2 rounds each. Wall-clock speeds "
        "on a loaded shared machine vary from run to run; the ratio between the models is the figure to read.\n\n"
        f"{markdown}\n"
    )
    write_section(RESULTS, SECTION, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
