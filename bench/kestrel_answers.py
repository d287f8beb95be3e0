"""The example corpus's labelled questions answered by ``Desk.ask``: gold phrase in the answer, abstentions.

    PYTHONPATH=src .venv/bin/python bench/kestrel_answers.py --work /tmp/kestrel-answers

The example's documents are ingested into a store under --work and every label of
``examples/kestrel/labels.jsonl`` is asked with the default settings, once per extractive mode
(``--answerability``, default ``reader,embeddings``: the reader and the answerability model it
replaces). An answerable question counts when its answer holds one of its grade-2 evidence phrases
(case and spacing aside); an unanswerable one when the answer abstains. The README's questions are
asked too and printed with their answers. Prints a table and replaces its section of bench/RESULTS.md
(--no-append to skip).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from machine_info import machine, write_section

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "kestrel"
SECTION = "## Example corpus answers: the reader against the answerability model"
SHOWN = (
    "can I return a bike after five weeks",
    "What is the warranty on components?",
    "How long is the warranty on frames?",
)


def squash(text: str) -> str:
    return " ".join(text.lower().split())


def holds_gold(answer: str, label: dict[str, Any]) -> bool:
    have = squash(answer)
    return any(squash(g["evidence"]) in have for g in label["gold"] if g.get("grade", 2) == 2)


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    from evidencedesk.config import override
    from evidencedesk.desk import Desk

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/evidencedesk-kestrel-answers"))
    ap.add_argument("--answerability", default="reader,embeddings", help="extractive modes side by side")
    ap.add_argument("--results", type=Path, default=REPO / "bench" / "RESULTS.md")
    ap.add_argument("--no-append", action="store_true")
    ap.add_argument("--dump", type=Path, help="write each question's answer as JSON lines")
    ap.add_argument("--reader-threshold", type=float, help="generator.reader.threshold (default: the reader's)")
    args = ap.parse_args(argv)

    labels = [json.loads(line) for line in (EXAMPLE / "labels.jsonl").read_text(encoding="utf-8").splitlines() if line]
    desk = Desk(args.work / "store")
    if not desk.chunks():
        desk.ingest(EXAMPLE / "docs")
    modes = [m.strip() for m in args.answerability.split(",") if m.strip()]
    rows: dict[str, dict[str, Any]] = {}
    shown: dict[str, list[str]] = {}
    dumped: list[dict[str, Any]] = []
    for mode in modes:
        changes = {"generator.answerability": mode, "generator.reader.threshold": args.reader_threshold}
        desk.reconfigure(override(desk.settings, **changes))
        log(f"{mode}: asking {len(labels)} labels")
        held, refused, wrong_refused = [], [], []
        for label in labels:
            result = desk.ask(label["question"], save=False)
            answer, abstained = result.answer, result.abstained
            dumped.append(
                {"mode": mode, "id": label["id"], "answerable": label["answerable"], "answer": answer,
                 "abstained": abstained, "holds_gold": label["answerable"] and holds_gold(answer, label),
                 "details": result.get("generation", {})}
            )  # fmt: skip
            if label["answerable"]:
                if not abstained and holds_gold(answer, label):
                    held.append(label["id"])
                if abstained:
                    wrong_refused.append(label["id"])
            elif abstained:
                refused.append(label["id"])
        n_yes = sum(lab["answerable"] for lab in labels)
        rows[mode] = {
            "gold phrase in the answer (answerable)": f"{len(held)}/{n_yes}",
            "answerable refused": f"{len(wrong_refused)}/{n_yes}",
            "unanswerable abstained": f"{len(refused)}/{len(labels) - n_yes}",
        }
        shown[mode] = [" ".join(desk.ask(q, save=False).answer.split()) for q in SHOWN]
    lines = ["| measure | " + " | ".join(modes) + " | target |", "|---|" + "---:|" * len(modes) + "---|"]
    targets = {"gold phrase in the answer (answerable)": ">= 30/35", "unanswerable abstained": "7/7"}
    for measure in next(iter(rows.values())):
        cells = " | ".join(rows[m][measure] for m in modes)
        lines.append(f"| {measure} | {cells} | {targets.get(measure, '')} |")
    asked = [f"- {mode}, \u201c{q}\u201d: {a}" for mode in modes for q, a in zip(SHOWN, shown[mode], strict=True)]
    text = "\n".join(lines)
    print(text)
    print("\n".join(asked))
    if args.dump:
        args.dump.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in dumped), encoding="utf-8")
    if not args.no_append:
        command = "PYTHONPATH=src .venv/bin/python bench/kestrel_answers.py " + " ".join(
            shlex.quote(a) for a in (argv or sys.argv[1:])
        )
        section = (
            f"{SECTION} ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)\n\n`{command}`\n\n{machine()}. "
            f"The {len(labels)} labels of `examples/kestrel/labels.jsonl`, asked with `Desk.ask` and the default "
            f"settings, once per `generator.answerability` mode. The example is not used to tune the reader "
            f"or its threshold.\n\n{text}\n\n" + "\n".join(asked) + "\n\n"
        )
        write_section(args.results, SECTION, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
