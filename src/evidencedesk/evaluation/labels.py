"""Labels: hand-written questions with evidence phrases copied from the documents.

A label never names a chunk id (a new chunker would break it). A chunk's grade for a label is the
best grade among the label's gold phrases that sit whole in the chunk's text together with all
their ``with`` companions (a table row needs its header). Texts are compared in
``text.match.match_form``: table pipes, Markdown marks, whitespace and line breaks do not count, so
"Dinner 50 EUR" is found in "| Dinner | 50 EUR |"; a phrase never matches part of a number ("969"
is not in "1,969").

A label may name its document (``doc``: a document id or a source path), and so may a single gold
phrase (its own ``doc`` wins): then only chunks of that document hold the phrase. Short evidence such
as a figure ("969") needs this anchor, or any filing stating the figure would count.

``labels.jsonl`` holds one JSON object per line: ``id``, ``question``, ``answerable``, ``gold`` (a list
of ``{"evidence", "grade", "with", "doc"}``), and optional ``tags``, ``doc``, ``answer`` and ``reason``.

Tags are free-form strings chosen by whoever writes the labels (``paraphrase``, ``de``, ``billing``...):
evaluation computes a slice for every tag that appears. One tag has a meaning of its own:
``unanswerable`` must not sit on an answerable label. A field this reader does not know is a
warning (``LabelSet.warnings``), never a reason to drop the label: a labels file may carry notes of
its own.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import NotRequired, TypedDict

from evidencedesk.documents import Chunk
from evidencedesk.errors import LabelError
from evidencedesk.text.match import holds_phrase, match_form, names_document

# Tags seen in the bundled example labels, listed first in slice tables; any other tag is just as valid.
TAGS = ("exact_term", "paraphrase", "bangla", "structured", "stale", "staff", "unanswerable", "multi")
UNANSWERABLE_TAG = "unanswerable"
GRADES = (1, 2)
_LABEL_KEYS = {"id", "question", "tags", "answerable", "gold", "answer", "reason", "doc"}
_REQUIRED = ("id", "question", "answerable", "gold")  # tags, doc, answer and reason may be left out
_GOLD_KEYS = {"evidence", "grade", "with", "section", "doc"}


def chunk_text(chunk_or_text: Chunk | str) -> str:
    """The text a label is checked against: a parent-child chunk's parent text (what the model reads)."""
    if isinstance(chunk_or_text, str):
        return chunk_or_text
    return chunk_or_text.parent_text or chunk_or_text.text


# A Gold phrase as a labels file writes it (``doc`` only when the phrase names its own document);
# the functional form because "with" is a keyword.
GoldDict = TypedDict("GoldDict", {"evidence": str, "grade": int, "with": list[str], "doc": NotRequired[str]})


class LabelDict(TypedDict):
    """A Label as a labels file writes it (``doc`` only when the label names a document)."""

    id: str
    question: str
    tags: list[str]
    answerable: bool
    gold: list[GoldDict]
    answer: str
    reason: str
    doc: NotRequired[str]


@dataclass(frozen=True)
class Gold:
    """One evidence phrase: grade 2 answers the question, grade 1 is useful context."""

    evidence: str
    grade: int
    with_: tuple[str, ...] = ()
    doc: str = ""  # the document (id or source path) the phrase must come from; empty: any

    def __post_init__(self) -> None:
        if not isinstance(self.evidence, str) or not match_form(self.evidence):
            raise ValueError("gold evidence: must be a non-empty string, more than formatting marks")
        if isinstance(self.grade, bool) or self.grade not in GRADES:
            raise ValueError(f"gold grade: must be 1 or 2, got {self.grade!r}")
        object.__setattr__(self, "with_", tuple(self.with_))
        if any(not isinstance(w, str) or not match_form(w) for w in self.with_):
            raise ValueError("gold with: every companion phrase must be a non-empty string, more than formatting marks")
        if not isinstance(self.doc, str):
            raise ValueError(f"gold doc: must be a string, got {type(self.doc).__name__}")

    @cached_property
    def needles(self) -> tuple[str, ...]:
        """The phrase and its companions in ``match_form`` (no pipes, Markdown marks or whitespace runs)."""
        return tuple(match_form(p) for p in (self.evidence, *self.with_))

    def held_by(self, chunk_or_text: Chunk | str) -> bool:
        """True when the phrase and all its companions sit whole in the text (of the named document,
        when the phrase names one: a bare text, which names no document, is then only read)."""
        if self.doc and isinstance(chunk_or_text, Chunk) and not self.from_document(chunk_or_text):
            return False
        text = match_form(chunk_text(chunk_or_text))
        return all(holds_phrase(text, n) for n in self.needles)

    def from_document(self, chunk: Chunk) -> bool:
        """Whether ``chunk`` comes from the document the phrase names (any, when it names none)."""
        return not self.doc or names_document(self.doc, chunk.doc_id, chunk.source)

    def to_dict(self, inherited: str = "") -> GoldDict:
        """The phrase as JSON; ``doc`` is left out when empty or when it is the label's own (``inherited``)."""
        out: GoldDict = {"evidence": self.evidence, "grade": self.grade, "with": list(self.with_)}
        if self.doc and self.doc != inherited:
            out["doc"] = self.doc
        return out


@dataclass(frozen=True)
class Label:
    id: str
    question: str
    tags: tuple[str, ...]
    answerable: bool
    gold: tuple[Gold, ...] = ()
    answer: str = ""
    reason: str = ""
    doc: str = ""  # the document (id or source path) the evidence comes from; each gold phrase inherits it

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip():
            raise ValueError("label id: must be a non-empty string")
        if not isinstance(self.question, str) or not self.question.strip():
            raise ValueError(f"label {self.id} question: must be a non-empty string")
        object.__setattr__(self, "tags", tuple(self.tags))
        if not isinstance(self.doc, str):
            raise ValueError(f"label {self.id} doc: must be a string, got {type(self.doc).__name__}")
        inherit = self.doc.strip()
        object.__setattr__(self, "gold", tuple(replace(g, doc=inherit) if inherit and not g.doc else g
                                               for g in self.gold))  # fmt: skip
        if any(not isinstance(t, str) or not t.strip() for t in self.tags):
            raise ValueError(f"label {self.id} tags: every tag must be a non-empty string, got {list(self.tags)!r}")
        if self.answerable and not any(g.grade == 2 for g in self.gold):
            raise ValueError(f"label {self.id} gold: an answerable label needs at least one grade-2 phrase")
        if not self.answerable and self.gold:
            raise ValueError(f"label {self.id} gold: an unanswerable label must have no gold phrases")

    @property
    def answers(self) -> tuple[Gold, ...]:
        """The grade-2 phrases: each one is part of the answer."""
        return tuple(g for g in self.gold if g.grade == 2)

    def grade_of(self, chunk_or_text: Chunk | str) -> int:
        """The best grade among the gold phrases held whole by the chunk (0 when none is)."""
        return max((g.grade for g in self.gold if g.held_by(chunk_or_text)), default=0)

    def qrels(self, chunks: Iterable[Chunk]) -> dict[str, int]:
        """``{chunk id: grade}`` for every chunk with a grade of at least 1."""
        out: dict[str, int] = {}
        for c in chunks:
            grade = self.grade_of(c)
            if grade:
                out[c.id] = grade
        return out

    def to_dict(self) -> LabelDict:
        out: LabelDict = {
            "id": self.id,
            "question": self.question,
            "tags": list(self.tags),
            "answerable": self.answerable,
            # the phrases that inherited the label's document say so through the label alone
            "gold": [g.to_dict(inherited=self.doc) for g in self.gold],
            "answer": self.answer,
            "reason": self.reason,
        }
        if self.doc:
            out["doc"] = self.doc
        return out


@dataclass(frozen=True)
class LabelIssue:
    """One problem in a labels file: where it is and which field is wrong."""

    path: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.field}: {self.message}"


@dataclass
class LabelSet:
    """What reading a labels file found: the good labels and the issues of the bad lines."""

    labels: list[Label] = field(default_factory=list)
    issues: list[LabelIssue] = field(default_factory=list)
    warnings: list[LabelIssue] = field(default_factory=list)  # unknown fields: reported, label kept


class _Line:
    """Checks one parsed line, collecting issues instead of stopping at the first."""

    def __init__(self, path: str, line: int, obj: Mapping[str, object]) -> None:
        self.path, self.line, self.obj = path, line, obj
        self.issues: list[LabelIssue] = []
        self.warnings: list[LabelIssue] = []

    def bad(self, name: str, message: str) -> None:
        self.issues.append(LabelIssue(self.path, self.line, name, message))

    def warn(self, name: str, message: str) -> None:
        self.warnings.append(LabelIssue(self.path, self.line, name, message))

    def string(self, name: str, required: bool) -> str:
        value = self.obj.get(name, None if required else "")
        if value is None:
            self.bad(name, "missing")
            return ""
        if not isinstance(value, str):
            self.bad(name, f"must be a string, got {type(value).__name__}")
            return ""
        if required and not value.strip():
            self.bad(name, "must not be empty")
        return value

    def tags(self) -> tuple[str, ...]:
        value = self.obj.get("tags")
        if value is None:  # optional: a label without tags counts in the overall figures only
            return ()
        if not isinstance(value, list) or any(not isinstance(t, str) or not t.strip() for t in value):
            self.bad("tags", "must be a list of non-empty strings")
            return ()
        return tuple(dict.fromkeys(t.strip() for t in value))

    def gold(self) -> tuple[Gold, ...]:
        value = self.obj.get("gold")
        if value is None:
            self.bad("gold", "missing")
            return ()
        if not isinstance(value, list):
            self.bad("gold", f"must be a list, got {type(value).__name__}")
            return ()
        out: list[Gold] = []
        for n, item in enumerate(value):
            where = f"gold[{n}]"
            if not isinstance(item, dict):
                self.bad(where, f"must be an object, got {type(item).__name__}")
                continue
            for key in sorted(set(item) - _GOLD_KEYS):
                self.warn(f"{where}.{key}", f"unknown field, ignored; known: {', '.join(sorted(_GOLD_KEYS))}")
            evidence, grade, with_ = item.get("evidence"), item.get("grade"), item.get("with", [])
            doc = item.get("doc", "")
            ok = True
            if not isinstance(evidence, str) or not evidence.strip():
                self.bad(f"{where}.evidence", "missing" if evidence is None else "must be a non-empty string")
                ok = False
            elif not match_form(evidence):
                self.bad(f"{where}.evidence", "holds only formatting marks (pipes, #, *, _): nothing to match")
                ok = False
            if isinstance(grade, bool) or grade not in GRADES:
                self.bad(f"{where}.grade", "missing" if grade is None else f"must be 1 or 2, got {grade!r}")
                ok = False
            if not isinstance(with_, list) or any(not isinstance(w, str) or not match_form(w) for w in with_):
                self.bad(f"{where}.with", "must be a list of non-empty strings (more than formatting marks)")
                ok = False
            if not isinstance(doc, str) or ("doc" in item and not doc.strip()):
                self.bad(f"{where}.doc", "must be a non-empty string: a document id or source path")
                ok = False
            if ok and isinstance(evidence, str) and isinstance(grade, int) and isinstance(doc, str):
                out.append(Gold(evidence, grade, tuple(with_), doc.strip()))
        return tuple(out)

    def label(self) -> Label | None:
        for key in sorted(set(self.obj) - _LABEL_KEYS):
            self.warn(key, f"unknown field, ignored; known: {', '.join(sorted(_LABEL_KEYS))}")
        id_ = self.string("id", True)
        question = self.string("question", True)
        tags = self.tags()
        answerable = self.obj.get("answerable")
        if answerable is None:
            self.bad("answerable", "missing")
        elif not isinstance(answerable, bool):
            self.bad("answerable", f"must be true or false, got {answerable!r}")
        gold = self.gold()
        answer, reason = self.string("answer", False), self.string("reason", False)
        doc = self.string("doc", False)
        if "doc" in self.obj and isinstance(self.obj["doc"], str) and not doc.strip():
            self.bad("doc", "must not be empty: a document id or source path")
        if answerable is True and "gold" in self.obj and not self.obj["gold"]:
            self.bad("gold", "an answerable label needs at least one evidence phrase")
        elif answerable is True and gold and not any(g.grade == 2 for g in gold):
            self.bad("gold", "an answerable label needs at least one grade-2 phrase")
        if answerable is False and self.obj.get("gold"):
            self.bad("gold", "an unanswerable label must have no gold phrases")
        if answerable is True and UNANSWERABLE_TAG in tags:
            self.bad("tags", f"tag {UNANSWERABLE_TAG!r} on a label with answerable: true")
        if self.issues:
            return None
        return Label(id_, question, tags, bool(answerable), gold, answer, reason, doc.strip())


def read_labels(path: str | Path) -> LabelSet:
    """Read every line of a labels file; never raises for a bad line (see ``LabelSet.issues``).

    Blank lines are skipped. A duplicate id is an issue on the later line; the first one is kept.
    """
    path = Path(path)
    name = str(path)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"labels file not found: {name}") from None
    except UnicodeDecodeError as exc:
        return LabelSet([], [LabelIssue(name, 0, "(file)", f"not UTF-8 text: {exc}")])
    result = LabelSet()
    seen: dict[str, int] = {}
    for n, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            result.issues.append(LabelIssue(name, n, "(json)", f"invalid JSON: {exc.msg} at column {exc.colno}"))
            continue
        if not isinstance(obj, dict):
            result.issues.append(LabelIssue(name, n, "(line)", f"must be a JSON object, got {type(obj).__name__}"))
            continue
        checker = _Line(name, n, obj)
        label = checker.label()
        id_ = obj.get("id")
        if isinstance(id_, str) and id_ in seen:
            checker.bad("id", f"duplicate id {id_!r} (first on line {seen[id_]})")
            label = None
        elif isinstance(id_, str) and id_.strip():
            seen[id_] = n
        result.issues.extend(checker.issues)
        result.warnings.extend(checker.warnings)
        if label is not None:
            result.labels.append(label)
    return result


class LabelWarning(UserWarning):
    """A labels file holds something this reader ignores (an unknown field); the label is kept."""


def load_labels(path: str | Path, strict: bool = True) -> list[Label]:
    """The labels of a file. ``strict`` raises ``LabelError`` listing every bad line;
    otherwise bad lines are left out (use ``read_labels`` to see them). Unknown fields are
    reported as one ``LabelWarning`` and do not stop the load."""
    result = read_labels(path)
    if result.warnings:
        lines = "\n".join(f"  {w}" for w in result.warnings)
        warnings.warn(f"{len(result.warnings)} warning(s) in labels file:\n{lines}", LabelWarning, stacklevel=2)
    if strict and result.issues:
        raise LabelError(result.issues)
    return result.labels


__all__ = [
    "TAGS",
    "UNANSWERABLE_TAG",
    "Gold",
    "GoldDict",
    "Label",
    "LabelError",
    "LabelDict",
    "LabelIssue",
    "LabelSet",
    "LabelWarning",
    "chunk_text",
    "load_labels",
    "read_labels",
]
