"""Paged documents (PDFs): every structure chunk holds content; captions open every piece of their table."""

from __future__ import annotations

from evidencedesk.chunking import ChunkingConfig, chunk_document
from evidencedesk.chunking.attach import heading_only
from evidencedesk.documents import Section

# page 1: lines 1-9, page 2: lines 11-19 (1-based), as the PDF reader lays a filing out
BODY = """# Annual report

## Item 7. Results

### Segment results

Net sales grew in every region.

### Balance sheet

($ in millions)

| Assets | 2023 | 2022 |
| --- | --- | --- |
| Cash | 837 | 775 |
| Inventories | 1,205 | 1,114 |
| Goodwill | 5,281 | 5,285 |
| Total assets | 9,000 | 8,800 |

## Exhibits
"""


def paged_doc(make_doc, body: str = BODY):
    lines = body.split("\n")
    first_page2 = lines.index("($ in millions)") + 1  # 1-based: the caption opens page 2
    sections = (Section((), 1, first_page2 - 2, 1), Section((), first_page2, len(lines), 2))
    return make_doc(body, fmt="pdf", sections=sections)


def test_no_chunk_is_headings_alone(make_doc):
    chunks = chunk_document(paged_doc(make_doc), ChunkingConfig("structure", size=120))
    assert not any(heading_only(c.text) for c in chunks)
    first = chunks[0]
    assert first.text.startswith("# Annual report\n\n## Item 7. Results\n\n### Segment results\n\nNet sales grew")
    assert first.location.heading_path == ("Annual report", "Item 7. Results", "Segment results")
    assert [c.id for c in chunks] == [f"doc:c{n}" for n in range(len(chunks))]


def test_a_heading_at_the_foot_of_a_page_goes_with_the_table_on_the_next_and_keeps_both_pages(make_doc):
    chunks = chunk_document(paged_doc(make_doc), ChunkingConfig("structure", size=120))
    table = next(c for c in chunks if c.kind == "table")
    assert table.text.startswith("### Balance sheet\n\n($ in millions)\n\n| Assets | 2023 | 2022 |")
    assert table.location.pages == (1, 2)


def test_every_piece_of_a_cut_table_opens_with_its_caption_and_header(make_doc):
    chunks = chunk_document(paged_doc(make_doc), ChunkingConfig("structure", size=14))
    tables = [c for c in chunks if c.kind == "table"]
    assert len(tables) >= 2
    for piece in tables:
        assert "($ in millions)\n\n| Assets | 2023 | 2022 |\n| --- | --- | --- |\n| " in piece.text
    assert [c.location.pages for c in tables[1:]] == [(2,)] * (len(tables) - 1)
    lines = [line for c in tables for line in c.text.split("\n")]
    rows = [line for line in lines if line.startswith("| ") and "Assets" not in line and "---" not in line]
    assert rows == ["| Cash | 837 | 775 |", "| Inventories | 1,205 | 1,114 |", "| Goodwill | 5,281 | 5,285 |",
                    "| Total assets | 9,000 | 8,800 |"]  # fmt: skip


def test_headings_that_end_a_document_join_the_chunk_before_them(make_doc):
    chunks = chunk_document(paged_doc(make_doc), ChunkingConfig("structure", size=120))
    assert chunks[-1].text.endswith("| Total assets | 9,000 | 8,800 |\n\n## Exhibits")
    assert chunks[-1].kind == "table"


def test_a_long_run_of_headings_stays_a_chunk_of_its_own(make_doc):
    contents = "\n\n".join(f"### Section {n} of the plan\n\n{n + 4}" for n in range(40))
    body = f"# Plan\n\n{contents}\n\n## Terms\n\nThe plan pays benefits.\n"
    lines = body.split("\n")
    doc = make_doc(body, fmt="pdf", sections=(Section((), 1, len(lines), 1),))
    chunks = chunk_document(doc, ChunkingConfig("structure", size=60))
    assert all(len(c.text.split()) <= 60 + 10 for c in chunks)
    assert chunks[-1].text.endswith("The plan pays benefits.")


def test_heading_only_means_headings_with_at_most_page_numbers_and_markers():
    assert heading_only("### Section 1.2 Effective Date\n\n5")
    assert heading_only("## Notes\n\n1,2,5 2,5 3,5")
    assert not heading_only("## Notes\n\nCash rose.")
    assert not heading_only("(1)")  # no heading at all


def test_markdown_files_are_chunked_as_before(make_doc):
    chunks = chunk_document(make_doc("## Sizes\n\n| k | v |\n|---|---|\n| r1 | 1 |\n"), ChunkingConfig("structure"))
    assert [(c.kind, c.text) for c in chunks] == [("text", "## Sizes"), ("table", "| k | v |\n|---|---|\n| r1 | 1 |")]
