"""Section chunks: one per heading, preamble included, and the document's own sections for plain formats."""

from __future__ import annotations

from evidencedesk.chunking import ChunkingConfig, chunk_section
from evidencedesk.documents import Section
from evidencedesk.ingest.sections import sections as parsed_sections

BODY = """intro line

# Alpha
alpha text

## Beta
beta text

```
# not a heading
```

# Gamma
"""


def test_one_chunk_per_heading_section(make_doc):
    chunks = chunk_section(make_doc(BODY, first_line=4), ChunkingConfig("section", size=1))
    assert [c.text for c in chunks] == [
        "intro line",
        "# Alpha\nalpha text",
        "## Beta\nbeta text\n\n```\n# not a heading\n```",
        "# Gamma",
    ]
    assert [c.location.heading_path for c in chunks] == [(), ("Alpha",), ("Alpha", "Beta"), ("Gamma",)]
    assert [(c.location.first_line, c.location.last_line) for c in chunks] == [(4, 4), (6, 7), (9, 14), (16, 16)]
    assert {c.kind for c in chunks} == {"text"}


def test_sections_agree_with_the_markdown_parser(make_doc):
    chunks = chunk_section(make_doc(BODY, first_line=4), ChunkingConfig("section"))
    expected = parsed_sections(BODY, 4)
    assert [(c.location.heading_path, c.location.first_line, c.location.last_line) for c in chunks] == [
        (s.heading_path, s.first_line, s.last_line) for s in expected
    ]


def test_plain_text_is_one_section_whatever_it_looks_like(make_doc):
    text = "# not a heading\n\n    not code\n| not | a table |\n"
    chunks = chunk_section(make_doc(text, fmt="text", sections=(Section((), 1, 4),)), ChunkingConfig("section"))
    assert [(c.text, c.kind, c.location.heading_path) for c in chunks] == [(text.rstrip(), "text", ())]


def test_pdf_pages_are_sections(make_doc):
    text = "first page text\nmore\n\nsecond page text"
    pages = (Section(("page 1",), 1, 2), Section(("page 2",), 4, 4))
    chunks = chunk_section(make_doc(text, fmt="pdf", sections=pages), ChunkingConfig("section"))
    assert [(c.text, c.location.heading_path, c.location.first_line) for c in chunks] == [
        ("first page text\nmore", ("page 1",), 1),
        ("second page text", ("page 2",), 4),
    ]
