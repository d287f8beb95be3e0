"""Fit the extractive generator's answerability model and write it as package data.

    PYTHONPATH=src .venv/bin/python scripts/fit_answerability.py --squad ../shared/datasets/squad2-dev \\
        --kestrel examples/kestrel --work /tmp/squad2-work --precision 0.7

Development data: the questions of the SQuAD 2.0 dev articles at even positions (the fit split of
bench/squad2.py; the other articles stay held out) and the example corpus's labels, together.
Each question goes through the configured retrieval and context stages; the generator scores the
context with a threshold that never abstains and reports its features. A question is a positive
when the answer it would give is right: for SQuAD, the answer holds a gold answer (SQuAD
normalisation); for a label, the answer cites a chunk holding the label's grade-2 evidence.
Unanswerable questions are negatives. One logistic regression per scorer (``minilm``, ``e5``,
``words``) is fitted on standardised features; its threshold is the highest probability at which
abstentions are still at least ``--precision`` unanswerable questions on the fit data.
Writes ``src/evidencedesk/answer/generators/answerability.json`` (or --out) and prints the fit.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from evidencedesk.answer.generators.answerability import FEATURES, READER_FEATURES  # noqa: E402
from evidencedesk.answer.generators.base import Generation  # noqa: E402
from evidencedesk.answer.generators.dense_match import DenseScorer, E5Embedder  # noqa: E402
from evidencedesk.answer.generators.extractive import ExtractiveGenerator  # noqa: E402
from evidencedesk.answer.pipeline import ask  # noqa: E402
from squad2 import FIT, contains, load_questions, open_desk, warm_units, without_citations  # noqa: E402

MAX_WRONG_ABSTENTION = 0.15
NEVER = 1e-9  # a threshold that never abstains, so every question reports its features and its answer
OUT = REPO / "src" / "evidencedesk" / "answer" / "generators" / "answerability.json"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def ask_with(desk: Any, question: str, generator: Any) -> tuple[Any, Any]:
    """``Desk.ask``'s pipeline and settings (its reranker too), with ``generator`` in place of the configured one."""
    from evidencedesk.wiring import build_reranker, rerank_spec

    s = desk.settings
    reranker = build_reranker(rerank_spec(s), lambda: generator, s)
    return ask(
        question,
        desk.searcher(),
        {c.id: c for c in desk.chunks()},
        generator,
        k=s.retrieval.k,
        candidates=max(s.retrieval.rerank.candidates, s.retrieval.k),
        reranker=reranker,
        budget_tokens=s.context.budget_tokens,
        floor=s.context.floor,
        dedup_threshold=s.context.dedup_threshold,
        order=s.context.order,
    )


class ContextOnly:
    """A generator that always abstains: ``ask`` with it fetches the context the pipeline shows, nothing more."""

    name = "context-only"

    def generate(self, question: str, context: list[Any], prompt: str = "") -> Generation:
        return Generation(answer="", abstained=True, reason="context only")


def generators(names: list[str]) -> dict[str, ExtractiveGenerator]:
    out = {"minilm": ExtractiveGenerator(threshold=NEVER), "words": ExtractiveGenerator(threshold=NEVER, dense=False)}
    if "e5" in names:
        out["e5"] = ExtractiveGenerator(threshold=NEVER, dense=DenseScorer(E5Embedder(), name="e5"))
    return {name: gen for name, gen in out.items() if name in names}


def rows_for(question: str, context: list[Any], gens: dict[str, ExtractiveGenerator], names: list[str],
             right: Any) -> list[dict[str, Any]]:  # fmt: skip
    """One row per scorer in ``names``: that generator's features on the shared ``context`` and whether its
    answer is right (``right(generation)``)."""
    out = []
    for name in names:
        generation = gens[name].generate(question, context)
        features = generation.details.get("features", {})
        out.append({"scorer": name, "y": int(bool(right(generation))), "features": features,
                    "p": generation.details.get("answerability"), "answer": generation.answer})  # fmt: skip
    return out


def squad_rows(args: argparse.Namespace, gens: dict[str, ExtractiveGenerator], sink: Any) -> list[dict[str, Any]]:
    _, questions = load_questions(args.squad / "dev-v2.0-half.json")
    fit = [q for q in questions if q.split == FIT or args.heldout]
    if args.limit:
        fit = random.Random(args.seed).sample(fit, min(args.limit, len(fit)))
    desk = open_desk(args.squad, args.work)
    chunks = desk.chunks()
    for gen in gens.values():
        warm_units(gen, chunks, args.work)
    rows: list[dict[str, Any]] = []
    for n, q in enumerate(fit, 1):
        if n <= args.skip:
            continue
        _, trace = ask_with(desk, q.question, ContextOnly())  # retrieval and context once per question
        with_e5 = n % args.e5_every == 0 and n // args.e5_every <= args.e5_limit
        names = [name for name in gens if name != "e5" or with_e5]

        def right(g: Any, q: Any = q) -> bool:
            return (not q.impossible) and not g.abstained and contains(without_citations(g.answer), q.answers)

        for row in rows_for(q.question, list(trace.context), gens, names, right):
            row.update(source="squad", impossible=q.impossible, split=q.split, id=q.id,
                       context=[c.chunk.id for c in trace.context])  # fmt: skip
            rows.append(row)
            sink(row)
        if n % 100 == 0:
            log(f"squad {n}/{len(fit)}")
    return rows


def kestrel_rows(kestrel: Path, work: Path, gens: dict[str, ExtractiveGenerator], sink: Any) -> list[dict[str, Any]]:
    from evidencedesk.desk import Desk
    from evidencedesk.evaluation.labels import load_labels

    labels = load_labels(kestrel / "labels.jsonl")
    rows: list[dict[str, Any]] = []
    with Desk(work / "kestrel-store") as desk:
        desk.ingest(kestrel / "docs")
        by_id = {c.id: c for c in desk.chunks()}
        for label in labels:
            default = ExtractiveGenerator(threshold=NEVER)
            # the scorer the default generator picks for this question (minilm or e5), plus words alone
            for gen in (default, ExtractiveGenerator(threshold=NEVER, dense=False)):
                checked, trace = ask_with(desk, label.question, gen)
                name = trace.generation.get("scorer", "words")
                if name not in gens and name != "e5":
                    continue
                right = label.answerable and any(label.grade_of(by_id[c]) == 2 for c in checked.cited if c in by_id)
                rows.append({"source": "kestrel", "scorer": name, "y": int(right), "impossible": not label.answerable,
                             "features": trace.generation.get("features", {})})  # fmt: skip
                sink(rows[-1])
    return rows


def decision(p: np.ndarray, impossible: np.ndarray, threshold: float) -> dict[str, Any]:
    """What abstaining below ``threshold`` does to these rows."""
    abst = p < threshold
    return {
        "n": int(len(p)),
        "abstention_precision": round(float(impossible[abst].mean()), 3) if abst.any() else 0.0,
        "unanswerable_abstained": round(float(abst[impossible].mean()), 3) if impossible.any() else 0.0,
        "answerable_abstained": round(float(abst[~impossible].mean()), 3) if (~impossible).any() else 0.0,
    }


def probabilities(model: dict[str, Any], rows: list[dict[str, Any]]) -> np.ndarray:
    x = np.array([[r["features"].get(f, 0.0) for f in model["features"]] for r in rows], dtype=float)
    z = ((x - np.array(model["mean"])) / np.array(model["scale"])) @ np.array(model["coef"]) + model["intercept"]
    return np.asarray(1.0 / (1.0 + np.exp(-z)))


def auc(p: np.ndarray, positive: np.ndarray) -> float:
    """The area under the ROC curve of ``p`` for telling ``positive`` rows from the others."""
    from sklearn.metrics import roc_auc_score

    return round(float(roc_auc_score(positive.astype(int), p)), 4) if 0 < positive.sum() < len(positive) else 0.0


def fit_one(
    rows: list[dict[str, Any]],
    precision: float,
    kestrel_weight: float,
    max_wrong: float = MAX_WRONG_ABSTENTION,
    features: tuple[str, ...] = FEATURES,
    c: float = 1.0,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A logistic regression on standardised features, and its threshold: the highest probability at which the
    fit rows' abstentions are at least ``precision`` unanswerable questions and at most ``max_wrong`` of the
    answerable ones are refused (the highest meeting the second alone when none meets both)."""
    from sklearn.linear_model import LogisticRegression

    x = np.array([[r["features"].get(f, 0.0) for f in features] for r in rows], dtype=float)
    y = np.array([r["y"] for r in rows])
    n_labels = sum(r["source"] == "kestrel" for r in rows)
    if kestrel_weight <= 0:  # balanced: the example corpus's rows weigh as much, together, as the SQuAD rows
        kestrel_weight = (len(rows) - n_labels) / n_labels if 0 < n_labels < len(rows) else 1.0
    w = np.array([kestrel_weight if r["source"] == "kestrel" else 1.0 for r in rows])
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=c, max_iter=1000)
    model.fit((x - mean) / scale, y, sample_weight=w)
    p = model.predict_proba((x - mean) / scale)[:, 1]
    impossible = np.array([r["impossible"] for r in rows])
    answerable = ~impossible
    grid = [float(t) for t in np.round(np.arange(0.02, 0.95, 0.01), 2)]

    def wrong(t: float) -> float:
        return float((p < t)[answerable].mean()) if answerable.any() else 0.0

    def precise(t: float) -> bool:
        abst = p < t
        return bool(abst.any()) and float(impossible[abst].mean()) >= precision

    both = [t for t in grid if precise(t) and wrong(t) <= max_wrong]
    capped = [t for t in grid if wrong(t) <= max_wrong]
    best_t = max(both) if both else max(capped, default=grid[0])
    rule = (
        f"abstention precision >= {precision:.0%} and answerable abstained <= {max_wrong:.0%}"
        if both
        else f"no threshold reaches abstention precision {precision:.0%}: answerable abstained <= {max_wrong:.0%}"
    )
    stats = {"threshold": best_t, "rule": rule, "label_row_weight": round(kestrel_weight, 2),
             **decision(p, impossible, best_t)}  # fmt: skip
    out = {
        "features": list(features),
        "mean": [round(float(v), 6) for v in mean],
        "scale": [round(float(v), 6) for v in scale],
        "coef": [round(float(v), 6) for v in model.coef_[0]],
        "intercept": round(float(model.intercept_[0]), 6),
        "threshold": best_t,
    }
    return out, {"n": len(rows), "positives": int(y.sum()), **stats}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--squad", type=Path, required=True)
    ap.add_argument("--kestrel", type=Path, default=REPO / "examples" / "kestrel")
    ap.add_argument("--work", type=Path, default=Path("/tmp/evidencedesk-squad2"))
    ap.add_argument("--precision", type=float, default=0.7, help="abstention precision the threshold must keep")
    ap.add_argument(
        "--max-wrong",
        type=float,
        default=MAX_WRONG_ABSTENTION,
        help="share of answerable fit questions the threshold may refuse",
    )
    ap.add_argument(
        "--kestrel-weight",
        type=float,
        default=0.0,
        help="weight of each example-corpus row (0: balanced, both sources weigh the same in all)",
    )
    ap.add_argument("--limit", type=int, default=0, help="fit-split questions to use (0: all)")
    ap.add_argument("--e5-limit", type=int, default=400, help="fit-split questions also scored with e5")
    ap.add_argument("--e5-every", type=int, default=2, help="score every n-th fit-split question with e5")
    ap.add_argument("--fit-only", action="store_true", help="fit from the --rows cache as it is (it may be partial)")
    ap.add_argument("--skip", type=int, default=0, help="leave out the first n sampled questions (already cached)")
    ap.add_argument("--skip-kestrel", action="store_true", help="append SQuAD rows to --rows (its labels rows kept)")
    ap.add_argument("--scorers", default="minilm,words,e5", help="scorers to collect SQuAD rows for")
    ap.add_argument(
        "--heldout",
        action="store_true",
        help="also score the held-out articles' questions: reported beside the fit, never fitted on",
    )
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--c", type=float, default=1.0, help="inverse L2 strength of the logistic regression")
    ap.add_argument("--rows", type=Path, help="cache of feature rows (JSON lines): read if present, else written")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)

    if args.fit_only and args.rows:
        rows = [json.loads(line) for line in args.rows.read_text(encoding="utf-8").splitlines() if line.strip()]
    else:
        gens = generators([n for n in args.scorers.split(",") if n != "e5" or args.e5_limit > 0])
        mode = "a" if args.skip_kestrel else "w"
        cache = (args.rows or args.work / "answerability-rows.jsonl").open(mode, encoding="utf-8")

        def sink(row: dict[str, Any]) -> None:
            cache.write(json.dumps(row) + "\n")
            cache.flush()

        args.work.mkdir(parents=True, exist_ok=True)
        rows = [] if args.skip_kestrel else kestrel_rows(args.kestrel, args.work, gens, sink)
        rows += squad_rows(args, gens, sink)
        cache.close()
    models: dict[str, Any] = {}
    info: dict[str, Any] = {
        "fitted_by": "scripts/fit_answerability.py",
        "data": "SQuAD 2.0 dev (fit split: articles at even positions; held-out figures from the others) "
        "+ examples/kestrel labels",
        "target_abstention_precision": args.precision,
        "max_answerable_abstained": args.max_wrong,
        "regularisation_c": args.c,
        "fit": {},
    }
    plain = tuple(f for f in FEATURES if f not in READER_FEATURES)
    for model_name in ("minilm-reader", "minilm", "e5", "words"):
        scorer = model_name.removesuffix("-reader")
        if scorer not in args.scorers.split(","):  # not refitted: the shipped model stays
            continue
        features = FEATURES if model_name.endswith("-reader") else plain
        mine = [r for r in rows if r["scorer"] == scorer and r.get("split", FIT) == FIT]
        if features is FEATURES:  # the reader's model: only rows the cross-encoder read
            mine = [r for r in mine if all(f in r["features"] for f in READER_FEATURES)]
        if not mine:
            continue
        models[model_name], info["fit"][model_name] = fit_one(
            mine, args.precision, args.kestrel_weight, args.max_wrong, features, args.c
        )
        log(f"{model_name}: {info['fit'][model_name]}")
        held = [r for r in rows if r["scorer"] == scorer and r.get("split", FIT) != FIT]
        if features is FEATURES:
            held = [r for r in held if all(f in r["features"] for f in READER_FEATURES)]
        if held:  # reported, never fitted on
            impossible = np.array([bool(r["impossible"]) for r in held])
            right = np.array([bool(r["y"]) for r in held])
            p = probabilities(models[model_name], held)
            info.setdefault("heldout", {})[model_name] = {
                **decision(p, impossible, models[model_name]["threshold"]),
                "auc_answerable": auc(p, ~impossible),
                "auc_right": auc(p, right),
            }
            log(f"{model_name} held-out: {info['heldout'][model_name]}")
    if args.out.exists():  # models not refitted this time (their scorer was not run) stay as they were
        old = json.loads(args.out.read_text(encoding="utf-8"))
        for name, model in old.get("models", {}).items():
            if name not in models:
                models[name] = model
                info["fit"][name] = old.get("info", {}).get("fit", {}).get(name, {})
                if name in old.get("info", {}).get("heldout", {}):
                    info.setdefault("heldout", {})[name] = old["info"]["heldout"][name]
    args.out.write_text(json.dumps({"info": info, "models": models}, indent=1) + "\n", encoding="utf-8")
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
