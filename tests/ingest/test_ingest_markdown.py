from datetime import date

import pytest

from evidencedesk.documents import Section
from evidencedesk.ingest import IngestError, parse_markdown

FULL = """---
id: kc-returns-v3
title: Returns Policy
version: 3
status: superseded
valid_from: 2026-01-01
valid_to: "2026-06-30"
audience: staff
lang: bn
tenant: kestrel
supersedes: kc-returns-v2
tags: [returns, refunds]
owner: Nadia
review: {every: 12, next: 2026-12-01}
---

# Returns Policy

Intro line.

## Window

Thirty days.

### Bikes

Twenty km.
## Refunds
Money back.
"""


def test_front_matter_keys_become_metadata() -> None:
    doc = parse_markdown(FULL.encode(), "policies/returns.md")
    assert doc.id == "kc-returns-v3"
    assert doc.title == "Returns Policy"
    assert doc.format == "markdown"
    assert doc.path == "policies/returns.md"
    m = doc.metadata
    assert m.version == "3"
    assert m.status == "superseded"
    assert m.valid_from == date(2026, 1, 1)  # YAML date object
    assert m.valid_to == date(2026, 6, 30)  # quoted string
    assert (m.audience, m.lang, m.tenant, m.supersedes) == ("staff", "bn", "kestrel", "kc-returns-v2")
    assert m.tags == ("returns", "refunds")


def test_unknown_keys_are_kept_json_safe_in_extra() -> None:
    doc = parse_markdown(FULL.encode(), "returns.md")
    assert doc.metadata.extra == {"owner": "Nadia", "review": {"every": 12, "next": "2026-12-01"}}


def test_body_starts_after_front_matter_and_first_line_is_its_source_line() -> None:
    doc = parse_markdown(FULL.encode(), "returns.md")
    source = FULL.split("\n")
    assert doc.first_line == 16  # line 15 is the closing ---
    assert doc.text.split("\n")[0] == source[doc.first_line - 1] == ""
    assert not doc.text.startswith("---")
    body = doc.text.split("\n")
    for i, line in enumerate(body[:-1]):
        assert source[doc.first_line - 1 + i] == line


def test_sections_heading_paths_and_source_lines() -> None:
    doc = parse_markdown(FULL.encode(), "returns.md")
    # Checked by hand against FULL: "# Returns Policy" is file line 17, "## Window" 21,
    # "### Bikes" 25, "## Refunds" 28 (no blank line before it), "Money back." 29.
    assert doc.sections == (
        Section(("Returns Policy",), 17, 19),
        Section(("Returns Policy", "Window"), 21, 23),
        Section(("Returns Policy", "Window", "Bikes"), 25, 27),
        Section(("Returns Policy", "Refunds"), 28, 29),
    )


def test_text_before_first_heading_is_an_untitled_section_and_code_fences_hide_hashes() -> None:
    text = "Preamble.\n\n# Top\n\n```\n# not a heading\n```\n\n## Sub\nx\n"
    doc = parse_markdown(text.encode(), "a.md")
    assert doc.sections == (Section((), 1, 1), Section(("Top",), 3, 7), Section(("Top", "Sub"), 9, 10))


def test_no_front_matter_gets_defaults_and_id_from_path() -> None:
    doc = parse_markdown(b"Just text, no heading.\n", "Guides/How To (v2).md")
    assert doc.id == "guides-how-to--v2-"
    assert doc.title == "How To (v2)"
    assert doc.first_line == 1
    m = doc.metadata
    assert (m.status, m.audience, m.lang, m.tenant) == ("current", "public", "en", "default")
    assert m.valid_from is None and m.extra == {}


def test_title_falls_back_to_first_level_one_heading() -> None:
    doc = parse_markdown(b"---\nid: x\n---\n## Minor\n\n# Main *title*\n", "x.md")
    assert doc.title == "Main title"


def test_content_hash_is_sha256_of_raw_bytes() -> None:
    import hashlib

    raw = FULL.encode()
    assert parse_markdown(raw, "r.md").content_hash == hashlib.sha256(raw).hexdigest()


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("---\nid: a\ntitle: [unclosed\nstatus: current\n---\nbody\n", "broken front matter at line 4"),
        ("---\nid: a\n  bad: indent\n---\nbody\n", "broken front matter at line 3"),
        ("---\nid: a\nstatus: current\nbody without closing fence\n", "never closed"),
        ("---\n- a\n- b\n---\nbody\n", "expected key: value pairs"),
    ],
)
def test_broken_front_matter_names_the_line(source: str, expected: str) -> None:
    with pytest.raises(IngestError) as info:
        parse_markdown(source.encode(), "bad.md")
    assert expected in info.value.reason
    assert info.value.path == "bad.md"


def test_yaml_error_line_counts_from_file_start() -> None:
    source = "---\nid: a\ntitle: ok\nversion: 2\ntags: [a, b\nstatus: current\n---\nbody\n"
    with pytest.raises(IngestError) as info:
        parse_markdown(source.encode(), "bad.md")
    # The flow sequence opened on line 5 is broken where PyYAML notices it: line 6.
    assert "broken front matter at line 6" in info.value.reason


@pytest.mark.parametrize("value", ["01/02/2026", "2026-13-01", "soon", "2026/01/01"])
def test_unknown_date_format_names_key_and_value(value: str) -> None:
    with pytest.raises(IngestError) as info:
        parse_markdown(f"---\nvalid_to: '{value}'\n---\nbody\n".encode(), "d.md")
    assert info.value.reason == f"unknown date format for valid_to: {value!r} (expected YYYY-MM-DD)"


def test_date_that_is_neither_date_nor_string_fails() -> None:
    with pytest.raises(IngestError) as info:
        parse_markdown(b"---\nvalid_from: 20260101\n---\nbody\n", "d.md")
    assert info.value.reason == "unknown date format for valid_from: 20260101 (expected YYYY-MM-DD)"


def test_invalid_status_and_reversed_dates_fail() -> None:
    with pytest.raises(IngestError, match="invalid status 'archived'"):
        parse_markdown(b"---\nstatus: archived\n---\nbody\n", "s.md")
    with pytest.raises(IngestError, match="before valid_from"):
        parse_markdown(b"---\nvalid_from: 2026-05-01\nvalid_to: 2026-01-01\n---\nbody\n", "s.md")


def test_front_matter_without_body_is_empty() -> None:
    with pytest.raises(IngestError, match="empty file: no text after the front matter"):
        parse_markdown(b"---\nid: a\n---\n\n", "e.md")


def test_crlf_and_bom_are_normalised() -> None:
    doc = parse_markdown("\ufeff---\r\nid: w\r\n---\r\n# T\r\nline\r\n".encode(), "w.md")
    assert doc.id == "w" and doc.text == "# T\nline\n" and doc.sections == (Section(("T",), 4, 5),)
