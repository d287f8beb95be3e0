"""The context spends its budget on the units that answer: a long table is cut to its best rows (each
under its header), not dropped; near-duplicates with other figures both stay."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from evidencedesk.answer.context import assemble, count_tokens, render
from evidencedesk.answer.excerpt import excerpt, pieces, render_pieces
from evidencedesk.answer.generators.base import Generation
from evidencedesk.answer.validate import validate
from evidencedesk.documents import Chunk
from evidencedesk.text import word_overlap
from tests.support.answer import as_candidates, make_chunk

HEADER = "| Measure | FY2023 | FY2022 |\n| --- | --- | --- |"
ROWS = [f"| Operating item {n} | {100 + n:,} | {200 + n:,} |" for n in range(1, 41)]
ROWS[30] = "| Adjusted EBITDA | 2,018 | 2,100 |"  # row 31 answers
TABLE = make_chunk("amcor:c13", "## Reconciliation\n\n($ million)\n" + HEADER + "\n" + "\n".join(ROWS), kind="table")
QUESTION = "What was Amcor's adjusted EBITDA in FY2023?"
PROSE = [
    make_chunk(f"amcor:c{n}", f"Segment {n} results were discussed with the board in the quarter. " * 4)
    for n in range(1, 5)
]


def test_a_long_table_is_cut_to_the_row_that_answers_with_its_header() -> None:
    cands = as_candidates([*PROSE, TABLE])  # the table ranks fifth
    out = assemble(cands, budget_tokens=600, question=QUESTION)
    assert count_tokens(render(cands)) > 600  # everything whole does not fit
    assert out.ids == [c.id for c in PROSE] + [TABLE.id]  # the table keeps its id and its place
    shown = out.candidates[-1].chunk.text
    assert "| Adjusted EBITDA | 2,018 | 2,100 |" in shown
    assert shown.index("| Measure | FY2023 | FY2022 |") < shown.index("| --- |") < shown.index("Adjusted EBITDA")
    assert "## Reconciliation" in shown and "($ million)" in shown  # heading and caption travel with the row
    assert shown.count("| Operating item") < 39  # the budget left holds only some of the other rows
    (trimmed,) = [d for d in out.dropped if d.chunk_id == TABLE.id]
    assert trimmed.reason == "trimmed" and "of 40" in trimmed.detail and "31" in trimmed.detail
    assert out.tokens <= 600

    # without trimming the table is dropped whole, as before
    plain = assemble(cands, budget_tokens=600, question=QUESTION, trim=False)
    assert TABLE.id not in plain.ids and [d.reason for d in plain.dropped] == ["budget"]


def test_validation_reads_the_excerpt_as_the_chunks_text() -> None:
    out = assemble(as_candidates([*PROSE, TABLE]), budget_tokens=600, question=QUESTION)
    by_id = {c.id: c for c in [*PROSE, TABLE]}
    ok = validate(Generation(f"Adjusted EBITDA was 2,018 in FY2023. [{TABLE.id}]", (TABLE.id,)), out.candidates, by_id)
    assert not ok.abstained and ok.cited == (TABLE.id,)
    # a figure of a row that was cut away was never shown, so it is not supported
    assert "Operating item 40" not in out.candidates[-1].chunk.text
    cut = validate(Generation(f"Operating item 40 was 140 in FY2023. [{TABLE.id}]", (TABLE.id,)), out.candidates, by_id)
    assert cut.abstained and "140" in cut.reason


def test_a_long_table_ranked_first_leaves_room_for_the_others() -> None:
    answer = make_chunk("notes:c2", "Adjusted EBITDA rose because of lower costs.")
    out = assemble(as_candidates([TABLE, answer]), budget_tokens=300, question=QUESTION)
    assert out.ids == [TABLE.id, answer.id]
    assert "2,018" in out.candidates[0].chunk.text and out.tokens <= 300


def test_the_best_matching_row_comes_first_and_others_only_as_room_allows() -> None:
    def rows_fit(n: int) -> Callable[[Chunk], bool]:  # room for the header, its separator and n rows
        return lambda chunk: chunk.text.count("\n| ") <= n + 2

    one = excerpt(TABLE, QUESTION, rows_fit(1))
    assert one is not None and one.kept == (30,) and one.kinds == ("row",) and one.units == 40
    assert "| Adjusted EBITDA | 2,018 | 2,100 |" in one.chunk.text and "Operating item" not in one.chunk.text
    assert one.chunk.id == TABLE.id
    only_matching = excerpt(TABLE, QUESTION, rows_fit(5), matching_only=True)
    assert only_matching is not None and only_matching.kept == (30,)
    five = excerpt(TABLE, QUESTION, rows_fit(5))
    assert five is not None and five.kept == (0, 1, 2, 3, 30)  # then reading order


def test_an_excerpt_grows_into_the_budget_that_is_left() -> None:
    small = assemble(as_candidates([TABLE]), budget_tokens=150, question=QUESTION)
    large = assemble(as_candidates([TABLE]), budget_tokens=500, question=QUESTION)
    rows = [c.chunk.text.count("| Operating item") for c in (*small.candidates, *large.candidates)]
    assert rows[0] < rows[1]
    assert all("Adjusted EBITDA" in c.chunk.text for c in (*small.candidates, *large.candidates))


def test_a_parent_child_chunk_shows_its_excerpt_as_the_parent_text() -> None:
    child = replace(
        make_chunk("amcor:c40", "Adjusted EBITDA", kind="table"), parent_id="amcor:p1", parent_text=TABLE.text
    )
    out = assemble(as_candidates([child]), budget_tokens=200, question=QUESTION)
    (shown,) = out.candidates
    assert shown.chunk.parent_text is not None and "2,018" in shown.chunk.parent_text
    assert len(shown.chunk.parent_text) < len(TABLE.text)


def test_excerpt_keeps_the_headings_in_effect_and_sentences_of_a_line_together() -> None:
    text = (
        "# Guide\n\n## Returns\n\nItems go back in 30 days. Refunds take 5 days.\n\n## Shipping\n\nParcels ship daily."
    )
    parts = pieces(text)
    units = [i for i, p in enumerate(parts) if p.is_unit]
    assert render_pieces(parts, {units[1]}) == "# Guide\n\n## Returns\n\nRefunds take 5 days."
    assert render_pieces(parts, {units[0], units[1]}).endswith("Items go back in 30 days. Refunds take 5 days.")
    assert render_pieces(parts, {units[2]}) == "# Guide\n\n## Shipping\n\nParcels ship daily."
    one = make_chunk("guide:c0", "Only one sentence here about refunds.")
    assert excerpt(one, "refunds", lambda c: True) is None  # nothing to cut


def test_two_lists_with_the_same_words_and_other_figures_both_stay() -> None:
    domestic = make_chunk(
        "bestbuy:c40",
        "Revenue mix by category: Computing and Mobile Phones 44%, Consumer Electronics 31%, "
        "Appliances 16%, Entertainment 6%, Services 3%, Other 0.5% of segment revenue.",
    )
    international = make_chunk(
        "bestbuy:c41",
        "Revenue mix by category: Computing and Mobile Phones 47%, Consumer Electronics 29%, "
        "Appliances 11%, Entertainment 8%, Services 4%, Other 0.7% of segment revenue.",
    )
    assert word_overlap(domestic.text, international.text) >= 0.5
    same_words = replace(international, text=international.text.replace("0.7%", "0.5%"))
    out = assemble(as_candidates([domestic, international]), dedup_threshold=0.5)
    assert out.ids == [domestic.id, international.id] and out.dropped == []
    # a true copy (no figure of its own) is still a duplicate
    copy = replace(domestic, id="bestbuy:c42", text=domestic.text.replace("Revenue mix", "Revenue share"))
    again = assemble(as_candidates([domestic, copy, same_words]), dedup_threshold=0.5)
    assert [(d.chunk_id, d.reason) for d in again.dropped] == [("bestbuy:c42", "duplicate")]


def test_lists_at_093_overlap_with_other_numbers_survive_the_default_threshold() -> None:
    words = " ".join(f"term{n}" for n in range(40))
    domestic = make_chunk("bb:c1", f"Domestic {words} 969 stores 44 percent")
    international = make_chunk("bb:c2", f"International {words} 160 stores 47 percent")
    share = word_overlap(domestic.text, international.text)
    assert 0.9 <= share < 1.0
    out = assemble(as_candidates([domestic, international]))
    assert out.ids == [domestic.id, international.id]
    twin = make_chunk("bb:c3", f"International {words} 969 stores 44 percent")
    assert [d.reason for d in assemble(as_candidates([domestic, twin])).dropped] == ["duplicate"]


def test_unit_share_caps_the_first_round_of_best_units() -> None:
    # tables: prose is never shown in part (TRIMMED_KINDS)
    def rows(n: int) -> str:
        lines = [f"| Adjusted margin of unit {n} | rose in week | {100 * n + w} |" for w in range(20)]
        return "| Item | Change | Week |\n|---|---|---|\n" + "\n".join(lines)

    big = [make_chunk(f"big{n}:c0", rows(n), kind="table") for n in range(3)]
    cands = as_candidates([*big, TABLE])
    every = assemble(cands, budget_tokens=500, question=QUESTION)
    assert every.ids == [*(c.id for c in big), TABLE.id]  # each one's best unit went in first
    assert "2,018" in every.candidates[-1].chunk.text
    whole_first = assemble(cands, budget_tokens=500, question=QUESTION, unit_share=0.0)
    assert whole_first.ids == [big[0].id, big[1].id]  # best first grew into the budget before the table's turn
    assert ("amcor:c13", "budget") in [(d.chunk_id, d.reason) for d in whole_first.dropped]
    with pytest.raises(ValueError, match="unit_share"):
        assemble(cands, unit_share=1.5)


def test_prose_is_shown_whole_or_not_at_all() -> None:
    prose = make_chunk("guide:c0", " ".join(f"Adjusted margin rose in week {w} of the year." for w in range(60)))
    table = replace(prose, kind="table", text="| Item | Week |\n|---|---|\n" + "\n".join(
        f"| Adjusted margin rose | {w} |" for w in range(60)))  # fmt: skip
    for chunk, shown in ((prose, False), (table, True)):
        out = assemble(as_candidates([chunk]), budget_tokens=120, question="When did the adjusted margin rise?")
        assert (out.ids == [chunk.id]) is shown
        assert [d.reason for d in out.dropped] == (["trimmed"] if shown else ["budget"])
