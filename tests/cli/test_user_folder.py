"""A new user's own folder, end to end through the installed command line at 80 columns: a PDF report
whose figure sits in a table on the same page as the prose that outranks it, a Word file with a table,
Markdown, text, HTML, a sidecar, a folder ``_meta.yaml`` and three bad files; then ingest, docs,
search, ask, eval and the lab's service over the same store."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import docx
import pytest
from fastapi.testclient import TestClient
from fpdf import FPDF

from evidencedesk.config import Settings
from evidencedesk.server.app import create_app
from evidencedesk.server.settings import parse_service_settings
from evidencedesk.server.state import ServiceState

SRC = Path(__file__).resolve().parents[2] / "src"
QUESTION = "What was the total restructuring liability balance at December 31, 2022?"


def report_pdf(path: Path) -> None:
    """Page 1: a heading, a prose paragraph about the restructuring liability, then the table holding $93."""
    pdf = FPDF(unit="pt", format="letter")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", style="B", size=16)
    pdf.text(72, 80, "Restructuring Costs")
    pdf.set_font("Helvetica", size=10)
    prose = [
        "The Company expects the majority of the restructuring liability balance as of December 31, 2022",
        "to be paid within the next twelve months. The restructuring liability is recorded under other",
        "current liabilities. The restructuring liability balance at December 31, 2022 is reviewed each quarter.",
    ]
    y = 110
    for line in prose:
        pdf.text(72, y, line)
        y += 13
    y += 24
    rows = [
        ("(Millions)", "2022", "2021"),
        ("Liability balance at June 30", "$ 118", "$ 120"),
        ("Cash paid", "(25)", "(30)"),
        ("Liability balance at December 31", "$ 93", "$ 90"),
    ]
    for label, a, b in rows:
        pdf.text(72, y, label)
        pdf.text(360, y, a)
        pdf.text(450, y, b)
        y += 14
    pdf.add_page()
    pdf.set_font("Helvetica", style="B", size=16)
    pdf.text(72, 80, "Outlook")
    pdf.set_font("Helvetica", size=10)
    pdf.text(72, 110, "Sales are expected to grow in the coming year in every region we serve.")
    path.write_bytes(bytes(pdf.output()))


def policy_docx(path: Path) -> None:
    document = docx.Document()
    document.add_heading("Travel allowances", level=1)
    document.add_paragraph("Meals are reimbursed per day by region.")
    table = document.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "Region", "Daily meal allowance"
    for region, amount in (("Europe", "70 euros"), ("Asia", "80 euros")):
        cells = table.add_row().cells
        cells[0].text, cells[1].text = region, amount
    document.save(str(path))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("user") / "docs"
    (root / "acme").mkdir(parents=True)
    report_pdf(root / "annual-report-2022.pdf")
    policy_docx(root / "travel-allowances.docx")
    (root / "handbook.md").write_text("# Handbook\n\nOffice hours are nine to five on weekdays.\n", encoding="utf-8")
    (root / "faq.txt").write_text("Parking is free for visitors at the north entrance.\n", encoding="utf-8")
    (root / "news.html").write_text(
        "<html><head><title>News</title></head><body><h1>News</h1><p>The canteen reopens in May.</p></body></html>",
        encoding="utf-8",
    )
    (root / "acme" / "_meta.yaml").write_text("tenant: acme\n", encoding="utf-8")
    (root / "acme" / "pricing.md").write_text("# Pricing\n\nAcme pays the partner rate.\n", encoding="utf-8")
    (root / "old-policy.md").write_text(
        "# Bicycle allowance\n\nEmployees who cycle to work receive a bicycle allowance of 25 euros per month.\n",
        encoding="utf-8",
    )
    (root / "old-policy.md.meta.yaml").write_text("status: superseded\n", encoding="utf-8")
    (root / "broken.pdf").write_bytes(b"%PDF-1.4 this is not a real pdf")
    (root / "broken.docx").write_bytes(b"not a zip file")
    (root / "bad-front-matter.md").write_text("---\nstatus: [unclosed\n---\n# Oops\n", encoding="utf-8")
    return root


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it: a new process, stdout and stderr not a terminal, 80 columns."""
    env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(SRC), "NO_COLOR": "1"}
    code = "import sys; sys.argv[0] = 'evidencedesk'; from evidencedesk.cli import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True)


def fits(text: str, width: int = 80) -> None:
    too_long = [line for line in text.splitlines() if len(line) > width]
    assert not too_long, too_long


@pytest.fixture(scope="module")
def store(folder: Path) -> Path:
    work = folder.parent
    done = cli("ingest", str(folder), "--store", "store", cwd=work)
    assert done.returncode == 0, done.stderr
    return work / "store"


def test_ingest_reports_by_name_and_strict_fails_on_bad_files(folder: Path, store: Path) -> None:
    work = folder.parent
    again = cli("ingest", str(folder), "--store", "store", "--strict", cwd=work)
    assert again.returncode == 1
    assert "--strict: 3 file(s) failed to ingest" in again.stderr
    for bad in ("broken.pdf", "broken.docx", "bad-front-matter.md"):
        assert f"failed {bad}" in again.stdout
    assert "Traceback" not in again.stdout + again.stderr
    # plain progress lines on a stderr that is not a terminal
    assert re.search(r"reading files: \d+/\d+ files", again.stderr)
    fits(again.stdout)

    # a changed file and a removed one are named
    scratch = work / "scratch"
    scratch.mkdir()
    (scratch / "a.md").write_text("# A\n\nFirst text.\n", encoding="utf-8")
    (scratch / "b.md").write_text("# B\n\nSecond text.\n", encoding="utf-8")
    assert cli("ingest", str(scratch), "--store", "scratch-store", cwd=work).returncode == 0
    (scratch / "a.md").write_text("# A\n\nFirst text, changed.\n", encoding="utf-8")
    (scratch / "b.md").unlink()
    changed = cli("ingest", str(scratch), "--store", "scratch-store", cwd=work)
    assert changed.returncode == 0, changed.stderr
    assert "updated (1): a" in changed.stdout and "removed (1): b" in changed.stdout


def test_docs_at_80_columns_keeps_every_id_status_and_tenant(store: Path) -> None:
    done = cli("docs", "--store", str(store), cwd=store.parent)
    assert done.returncode == 0, done.stderr
    fits(done.stdout)
    for doc_id in ("annual-report-2022", "travel-allowances", "old-policy", "acme:acme-pricing", "handbook"):
        assert re.search(rf"│ {re.escape(doc_id)}\s", done.stdout), doc_id
    assert "superseded" in done.stdout and "acme" in done.stdout and "default" in done.stdout
    assert "…" not in done.stdout


def test_search_shows_whole_chunk_ids_and_pages(store: Path) -> None:
    done = cli("search", QUESTION, "--store", str(store), "--method", "bm25", cwd=store.parent)
    assert done.returncode == 0, done.stderr
    fits(done.stdout)
    assert "…" not in done.stdout
    assert re.search(r"annual-report-2022:c\d+ ", done.stdout)
    assert "page 1" in done.stdout and not re.search(r"annual-report-2022\.pdf · lines", done.stdout)
    rows = json.loads(cli("search", QUESTION, "--store", str(store), "--method", "bm25", "--json",
                          cwd=store.parent).stdout)  # fmt: skip
    pdf_rows = [r for r in rows if r["doc_id"] == "annual-report-2022"]
    assert pdf_rows[0]["location"]["pages"] == [1]  # the prose, with the table of its page collapsed into it
    assert pdf_rows[0]["collapsed"] == ["annual-report-2022:c1"]


def test_five_search_results_are_short_plain_blocks_at_80_columns(store: Path) -> None:
    """Piped at 80 columns, five results read as five short blocks (no table, no box drawing): rank,
    the whole chunk id and score, where the chunk is, why it matched, and two lines of its text."""
    done = cli("search", QUESTION, "--store", str(store), "--method", "bm25", "--k", "5", cwd=store.parent)
    assert done.returncode == 0, done.stderr
    fits(done.stdout)
    lines = done.stdout.splitlines()
    assert len(lines) <= 2 + 5 * 6, len(lines)  # a heading line and a blank, then at most six lines a result
    assert not set("│┃━┏└") & set(done.stdout) and all(line == line.rstrip() for line in lines)
    rows = json.loads(cli("search", QUESTION, "--store", str(store), "--method", "bm25", "--k", "5", "--json",
                          cwd=store.parent).stdout)  # fmt: skip
    starts = [i for i, line in enumerate(lines) if re.match(r"\d+  \S+  score ", line)]
    assert [lines[i].split()[1] for i in starts] == [r["chunk_id"] for r in rows]  # whole ids, in rank order
    first = rows[0]
    block = " ".join(" ".join(lines[starts[0] : starts[1]]).split())
    assert f"{first['source_path']} · page" in block or f"{first['source_path']} · line" in block
    prose = next(line for line in first["text"].splitlines() if line.strip() and not line.startswith("#"))
    assert " ".join(prose.split()[:4]) in block  # the snippet starts where the text does (headings left out)


def test_ask_at_80_columns_wraps_the_answer_citations_and_trace(store: Path) -> None:
    done = cli("ask", QUESTION, "--store", str(store), "--method", "bm25", cwd=store.parent)
    assert done.returncode == 0, done.stderr
    fits(done.stdout)
    lines = done.stdout.splitlines()
    assert all(line == line.rstrip() for line in lines) and not set("│┃━┏└") & set(done.stdout)
    cited = lines[lines.index("Citations") + 1]
    assert cited.startswith("  [annual-report-2022:c")
    assert re.search(r"^  context +\d+\.\d ms  \d+ chunks", done.stdout, re.M)


def test_ask_keeps_the_table_collapsed_behind_the_prose_of_its_page(store: Path) -> None:
    done = cli("ask", QUESTION, "--store", str(store), "--method", "bm25", "--json", cwd=store.parent)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    listed = [c["chunk_id"] for c in out["retrieved"] if c["doc_id"] == "annual-report-2022"]
    assert len({tuple(c["location"].get("pages", [])) for c in out["retrieved"]
                if c["doc_id"] == "annual-report-2022"}) == len(listed)  # fmt: skip  # one chunk per page listed
    table = [cid for cid in out["context"] if cid.startswith("annual-report-2022")]
    assert len(table) >= 2  # the prose and, folded behind it, the table of the same page
    assert "93" in out["answer"]


def test_an_abstention_names_the_superseded_text_that_matched(store: Path) -> None:
    question = "How much is the bicycle allowance for cycling to work?"
    done = cli("ask", question, "--store", str(store), "--method", "bm25", "--floor", "1000", cwd=store.parent)
    assert done.returncode == 0, done.stderr
    assert "Abstained" in done.stdout
    assert "Only text outside the scope matched best: old-policy (status superseded)" in done.stdout


def test_eval_at_80_columns_warns_plainly_and_suggests_a_floor(store: Path) -> None:
    labels = store.parent / "labels.jsonl"
    rows = [
        {"id": "restructuring", "question": QUESTION, "tags": ["figures"], "answerable": True,
         "gold": [{"evidence": "The restructuring liability is recorded under other current liabilities.",
                   "grade": 2}]},
        {"id": "hours", "question": "When is the office open on weekdays?", "answerable": True,
         "gold": [{"evidence": "Office hours are nine to five on weekdays.", "grade": 2}], "owner": "hr"},
        {"id": "menu", "question": "What is on the canteen menu in May?", "tags": ["unanswerable"],
         "answerable": False, "gold": []},
    ]  # fmt: skip
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    done = cli("eval", str(labels), "--store", str(store), "--method", "bm25", "--no-save",
               "--html", str(store.parent / "report.html"), cwd=store.parent)  # fmt: skip
    assert done.returncode == 0, done.stderr
    fits(done.stdout)
    assert "…" not in done.stdout  # the per-tag table wraps, nothing is cut
    assert "warning: 1 warning(s) in labels file" in done.stderr and "owner: unknown field" in done.stderr
    assert ".py" not in done.stderr and "LabelWarning" not in done.stderr
    assert "suggested floor for bm25:" in done.stdout.replace("\n", " ")
    html = (store.parent / "report.html").read_text(encoding="utf-8")
    assert "answer accuracy" in html and "abstention recall" in html and "suggested floor for bm25" in html


def test_the_lab_lists_the_stores_own_labels_never_the_examples(store: Path) -> None:
    labels = store.parent / "lab-labels.jsonl"
    labels.write_text(json.dumps({"id": "own", "question": "When is the office open on weekdays?",
                                  "answerable": True, "gold": [{"evidence": "Office hours are nine to five",
                                                                "grade": 2}]}) + "\n", encoding="utf-8")  # fmt: skip
    anonymous = {"allow_anonymous": True, "anonymous_scope": {"tenants": ["default"]}}
    bare = TestClient(create_app(ServiceState(store, Settings(), parse_service_settings(anonymous))))
    assert bare.get("/lab/questions").json() == []  # the bundled example's questions are about another corpus
    page = bare.get("/").text
    assert "returns" not in page.lower() and "warranty" not in page.lower()
    assert "What the scores mean" in page
    service = parse_service_settings({**anonymous, "labels": str(labels)})
    own = TestClient(create_app(ServiceState(store, Settings(), service)))
    assert [q["id"] for q in own.get("/lab/questions").json()] == ["own"]


def test_a_first_hybrid_search_shows_its_embedding_as_plain_lines(folder: Path, store: Path) -> None:
    """The first dense or hybrid search embeds every chunk: stderr says so, line by line, not a terminal."""
    work = store.parent
    fresh = cli("ingest", str(folder), "--store", "hybrid-store", cwd=work)
    assert fresh.returncode in (0, 1), fresh.stderr
    done = cli("search", "office hours on weekdays", "--store", "hybrid-store", "--method", "hybrid", cwd=work)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("embedding chunks:")]
    assert lines and re.match(r"embedding chunks: 0/\d+ chunks", lines[0])
    total = lines[0].split("/")[1].split()[0]
    assert lines[-1].startswith(f"embedding chunks: {total}/{total} chunks")
    again = cli("search", "office hours on weekdays", "--store", "hybrid-store", "--method", "hybrid", cwd=work)
    assert "embedding chunks" not in again.stderr  # cached: nothing to wait for
