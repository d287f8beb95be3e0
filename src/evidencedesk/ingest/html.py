"""HTML files: visible text as Markdown-ish lines, so chunkers treat it like Markdown.

``<h1>``-``<h6>`` become ``#``-``######`` headings, ``<pre>`` a fenced code block, tables GFM pipe
tables, list items ``- `` lines, every other block a paragraph. Scripts, styles and ``<head>`` are
dropped. Title: ``<title>``, else the first ``<h1>``, else the file stem. ``<meta name="status">``
(and id, version, valid_from, valid_to, audience, lang, tenant, supersedes, tags) set metadata;
``<html lang>`` is used when no ``lang`` meta is given. Line numbers refer to the converted text.
"""

from __future__ import annotations

from collections.abc import Mapping

from selectolax.lexbor import LexborHTMLParser, LexborNode

from evidencedesk.documents import Document
from evidencedesk.ingest.errors import IngestError
from evidencedesk.ingest.metadata import KNOWN_KEYS, declared
from evidencedesk.ingest.raw import content_hash, decode_text
from evidencedesk.ingest.sections import first_title, headings, sections

_SKIP = {"script", "style", "noscript", "template", "head", "svg", "iframe", "object", "canvas", "_comment"}
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_CELLS = {"td", "th"}


def _squash(text: str) -> str:
    return " ".join(text.split())


class _Converter:
    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.buf: list[str] = []

    def flush(self) -> None:
        lines = [_squash(line) for line in "".join(self.buf).split("\n")]
        text = "\n".join(line for line in lines if line)
        if text:
            self.blocks.append(text)
        self.buf.clear()

    def table(self, node: LexborNode) -> None:
        rows: list[str] = []
        for tr in node.css("tr"):
            cells = [
                _squash(c.text(deep=True, separator=" ")).replace("|", "\\|") for c in tr.iter() if c.tag in _CELLS
            ]
            if cells:
                rows.append("| " + " | ".join(cells) + " |")
                if len(rows) == 1:
                    rows.append("|" + " --- |" * len(cells))
        if rows:
            self.blocks.append("\n".join(rows))

    def items(self, node: LexborNode, marker: str) -> None:
        lines = [_squash(li.text(deep=True, separator=" ")) for li in node.iter() if li.tag == "li"]
        text = "\n".join(f"{marker} {line}" for line in lines if line)
        if text:
            self.blocks.append(text)

    def walk(self, node: LexborNode) -> None:
        for child in node.iter(include_text=True):
            tag = child.tag or ""
            if tag == "-text":
                self.buf.append(child.text(deep=False) or "")
            elif tag in _SKIP:
                continue
            elif tag == "br":
                self.buf.append("\n")
            elif tag in _HEADINGS:
                self.flush()
                title = _squash(child.text(deep=True, separator=" "))
                if title:
                    self.blocks.append("#" * _HEADINGS[tag] + " " + title)
            elif tag == "pre":
                self.flush()
                code = (child.text(deep=True) or "").strip("\n")
                if code.strip():
                    self.blocks.append("```\n" + code + "\n```")
            elif tag == "table":
                self.flush()
                self.table(child)
            elif tag in ("ul", "ol"):
                self.flush()
                self.items(child, "1." if tag == "ol" else "-")
            elif tag in _BLOCKS:
                self.flush()
                self.walk(child)
                self.flush()
            else:
                self.walk(child)


_BLOCKS = {
    "p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "blockquote", "ul", "ol",
    "dl", "dt", "dd", "figure", "figcaption", "form", "fieldset", "address", "hr", "body", "html", "caption",
}  # fmt: skip


def html_to_markdown(tree: LexborHTMLParser) -> str:
    """The visible text of a parsed page as Markdown-ish blocks separated by blank lines."""
    conv = _Converter()
    if tree.body is not None:
        conv.walk(tree.body)
    conv.flush()
    return "\n\n".join(conv.blocks) + ("\n" if conv.blocks else "")


def parse_html(raw: bytes, rel: str, outside: Mapping[str, object] | None = None) -> Document:
    """Parse an HTML file's bytes; ``rel`` is its path relative to the ingested folder, ``outside``
    metadata declared outside the file (the page's meta tags win over it)."""
    tree = LexborHTMLParser(decode_text(raw, rel))
    fields: dict[str, object] = {}
    for meta in tree.css("meta[name]"):
        name = (meta.attributes.get("name") or "").strip().lower().replace("-", "_")
        if name in KNOWN_KEYS and meta.attributes.get("content") is not None:
            fields[name] = meta.attributes["content"] or ""
    page_lang = (tree.root.attributes.get("lang") if tree.root is not None else None) or ""
    if "lang" not in fields and page_lang.strip():
        fields["lang"] = page_lang.strip()
    fields = {**(outside or {}), **fields}
    info = declared(rel, fields)
    text = html_to_markdown(tree)
    if not text.strip():
        raise IngestError(rel, "empty file: the page has no visible text")
    found = headings(text)
    title_node = tree.css_first("title")
    page_title = _squash(title_node.text()) if title_node is not None else ""
    return info.document(rel, "html", text, content_hash(raw), sections(text, 1, found), page_title, first_title(found))
