"""Structure chunks: packing, heading boundaries, tables cut between rows with headers, code never cut."""

from __future__ import annotations

from evidencedesk.chunking import ChunkingConfig, chunk_structure


def chunks_of(make_doc, text, **kw):
    return chunk_structure(make_doc(text, **{k: kw.pop(k) for k in ("first_line", "fmt") if k in kw}),
                           ChunkingConfig("structure", **kw))  # fmt: skip


def test_text_blocks_are_packed_up_to_size(make_doc):
    chunks = chunks_of(make_doc, "one two three\n\nfour five six\n\nseven eight nine", size=6, unit="words")
    assert [c.text for c in chunks] == ["one two three\n\nfour five six", "seven eight nine"]
    assert [(c.location.first_line, c.location.last_line) for c in chunks] == [(1, 3), (5, 5)]


def test_never_packs_across_a_heading(make_doc):
    chunks = chunks_of(make_doc, "# A\npara a\n\n## B\npara b\n", size=100)
    assert [(c.text, c.location.heading_path) for c in chunks] == [
        ("# A\npara a", ("A",)),
        ("## B\npara b", ("A", "B")),
    ]


def test_a_long_paragraph_is_cut_at_sentences(make_doc):
    chunks = chunks_of(make_doc, "One two three. Four five six. Seven eight.", size=3, unit="words", first_line=9)
    assert [c.text for c in chunks] == ["One two three.", "Four five six.", "Seven eight."]
    assert {(c.location.first_line, c.location.last_line) for c in chunks} == {(9, 9)}


TABLE = """## Sizes

| k | v |
|---|---|
| r1 | 1 |
| r2 | 2 |
| r3 | 3 |
| r4 | 4 |
"""


def test_a_table_that_fits_is_one_chunk(make_doc):
    chunks = chunks_of(make_doc, TABLE, size=200, unit="chars")
    assert [(c.kind, c.text) for c in chunks] == [("text", "## Sizes"), ("table", TABLE.split("\n\n")[1].strip())]


def test_a_long_table_is_cut_between_rows_and_repeats_its_header(make_doc):
    # header + separator + two rows are 9 + 1 + 9 + 1 + 10 + 1 + 10 = 41 characters
    chunks = chunks_of(make_doc, TABLE, size=41, unit="chars", first_line=20)
    assert [c.kind for c in chunks] == ["text", "table", "table"]
    assert chunks[1].text == "| k | v |\n|---|---|\n| r1 | 1 |\n| r2 | 2 |"
    assert chunks[2].text == "| k | v |\n|---|---|\n| r3 | 3 |\n| r4 | 4 |"
    assert [(c.location.first_line, c.location.last_line) for c in chunks] == [(20, 20), (22, 25), (26, 27)]
    assert {c.location.heading_path for c in chunks} == {("Sizes",)}


def test_every_table_piece_has_a_row_even_when_the_header_alone_is_too_long(make_doc):
    chunks = chunks_of(make_doc, TABLE, size=5, unit="chars")
    tables = [c for c in chunks if c.kind == "table"]
    assert [c.text.split("\n")[2:] for c in tables] == [["| r1 | 1 |"], ["| r2 | 2 |"], ["| r3 | 3 |"], ["| r4 | 4 |"]]


def test_a_code_block_is_never_cut_and_keeps_its_line_breaks(make_doc):
    code = "```bash\n# list controllers\nkestrel-diag list\n\nkestrel-diag --port /dev/ttyUSB0 errors --last 10\n```"
    chunks = chunks_of(make_doc, f"Run these:\n\n{code}\n\nThen attach the report.", size=3, unit="words")
    assert [(c.kind, c.text) for c in chunks] == [
        ("text", "Run these:"),
        ("code", code),
        ("text", "Then attach the"),
        ("text", "report."),
    ]
    assert (chunks[1].location.first_line, chunks[1].location.last_line) == (3, 8)


def test_text_around_a_table_is_not_packed_with_it(make_doc):
    text = "Before the table.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nAfter the table."
    chunks = chunks_of(make_doc, text, size=500, unit="words")
    assert [c.kind for c in chunks] == ["text", "table", "text"]


def test_word_unit_keeps_line_breaks(make_doc):
    text = "- first item\n- second item\n\n| a | b |\n|---|---|\n| 1 | 2 |"
    chunks = chunks_of(make_doc, text, size=120, unit="words")
    assert [c.text for c in chunks] == ["- first item\n- second item", "| a | b |\n|---|---|\n| 1 | 2 |"]


def test_plain_text_has_only_text_chunks(make_doc):
    text = "# not a heading\n\n    indented, not code\n| not | a table |\n|---|---|\n\n```\nnot a fence"
    chunks = chunks_of(make_doc, text, fmt="text", size=4, unit="words")
    assert {c.kind for c in chunks} == {"text"}
    assert {c.location.heading_path for c in chunks} == {()}
    assert " ".join(" ".join(c.text.split()) for c in chunks) == " ".join(text.split())


def test_html_converted_to_markdown_is_read_as_markdown(make_doc):
    text = "# Contact\n\nCall us.\n\n| Day | Hours |\n| --- | --- |\n| Friday | 15:00 |\n"
    chunks = chunks_of(make_doc, text, fmt="html", size=120)
    assert [(c.kind, c.location.heading_path) for c in chunks] == [("text", ("Contact",)), ("table", ("Contact",))]
