"""Plain lines for the terminal: wrapping with a hanging indent, and snippets of chunk text."""

from __future__ import annotations

from evidencedesk.cli.plain import snippet, wrap


def test_wrap_keeps_long_words_whole_and_indents_the_rest() -> None:
    lines = wrap("[kestrel:kc-returns-v3:c1] returns-v3.md · Returns and Refunds Policy > Return window", 40,
                 "    ", first="  ")  # fmt: skip
    assert lines[0] == "  [kestrel:kc-returns-v3:c1]"
    assert all(line.startswith("    ") and len(line) <= 40 for line in lines[1:])
    assert " ".join(" ".join(lines).split()) == (
        "[kestrel:kc-returns-v3:c1] returns-v3.md · Returns and Refunds Policy > Return window"
    )
    assert wrap("", 80, "  ") == [""]


def test_snippet_leaves_out_headings_and_marks_where_the_text_goes_on() -> None:
    text = (
        "## Return window\n\nYou can return most items within 30 days of the delivery date.\n\n" + "More words. " * 30
    )
    lines = snippet(text, 50, indent="   ")
    assert len(lines) == 2 and all(len(line) <= 50 and line.startswith("   ") for line in lines)
    assert lines[0] == "   You can return most items within 30 days of the"
    assert lines[1].endswith(" ...")
    assert snippet("# Only a heading\n", 50) == []
    assert snippet("Short text.", 50, indent="  ") == ["  Short text."]
