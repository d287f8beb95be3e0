"""Labels: grading chunks by evidence phrases, and loading a labels file with clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evidencedesk.documents import Chunk
from evidencedesk.evaluation.labels import TAGS, Gold, Label, LabelError, LabelWarning, load_labels, read_labels
from evidencedesk.evaluation.slices import slices
from tests.support.paths import KESTREL_LABELS


def good(id_: str, **over: object) -> dict:
    row = {
        "id": id_,
        "question": "How long do I have to return a bike?",
        "tags": ["paraphrase"],
        "answerable": True,
        "gold": [{"evidence": "within 30 days", "grade": 2, "with": []}],
        "answer": "30 days.",
        "reason": "returns policy",
    }
    row.update(over)
    return row


def write(tmp_path: Path, lines: list[object]) -> Path:
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def test_grade_is_the_best_phrase_held_whole_with_its_companions() -> None:
    label = Label(
        "t1",
        "What torque for stem bolts on size M?",
        ("structured",),
        True,
        (
            Gold("| Stem bolts | 5 Nm", 2, ("| Part | Size M | Size L |",)),
            Gold("Use a torque wrench", 1),
        ),
    )
    table = "| Part | Size M | Size L |\n|---|---|---|\n| Stem bolts | 5 Nm | 6 Nm |"
    assert label.grade_of(table) == 2
    assert label.grade_of("| Stem bolts | 5 Nm | 6 Nm |") == 0  # the row without its header says nothing
    assert label.grade_of("Always use a torque wrench.") == 0  # case is not normalised
    assert label.grade_of("Use a torque wrench. " + table) == 2
    assert label.grade_of("Use a\n   torque\twrench") == 1  # runs of whitespace are one space
    chunk = Chunk("d:c0", "d", "Use a torque wrench")
    assert label.grade_of(chunk) == 1
    parent = Chunk("d:c1", "d", "unrelated child text", parent_id="d:p0", parent_text=table)
    assert label.grade_of(parent) == 2  # a parent-child chunk is judged by what the model reads


def test_the_bundled_labels_load_and_every_answer_phrase_is_in_some_document(documents: list) -> None:
    labels = load_labels(KESTREL_LABELS)
    assert len({x.id for x in labels}) == len(labels) >= 20
    assert all(t in TAGS for x in labels for t in x.tags)
    texts = [d.text for d in documents]
    for x in labels:
        for g in x.gold:
            assert any(g.held_by(t) for t in texts), f"{x.id}: phrase not in any document: {g.evidence!r}"


def test_every_bad_line_is_reported_with_file_line_and_field(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            good("a1"),
            "{not json",
            good("a2", gold=[{"evidence": "x", "grade": 3}]),
            {k: v for k, v in good("a3").items() if k != "question"},
            good("a4", answerable="yes"),
            good("a1"),
            good("a5", gold=[]),
            good("a6", tags=["paraphrase", "vibes"]),
            good("a7", tags="paraphrase"),
            "",
            good("a8", gold=[{"evidence": "only context", "grade": 1}]),
            good("a9", answerable=False),
            good("a10", colour="red"),
            ["a", "list"],
            good("a11", answerable=False, gold=[], tags=["unanswerable"]),
        ],
    )
    result = read_labels(path)
    # free-form tags ("vibes") and an unknown field ("colour") keep their label
    assert [x.id for x in result.labels] == ["a1", "a6", "a10", "a11"]
    assert next(x for x in result.labels if x.id == "a6").tags == ("paraphrase", "vibes")
    found = {(i.line, i.field) for i in result.issues}
    assert found == {
        (2, "(json)"),
        (3, "gold[0].grade"),
        (4, "question"),
        (5, "answerable"),
        (6, "id"),
        (7, "gold"),
        (9, "tags"),
        (11, "gold"),
        (12, "gold"),
        (14, "(line)"),
    }
    assert [(w.line, w.field) for w in result.warnings] == [(13, "colour")]
    assert "unknown field" in result.warnings[0].message
    dup = next(i for i in result.issues if i.line == 6)
    assert "duplicate id 'a1'" in dup.message and "line 1" in dup.message
    with pytest.raises(LabelError) as err, pytest.warns(LabelWarning, match="colour"):
        load_labels(path)
    message = str(err.value)
    assert "10 problem(s)" in message
    assert f"{path}:3: gold[0].grade: must be 1 or 2, got 3" in message
    assert len(err.value.issues) == 10
    with pytest.warns(LabelWarning):
        assert [x.id for x in load_labels(path, strict=False)] == ["a1", "a6", "a10", "a11"]


def test_free_form_tags_get_their_own_slices(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [good("b1", tags=["de", "billing"]), good("b2", tags=["de"]), good("b3", tags=[], gold_note="x")],
    )
    with pytest.warns(LabelWarning, match="gold_note"):
        labels = load_labels(path)
    assert [x.tags for x in labels] == [("de", "billing"), ("de",), ()]
    table = slices((x.tags, {"hit": 1.0 if x.id != "b2" else 0.0}) for x in labels)
    assert list(table) == ["all", "de", "billing"]
    assert table["de"]["hit"].mean == 0.5 and table["billing"]["hit"].mean == 1.0
    assert table["all"]["hit"].mean == 2 / 3


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nope.jsonl"):
        load_labels(tmp_path / "nope.jsonl")


def test_constructors_validate_eagerly() -> None:
    with pytest.raises(ValueError, match="grade"):
        Gold("x", 0)
    with pytest.raises(ValueError, match="evidence"):
        Gold("  ", 2)
    with pytest.raises(ValueError, match="tags"):
        Label("x", "q?", ("  ",), False)
    assert Label("x", "q?", ("my-own-tag",), False).tags == ("my-own-tag",)
    with pytest.raises(ValueError, match="grade-2"):
        Label("x", "q?", (), True, (Gold("a", 1),))
    with pytest.raises(ValueError, match="unanswerable"):
        Label("x", "q?", (), False, (Gold("a", 2),))
    label = Label("x", "q?", ("multi",), True, (Gold("a b", 2, ("c",)),), "A.", "why")
    assert label.to_dict()["gold"] == [{"evidence": "a b", "grade": 2, "with": ["c"]}]
