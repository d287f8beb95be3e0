"""Answer quality on SQuAD 2.0 dev articles: gold answer found, short answer F1, length, abstention, latency.

    PYTHONPATH=src .venv/bin/python bench/squad2.py --squad ../shared/datasets/squad2-dev \\
        --work /tmp/squad2-work --sample 150

Each article becomes one Markdown document (title as heading, paragraphs as paragraphs), the
folder is ingested into a store under --work, and every question (or a seeded sample of
--sample answerable plus --sample unanswerable ones) is asked against the whole collection with
``Desk.ask`` and the default settings (hybrid retrieval, extractive generator). Articles at even
positions form the fit split (used by scripts/fit_answerability.py), the others the held-out split;
both are reported. Metrics follow the official SQuAD normalisation (lowercase, no punctuation, no
articles, single spaces). Prints a table and replaces its section of bench/RESULTS.md (--no-append to
skip).

``--articles`` keeps the questions of the named articles only (``reader`` names the reader's held-out
articles, never trained on: ``READER_HELDOUT``); ``--answerability`` lists the extractive generator's
modes to run side by side on the same questions (default ``reader,embeddings``: the reader and the
answerability model it replaces). The reader's column also gets its risk-coverage curve over the
reader threshold (each question's best unit score, from the generation details), written with
``--dump``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shlex
import statistics
import string
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from machine_info import machine, write_section

REPO = Path(__file__).resolve().parents[1]
FIT, HELDOUT = "fit", "heldout"
SECTION = "## SQuAD 2.0 dev answers"
READER_SECTION = "## SQuAD 2.0 dev answers: the reader against the answerability model"
MAX_SHORT_WORDS = 12
READER_HELDOUT = ("1973_oil_crisis", "Scottish_Parliament")  # never trained on (scripts/train_reader.py --holdout)


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answers: tuple[str, ...]
    impossible: bool
    article: int
    title: str

    @property
    def split(self) -> str:
        return FIT if self.article % 2 == 0 else HELDOUT


@dataclass
class Outcome:
    q: Question
    answer: str
    abstained: bool
    seconds: float
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def reader_score(self) -> float | None:
        score = self.details.get("reader_score")
        return float(score) if isinstance(score, int | float) else None

    @property
    def best_unit(self) -> str:
        units = self.details.get("top_units") or []
        return str(units[0].get("text", "")) if units else ""


# -- SQuAD normalisation and scores (as in the official evaluation script) ---------------------------
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def normalize_answer(text: str) -> str:
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def contains(answer: str, golds: Iterable[str]) -> bool:
    have = f" {normalize_answer(answer)} "
    return any(f" {normalize_answer(g)} " in have for g in golds if normalize_answer(g))


def f1(prediction: str, gold: str) -> float:
    p, g = normalize_answer(prediction).split(), normalize_answer(gold).split()
    common = Counter(p) & Counter(g)
    same = sum(common.values())
    if not same:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


_CITATION = re.compile(r"\s*\[[^\]\s]+:c\d+[^\]]*\]")


def first_line(answer: str) -> str:
    """The answer's first line without its citation."""
    line = answer.strip().splitlines()[0] if answer.strip() else ""
    return _CITATION.sub("", line).strip()


def without_citations(answer: str) -> str:
    return _CITATION.sub("", answer)


# -- corpus ---------------------------------------------------------------------------------------
def load_questions(path: Path) -> tuple[list[dict[str, Any]], list[Question]]:
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    out: list[Question] = []
    for n, article in enumerate(data):
        for para in article["paragraphs"]:
            for qa in para["qas"]:
                golds = tuple(dict.fromkeys(a["text"] for a in qa.get("answers", [])))
                out.append(
                    Question(qa["id"], qa["question"].strip(), golds, bool(qa["is_impossible"]), n, article["title"])
                )
    return data, out


def write_corpus(data: list[dict[str, Any]], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for n, article in enumerate(data):
        title = article["title"].replace("_", " ")
        body = "\n\n".join(p["context"].strip() for p in article["paragraphs"])
        (folder / f"{n:02d}-{article['title'].lower()}.md").write_text(f"# {title}\n\n{body}\n", encoding="utf-8")


def sample(questions: list[Question], per_class: int, seed: int) -> list[Question]:
    if per_class <= 0:
        return questions
    rng = random.Random(seed)
    yes = [q for q in questions if not q.impossible]
    no = [q for q in questions if q.impossible]
    return rng.sample(yes, min(per_class, len(yes))) + rng.sample(no, min(per_class, len(no)))


def open_desk(squad: Path, work: Path, config: Path | None = None) -> Any:
    from evidencedesk.config import load_settings
    from evidencedesk.desk import Desk

    data, _ = load_questions(squad / "dev-v2.0-half.json")
    docs = work / "docs"
    write_corpus(data, docs)
    desk = Desk(work / "store", load_settings(config) if config else None)
    if not desk.chunks():
        log(f"ingesting {len(data)} articles into {work / 'store'}")
        desk.ingest(docs)
    return desk


def warm_units(generator: Any, chunks: list[Any], keep: Path | None = None) -> float:
    """Embed every unit of the collection once, up front (what a service does at start), so that each
    question is answered warm. ``keep``: a folder where the unit vectors are saved per scorer and read
    back on the next run (the collection does not change between runs). Returns the seconds it took."""
    import numpy as np

    from evidencedesk.answer.generators.unit_scoring import chunk_embedding_texts

    start = time.perf_counter()
    if not hasattr(generator, "warm"):
        return 0.0
    texts = list(dict.fromkeys(t for c in chunks for t in chunk_embedding_texts(c)))
    scorers = {name: s for name, s in (generator.scorer_for("a question", []),) if s is not None}
    for name, scorer in scorers.items():
        saved = keep / f"unit-vectors-{name}.npy" if keep else None
        if saved is not None and saved.is_file():
            vectors = np.load(saved)
            if len(vectors) == len(texts):
                scorer.remember(texts, vectors)
    done = generator.warm(chunks)
    for name, scorer in scorers.items():
        if keep is not None and done.get(name):
            np.save(keep / f"unit-vectors-{name}.npy", scorer.vectors(texts))
    log(f"unit embeddings cached up front (embedded now: {done}) in {time.perf_counter() - start:.1f} s")
    return time.perf_counter() - start


def model_line() -> str:
    """Which answerability model answered, and how its threshold was chosen."""
    from evidencedesk.answer.generators.answerability import AnswerabilityModel

    model = AnswerabilityModel.load()
    fit = model.info.get("fit", {}).get("minilm", {})
    return (
        f"Answerability (English, minilm): threshold {model.for_scorer('minilm').threshold}, "
        f"chosen by {fit.get('rule', 'the fit script')} on the fit split "
        f"({fit.get('n', '?')} rows, from `scripts/fit_answerability.py`)."
    )


# -- metrics --------------------------------------------------------------------------------------
def summarise(outcomes: list[Outcome]) -> dict[str, Any]:
    yes = [o for o in outcomes if not o.q.impossible]
    no = [o for o in outcomes if o.q.impossible]
    answered = [o for o in yes if not o.abstained]
    abstained = [o for o in outcomes if o.abstained]
    short = [first_line(o.answer) for o in answered]

    def share(xs: list[bool]) -> float:
        return sum(xs) / len(xs) if xs else 0.0

    return {
        "n_answerable": len(yes),
        "n_unanswerable": len(no),
        "contained_of_answered": share([contains(without_citations(o.answer), o.q.answers) for o in answered]),
        "contained_of_answerable": share(
            [(not o.abstained) and contains(without_citations(o.answer), o.q.answers) for o in yes]
        ),  # fmt: skip
        "wrongly_abstained": share([o.abstained for o in yes]),
        "first_line_contains": share(
            [
                (not o.abstained)
                and len(first_line(o.answer).split()) <= MAX_SHORT_WORDS
                and contains(first_line(o.answer), o.q.answers)
                for o in yes
            ]
        ),  # fmt: skip
        "first_line_f1": statistics.fmean(
            [
                max((f1(first_line(o.answer), g) for g in o.q.answers), default=0.0) if not o.abstained else 0.0
                for o in yes
            ]
        )
        if yes
        else 0.0,  # fmt: skip
        "first_line_words_p50": statistics.median([len(s.split()) for s in short]) if short else 0,
        "answer_words_p50": statistics.median([len(without_citations(o.answer).split()) for o in answered])
        if answered
        else 0,
        "unanswerable_abstained": share([o.abstained for o in no]),  # abstention recall
        "abstention_precision": share([o.q.impossible for o in abstained]),
        "latency_p50_ms": 1000 * statistics.median([o.seconds for o in outcomes]) if outcomes else 0.0,
    }


def selective_curve(outcomes: list[Outcome]) -> dict[str, Any]:
    """Coverage, accuracy among answered and the risk-coverage curve over the reader threshold (a question is
    right when answered and answerable with the gold in the answer; below the run's threshold, its best unit)."""
    from evidencedesk.evaluation.selective import Selective, report

    records = []
    for o in outcomes:
        right = (not o.q.impossible) and contains(without_citations(o.answer), o.q.answers)
        best = (not o.q.impossible) and contains(o.best_unit, o.q.answers)
        records.append(Selective(not o.q.impossible, not o.abstained, right and not o.abstained, o.reader_score, best))
    return report(records)


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run(desk: Any, questions: list[Question]) -> list[Outcome]:
    out: list[Outcome] = []
    for n, q in enumerate(questions, 1):
        start = time.perf_counter()
        result = desk.ask(q.question, save=False)
        seconds = time.perf_counter() - start
        out.append(Outcome(q, result.answer, result.abstained, seconds, dict(result.generation)))
        if n % 100 == 0:
            log(f"{n}/{len(questions)} asked")
    return out


ROWS = (
    ("answerable: gold answer in the answer (of answered)", "contained_of_answered", ">= 85%"),
    ("answerable: gold answer in the answer (of all)", "contained_of_answerable", ""),
    ("answerable: wrongly abstained", "wrongly_abstained", "<= 15%"),
    ("answerable: first line (<= 12 words) holds a gold answer", "first_line_contains", ">= 40%"),
    ("answerable: token F1 of the first line", "first_line_f1", ""),
    ("unanswerable: abstained (abstention recall)", "unanswerable_abstained", ">= 65%"),
    ("abstention precision (abstained questions that are unanswerable)", "abstention_precision", ""),
)


def table(results: dict[str, dict[str, Any]]) -> str:
    names = list(results)
    lines = ["| metric | " + " | ".join(names) + " | target |", "|---|" + "---:|" * len(names) + "---|"]
    for label, key, target in ROWS:
        lines.append(f"| {label} | " + " | ".join(f"{100 * results[n][key]:.1f}%" for n in names) + f" | {target} |")
    for label, key, fmt in (
        ("first line words (median)", "first_line_words_p50", "{:.0f}"),
        ("answer words (median, answered)", "answer_words_p50", "{:.0f}"),
        ("ask latency p50 (ms)", "latency_p50_ms", "{:.0f}"),
    ):
        lines.append(f"| {label} | " + " | ".join(fmt.format(results[n][key]) for n in names) + " | |")
    lines.append("| questions (answerable + unanswerable) | " + " | ".join(
        f"{results[n]['n_answerable']} + {results[n]['n_unanswerable']}" for n in names) + " | |")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--squad", type=Path, required=True, help="folder holding dev-v2.0-half.json")
    ap.add_argument("--work", type=Path, default=Path("/tmp/evidencedesk-squad2"), help="store and corpus folder")
    ap.add_argument("--sample", type=int, default=0, help="answerable and unanswerable questions each (0: all)")
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--warm", type=int, default=100, help="questions asked again for the warm latency")
    ap.add_argument("--results", type=Path, default=REPO / "bench" / "RESULTS.md")
    ap.add_argument("--no-append", action="store_true")
    ap.add_argument("--config", type=Path, help="settings YAML for the Desk (default: the default settings)")
    ap.add_argument("--dump", type=Path, help="write each question's answer and details as JSON lines")
    ap.add_argument("--articles", default="", help="comma-separated article titles, or 'reader' (held-out)")
    ap.add_argument("--answerability", default="", help="extractive modes side by side, e.g. reader,embeddings")
    ap.add_argument("--disjoint-from", type=int, help="leave out the questions this seed samples (for calibration)")
    ap.add_argument("--disjoint-sample", type=int, default=0, help="--sample of the run left out (default: --sample)")
    args = ap.parse_args(argv)

    _, questions = load_questions(args.squad / "dev-v2.0-half.json")
    if args.articles:
        titles = READER_HELDOUT if args.articles == "reader" else tuple(t.strip() for t in args.articles.split(","))
        questions = [q for q in questions if q.title in titles]
    if args.disjoint_from is not None:  # a calibration sample: none of the questions the evaluation's seed picks
        held = {q.id for q in sample(questions, args.disjoint_sample or args.sample, args.disjoint_from)}
        questions = [q for q in questions if q.id not in held]
    chosen = sample(questions, args.sample, args.seed)
    desk = open_desk(args.squad, args.work, args.config)
    if args.answerability:
        return compare(args, argv, desk, chosen)
    warm_s = warm_units(desk.generator(), desk.chunks(), args.work)
    log(f"{len(desk.chunks())} chunks; asking {len(chosen)} questions")
    desk.ask("warm up", save=False)
    outcomes = run(desk, chosen)
    warm = run(desk, chosen[: args.warm]) if args.warm else []
    results = {
        "all": summarise(outcomes),
        "fit split": summarise([o for o in outcomes if o.q.split == FIT]),
        "held-out split": summarise([o for o in outcomes if o.q.split == HELDOUT]),
    }
    warm_p50 = 1000 * statistics.median([o.seconds for o in warm]) if warm else 0.0
    text = table(results)
    print(text)
    print(f"warm ask p50 (second pass over {len(warm)} questions): {warm_p50:.0f} ms")
    if args.dump:
        with args.dump.open("w", encoding="utf-8") as f:
            for o in outcomes:
                row = {
                    "id": o.q.id,
                    "question": o.q.question,
                    "gold": o.q.answers,
                    "impossible": o.q.impossible,
                    "split": o.q.split,
                    "answer": o.answer,
                    "abstained": o.abstained,
                    "details": o.details,
                }
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    if not args.no_append:
        command = "PYTHONPATH=src .venv/bin/python bench/squad2.py " + " ".join(
            shlex.quote(a) for a in (argv or sys.argv[1:])
        )
        size = (
            "every question"
            if args.sample <= 0
            else f"a seeded sample (seed {args.seed}) of {args.sample} answerable + {args.sample} unanswerable"
        )
        section = (
            f"{SECTION} ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)\n\n"
            f"`{command}`\n\n"
            f"{machine()}; a shared, loaded 2-core machine. 8 Wikipedia articles ingested as 8 documents "
            f"({len(desk.chunks())} chunks); {size}, each asked against the whole collection with `Desk.ask` and "
            f"{'the settings of ' + str(args.config) if args.config else 'the default settings'} (hybrid BM25 + "
            "MiniLM, k=5, cross-encoder rerank of 10 candidates unless the settings say otherwise, extractive "
            "generator). Fit split: articles at even "
            "positions (used by `scripts/fit_answerability.py`); held-out: the other four, never seen by the fit.\n\n"
            f"{text}\n\nEvery unit of the collection was embedded once before the first question "
            f"(`ExtractiveGenerator.warm`, {warm_s:.0f} s; read back from --work when saved by an earlier run), "
            "so every ask above is warm.\n"
            f"Warm `ask` p50 (the same {len(warm)} questions asked again): {warm_p50:.0f} ms (target <= 60 ms).\n"
            f"{model_line()}\n"
        )  # fmt: skip
        write_section(args.results, SECTION, section)
        log(f"wrote its section of {args.results}")
    return 0


def compare(args: argparse.Namespace, argv: list[str] | None, desk: Any, chosen: list[Question]) -> int:
    """Ask ``chosen`` once per extractive mode (``--answerability``) on the same store; one column each."""
    from evidencedesk.config import override

    modes = [m.strip() for m in args.answerability.split(",") if m.strip()]
    results: dict[str, dict[str, Any]] = {}
    curves: dict[str, dict[str, Any]] = {}
    latency: dict[str, float] = {}
    dumped: list[dict[str, Any]] = []
    for mode in modes:
        desk.reconfigure(override(desk.settings, **{"generator.answerability": mode}))
        warm_units(desk.generator(), desk.chunks(), args.work)
        desk.ask("warm up", save=False)
        log(f"{mode}: asking {len(chosen)} questions")
        outcomes = run(desk, chosen)
        results[mode] = summarise(outcomes)
        if any(o.reader_score is not None for o in outcomes):
            curves[mode] = selective_curve(outcomes)
        warm = run(desk, chosen[: args.warm]) if args.warm else []
        latency[mode] = 1000 * statistics.median([o.seconds for o in warm]) if warm else 0.0
        dumped += [
            {"mode": mode, "id": o.q.id, "question": o.q.question, "gold": o.q.answers, "impossible": o.q.impossible,
             "title": o.q.title, "answer": o.answer, "abstained": o.abstained, "details": o.details}
            for o in outcomes
        ]  # fmt: skip
    text = table(results)
    notes = [f"warm ask p50, {m}: {latency[m]:.0f} ms" for m in modes if latency[m]]
    for mode, sel in curves.items():
        found = sel.get("suggested_threshold") or {}
        notes.append(
            f"{mode}: coverage {sel['coverage']:.3f}, accuracy among answered {sel['accuracy_answered']:.3f}, "
            f"answered but wrong {sel['answered_wrong']} ({sel['answered_unanswerable']} unanswerable); "
            f"suggested threshold {found.get('threshold')} ({found.get('rule', '')})"
        )
        points = [f"{p['threshold']:.2f}: {p['coverage']:.2f}/{(p['risk'] or 0):.2f}" for p in _thin(sel["curve"])]
        notes.append(f"{mode} risk-coverage (threshold: coverage/risk): " + ", ".join(points))
    print(text)
    print("\n".join(notes))
    if args.dump:
        with args.dump.open("w", encoding="utf-8") as f:
            f.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in dumped)
    if not args.no_append:
        command = "PYTHONPATH=src .venv/bin/python bench/squad2.py " + " ".join(
            shlex.quote(a) for a in (argv or sys.argv[1:])
        )
        section = (
            f"{READER_SECTION} ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)\n\n`{command}`\n\n"
            f"{machine()}; a shared, loaded 2-core machine. The same {len(chosen)} questions (seed {args.seed}) "
            f"of {_articles(args.articles)} asked with `Desk.ask` and the default settings, once per "
            f"`generator.answerability` mode: {', '.join(modes)}.\n\n{text}\n\n"
            + "\n".join(f"- {n}" for n in notes) + "\n"
        )  # fmt: skip
        write_section(args.results, READER_SECTION, section)
        log(f"wrote its section of {args.results}")
    return 0


def _articles(chosen: str) -> str:
    if chosen == "reader":
        return f"the articles the reader was not trained on ({', '.join(READER_HELDOUT)})"
    return chosen or "every article"


def _thin(curve: list[dict[str, Any]], points: int = 8) -> list[dict[str, Any]]:
    """About ``points`` points of ``curve``, evenly spread over it."""
    if len(curve) <= points:
        return curve
    step = (len(curve) - 1) / (points - 1)
    return [curve[round(i * step)] for i in range(points)]


if __name__ == "__main__":
    sys.exit(main())
