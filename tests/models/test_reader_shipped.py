"""The reader shipped inside the package: its files are there, it loads with ONNX Runtime, it has the
cross-encoder's signature, and it ranks an obvious answer above an unrelated sentence."""

from __future__ import annotations

import json
import math
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest

FOLDER = Path(str(files("evidencedesk"))) / "models" / "reader"


def _scores(question: str, units: list[str]) -> list[float]:
    import onnxruntime as ort
    from tokenizers import Tokenizer

    reader = json.loads((FOLDER / "reader.json").read_text(encoding="utf-8"))
    tokenizer = Tokenizer.from_file(str(FOLDER / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(reader["max_length"], strategy="longest_first")
    session = ort.InferenceSession(str(FOLDER / "model.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["input_ids", "attention_mask", "token_type_ids"]
    assert [o.name for o in session.get_outputs()] == ["logits"]
    encoded = tokenizer.encode_batch([(question, u) for u in units])
    width = max(len(e.ids) for e in encoded)
    feed = {
        name: np.zeros((len(units), width), dtype=np.int64)
        for name in ("input_ids", "attention_mask", "token_type_ids")
    }
    for row, e in enumerate(encoded):
        feed["input_ids"][row, : len(e.ids)] = e.ids
        feed["attention_mask"][row, : len(e.ids)] = 1
        feed["token_type_ids"][row, : len(e.ids)] = e.type_ids
    (logits,) = session.run(["logits"], feed)
    assert logits.shape == (len(units), 1)
    return [float(x) for x in logits[:, 0]]


def test_reader_files_ship_with_the_package() -> None:
    assert {"model.onnx", "tokenizer.json", "reader.json", "MODEL_CARD.md"} <= {p.name for p in FOLDER.iterdir()}
    reader = json.loads((FOLDER / "reader.json").read_text(encoding="utf-8"))
    assert reader["score"] == "logit" and 16 <= reader["max_length"] <= 512
    assert isinstance(reader["threshold"], float) and math.isfinite(reader["threshold"])
    assert (FOLDER / "model.onnx").stat().st_size < 40_000_000


def test_reader_ranks_the_answer_above_an_unrelated_sentence() -> None:
    pytest.importorskip("onnxruntime")
    question = "How long is the warranty on frames?"
    answer, unrelated = (
        "Frames are covered by a lifetime warranty for the original owner.",
        "Our shop in Leeds opens at nine on weekdays.",
    )
    scores = _scores(question, [answer, unrelated])
    assert scores[0] > scores[1] + 3
    reader = json.loads((FOLDER / "reader.json").read_text(encoding="utf-8"))
    assert reader["threshold"] > scores[1]  # the unrelated sentence is refused


def test_capital_question_prefers_the_sentence_that_answers_it() -> None:
    pytest.importorskip("onnxruntime")
    question = "What is the capital of France?"
    scores = _scores(question, ["Paris is the capital of France.", "Berlin is the capital of Germany."])
    reader = json.loads((FOLDER / "reader.json").read_text(encoding="utf-8"))
    assert scores[0] >= reader["threshold"] > scores[1]
