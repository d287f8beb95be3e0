"""Recursive splitting: separators in order, merging up to size, hard cuts and overlap."""

from __future__ import annotations

from evidencedesk.chunking import ChunkingConfig, chunk_recursive


def texts(doc, **kw):
    return [c.text for c in chunk_recursive(doc, ChunkingConfig("recursive", **kw))]


def test_a_body_within_size_is_one_chunk(make_doc):
    doc = make_doc("aaa bbb. ccc ddd.\n\neee fff")
    assert texts(doc, size=6, unit="words") == ["aaa bbb. ccc ddd.\n\neee fff"]


def test_paragraphs_then_sentences_then_merge(make_doc):
    doc = make_doc("aaa bbb. ccc ddd.\n\neee fff")
    assert texts(doc, size=4, unit="words") == ["aaa bbb. ccc ddd.", "eee fff"]
    assert texts(doc, size=3, unit="words") == ["aaa bbb.", "ccc ddd.", "eee fff"]


def test_custom_separators_stay_with_the_piece_before(make_doc):
    doc = make_doc("ab|cd|ef", fmt="text")
    assert texts(doc, size=3, unit="chars", separators=("|",)) == ["ab|", "cd|", "ef"]
    assert texts(doc, size=6, unit="chars", separators=("|",)) == ["ab|cd|", "ef"]


def test_hard_cut_when_no_separator_is_left(make_doc):
    doc = make_doc("abcdefgh", fmt="text")
    assert texts(doc, size=3, unit="chars", separators=(" ",)) == ["abc", "def", "gh"]


def test_overlap_repeats_whole_trailing_pieces(make_doc):
    doc = make_doc("w1 w2 w3 w4 w5 w6", fmt="text")
    assert texts(doc, size=4, overlap=2, unit="words") == ["w1 w2 w3 w4", "w3 w4 w5 w6"]
    assert texts(doc, size=4, overlap=0, unit="words") == ["w1 w2 w3 w4", "w5 w6"]


def test_chunks_keep_source_text_and_lines(make_doc):
    body = "\n# Head\n\nline one here\nline two here\n\nlast paragraph"
    chunks = chunk_recursive(make_doc(body, first_line=7), ChunkingConfig("recursive", size=30, unit="chars"))
    assert [c.text for c in chunks] == ["# Head", "line one here\nline two here", "last paragraph"]
    assert [(c.location.first_line, c.location.last_line) for c in chunks] == [(8, 8), (10, 11), (13, 13)]
    assert [c.location.heading_path for c in chunks] == [("Head",)] * 3
