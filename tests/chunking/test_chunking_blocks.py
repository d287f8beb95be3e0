"""Block parsing: kinds, lines, heading paths and sections; lines no token covers are still text."""

from __future__ import annotations

import pytest

from evidencedesk.chunking.blocks import Block, group_sections, markdown_blocks, plain_blocks
from evidencedesk.documents import Section

BODY = """[ref]: https://example.invalid

Lead paragraph

Setext title
============

- a
- b

| h |
|---|
| r |

    indented code

### Deep
```
# inside a fence
```
"""


def test_markdown_blocks():
    blocks = markdown_blocks(BODY)
    assert [(b.kind, b.first, b.last, b.heading_path, b.section) for b in blocks] == [
        ("text", 0, 0, (), 0),
        ("text", 2, 2, (), 0),
        ("heading", 4, 5, ("Setext title",), 1),
        ("text", 7, 8, ("Setext title",), 1),
        ("table", 10, 12, ("Setext title",), 1),
        ("code", 14, 14, ("Setext title",), 1),
        ("heading", 16, 16, ("Setext title", "Deep"), 2),
        ("code", 17, 19, ("Setext title", "Deep"), 2),
    ]


def test_group_sections():
    groups = group_sections(markdown_blocks(BODY))
    assert [[b.first for b in g] for g in groups] == [[0, 2], [4, 7, 10, 14], [16, 17]]


def test_plain_blocks_follow_the_given_sections():
    text = "a\nb\n\nc\nd\ne"
    blocks = plain_blocks(text, (Section(("page 1",), 11, 13), Section(("page 2",), 15, 16)), first_line=10)
    assert blocks == [
        Block("text", 0, 0, (), 0),
        Block("text", 1, 1, ("page 1",), 1),
        Block("text", 3, 4, ("page 1",), 1),
        Block("text", 5, 5, ("page 2",), 2),
    ]


def test_block_validates_its_fields():
    with pytest.raises(ValueError, match="block kind"):
        Block("list", 0, 0)
    with pytest.raises(ValueError, match="block lines"):
        Block("text", 3, 2)
