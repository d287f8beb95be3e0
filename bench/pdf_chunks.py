"""FinanceBench filings: how many chunks of the default chunker hold nothing but headings.

    PYTHONPATH=src .venv/bin/python bench/pdf_chunks.py --data ../shared/datasets/financebench-dev

Every filing is read with the PDF reader (ingest.pdf) and cut by the default chunker (``Settings()``'s
chunker: structure, 120 words); no search index is built. The rule:

- a chunk is *heading-only* when, once its Markdown heading lines (``#`` ... ``######``), its page
  furniture (a line that is only a page number: "12", "- 12 -", "Page 12 of 80", "iv") and its runs of
  footnote markers (a line of short numbers, commas, asterisks and daggers only: "1,2,5 2,5 3,5") are
  set aside, no line is left;
- a table chunk is *figure-less* when none of its table rows (header row included) has a digit outside
  its first column: only labels, nothing in it answers a question about a figure.

Prints the counts, their share of all chunks, the counts per filing and up to --examples examples of
each, and rewrites its section of bench/RESULTS.md (--no-append to skip); ``--json`` writes the figures
to a file.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from evidencedesk.chunking import chunk_document
from evidencedesk.config import Settings
from evidencedesk.documents import Chunk
from evidencedesk.ingest.pdf import parse_pdf
from machine_info import write_section

REPO = Path(__file__).resolve().parents[1]
SECTION = "## FinanceBench filings: chunks that hold nothing but headings"

_HEADING = re.compile(r"^#{1,6}(\s|$)")
_PAGE_NUMBER = re.compile(r"^(page\s+)?[-–—]?\s*(\d{1,4}|[ivxlcdm]{1,6})\s*[-–—]?(\s+of\s+\d{1,4})?$", re.IGNORECASE)
_MARKERS = re.compile(r"^(\(?[0-9]{1,2}[*†‡§]?\)?[,\s]*|[*†‡§]+[,\s]*)+$")
_DIGIT = re.compile(r"\d")


def content_lines(text: str) -> list[str]:
    """The lines of a chunk that are not headings, page furniture or footnote-marker runs (nor blank)."""
    kept = []
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or _HEADING.match(line) or _PAGE_NUMBER.match(line) or _MARKERS.match(line):
            continue
        kept.append(line)
    return kept


def heading_only(chunk: Chunk) -> bool:
    """True when nothing but headings, page numbers and footnote markers is left of the chunk's text."""
    return not content_lines(chunk.text)


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def header_only(chunk: Chunk) -> bool:
    """True for a table chunk none of whose rows has a digit outside its first column."""
    if chunk.kind != "table":
        return False
    rows = [line for line in chunk.text.split("\n") if line.strip().startswith("|")]
    return not any(_DIGIT.search(cell) for row in rows for cell in _cells(row)[1:])


def count(chunks: Sequence[Chunk]) -> dict[str, object]:
    """The counts over ``chunks``: all, heading-only, header-only tables, and per filing."""
    heads = [c for c in chunks if heading_only(c)]
    tables = [c for c in chunks if header_only(c)]
    per: Counter[str] = Counter(c.doc_id for c in chunks)
    per_head: Counter[str] = Counter(c.doc_id for c in heads)
    return {
        "chunks": len(chunks),
        "heading_only": len(heads),
        "table_figureless": len(tables),
        "tables": sum(c.kind == "table" for c in chunks),
        "per_filing": {d: [per_head[d], n] for d, n in sorted(per.items())},
        "examples_heading_only": [c.text for c in heads],
        "examples_table_figureless": [c.text for c in tables],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/datasets/financebench-dev"))
    ap.add_argument("--only", default="", help="comma-separated filing names (file stems)")
    ap.add_argument("--examples", type=int, default=15)
    ap.add_argument("--json", type=Path, default=None, help="write the counts here")
    ap.add_argument("--results", type=Path, default=REPO / "bench" / "RESULTS.md")
    ap.add_argument("--no-append", action="store_true", help="print only; do not rewrite RESULTS.md")
    args = ap.parse_args(argv)
    files = sorted((args.data / "pdfs").glob("*.pdf"))
    if args.only:
        wanted = {n.strip() for n in args.only.split(",") if n.strip()}
        files = [f for f in files if f.stem in wanted]
    if not files:
        print(f"no filings under {args.data / 'pdfs'}", file=sys.stderr)
        return 1
    chunking = Settings().chunker.to_chunking()
    chunks: list[Chunk] = []
    for f in files:
        doc = parse_pdf(f.read_bytes(), f.name)
        chunks.extend(chunk_document(doc, chunking))
    found = count(chunks)
    n = int(str(found["chunks"]))
    heads, tables = int(str(found["heading_only"])), int(str(found["table_figureless"]))
    print(f"filings: {len(files)}; chunks: {n:,} ({chunking.name}, {chunking.size} {chunking.unit})")
    print(f"heading-only chunks: {heads:,} ({heads / max(n, 1):.1%})")
    print(f"figure-less table chunks: {tables:,} of {found['tables']:,} tables ({tables / max(n, 1):.1%} of chunks)")
    per = found["per_filing"]
    assert isinstance(per, dict)
    for doc_id, (h, total) in per.items():
        print(f"  {doc_id}: {h} of {total}")
    for key in ("examples_heading_only", "examples_table_figureless"):
        shown = found[key]
        assert isinstance(shown, list)
        print(f"\n{key} (first {args.examples}):")
        for text in shown[: args.examples]:
            print("  " + json.dumps(text[:160]))
    if args.json:
        args.json.write_text(json.dumps(found, indent=1), encoding="utf-8")
    if not args.no_append:
        command = shlex.join(argv if argv is not None else sys.argv[1:])
        section = [
            f"{SECTION} ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)",
            "",
            f"Command: `python bench/pdf_chunks.py {command}`  ",
            f"Chunker: {chunking.name}, {chunking.size} {chunking.unit}; {len(files)} filings. Heading-only: nothing "
            "is left once Markdown heading lines, lone page numbers and runs of footnote markers are set aside. "
            "Figure-less table: no digit outside the first column of any row.",
            "",
            "| chunks | heading-only | share | table chunks | figure-less tables |",
            "|---|---|---|---|---|",
            f"| {n:,} | {heads:,} | {heads / max(n, 1):.2%} | {found['tables']:,} | {tables:,} |",
            "",
        ]
        write_section(args.results, SECTION, "\n".join(section))
    return 0


if __name__ == "__main__":
    sys.exit(main())
