"""Properties of the structure chunker over generated Markdown documents.

Generated documents mix headings, paragraphs, lists, tables (header, separator, rows) and fenced
code blocks of any length, some longer than the chunk size. Every table row and fence is made
unique, so each can be traced to the chunks that hold it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evidencedesk.chunking import ChunkingConfig, chunk_document
from evidencedesk.documents import Document, Metadata

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=9)
LINE = st.lists(WORD, min_size=1, max_size=14).map(" ".join)
CODE_LINE = st.one_of(LINE, st.just(""), LINE.map(lambda s: f"    {s} = f(x) | g(y);"), LINE.map(lambda s: f"# {s}"))


@dataclass
class Source:
    """A generated body and what it holds."""

    parts: list[str] = field(default_factory=list)
    tables: list[tuple[str, str, list[str]]] = field(default_factory=list)  # header, separator, rows
    fences: list[str] = field(default_factory=list)

    def add_table(self, head: list[str], rows: list[list[str]], spaced: bool) -> None:
        n = len(self.tables)
        cells = [f"t{n}h", *head]
        header = "| " + " | ".join(cells) + " |"
        sep = "|" + "|".join(" --- " if spaced else "---" for _ in cells) + "|"
        lines = [
            "| " + " | ".join([f"t{n}r{i}", *(row + [""] * len(head))[: len(head)]]) + " |"
            for i, row in enumerate(rows)
        ]
        self.tables.append((header, sep, lines))
        self.parts.append("\n".join([header, sep, *lines]))

    def add_fence(self, lines: list[str], lang: str) -> None:
        fence = "\n".join([f"```{lang}", f"# fence {len(self.fences)}", *lines, "```"])
        self.fences.append(fence)
        self.parts.append(fence)


@st.composite
def documents(draw: st.DrawFn) -> tuple[Source, str]:
    src = Source()
    for _ in range(draw(st.integers(1, 9))):
        kind = draw(st.sampled_from(["heading", "paragraph", "list", "table", "code"]))
        if kind == "heading":
            src.parts.append("#" * draw(st.integers(1, 4)) + " " + draw(LINE))
        elif kind == "paragraph":
            src.parts.append("\n".join(draw(st.lists(LINE, min_size=1, max_size=4))))
        elif kind == "list":
            marker = draw(st.sampled_from(["-", "*", "1."]))
            src.parts.append("\n".join(f"{marker} {line}" for line in draw(st.lists(LINE, min_size=1, max_size=5))))
        elif kind == "table":
            head = draw(st.lists(WORD, min_size=1, max_size=3))
            rows = draw(st.lists(st.lists(WORD, max_size=3), max_size=9))
            src.add_table(head, rows, draw(st.booleans()))
        else:
            src.add_fence(draw(st.lists(CODE_LINE, max_size=14)), draw(st.sampled_from(["", "python", "bash"])))
    lead = draw(st.sampled_from(["", "\n", "\n\n"]))
    return src, lead + "\n\n".join(src.parts) + draw(st.sampled_from(["", "\n"]))


CONFIGS = st.one_of(
    st.builds(lambda n: ChunkingConfig("structure", size=n, unit="chars"), st.integers(15, 300)),
    st.builds(lambda n: ChunkingConfig("structure", size=n, unit="words"), st.integers(2, 60)),
)


def size_of(text: str, config: ChunkingConfig) -> int:
    return len(text) if config.unit == "chars" else len(text.split())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), CONFIGS, st.integers(1, 12))
def test_structure_chunker_keeps_tables_code_lines_and_text(generated, config, first_line):
    src, body = generated
    doc = Document("gen", "Generated", "gen.md", "markdown", body, "0" * 64, Metadata(), first_line=first_line)
    source = ["front matter"] * (first_line - 1) + body.split("\n")  # what the file's lines would be
    chunks = chunk_document(doc, config)
    texts = [c.text for c in chunks]
    assert all(t.strip() and t == t.strip("\n").rstrip() for t in texts)
    assert chunk_document(doc, config) == chunks

    # A table row never travels without its table's header and separator.
    for header, sep, rows in src.tables:
        for row in rows:
            holders = [c for c in chunks if row in c.text.split("\n")]
            assert len(holders) == 1
            assert holders[0].kind == "table"
            assert holders[0].text.split("\n")[:2] == [header, sep]

    # A fenced code block is whole, line breaks and all, in exactly one chunk, which is nothing else.
    for fence in src.fences:
        holders = [c for c in chunks if fence in c.text]
        assert len(holders) == 1
        assert (holders[0].kind, holders[0].text) == ("code", fence)

    # Each chunk's kind matches its content, and its lines point at the source lines it came from.
    for c in chunks:
        lines = c.text.split("\n")
        if c.kind == "table":
            assert all(line.startswith("|") for line in lines)
        elif c.kind == "code":
            assert lines[0].startswith("```") and lines[-1] == "```"
        else:
            assert "|" not in c.text and "```" not in c.text
        continued = c.kind == "table" and source[c.location.first_line - 1] != lines[0]
        if continued:
            lines = lines[2:]
        assert c.location.last_line - c.location.first_line + 1 == len(lines)
        first, last = source[c.location.first_line - 1], source[c.location.last_line - 1]
        if c.kind == "text":
            assert lines[0] in first and lines[-1] in last
        else:
            assert (lines[0], lines[-1]) == (first, last)

    # No text is lost, none repeated, order kept (repeated table headers aside).
    kept = []
    for c in chunks:
        lines = c.text.split("\n")
        if c.kind == "table" and source[c.location.first_line - 1] != lines[0]:
            lines = lines[2:]
        kept.append("\n".join(lines))
    assert re.sub(r"\s", "", "".join(kept)) == re.sub(r"\s", "", body)
    chunk_lines = {line for t in texts for line in t.split("\n")}
    for line in body.split("\n"):
        if line.strip() and size_of(line, config) <= config.size:
            assert line in chunk_lines

    # Packed text stays within size; only a table row or a code block may exceed it.
    for c in chunks:
        if c.kind == "text":
            assert size_of(c.text, config) <= config.size
        elif c.kind == "table" and size_of(c.text, config) > config.size:
            assert len(c.text.split("\n")) <= 3  # header, separator and at most one row


ANY_CONFIG = st.builds(
    lambda name, unit, size, overlap: ChunkingConfig(name, size=size, overlap=min(overlap, size - 1), unit=unit),
    st.sampled_from(["fixed", "recursive", "section", "paragraph", "parent_child"]),
    st.sampled_from(["chars", "words"]),
    st.integers(5, 120),
    st.sampled_from([0, 0, 2, 10]),
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), ANY_CONFIG, st.integers(1, 12))
def test_every_chunker_locates_its_chunks_and_loses_nothing(generated, config, first_line):
    _, body = generated
    doc = Document("gen", "Generated", "gen.md", "markdown", body, "0" * 64, Metadata(), first_line=first_line)
    source = ["front matter"] * (first_line - 1) + body.split("\n")
    chunks = chunk_document(doc, config)
    assert [c.id for c in chunks] == [f"gen:c{n}" for n in range(len(chunks))]
    for c in chunks:
        assert c.text.strip() and c.text == c.text.strip("\n").rstrip()
        span = source[c.location.first_line - 1 : c.location.last_line]
        lines = c.text.split("\n")
        if config.name == "fixed" and config.unit == "words":
            assert c.text in " ".join(" ".join(span).split())
            assert c.text.split()[0] in span[0] and c.text.split()[-1] in span[-1]
        elif c.kind == "table" and lines[0] != span[0] and config.name == "parent_child":
            assert lines[2:] == span
        else:
            assert len(lines) == len(span) and lines[0] in span[0] and lines[-1] in span[-1]
        if config.name == "parent_child":
            assert c.parent_id is not None and c.parent_id.startswith("gen:p")
            assert all(line in c.parent_text for line in lines)
    if config.overlap == 0 and config.name != "parent_child":
        assert re.sub(r"\s", "", "".join(c.text for c in chunks)) == re.sub(r"\s", "", body)
