"""The reader: a cross-encoder that scores (question, unit) for "this unit answers the question".

A reader is a folder holding ``model.onnx`` (inputs ``input_ids``, ``attention_mask`` and optionally
``token_type_ids``; output ``logits`` of shape [batch, 1]), ``tokenizer.json`` and, optionally,
``reader.json`` with ``max_length`` (tokens per pair) and ``threshold`` (the score from which a unit
reads as an answer, calibrated on held-out development questions). The folder is the setting
``generator.reader.model``; by default the package's own reader (``evidencedesk/models/reader``), or,
when that is not installed, the bundled ms-marco cross-encoder, which has the same signature.

The ONNX session is the cross-encoder's (``retrieval.rerank.onnx_cross_encoder``): one per folder and
process, shared with the reranker when both name the same folder. A missing or unreadable file raises
``ReaderUnavailable`` naming the file and the setting.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from evidencedesk.errors import ConfigError

SETTING = "generator.reader.model"
CARD_FILE = "reader.json"
SHIPPED = ("models", "reader")  # inside the evidencedesk package
DEFAULT_MAX_LENGTH = 128
# the bundled ms-marco cross-encoder has no reader.json: its threshold (a logit) is the one that refuses 15% of the
# answerable questions of the held-out squad2-dev articles (1973_oil_crisis, Scottish_Parliament), each question
# scored against the sentences of its own paragraph, as scripts/train_reader.py calibrates the package's reader
BUNDLED_THRESHOLD = 4.168


class ReaderUnavailable(ConfigError):
    """The reader's folder or one of its files is missing or cannot be read (the message names both)."""


@dataclass(frozen=True)
class ReaderCard:
    """What ``reader.json`` says: the tokens per pair and the calibrated threshold."""

    max_length: int = DEFAULT_MAX_LENGTH
    threshold: float = BUNDLED_THRESHOLD
    name: str = ""

    @classmethod
    def read(cls, path: Path) -> ReaderCard:
        """The card in ``path``; ``ReaderUnavailable`` naming the file and the setting when it is bad."""
        where = f"{SETTING}: {path}"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise ReaderUnavailable(f"{where} cannot be read: {exc}") from None
        except json.JSONDecodeError as exc:
            raise ReaderUnavailable(f"{where} is not valid JSON ({exc.msg} at line {exc.lineno})") from None
        if not isinstance(data, dict):
            raise ReaderUnavailable(f"{where} must hold a JSON object")
        max_length, threshold = data.get("max_length", DEFAULT_MAX_LENGTH), data.get("threshold", BUNDLED_THRESHOLD)
        if isinstance(max_length, bool) or not isinstance(max_length, int) or not 8 <= max_length <= 512:
            raise ReaderUnavailable(f"{where}: max_length must be an integer between 8 and 512, got {max_length!r}")
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not math.isfinite(threshold):
            raise ReaderUnavailable(f"{where}: threshold must be a finite number, got {threshold!r}")
        return cls(max_length, float(threshold), str(data.get("name", "")))


def shipped_folder() -> Path:
    """Where the package's own reader lives (it may not be installed)."""
    return Path(str(resources.files("evidencedesk"))).joinpath(*SHIPPED)


def default_folder() -> Path:
    """The package's reader when installed, else the bundled ms-marco cross-encoder's folder."""
    from evidencedesk.retrieval.rerank.onnx_cross_encoder import CrossEncoderUnavailable, bundled_folder, is_onnx_folder

    shipped = shipped_folder()
    if is_onnx_folder(shipped):
        return shipped
    try:
        return bundled_folder()
    except CrossEncoderUnavailable as exc:
        raise ReaderUnavailable(f"{SETTING}: no reader is installed ({shipped} is empty) and {exc}") from None


class Reader:
    """Scores (question, unit) pairs with the reader in ``folder`` (None: ``default_folder()``).

    ``threshold`` (None: the card's) is the score from which a unit reads as answering.
    """

    def __init__(self, folder: str | Path | None = None, threshold: float | None = None) -> None:
        from evidencedesk.retrieval.rerank.onnx_cross_encoder import CrossEncoderUnavailable, load_cross_encoder

        self.folder = Path(folder) if folder is not None else default_folder()
        if not self.folder.is_dir():
            raise ReaderUnavailable(f"{SETTING}: {self.folder} is not a folder holding a reader")
        card_path = self.folder / CARD_FILE
        self.card = ReaderCard.read(card_path) if card_path.is_file() else ReaderCard(name=self.folder.name)
        if threshold is not None and not math.isfinite(threshold):
            raise ValueError(f"generator.reader.threshold: must be a finite number, got {threshold}")
        self.threshold = self.card.threshold if threshold is None else float(threshold)
        try:
            self.model: Any = load_cross_encoder(self.folder, setting=SETTING)
        except CrossEncoderUnavailable as exc:
            raise ReaderUnavailable(str(exc)) from None
        except (ImportError, OSError) as exc:
            raise ReaderUnavailable(f"{SETTING}: the reader in {self.folder} cannot run: {exc}") from None
        self.name = self.card.name or self.folder.name

    @property
    def max_length(self) -> int:
        return self.card.max_length

    def scores(self, question: str, units: Sequence[str]) -> list[float]:
        """The reader's score of each ``(question, unit)`` pair, in order (batched by length)."""
        scored: list[float] = self.model.scores(question, list(units), self.max_length)
        return scored

    def answers(self, score: float) -> bool:
        """True when ``score`` reaches the threshold."""
        return score >= self.threshold


_READERS: dict[tuple[Path, float | None], Reader] = {}


def load_reader(folder: str | Path | None = None, threshold: float | None = None) -> Reader:
    """The process's reader for ``folder`` and ``threshold`` (the session itself is shared per folder)."""
    path = (Path(folder) if folder is not None else default_folder()).resolve()
    key = (path, threshold)
    if key not in _READERS:
        _READERS[key] = Reader(path, threshold)
    return _READERS[key]


__all__ = [
    "BUNDLED_THRESHOLD",
    "CARD_FILE",
    "SETTING",
    "Reader",
    "ReaderCard",
    "ReaderUnavailable",
    "default_folder",
    "load_reader",
    "shipped_folder",
]
