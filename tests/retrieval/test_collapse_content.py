"""A page is represented by a chunk that holds content: a chunk holding only a heading or a table's
header never stands for a page that has a chunk with content in the ranking."""

from __future__ import annotations

from evidencedesk.documents import Chunk, Location
from evidencedesk.retrieval.candidates import ranked
from evidencedesk.retrieval.collapse import Collapsed, collapse, expand_folded
from evidencedesk.retrieval.factory import make_searcher
from evidencedesk.text.content import holds_content


def chunk(doc: str, n: int, text: str, page: int, kind: str = "text") -> Chunk:
    return Chunk(f"{doc}:c{n}", doc, text, kind=kind, location=Location(("Stores",), n, n, (page,)))


HEADER_ONLY = chunk(
    "bestbuy", 30, "### Domestic stores\n\n| Store count | Domestic | International |\n|---|---|---|", 22
)
TABLE = chunk("bestbuy", 31, "| Store count | Domestic | International |\n|---|---|---|\n| Total stores | 969 | 160 |",
              22, kind="table")  # fmt: skip
OTHERS = [chunk("bestbuy", 40 + n, f"Domestic stores in region {n} were remodeled during the year.", 30 + n)
          for n in range(4)]  # fmt: skip


def test_the_rule_reads_headings_headers_and_footnote_markers_as_no_content() -> None:
    for bare in ("###### Ended", "###### as\n\nof", "### ASSETS", "1,2,5 2,5 3,5", HEADER_ONLY.text):
        assert not holds_content(bare), bare
    for full in (TABLE.text, OTHERS[0].text, "```\nmake install\n```"):
        assert holds_content(full), full


def test_a_header_only_chunk_gives_its_page_place_to_the_table_chunk() -> None:
    scored = [(HEADER_ONLY, 9.0), (OTHERS[0], 8.0), (TABLE, 7.0), (OTHERS[1], 6.0), (OTHERS[2], 5.0)]
    kept, dropped = collapse(ranked(scored, "bm25"), 3, "page")
    assert dropped
    assert [c.chunk.id for c in kept] == [TABLE.id, OTHERS[0].id, OTHERS[1].id]
    assert [c.rank for c in kept] == [1, 2, 3]
    assert kept[0].score == 7.0  # the table's own score
    assert [f.chunk.id for f in kept[0].folded] == [HEADER_ONLY.id]  # the heading stays reachable
    assert [c.chunk.id for c in expand_folded(kept)][:2] == [TABLE.id, HEADER_ONLY.id]


def test_the_table_takes_the_place_even_when_it_ranks_below_the_lists_last_result() -> None:
    scored = [(HEADER_ONLY, 9.0), (OTHERS[0], 8.0), (OTHERS[1], 7.0), (OTHERS[2], 6.0), (TABLE, 5.0)]
    kept, _ = collapse(ranked(scored, "bm25"), 3, "page")
    assert [c.chunk.id for c in kept] == [TABLE.id, OTHERS[0].id, OTHERS[1].id]


def test_a_page_with_only_bare_chunks_keeps_its_best_ranked_one() -> None:
    heading = chunk("bestbuy", 29, "## Properties", 22)
    scored = [(heading, 9.0), (HEADER_ONLY, 8.0), (OTHERS[0], 7.0)]
    kept, _ = collapse(ranked(scored, "bm25"), 2, "page")
    assert [c.chunk.id for c in kept] == [heading.id, OTHERS[0].id]
    assert [f.chunk.id for f in kept[0].folded] == [HEADER_ONLY.id]


def test_a_collapsed_search_reads_deeper_once_for_the_content_of_a_bare_page() -> None:
    heading = chunk("bestbuy", 30, "### Domestic store count\n\n| Segment | Stores |\n|---|---|", 22)
    table = chunk("bestbuy", 31, "| Segment | Stores |\n|---|---|\n| Domestic | 969 |\n| International | 160 |", 22,
                  kind="table")  # fmt: skip
    others = [chunk("bestbuy", 40 + n, f"Domestic store remodels in region {n} were finished during the year.", 30 + n)
              for n in range(4)]  # fmt: skip
    inner = make_searcher("bm25", [heading, table, *others])
    question = "domestic store count"
    assert [c.chunk.id for c in inner.search(question, 6)][::5] == [heading.id, table.id]  # first and last
    got = Collapsed(inner, "page").search(question, 2)
    assert [c.chunk.id for c in got] == [table.id, others[0].id]
    assert [f.chunk.id for f in got[0].folded] == [heading.id]
