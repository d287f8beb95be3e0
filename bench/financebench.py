"""FinanceBench filings: PDF reading speed and quality, and retrieval of the gold page, pypdf before vs PDFium after.

    PYTHONPATH=src .venv/bin/python bench/financebench.py --data ../shared/datasets/financebench-dev

- speed: the first --speed-pages pages of every filing, read by pypdf (``extract_text``, the reader
  this project used before), by the PDFium layout reader (ingest.pdf: lines, paragraphs, headings,
  tables) and by pdfplumber (``extract_text``, on --plumber-pages pages per filing: it is slow), in
  one run, as pages per second; the PDFium reader also over every page of every filing;
- chunks: default chunker (structure, 120 words); a text chunk "ends mid-sentence" when its last
  character is not one of ``. ! ? : ; )`` or a closing quote and the document's next chunk goes on
  with a lowercase letter (the sentence was cut, as in "... to $762.7" / "million compared to ...");
  the share without final punctuation at all (labels, list items, signatures included) is shown too;
  chunks ending in a heading and table or code chunks (cut between rows by design) are not counted;
- retrieval: every filing in one collection, the default scope, each question searched as written;
  gold page in top 5 = one of the top 5 chunks comes from the question's filing and lies on an
  evidence page; gold filing in top 5 = one of them comes from the question's filing. Before: one
  section per page (pypdf text); after: chunk locations carry their pages.

pypdf's documents are cached in --cache-dir (they do not change), as are dense embeddings, so a rerun
parses with pypdf only the --speed-pages sample. Search uses the default settings (``Settings()``:
hybrid BM25 + dense, contextual chunk text, at most one chunk per page) unless --methods names single
legs; the PDFium rows are also searched with ``retrieval.collapse: none``. Prints tables and rewrites
its section of bench/RESULTS.md (--no-append to skip).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import time
import warnings
from collections.abc import Sequence
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path
from typing import Any

from evidencedesk.config import Settings
from evidencedesk.desk import searcher_params
from evidencedesk.documents import Chunk, Document, Metadata, Section
from evidencedesk.ingest.pdf import parse_pdf
from evidencedesk.ingest.pdf_layout import to_markdown
from evidencedesk.ingest.pdf_lines import page_lines
from evidencedesk.ingest.raw import content_hash, doc_id_from_path
from evidencedesk.retrieval.factory import make_searcher
from evidencedesk.wiring import with_collapse
from machine_info import machine, write_section

REPO = Path(__file__).resolve().parents[1]
SECTION = "## FinanceBench filings: PDF reading and gold-page retrieval"
_CLOSERS = ".!?:;)\"'”’"


def pypdf_pages(raw: bytes, limit: int | None = None) -> list[str]:
    from pypdf import PdfReader

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reader = PdfReader(BytesIO(raw))
        pages = reader.pages if limit is None else reader.pages[:limit]
        return [(p.extract_text() or "").replace("\r\n", "\n").replace("\r", "\n").strip("\n") for p in pages]


def pypdf_document(raw: bytes, rel: str) -> Document:
    """The document the pypdf reader made: page texts as they come, one section ``page N`` per page."""
    parts: list[str] = []
    found: list[Section] = []
    line = 1
    for number, page in enumerate(pypdf_pages(raw), start=1):
        if not page.strip():
            continue
        n = len(page.split("\n"))
        found.append(Section((f"page {number}",), line, line + n - 1))
        parts.append(page)
        line += n + 1
    return Document(doc_id_from_path(rel), Path(rel).stem, rel, "pdf", "\n\n".join(parts) + "\n",
                    content_hash(raw), Metadata(), tuple(found))  # fmt: skip


def pdfium_sample(raw: bytes, limit: int) -> str:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(raw)
    try:
        pages = []
        for i in range(min(limit, len(pdf))):
            page = pdf[i]
            pages.append(page_lines(page, i + 1))
            page.close()
    finally:
        pdf.close()
    return to_markdown(pages)[0]


def plumber_sample(raw: bytes, limit: int) -> int:
    import pdfplumber

    with pdfplumber.open(BytesIO(raw)) as pdf:
        for page in pdf.pages[:limit]:
            page.extract_text()
        return min(limit, len(pdf.pages))


def page_count(raw: bytes) -> int:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(raw)
    try:
        return len(pdf)
    finally:
        pdf.close()


def timed(fn: Any, *args: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def chunk_pages(chunk: Chunk) -> set[int]:
    if chunk.location.pages:
        return set(range(chunk.location.pages[0], chunk.location.pages[-1] + 1))
    return {int(h.split()[1]) for h in chunk.location.heading_path if re.fullmatch(r"page \d+", h)}


def mid_sentence(chunks: Sequence[Chunk]) -> tuple[int, int, int]:
    """(text chunks whose sentence runs on into the next chunk, text chunks without final punctuation,
    text chunks); heading-only endings are not sentences and are left out."""
    runs_on = unpunctuated = texts = 0
    for i, c in enumerate(chunks):
        if c.kind != "text":
            continue
        last = c.text.rstrip().split("\n")[-1].strip()
        if last.startswith("#"):
            continue
        texts += 1
        if last and last[-1] not in _CLOSERS:
            unpunctuated += 1
            following = chunks[i + 1] if i + 1 < len(chunks) else None
            if following is not None and following.doc_id == c.doc_id and following.text.lstrip()[:1].islower():
                runs_on += 1
    return runs_on, unpunctuated, texts


def load_questions(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def retrieval(chunks: list[Chunk], questions: list[dict[str, Any]], method: str, settings: Settings,
              cache: Path, k: int) -> tuple[float, float, float]:  # fmt: skip
    """(gold page in top k, gold filing in top k, seconds to build the searcher) over ``questions``."""
    params = searcher_params(settings, method, cache / "embeddings.sqlite")
    searcher, built = timed(lambda: with_collapse(make_searcher(method, chunks, **params.as_kwargs()), settings))
    scope = settings.scope.to_scope()
    page_hits = filing_hits = 0
    for q in questions:
        filing = doc_id_from_path(q["doc_name"] + ".pdf")
        gold = {int(e["evidence_page_num"]) + 1 for e in q["evidence"]}
        top = searcher.search(q["question"], k, scope)
        filing_hits += any(c.chunk.doc_id == filing for c in top)
        page_hits += any(c.chunk.doc_id == filing and chunk_pages(c.chunk) & gold for c in top)
    return page_hits / len(questions), filing_hits / len(questions), built


def cached_pypdf(raw: bytes, rel: str, cache: Path) -> Document:
    path = cache / "pypdf" / (content_hash(raw) + ".json")
    if path.exists():
        return Document.from_dict(json.loads(path.read_text(encoding="utf-8")))
    doc = pypdf_document(raw, rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc.to_dict()), encoding="utf-8")
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/datasets/financebench-dev"))
    ap.add_argument("--speed-pages", type=int, default=10, help="pages per filing timed with every reader")
    ap.add_argument("--plumber-pages", type=int, default=3, help="pages per filing timed with pdfplumber")
    ap.add_argument("--methods", default="hybrid", help="comma-separated search methods (hybrid = the default)")
    ap.add_argument(
        "--before-methods",
        default=None,
        help="search methods for the pypdf run (default: --methods); bm25 spares embedding it",
    )
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated filing names (file stems): a smaller collection")
    ap.add_argument("--cache-dir", type=Path, default=Path(".bench-cache/financebench"))
    ap.add_argument("--results", type=Path, default=REPO / "bench" / "RESULTS.md")
    ap.add_argument("--no-append", action="store_true", help="print only; do not rewrite RESULTS.md")
    args = ap.parse_args(argv)
    files = sorted((args.data / "pdfs").glob("*.pdf"))
    if args.only:
        wanted = {name.strip() for name in args.only.split(",") if name.strip()}
        files = [f for f in files if f.stem in wanted]
    if not files or not (args.data / "questions.jsonl").exists():
        print(f"no filings under {args.data} (expected pdfs/*.pdf and questions.jsonl)", file=sys.stderr)
        return 1
    header = machine()
    settings = Settings()
    from evidencedesk.chunking import chunk_document

    chunking = settings.chunker.to_chunking()
    raws = {f.name: f.read_bytes() for f in files}

    # speed on the same sample pages, in one run
    sample = {"pypdf": 0.0, "pdfium": 0.0, "plumber": 0.0}
    n_sample = n_plumber = 0
    for raw in raws.values():
        n = min(args.speed_pages, page_count(raw))
        n_sample += n
        sample["pypdf"] += timed(pypdf_pages, raw, n)[1]
        sample["pdfium"] += timed(pdfium_sample, raw, n)[1]
        if args.plumber_pages:
            pages, secs = timed(plumber_sample, raw, args.plumber_pages)
            n_plumber += pages
            sample["plumber"] += secs
    # every page: the new reader (timed) and pypdf (cached)
    after: list[Document] = []
    before: list[Document] = []
    total_pages = 0
    full_secs = 0.0
    print(f"speed sample done: {n_sample} pages", file=sys.stderr, flush=True)
    for name, raw in raws.items():
        print(f"reading {name}", file=sys.stderr, flush=True)
        total_pages += page_count(raw)
        doc, secs = timed(parse_pdf, raw, name)
        full_secs += secs
        after.append(doc)
        before.append(cached_pypdf(raw, name, args.cache_dir))
    runs: dict[str, list[Chunk]] = {}
    for label, docs in (("before (pypdf)", before), ("after (PDFium layout)", after)):
        runs[label] = [c for d in docs for c in chunk_document(d, chunking)]
    stems = {f.stem for f in files}
    questions = [q for q in load_questions(args.data / "questions.jsonl") if q["doc_name"] in stems]

    speed_rows = [
        ("pypdf extract_text", n_sample, sample["pypdf"]),
        ("PDFium layout reader (ours)", n_sample, sample["pdfium"]),
    ]
    if n_plumber:
        speed_rows.append(("pdfplumber extract_text", n_plumber, sample["plumber"]))
    base = n_sample / sample["pypdf"]
    lines = [
        f"{SECTION} ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)",
        "",
        f"Machine: {header}; a shared, loaded machine: absolute rates are low, compare the ratios.  ",
        f"Command: `python bench/financebench.py {shlex.join(argv if argv is not None else sys.argv[1:])}`  ",
        f"Data: {len(files)} filings, {total_pages} pages, {len(questions)} questions.",
        "",
        "| reader | pages timed | pages/s | vs pypdf |",
        "|---|---|---|---|",
    ]
    for label, pages, secs in speed_rows:
        rate = pages / secs
        lines.append(f"| {label} | {pages} | {rate:.1f} | {rate / base:.2f}x |")
    every = total_pages / full_secs
    lines.append(f"| PDFium layout reader, every page (parse_pdf) | {total_pages} | {every:.1f} | - |")
    lines += [
        "",
        f"Chunks: default chunker ({chunking.name}, {chunking.size} {chunking.unit}); search: all filings in one "
        f"collection, default scope, top {args.k}.",
        "",
        "| reader | chunks | text chunks ending mid-sentence (sentence runs on into the next chunk) "
        "| text chunks without final punctuation | method | gold page in top 5 | gold filing in top 5 |",
        "|---|---|---|---|---|---|---|",
    ]
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    before_methods = [m.strip() for m in (args.before_methods or args.methods).split(",") if m.strip()]
    # the after reader is also searched without collapsing (retrieval.collapse: none), to show its share
    uncollapsed = settings.model_copy(update={"retrieval": settings.retrieval.model_copy(update={"collapse": "none"})})
    for label, chunks in runs.items():
        runs_on, bare, texts = mid_sentence(chunks)
        before_run = label.startswith("before")
        for method in before_methods if before_run else methods:
            variants = [(method, settings)]
            if not before_run and settings.retrieval.collapse != "none":
                variants.append((f"{method}, collapse none", uncollapsed))
            for name, chosen in variants:
                page_at, filing_at, _ = retrieval(chunks, questions, method, chosen, args.cache_dir, args.k)
                lines.append(
                    f"| {label} | {len(chunks):,} | {runs_on / max(texts, 1):.1%} ({runs_on:,} of {texts:,}) | "
                    f"{bare / max(texts, 1):.1%} | {name} | {page_at:.2f} | {filing_at:.2f} |"
                )
                print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_append:
        write_section(args.results, SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
