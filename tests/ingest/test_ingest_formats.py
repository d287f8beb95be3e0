from collections.abc import Callable

import pytest

from evidencedesk.documents import Section
from evidencedesk.ingest import IngestError, doc_id_from_path, parse_html, parse_pdf, parse_text

PAGE = b"""<!DOCTYPE html>
<html lang="bn">
<head>
  <title>Contact   us</title>
  <meta name="status" content="draft">
  <meta name="audience" content="staff">
  <meta name="valid-from" content="2025-02-01">
  <meta name="tags" content="contact, phone">
  <meta name="viewport" content="width=device-width">
  <style>p { color: red }</style>
</head>
<body>
  <script>var hidden = "never shown";</script>
  <h1>Contact</h1>
  <p>Call us <b>any</b> day.</p>
  <h2>Email</h2>
  <p>Write to help@example.org.</p>
  <ul><li>Orders</li><li>Returns</li></ul>
  <h3>Response times</h3>
  <table><tr><th>Channel</th><th>Reply</th></tr><tr><td>Email</td><td>1 day</td></tr></table>
  <h2>Code</h2>
  <pre>line one
  indented</pre>
</body>
</html>
"""


def test_html_becomes_markdown_like_text_with_sections() -> None:
    doc = parse_html(PAGE, "site/contact.html")
    assert doc.format == "html"
    assert doc.id == "site-contact"
    assert doc.title == "Contact us"
    assert doc.text == (
        "# Contact\n\nCall us any day.\n\n## Email\n\nWrite to help@example.org.\n\n- Orders\n- Returns\n\n"
        "### Response times\n\n| Channel | Reply |\n| --- | --- |\n| Email | 1 day |\n\n"
        "## Code\n\n```\nline one\n  indented\n```\n"
    )
    assert "never shown" not in doc.text and "color" not in doc.text
    assert doc.sections == (
        Section(("Contact",), 1, 3),
        Section(("Contact", "Email"), 5, 10),
        Section(("Contact", "Email", "Response times"), 12, 16),
        Section(("Contact", "Code"), 18, 23),
    )


def test_html_meta_tags_set_metadata_and_html_lang_is_used() -> None:
    m = parse_html(PAGE, "contact.html").metadata
    assert (m.status, m.audience, m.lang) == ("draft", "staff", "bn")
    assert str(m.valid_from) == "2025-02-01"
    assert m.tags == ("contact", "phone")
    assert m.extra == {}  # unrelated meta tags (viewport) are not metadata


def test_html_title_falls_back_to_h1_then_stem() -> None:
    assert parse_html(b"<h1>Heading</h1><p>x</p>", "a.html").title == "Heading"
    assert parse_html(b"<p>only text</p>", "b.htm").title == "b"


def test_html_bad_meta_and_empty_page_fail() -> None:
    with pytest.raises(IngestError, match="invalid status 'old'"):
        parse_html(b'<meta name="status" content="old"><p>x</p>', "a.html")
    with pytest.raises(IngestError, match="no visible text"):
        parse_html(b"<html><head><title>t</title></head><body><script>x()</script></body></html>", "a.html")


def test_pdf_sections_carry_their_page(text_pdf: Callable[..., bytes]) -> None:
    raw = text_pdf(["Brake pads last 2000 km.\nReplace below 1.5 mm.", "", "Check cables monthly."], title="Brakes")
    doc = parse_pdf(raw, "manuals/brakes.pdf")
    assert doc.format == "pdf" and doc.id == "manuals-brakes" and doc.title == "Brakes"
    assert "Brake pads last 2000 km." in doc.text and "Check cables monthly." in doc.text
    lines = doc.text.split("\n")
    assert [(s.heading_path, s.page) for s in doc.sections] == [((), 1), ((), 3)]
    first, third = doc.sections
    assert lines[first.first_line - 1] == "Brake pads last 2000 km."
    assert lines[first.last_line - 1] == "Replace below 1.5 mm."
    assert lines[third.first_line - 1] == lines[third.last_line - 1] == "Check cables monthly."


def test_pdf_without_text_layer_and_broken_pdf_fail(drawing_pdf: bytes) -> None:
    with pytest.raises(IngestError) as info:
        parse_pdf(drawing_pdf, "scan.pdf")
    assert info.value.path == "scan.pdf" and info.value.reason.startswith("PDF has no text layer")
    with pytest.raises(IngestError, match="not a PDF"):
        parse_pdf(b"hello", "fake.pdf")
    with pytest.raises(IngestError, match="not a readable PDF"):
        parse_pdf(b"%PDF-1.4\n garbage", "cut.pdf")


def test_plain_text_has_defaults_and_one_untitled_section() -> None:
    doc = parse_text(b"\n# not a heading in text\nsecond\n\n", "Notes/Store Hours.txt")
    assert doc.id == "notes-store-hours" and doc.title == "Store Hours" and doc.format == "text"
    assert doc.sections == (Section((), 2, 3),)
    assert doc.metadata.status == "current" and doc.metadata.audience == "public"


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        ("a.md", "a"),
        ("Sub/Dir/File Name.MD", "sub-dir-file-name"),
        ("x/y.tar.txt", "x-y-tar"),
        ("ünï côdé.txt", "-n--c-d-"),
        ("keep_under-score.md", "keep_under-score"),
    ],
)
def test_doc_id_from_path(rel: str, expected: str) -> None:
    assert doc_id_from_path(rel) == expected


def test_decoding_errors_name_offsets() -> None:
    with pytest.raises(IngestError, match=r"binary file: NUL byte at offset 3"):
        parse_text(b"abc\x00def", "b.txt")
    with pytest.raises(IngestError, match=r"not UTF-8: invalid byte 0xff at offset 5"):
        parse_text(b"hello\xff world", "l.txt")
    with pytest.raises(IngestError, match="empty file"):
        parse_text(b"  \n\t\n", "e.txt")
