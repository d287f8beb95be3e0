"""scripts/train_reader.py on a tiny sample: it trains, resumes, and exports an int8 ONNX reader that
scores a question's answer sentence above its other sentences once it has overfitted them."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("onnx")

QUESTION = "When did the Kestrel lighthouse open?"
ANSWER = "The Kestrel lighthouse opened in 1872 after six years of work."
OTHER = "Its lamp was converted to electricity much later."


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("train_reader", REPO / "scripts" / "train_reader.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _paragraph(context: str, qas: list[tuple[str, str | None]]) -> dict[str, object]:
    out = []
    for n, (question, answer) in enumerate(qas):
        if answer is None:
            out.append({"id": f"q{n}", "question": question, "answers": [], "is_impossible": True})
        else:
            start = context.index(answer)
            out.append({"id": f"q{n}", "question": question, "is_impossible": False,
                        "answers": [{"text": answer, "answer_start": start}]})  # fmt: skip
    return {"context": context, "qas": out}


def _squad(path: Path) -> None:
    train = {
        "title": "Lighthouse",
        "paragraphs": [
            _paragraph(
                f"{ANSWER} {OTHER} Visitors climb 120 steps to the gallery.",
                [(QUESTION, "1872"), ("How many steps lead to the gallery?", "120"),
                 ("Who painted the lighthouse in 1990?", None)],
            ),
            _paragraph(
                "The harbour freezes in hard winters. Fishing boats moved to Wexport in 1901.",
                [("Where did the fishing boats move?", "Wexport"), ("What freezes in hard winters?", "The harbour")],
            ),
        ],
    }  # fmt: skip
    held = {
        "title": "Harbour",
        "paragraphs": [
            _paragraph(
                "The pier was rebuilt in 1955. A ferry crosses to the island twice a day.",
                [("When was the pier rebuilt?", "1955"), ("Who owns the ferry?", None)],
            )
        ],
    }
    path.write_text(json.dumps({"version": "v2.0", "data": [train, held]}), encoding="utf-8")


def _labels(folder: Path) -> tuple[Path, Path]:
    docs = folder / "docs"
    docs.mkdir()
    (docs / "hours.md").write_text(
        "# Opening hours\n\nThe museum opens at nine every morning. Entry is free on Sundays.\n", encoding="utf-8"
    )
    labels = folder / "labels.jsonl"
    rows = [
        {"id": "a1", "question": "When does the museum open?", "answerable": True,
         "gold": [{"evidence": "The museum opens at nine every morning.", "grade": 2}]},
        {"id": "a2", "question": "Which day is entry free?", "answerable": True,
         "gold": [{"evidence": "Entry is free on Sundays.", "grade": 2}]},
    ]  # fmt: skip
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return labels, docs


@pytest.mark.slow
def test_tiny_training_run_exports_a_reader_that_learned_its_pairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import onnxruntime as ort
    from tokenizers import Tokenizer

    script = _script()
    squad = tmp_path / "squad.json"
    _squad(squad)
    labels, docs = _labels(tmp_path)
    out, work = tmp_path / "reader", tmp_path / "work"
    argv = [
        "--work", str(work), "--squad", str(squad), "--holdout", "Harbour", "--labels", str(labels),
        "--docs", str(docs), "--base", "minilm", "--steps", "30", "--batch-size", "8", "--lr", "1e-4",
        "--eval-every", "30", "--max-length", "64", "--out", str(out),
    ]  # fmt: skip
    assert script.main(argv) == 0
    assert {"model.onnx", "tokenizer.json", "reader.json"} <= {p.name for p in out.iterdir()}
    curve = (work / "validation.tsv").read_text(encoding="utf-8").splitlines()
    assert curve[0].startswith("step\t") and curve[-1].startswith("30\t")

    reader = json.loads((out / "reader.json").read_text(encoding="utf-8"))
    assert reader["max_length"] == 64 and reader["held_out"] == ["Harbour"]
    session = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["input_ids", "attention_mask", "token_type_ids"]
    tokenizer = Tokenizer.from_file(str(out / "tokenizer.json"))
    scores = []
    for unit in (ANSWER, OTHER):
        e = tokenizer.encode(QUESTION, unit)
        feed = {
            "input_ids": np.array([e.ids], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids], dtype=np.int64),
        }
        (logits,) = session.run(["logits"], feed)
        assert logits.shape == (1, 1)
        scores.append(float(logits[0, 0]))
    assert scores[0] > scores[1]

    # the same command again finds the finished checkpoint and continues from it (no step left to do)
    capsys.readouterr()
    assert script.main(argv) == 0
    assert "resumed at step 30" in capsys.readouterr().out


def test_bad_arguments_are_named(tmp_path: Path) -> None:
    script = _script()
    with pytest.raises(SystemExit):
        script.main(["--work", str(tmp_path)])  # no data at all
    squad = tmp_path / "squad.json"
    _squad(squad)
    with pytest.raises(SystemExit, match="--holdout: no article titled Atlantis"):
        script.main(["--work", str(tmp_path / "w"), "--squad", str(squad), "--holdout", "Atlantis"])


def test_swapped_question_replaces_a_held_word_with_one_the_sentence_lacks() -> None:
    import random

    script = _script()
    pool = script._swap_pool("The tower opened in 1872. Repairs followed in 1901, and Wexport grew.")
    assert pool == {"year": ["1872", "1901"], "name": ["Wexport"]}  # "The" and "Repairs" start sentences
    rng = random.Random(0)
    assert script.swapped_question(QUESTION, ANSWER, pool, rng) == "When did the Wexport lighthouse open?"
    assert script.swapped_question("What opened in 1872?", ANSWER, pool, rng) == "What opened in 1901?"
    assert script.swapped_question("What opened in 1999?", ANSWER, pool, rng) is None  # nothing held to swap
