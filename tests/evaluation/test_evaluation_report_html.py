"""The HTML report: self-contained, and its charts render in a real headless Chromium."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evidencedesk.chunking import ChunkingConfig
from evidencedesk.evaluation.report_html import render_report, write_report
from evidencedesk.evaluation.run import EvalRun
from evidencedesk.evaluation.runner import evaluate
from evidencedesk.evaluation.series import chunk_size_series
from evidencedesk.evaluation.strategies import compare_strategies
from evidencedesk.retrieval.factory import make_searcher
from evidencedesk.retrieval.scope import Scope
from tests.support.paths import ROOT

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def report(documents, labels, chunks) -> tuple[str, dict, list]:
    searchers = {m: make_searcher(m, chunks) for m in ("bm25", "tfidf")}
    results = evaluate(searchers["bm25"], labels, chunks, Scope(), 5)
    unfiltered = evaluate(searchers["bm25"], labels, chunks, Scope.everything(), 5)
    rows, curves = compare_strategies(searchers, labels, chunks, Scope(), 5)
    run = EvalRun.of(
        "bm25", 5, Scope().to_dict(), results, unfiltered=unfiltered, strategies=rows, curves=curves
    ).to_dict()
    configs = (
        ChunkingConfig("fixed", size=40),
        ChunkingConfig("fixed", size=120),
        ChunkingConfig("structure", size=60),
    )
    series = chunk_size_series(documents, labels, Scope(), "bm25", configs=configs, ks=(1, 3, 5, 10))
    assert [len(s.points) for s in series] == [4, 4, 4]
    for s in series:
        words = [p[0] for p in s.points]
        assert words == sorted(words) and all(0.0 <= p[1] <= 1.0 for p in s.points)
    return render_report(run, size_series=series), run, series


def test_report_is_self_contained_and_holds_every_section(report) -> None:
    html, run, _ = report
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<script" not in html and "@import" not in html and "url(" not in html
    for needle in ("Overall", "Per tag", "Label counts", "Strategies", "Recall@k by method", "context size"):
        assert needle in html
    for chart in ("label-counts", "recall-curves", "size-curves"):
        assert f'id="{chart}"' in html
    for q in run["questions"]:
        if q["findings"]:
            assert f">{q['id']}</td>" in html
    assert html.count("small</span>") > 0  # small slices are flagged


def test_escapes_text_from_labels() -> None:
    run = {
        "k": 3,
        "method": "bm25",
        "slices": {},
        "overall": {},
        "label_counts": [],
        "questions": [
            {"id": "<b>x</b>", "question": "q", "findings": [{"stage": "s", "label": "l", "detail": "<script>"}]}
        ],
    }
    html = render_report(run)
    assert "<script>" not in html and "&lt;script&gt;" in html and "&lt;b&gt;x&lt;/b&gt;" in html


@pytest.mark.integration
def test_charts_render_in_headless_chromium(report, tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install it with `apt-get install -y chromium` to run this browser test")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    html, run, series = report
    page_file = write_report(tmp_path / "out" / "report.html", run, size_series=series)
    assert page_file.read_text(encoding="utf-8") == html
    artifacts = ROOT / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.goto(page_file.as_uri())
            charts = page.evaluate(
                """() => [...document.querySelectorAll('svg.chart')].map(s => {
                    const r = s.getBoundingClientRect();
                    const marks = [...s.querySelectorAll('rect.bar, circle.point, polyline.line')];
                    const drawn = marks.filter(m => { const b = m.getBBox(); return b.width > 0 || b.height > 0; });
                    return {id: s.id, width: r.width, height: r.height, marks: marks.length, drawn: drawn.length};
                })"""
            )
            page.screenshot(path=str(artifacts / "evaluation-report.png"), full_page=True)
        finally:
            browser.close()
    by_id = {c["id"]: c for c in charts}
    assert set(by_id) == {"label-counts", "recall-curves", "size-curves"}
    for c in charts:
        assert c["width"] > 100 and c["height"] > 100, c
        assert c["marks"] > 0 and c["drawn"] == c["marks"], c
    assert (artifacts / "evaluation-report.png").stat().st_size > 10_000
