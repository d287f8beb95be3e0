"""`make docs`'s build (mkdocs --strict) passes offline, and the built quickstart opens in Chromium."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.docs_runner import REPO

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mkdocs", reason="mkdocs not installed (make docs installs it)")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log
    assert "WARNING" not in log, log
    return out


@pytest.mark.slow
def test_site_builds_strict_with_every_page(site: Path) -> None:
    for page in (
        "quickstart",
        "concepts",
        "walkthrough",
        "bring-your-own",
        "configuration",
        "cli",
        "api",
        "architecture",
        "benchmarks",
        "ingest",
        "generators",
        "scale-out",
        "reliability",
        "security",
    ):
        assert (site / page / "index.html").is_file(), page
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "Desk" in api and "load_settings" in api and "doc-heading" in api  # rendered from docstrings
    bench = (site / "benchmarks" / "index.html").read_text(encoding="utf-8")
    assert "Search speed through Desk.search on SciFact" in bench  # bench/RESULTS.md is included


@pytest.mark.slow
@pytest.mark.integration
def test_quickstart_page_in_headless_chromium(site: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip("no Chromium at /usr/bin/chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    artifacts = REPO / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page()
            page.goto((site / "quickstart" / "index.html").as_uri())
            assert page.title().startswith("Quickstart")
            heading = page.locator("article h1").first.inner_text()
            assert heading.strip().rstrip("¶").strip() == "Quickstart"  # the permalink anchor follows
            code = page.locator("article pre code").all_inner_texts()
            assert any("evidencedesk ingest examples/kestrel/docs" in c for c in code)
            page.screenshot(path=str(artifacts / "docs-quickstart.png"), full_page=True)
        finally:
            browser.close()
    assert (artifacts / "docs-quickstart.png").stat().st_size > 0
