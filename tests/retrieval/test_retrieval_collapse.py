"""Collapsing results: one chunk per page (the default) or per document, filled from deeper in the ranking."""

from __future__ import annotations

from pathlib import Path

import pytest
from fpdf import FPDF

from evidencedesk import Desk
from evidencedesk.config import Settings, parse_settings
from evidencedesk.documents import Chunk, Location
from evidencedesk.retrieval.candidates import Candidate
from evidencedesk.retrieval.collapse import Collapsed, collapse, collapsed
from evidencedesk.retrieval.factory import make_searcher
from evidencedesk.retrieval.scope import Scope
from evidencedesk.wiring import searcher_label


def chunk(doc: str, n: int, text: str, page: int | None) -> Chunk:
    pages = (page,) if page is not None else ()
    return Chunk(f"{doc}:c{n}", doc, text, location=Location(("body",), n, n, pages))


PAGED = [
    chunk("report", 1, "warranty claims warranty claims are filed online", 1),
    chunk("report", 2, "warranty claims need the receipt", 1),
    chunk("report", 3, "warranty claims take ten days", 1),
    chunk("report", 4, "warranty claims for parts", 2),
    chunk("report", 5, "shipping rates by zone", 3),
    chunk("memo", 1, "warranty claims desk opening hours", 1),
    chunk("memo", 2, "warranty extensions cost extra", 2),
]


def test_a_page_appears_once_and_the_list_fills_from_deeper_down() -> None:
    inner = make_searcher("bm25", PAGED)
    full = inner.search("warranty claims", 10)
    assert len({c.chunk.location.pages for c in full[:3] if c.chunk.doc_id == "report"}) < 3  # page 1 repeats

    got = Collapsed(inner, "page").search("warranty claims", 3)

    pages = [(c.chunk.doc_id, c.chunk.location.pages[0]) for c in got]
    assert len(got) == 3 and len(set(pages)) == 3
    # each page is represented by its best chunk, in the order of the full ranking
    seen: set[tuple[str, int]] = set()
    expected = []
    for c in full:
        key = (c.chunk.doc_id, c.chunk.location.pages[0])
        if key not in seen:
            seen.add(key)
            expected.append(c.chunk.id)
    assert [c.chunk.id for c in got] == expected[:3]
    assert [c.rank for c in got] == [1, 2, 3]
    by_id = {c.chunk.id: c.score for c in full}
    assert all(c.score == by_id[c.chunk.id] for c in got)  # scores are the inner searcher's


def test_document_collapse_keeps_one_chunk_per_document() -> None:
    got = collapsed(make_searcher("bm25", PAGED), "document").search("warranty claims", 5)
    assert sorted(c.chunk.doc_id for c in got) == ["memo", "report"]


def test_unpaged_chunks_rank_exactly_as_without_collapsing() -> None:
    flat = [Chunk(c.id, c.doc_id, c.text, location=Location(("body",), 1, 1)) for c in PAGED]
    inner = make_searcher("bm25", flat)
    plain = inner.search("warranty claims", 4)
    assert [(c.chunk.id, c.score, c.rank) for c in Collapsed(inner, "page").search("warranty claims", 4)] == [
        (c.chunk.id, c.score, c.rank) for c in plain
    ]


def test_collapse_none_is_the_searcher_itself_and_bad_values_are_refused() -> None:
    inner = make_searcher("bm25", PAGED)
    assert collapsed(inner, "none") is inner
    with pytest.raises(ValueError, match="by"):
        Collapsed(inner, "chapter")
    with pytest.raises(ValueError, match="retrieval.collapse"):
        parse_settings({"retrieval": {"collapse": "chapter"}})


def test_a_short_ranking_returns_what_there_is() -> None:
    got, dropped = collapse(make_searcher("bm25", PAGED).search("warranty", 10), 10, "page")
    assert dropped and len(got) == len({(c.chunk.doc_id, c.chunk.location.pages) for c in got})


def text_pdf(pages: list[str]) -> bytes:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 8, text=text)
    return bytes(pdf.output())


def test_desk_search_collapses_a_pdf_page_by_default(tmp_path: Path) -> None:
    long_page = " ".join(
        f"Warranty claims rule {i}: a claim for a broken appliance is filed with the receipt within {i + 10} days."
        for i in range(12)
    )
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "warranty.pdf").write_bytes(
        text_pdf([long_page, "Warranty claims for spare parts are handled by the parts desk.", "Shipping zones."])
    )
    small = {"chunker": {"name": "structure", "size": 40}, "retrieval": {"legs": [{"method": "bm25"}]}}
    with Desk(tmp_path / "store", parse_settings(small)) as desk:
        desk.ingest(docs)
        default = desk.search("warranty claims", k=3)
        assert searcher_label(desk.searcher()) == "memory-bm25"  # the label sees through the wrapper
    with Desk(
        tmp_path / "store", parse_settings({**small, "retrieval": {**small["retrieval"], "collapse": "none"}})
    ) as desk:
        every = desk.search("warranty claims", k=3)
    assert [c.chunk.location.pages[0] for c in every] == [1, 1, 1]  # the long page fills the list
    # one chunk per page (page 3 matches through its title, "warranty")
    assert sorted(c.chunk.location.pages[0] for c in default) == [1, 2, 3]
    assert default[0].chunk.id == every[0].chunk.id


def test_settings_default_is_page() -> None:
    assert Settings().retrieval.collapse == "page"


def test_a_searcher_without_paged_chunks_is_asked_once_and_its_list_returned() -> None:
    flat = [Chunk(c.id, c.doc_id, c.text, location=Location(("body",), 1, 1)) for c in PAGED]
    inner = make_searcher("bm25", flat)
    assert inner.paged is False and make_searcher("bm25", PAGED).paged is True
    asked: list[int] = []

    class Counting:
        name = "bm25"

        def __getattr__(self, name: str) -> object:
            return getattr(inner, name)

        def search(self, query: str, k: int = 10, scope: Scope | None = None) -> list[Candidate]:
            asked.append(k)
            return inner.search(query, k, scope)

    assert Collapsed(Counting(), "page").search("warranty claims", 2) == inner.search("warranty claims", 2)
    assert asked == [2]
    inner.add([chunk("later", 1, "warranty claims by post", 4)])  # a paged chunk arrives: collapsing is back
    assert inner.paged is True
