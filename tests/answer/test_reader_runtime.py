"""The reader runtime: loads a reader folder, scores (question, unit) pairs, names the bad file and the setting."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evidencedesk.answer.generators.extractive import ExtractiveGenerator
from evidencedesk.answer.reader import CARD_FILE, Reader, ReaderCard, ReaderUnavailable, default_folder, load_reader
from evidencedesk.config import Settings, override
from evidencedesk.desk import Desk
from evidencedesk.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def copy_reader(to: Path) -> Path:
    to.mkdir()
    for name in ("model.onnx", "tokenizer.json"):
        shutil.copy(default_folder() / name, to / name)
    return to


def test_the_default_reader_scores_the_answering_unit_highest_in_order() -> None:
    reader = load_reader()
    units = ["Berlin is the capital of Germany.", "Paris is the capital of France.", "France grows wine."]
    scores = reader.scores("What is the capital of France?", units)
    assert len(scores) == 3 and max(range(3), key=lambda i: scores[i]) == 1
    assert reader.scores("What is the capital of France?", list(reversed(units)))[1] == pytest.approx(
        scores[1], abs=0.3
    )
    assert load_reader() is reader and reader.max_length >= 8


def test_reader_json_sets_the_threshold_and_tokens_and_a_setting_overrides_it(tmp_path: Path) -> None:
    folder = copy_reader(tmp_path / "reader")
    (folder / CARD_FILE).write_text(json.dumps({"max_length": 64, "threshold": 1.25, "name": "mine"}))
    reader = Reader(folder)
    assert (reader.max_length, reader.threshold, reader.name) == (64, 1.25, "mine")
    assert Reader(folder, threshold=-2.0).threshold == -2.0
    assert reader.answers(1.25) and not reader.answers(1.2)


@pytest.mark.parametrize(
    ("card", "says"),
    [
        ("{not json", r"reader\.json is not valid JSON"),
        ('{"max_length": 4}', r"max_length must be an integer between 8 and 512"),
        ('{"threshold": "high"}', r"threshold must be a finite number"),
        ("[1, 2]", r"must hold a JSON object"),
    ],
)
def test_a_bad_reader_json_names_the_file_and_the_setting(tmp_path: Path, card: str, says: str) -> None:
    path = tmp_path / CARD_FILE
    path.write_text(card)
    with pytest.raises(ReaderUnavailable, match=rf"generator\.reader\.model: .*{says}"):
        ReaderCard.read(path)


def test_a_missing_or_corrupt_model_file_names_the_file_and_the_setting(tmp_path: Path) -> None:
    folder = copy_reader(tmp_path / "broken")
    (folder / "model.onnx").write_bytes(b"not an onnx graph")
    with pytest.raises(ReaderUnavailable, match=r"generator\.reader\.model: .*broken/model\.onnx is not a readable"):
        Reader(folder)
    (folder / "tokenizer.json").unlink()
    with pytest.raises(ReaderUnavailable, match=r"generator\.reader\.model: .*tokenizer\.json is missing"):
        Reader(folder)
    with pytest.raises(ReaderUnavailable, match=r"generator\.reader\.model: .*nowhere is not a folder"):
        Reader(tmp_path / "nowhere")
    assert issubclass(ReaderUnavailable, ConfigError)


def test_ask_with_a_broken_reader_raises_a_config_error_naming_it(tmp_path: Path) -> None:
    folder = copy_reader(tmp_path / "bad-reader")
    (folder / "model.onnx").write_bytes(b"still not a graph")
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(ROOT / "examples" / "kestrel" / "docs" / "returns-v3.md", docs / "returns-v3.md")
    settings = override(
        Settings(), **{"retrieval.legs": [{"method": "bm25"}], "retrieval.rerank.method": "none",
                       "generator.answerability": "reader", "generator.reader.model": str(folder)}
    )  # fmt: skip
    with Desk(tmp_path / "store", settings) as desk:
        desk.ingest(docs)
        with pytest.raises(ConfigError, match=r"generator\.reader\.model: .*bad-reader.*model\.onnx"):
            desk.ask("How many days do I have to return an item?", save=False)


def test_the_generator_takes_the_reader_settings() -> None:
    with pytest.raises(ValueError, match="generator.reader.max_words"):
        ExtractiveGenerator(max_words=0)
    with pytest.raises(ValueError, match="generator.answerability"):
        ExtractiveGenerator(reader="oracle")
