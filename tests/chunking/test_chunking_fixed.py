"""Fixed windows in characters and words, with and without overlap."""

from __future__ import annotations

from evidencedesk.chunking import ChunkingConfig, chunk_fixed


def texts(chunks):
    return [c.text for c in chunks]


def test_character_windows_cut_anywhere(make_doc):
    doc = make_doc("abcdefghijklmnopqrstuvw", fmt="text")
    assert texts(chunk_fixed(doc, ChunkingConfig("fixed", 10, 0, "chars"))) == ["abcdefghij", "klmnopqrst", "uvw"]


def test_character_overlap_repeats_the_end_of_the_window_before(make_doc):
    doc = make_doc("abcdefghijklmnopqrstuvw", fmt="text")
    chunks = chunk_fixed(doc, ChunkingConfig("fixed", 10, 4, "chars"))
    assert texts(chunks) == ["abcdefghij", "ghijklmnop", "mnopqrstuv", "stuvw"]
    for before, after in zip(chunks, chunks[1:], strict=False):
        assert after.text.startswith(before.text[-4:])


def test_character_windows_are_trimmed_and_located(make_doc):
    doc = make_doc("alpha beta\ngamma delta\n\nepsilon", first_line=3)
    chunks = chunk_fixed(doc, ChunkingConfig("fixed", 12, 0, "chars"))
    assert texts(chunks) == ["alpha beta\ng", "amma delta", "epsilon"]
    assert [(c.location.first_line, c.location.last_line) for c in chunks] == [(3, 4), (4, 4), (6, 6)]


def test_word_windows_rejoin_words_with_single_spaces(make_doc):
    doc = make_doc("one two\nthree   four five\n\nsix", first_line=2)
    chunks = chunk_fixed(doc, ChunkingConfig("fixed", 2, 1, "words"))
    assert texts(chunks) == ["one two", "two three", "three four", "four five", "five six"]
    assert [(c.location.first_line, c.location.last_line) for c in chunks] == [(2, 2), (2, 3), (3, 3), (3, 3), (3, 5)]


def test_last_window_is_the_first_to_reach_the_end(make_doc):
    doc = make_doc("w1 w2 w3 w4 w5", fmt="text")
    assert texts(chunk_fixed(doc, ChunkingConfig("fixed", 4, 2, "words"))) == ["w1 w2 w3 w4", "w3 w4 w5"]
    assert texts(chunk_fixed(doc, ChunkingConfig("fixed", 5, 2, "words"))) == ["w1 w2 w3 w4 w5"]


def test_small_windows_cut_a_table_row_off_its_header(make_doc):
    text = "| Part | Size M |\n|------|--------|\n| Stem bolts | 5 Nm |\n| Crank arm bolts | 12 Nm |"
    chunks = chunk_fixed(make_doc(text), ChunkingConfig("fixed", 60, 0, "chars"))
    crank = [c for c in chunks if "Crank arm bolts" in c.text]
    assert crank and not any("| Part |" in c.text for c in crank)
    assert {c.kind for c in chunks} == {"table"}


def test_window_kind_follows_the_block_it_lies_in(make_doc):
    text = "Some words before the code.\n\n```\nrun --fast\nrun --slow\n```\n\nAfter."
    chunks = chunk_fixed(make_doc(text), ChunkingConfig("fixed", 3, 0, "words"))
    assert [(c.text, c.kind) for c in chunks] == [
        ("Some words before", "text"),
        ("the code. ```", "text"),
        ("run --fast run", "code"),
        ("--slow ``` After.", "text"),
    ]
