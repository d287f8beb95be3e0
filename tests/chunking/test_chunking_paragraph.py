"""Paragraph chunks: blank-line separated blocks; a table or fenced code block is one block."""

from __future__ import annotations

from evidencedesk.chunking import ChunkingConfig, chunk_paragraph

BODY = """# Title
First paragraph line one
line two

Intro right above a table:
| a | b |
|---|---|
| 1 | 2 |

```python
x = 1

y = 2
```

- item one
- item two"""


def test_blocks_split_on_blank_lines_tables_and_fences(make_doc):
    chunks = chunk_paragraph(make_doc(BODY, first_line=10), ChunkingConfig("paragraph", size=1))
    assert [(c.text, c.kind) for c in chunks] == [
        ("# Title\nFirst paragraph line one\nline two", "text"),
        ("Intro right above a table:", "text"),
        ("| a | b |\n|---|---|\n| 1 | 2 |", "table"),
        ("```python\nx = 1\n\ny = 2\n```", "code"),
        ("- item one\n- item two", "text"),
    ]
    assert [(c.location.first_line, c.location.last_line) for c in chunks] == [
        (10, 12), (14, 14), (15, 17), (19, 23), (25, 26),
    ]  # fmt: skip
    assert chunks[0].location.heading_path == ("Title",)


def test_plain_text_paragraphs(make_doc):
    text = "one\ntwo\n\n\nthree\n    four"
    chunks = chunk_paragraph(make_doc(text, fmt="text"), ChunkingConfig("paragraph"))
    assert [(c.text, c.kind, c.location.first_line) for c in chunks] == [
        ("one\ntwo", "text", 1),
        ("three\n    four", "text", 5),
    ]
