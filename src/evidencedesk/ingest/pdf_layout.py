"""From a PDF's visual lines to Markdown blocks: paragraphs, headings and tables, each with its page.

- Running headers and footers: a line among the first or last three of a page whose text (digits
  ignored) recurs on at least a quarter of the pages (and on three or more) is dropped, and so is a
  lone page number there ("12", "- 12 -", "Page 12", "iv").
- Paragraphs: consecutive lines of one font size and weight, less than 1.6 line heights apart, are
  joined with a space while the earlier line runs to the right margin or does not end a sentence;
  a word hyphenated across a line break is rejoined. A paragraph that does not end a sentence on one
  page continues with the first line of the next page when that line carries on the same text.
- Headings: a short paragraph (at most 20 words) in a font larger than the body text, or bold when
  the body is not; never a bulleted list item or a line that ends on "and", "of", "the" (a phrase cut
  off), which would otherwise head every later section ("AMCOR PLC > • attractive relative growth, and"),
  nor a form's check-box line ("o TRANSITION REPORT PURSUANT TO ..."). Heading levels follow the font
  size, larger first, so heading paths nest.
- Tables: runs of lines ending in two or more figures (amounts, percentages, years, dashes), with
  label-only lines between them (a wrapped label, or a group label such as "Current assets:"), become
  GFM pipe tables whose first row is the header; a line of figures alone is the continuation of the
  label above it. A table without a header of its own (its first row is a labelled row of figures)
  continues the table before it when that one has as many columns and a header, and either closed the
  page before (this table opening the page) or lies on the same page at most two blocks above, with no
  heading between (a long wrapped label, a note): it gets that table's header row.
- Footnote markers and continuation notes: a paragraph that is nothing but a run of markers
  ("1,2,5 2,5 3,5", "(1)", "* * *") annotates nothing once set apart from its figures, and one that
  only says the page goes on ("(Continued on following page)", "Continued") is furniture: both are dropped.

The result is Markdown text (one line per paragraph, blank lines between blocks) and, for every
line of that text, the 1-based page it came from.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from evidencedesk.ingest.pdf_lines import Line

EDGE_LINES = 3
_DIGITS = re.compile(r"\d+")
_PAGE_NUMBER = re.compile(r"^(page\s+)?[-–—]?\s*(\d{1,4}|[ivxlcdm]{1,6})\s*[-–—]?(\s+of\s+\d{1,4})?$", re.IGNORECASE)
_FIGURE = re.compile(r"^[(\[]?[$€£¥]?[(]?[-+]?((\d{1,3}(,\d{3})+|\d+)(\.\d+)?|\.\d+)%?[)\]]?[*%]?$")
_FILLER = {"—", "–", "-", "$", "%", "n/a", "N/A", "NM", "nm", "*", "€", "£"}
_BULLET = re.compile(r"^([•●▪◦■□‣∙·*]|\(?[a-z0-9]{1,3}\)|\d{1,2}\.\s)")
_TERMINAL = ".!?:;)\"'”’"
_MARKDOWN_START = re.compile(r"^(#|```|~~~|[=]{3,}\s*$|[-*_]{3,}\s*$)")
_MARKERS = re.compile(r"^(\(?\d{1,2}[*†‡§]?\)?[,\s]*|\(?[a-z]\)[,\s]*|[*†‡§]+[,\s]*)+$")
_CONTINUED = re.compile(
    r"^[(\[]?(table\s+)?continued(\s+(on|from)\s+(the\s+)?(following|next|previous|preceding)\s+page)?[)\]]?\.?$",
    re.IGNORECASE,
)
CONTINUED_AFTER = 3  # blocks (footnotes, a "continued" line) that may follow a table continued on the next page


def _key(text: str) -> str:
    return _DIGITS.sub("#", text.lower()).strip()


def drop_running_lines(pages: list[list[Line]]) -> list[list[Line]]:
    """Pages without their running headers, footers and page numbers (see the module docstring)."""
    n = len(pages)
    seen: Counter[str] = Counter()
    for lines in pages:
        edge = lines[:EDGE_LINES] + lines[-EDGE_LINES:] if len(lines) > 2 * EDGE_LINES else lines
        seen.update({_key(line.text) for line in edge})
    needed = max(3, n // 4)
    repeated = {key for key, count in seen.items() if count >= needed} if n >= 3 else set()
    out: list[list[Line]] = []
    for lines in pages:
        edges = set(range(min(EDGE_LINES, len(lines)))) | set(range(max(0, len(lines) - EDGE_LINES), len(lines)))
        out.append(
            [
                line
                for i, line in enumerate(lines)
                if not (i in edges and (_key(line.text) in repeated or _PAGE_NUMBER.match(line.text)))
            ]
        )
    return out


def figures(text: str) -> tuple[str, list[str]]:
    """``(label, cells)``: the trailing figures of a line (``$`` joined to its amount) and the text before."""
    tokens = text.split(" ")
    i = len(tokens)
    while i > 0 and (_FIGURE.match(tokens[i - 1]) or tokens[i - 1] in _FILLER):
        i -= 1
    cells: list[str] = []
    for token in tokens[i:]:
        if cells and cells[-1] in ("$", "€", "£") and token not in _FILLER:
            cells[-1] = cells[-1] + " " + token
        elif cells and token in ("%",) and cells[-1] not in _FILLER:
            cells[-1] += token
        else:
            cells.append(token)
    cells = [c for c in cells if c not in ("$", "€", "£")]
    return " ".join(tokens[:i]), cells


def _is_row(text: str) -> bool:
    label, cells = figures(text)
    numeric = [c for c in cells if any(ch.isdigit() for ch in c)]
    return len(cells) >= 2 and len(numeric) >= 1 and len(label.split()) <= 25


@dataclass
class Block:
    kind: str  # "text", "heading", "table"
    page: int
    lines: list[Line] = field(default_factory=list)
    text: str = ""
    rows: list[list[str]] = field(default_factory=list)
    level: int = 0


def _ends_sentence(text: str) -> bool:
    return bool(text) and text[-1] in _TERMINAL


def _join(a: str, b: str) -> str:
    if len(a) > 1 and a.endswith("-") and a[-2].isalpha() and b[:1].islower():
        return a[:-1] + b
    return a + " " + b


def _same_style(a: Line, b: Line) -> bool:
    return abs(a.size - b.size) < 0.6 and a.bold == b.bold


def _table(lines: list[Line]) -> Block:
    rows: list[tuple[str, list[str]]] = []
    for line in lines:
        label, cells = figures(line.text)
        if not label and cells and rows and not rows[-1][1]:
            rows[-1] = (rows[-1][0], cells)  # figures continuing the label above
        else:
            rows.append((label, cells))
    width = max(len(cells) for _, cells in rows)
    table = [[label.replace("|", "\\|")] + [""] * (width - len(cells)) + [c.replace("|", "\\|") for c in cells]
             for label, cells in rows]  # fmt: skip
    return Block("table", lines[0].page, list(lines), rows=table)


def _table_spans(lines: Sequence[Line]) -> list[tuple[int, int]]:
    """``(first, last)`` index ranges of ``lines`` that form tables (at least two figure rows)."""
    rows = [_is_row(line.text) for line in lines]
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        if not rows[i]:
            i += 1
            continue
        start = end = i
        n_rows = 1
        j = i + 1
        while j < len(lines):
            if rows[j]:
                end, n_rows = j, n_rows + 1
                j += 1
                continue
            text = lines[j].text
            label = not _ends_sentence(text) or text.endswith(":")
            if len(text.split()) <= 14 and label and j + 1 < len(lines) and j - end <= 2:
                j += 1  # a label-only line inside the table (a group label or a wrapped label)
                continue
            break
        if n_rows >= 2:
            spans.append((start, end))
        i = end + 1
    return spans


def page_blocks(lines: Sequence[Line], body_size: float, body_bold: bool, right: float) -> list[Block]:
    """The blocks of one page's lines (running lines already dropped)."""
    tables = {first: last for first, last in _table_spans(lines)}
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        if i in tables:
            blocks.append(_table(list(lines[i : tables[i] + 1])))
            i = tables[i] + 1
            continue
        line = lines[i]
        prev = blocks[-1] if blocks and blocks[-1].kind == "text" and blocks[-1].lines else None
        if prev is not None and _continues(prev.lines[-1], line, prev.text, right):
            prev.text = _join(prev.text, line.text)
            prev.lines.append(line)
        else:
            blocks.append(Block("text", line.page, [line], line.text))
        i += 1
    blocks = [b for b in blocks if b.kind != "text" or not (_MARKERS.match(b.text) or _CONTINUED.match(b.text))]
    for block in blocks:
        if block.kind == "text" and _looks_heading(block, body_size, body_bold):
            block.kind = "heading"
    return blocks


_YEAR = re.compile(r"^(FY|Q[1-4]\s?)?(19|20)\d{2}$")


def _has_header(table: Block) -> bool:
    """True when the table's first row is a header: no label, or beside its label no figure but years."""
    first = table.rows[0]
    return not first[0].strip() or all(_YEAR.match(c) or not any(ch.isdigit() for ch in c) for c in first[1:])


def continue_table(before: Sequence[Block], found: Sequence[Block]) -> None:
    """Give the first table of a page (``found``) the header row of the last table of the page before
    (``before``) when it continues that table (see the module docstring)."""
    last = next((n for n in range(len(before) - 1, -1, -1) if before[n].kind == "table"), None)
    first = next((n for n, b in enumerate(found) if b.kind == "table"), None)
    if last is None or first is None or len(before) - 1 - last > CONTINUED_AFTER:
        return
    if any(b.kind != "heading" and len(b.text.split()) > 14 for b in found[:first]):
        return  # prose above it: a table of its own
    _carry_header(before[last], found[first])


def continue_tables(blocks: Sequence[Block]) -> None:
    """Give each table of one page without a header the header of the table just above it (see the
    module docstring)."""
    for n, table in enumerate(blocks):
        if table.kind != "table":
            continue
        for k in range(n - 1, max(-1, n - 4), -1):
            if blocks[k].kind == "heading":
                break
            if blocks[k].kind == "table":
                _carry_header(blocks[k], table)
                break


def _carry_header(prev: Block, table: Block) -> None:
    if len(prev.rows[0]) == len(table.rows[0]) and not _has_header(table) and _has_header(prev):
        table.rows.insert(0, list(prev.rows[0]))


def _continues(prev: Line, line: Line, text: str, right: float) -> bool:
    if not _same_style(prev, line) or _BULLET.match(line.text):
        return False
    gap = line.top - prev.top
    if gap <= 0 or gap > 1.6 * max(prev.size, 1.0):
        return False
    full = prev.x1 >= right - 3 * max(prev.size, 1.0)
    return full or not _ends_sentence(text)


# a bullet, or a form's check box ("☒ ANNUAL REPORT", "o TRANSITION REPORT" where the box font lost its glyph)
_SYMBOL_BULLET = re.compile(r"^([•●▪◦■□‣∙·*☐☑☒✓✔]|[xo]\s+(?=[A-Z]))")
_OPEN_END = {"and", "or", "of", "the", "to", "in", "for", "with", "a", "an"}  # a heading does not end on these


def _looks_heading(block: Block, body_size: float, body_bold: bool) -> bool:
    first = block.lines[0]
    words = block.text.split()
    if not words or len(words) > 20 or not any(c.isalpha() for c in block.text) or block.text.endswith(","):
        return False
    if _SYMBOL_BULLET.match(block.text) or words[-1].lower() in _OPEN_END:
        return False  # a list item in a large or bold font ("• attractive relative growth, and") is text
    if first.size >= body_size * 1.12 and first.size - body_size >= 1.0:
        return True
    return first.bold and not body_bold and abs(first.size - body_size) < 0.6 and len(words) <= 14


def _body_style(pages: Sequence[Sequence[Line]]) -> tuple[float, bool]:
    sizes: Counter[float] = Counter()
    bold: Counter[bool] = Counter()
    for lines in pages:
        for line in lines:
            sizes[line.size] += len(line.text)
            bold[line.bold] += len(line.text)
    if not sizes:
        return 10.0, False
    return sizes.most_common(1)[0][0], bold.most_common(1)[0][0]


def _right_margin(lines: Sequence[Line]) -> float:
    edges = sorted(line.x1 for line in lines)
    return edges[int(0.9 * (len(edges) - 1))] if edges else 0.0


def _levels(blocks: Sequence[Block]) -> dict[tuple[float, bool], int]:
    styles = sorted({(b.lines[0].size, b.lines[0].bold) for b in blocks if b.kind == "heading"}, reverse=True)
    return {style: min(n + 1, 6) for n, style in enumerate(styles)}


def _escape(text: str) -> str:
    return "\\" + text if _MARKDOWN_START.match(text) else text


def to_markdown(pages: list[list[Line]]) -> tuple[str, list[int]]:
    """Markdown text of the document and the page of each of its lines (see the module docstring)."""
    text, page_of, _ = layout(pages)
    return text, page_of


def layout(pages: list[list[Line]]) -> tuple[str, list[int], str | None]:
    """``to_markdown``'s text and pages, and the document's title: its first heading in the largest heading font."""
    pages = drop_running_lines(pages)
    body_size, body_bold = _body_style(pages)
    blocks: list[Block] = []
    for lines in pages:
        if not lines:
            continue
        found = page_blocks(lines, body_size, body_bold, _right_margin(lines))
        if blocks and found and blocks[-1].kind == "text" and found[0].kind == "text":
            last, head = blocks[-1], found[0]
            if (
                not _ends_sentence(last.text)
                and _same_style(last.lines[-1], head.lines[0])
                and not _BULLET.match(head.text)
                and (head.text[:1].islower() or last.text.endswith(","))
            ):
                last.text = _join(last.text, head.text)
                last.lines.extend(head.lines)
                found = found[1:]
        continue_table(blocks, found)
        continue_tables(found)
        blocks.extend(found)
    levels = _levels(blocks)
    headings = [b for b in blocks if b.kind == "heading"]
    largest = max(((b.lines[0].size, b.lines[0].bold) for b in headings), default=None)
    title = next((b.text for b in headings if (b.lines[0].size, b.lines[0].bold) == largest), None)
    out: list[str] = []
    page_of: list[int] = []

    def emit(text: list[str], page: int) -> None:
        if out:
            out.append("")
            page_of.append(page)
        out.extend(text)
        page_of.extend([page] * len(text))

    for block in blocks:
        if block.kind == "heading":
            level = levels[(block.lines[0].size, block.lines[0].bold)]
            emit(["#" * level + " " + block.text], block.page)
        elif block.kind == "table":
            header, *rest = block.rows
            table = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
            table += ["| " + " | ".join(row) + " |" for row in rest]
            emit(table, block.page)
        else:
            emit([_escape(block.text)], block.page)
    return "\n".join(out) + ("\n" if out else ""), page_of, title
