"""The web lab in a real headless Chromium, against the real server on a loopback port.

Screenshots go to ``test-artifacts/``. Skipped only when ``/usr/bin/chromium`` is missing
(``scripts/install-chromium.sh`` installs it).
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.config import Settings
from evidencedesk.evaluation.labels import load_labels
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.server.app import create_app
from evidencedesk.server.settings import ServiceSettings
from evidencedesk.server.state import ServiceState
from evidencedesk.store import Store
from tests.support.paths import KESTREL_LABELS, ROOT
from tests.support.server import free_port

# The lab with an API key, as a deployment runs it: a keyless caller is refused (secure by default),
# and a keyed caller may run /eval, re-chunk in the lab and read back its own traces.
LAB_KEY = "lab-key-0123456789abcdef"
LAB_SERVICE = ServiceSettings.model_validate({"keys": [{"name": "lab", "key": LAB_KEY}]})

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
ARTIFACTS = ROOT / "test-artifacts"

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium (run scripts/install-chromium.sh)"),
]


HOSTILE = (
    "---\nid: kc-hostile\ntitle: Zebra <b>bold</b> notes\n---\n\n# Zebra notes\n\n"
    "Zebra unicorn <img src=x onerror=\"document.title='pwned'\"> <script>document.title='pwned'</script> end.\n"
)


@pytest.fixture(scope="module")
def browser_store(kestrel_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example store plus one document whose text is hostile HTML."""
    store = tmp_path_factory.mktemp("browser") / "store"
    shutil.copytree(kestrel_store, store)
    extra = store.parent / "extra"
    extra.mkdir()
    (extra / "hostile.md").write_text(HOSTILE, encoding="utf-8")
    with Store(store) as db:
        ingest_folder(db, extra, ChunkingConfig(), remove_missing=False)
    return store


@pytest.fixture(scope="module")
def server(browser_store: Path) -> Iterator[str]:
    """The service on a free loopback port, run by uvicorn in a thread."""
    state = ServiceState(browser_store, Settings(), LAB_SERVICE)
    port = free_port()
    config = uvicorn.Config(create_app(state), host="127.0.0.1", port=port, log_level="warning", ws="none")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.1)
    else:
        pytest.fail("the server did not start")
    yield url
    srv.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def page(server: str) -> Iterator[object]:
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        pg = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        pg.on("pageerror", lambda exc: errors.append(str(exc)))
        pg.goto(server + "/")
        pg.locator("#error", has_text="401").wait_for()  # no key yet: the service refuses the lab's calls
        pg.fill("#api-key", LAB_KEY)
        pg.click("#key-form button[type=submit]")
        pg.locator("#caller", has_text="as lab").wait_for()
        assert pg.locator("#error").is_hidden()
        yield pg
        browser.close()
        assert not errors, f"JavaScript errors in the lab: {errors}"


def expected_chunks(store: Path, question_id: str) -> set[str]:
    """The chunks the label grades 2, worked out here from the labels file and the store."""
    label = next(x for x in load_labels(KESTREL_LABELS) if x.id == question_id)
    with Store(store) as db:
        return {c.id for c in db.chunks() if label.grade_of(c) == 2}


def test_the_lab_starts_with_the_configured_method(page: object) -> None:
    """The lab ranks as search, ask and eval do: the settings' method (a hybrid by default) and its legs."""
    retrieval = Settings().retrieval
    assert page.input_value("#method") == retrieval.method == "hybrid"
    assert page.locator("#legs").is_visible()
    checked = page.locator("#legs input:checked")
    assert [checked.nth(i).get_attribute("value") for i in range(checked.count())] == [x.method for x in retrieval.legs]


def test_search_marks_the_labelled_chunk(page: object, browser_store: Path) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    expected = expected_chunks(browser_store, "q16")
    assert expected
    page.wait_for_selector("#question option[value=q16]", state="attached")
    page.select_option("#question", "q16")
    page.click("#search-btn")
    page.wait_for_selector("#results li.passage")
    marked = page.locator('#results li.passage[data-grade="2"]')
    assert marked.count() >= 1
    ids = {marked.nth(i).get_attribute("data-chunk-id") for i in range(marked.count())}
    assert ids <= expected and ids
    assert "labelled relevant: answers" in marked.first.inner_text()
    assert page.locator("#results mark").count() > 0  # shared words highlighted
    assert page.locator("#context").inner_text().startswith("<<<CONTEXT")
    page.screenshot(path=str(ARTIFACTS / "lab-search.png"), full_page=True)


def test_hybrid_shows_each_legs_rank(page: object) -> None:
    page.select_option("#method", "hybrid")
    page.uncheck("#legs input[value=dense]")
    page.check("#legs input[value=tfidf]")
    page.click("#search-btn")
    page.wait_for_selector("#results .legs")
    assert "bm25 #" in page.locator("#results .legs").first.inner_text()
    page.select_option("#method", "bm25")
    page.select_option("#chunker", "fixed")
    page.fill("#size", "40")
    page.click("#search-btn")
    page.locator("#results-info", has_text="fixed 40 words").wait_for()  # the page's CSP forbids eval
    page.select_option("#chunker", "")


def test_ask_and_open_a_citation(page: object, browser_store: Path) -> None:
    page.select_option("#question", "")
    page.fill("#query", "How many days do I have to return an item?")
    page.click("#ask-btn")
    page.wait_for_selector("#answer .citation")
    assert "30 days" in page.locator("#answer").inner_text()
    assert page.locator("#timeline .stage").count() == 6
    cited = page.locator("#answer .citation").first
    chunk_id = cited.get_attribute("data-chunk-id")
    page.screenshot(path=str(ARTIFACTS / "lab-ask.png"), full_page=True)
    with page.expect_response(lambda r: "/chunks/" in r.url) as fetched:
        cited.click()
    assert fetched.value.status == 200  # a stored chunk is fetched from the service
    page.wait_for_selector("#chunk-view[open]")
    with Store(browser_store) as db:
        chunk = db.chunk(chunk_id)
    assert chunk is not None
    assert page.locator("#chunk-text").inner_text().strip() == chunk.text.strip()
    assert chunk_id in page.locator("#chunk-title").inner_text()
    page.screenshot(path=str(ARTIFACTS / "lab-citation.png"))
    page.click("#chunk-view button")


def test_document_text_is_shown_as_text(page: object) -> None:
    page.select_option("#question", "")
    page.fill("#query", "zebra unicorn")
    page.click("#search-btn")
    page.wait_for_selector('#results li[data-chunk-id^="kc-hostile"]')
    hit = page.locator('#results li[data-chunk-id^="kc-hostile"]')
    assert "<script>document.title='pwned'</script>" in hit.inner_text()
    assert hit.locator("img, script, b").count() == 0
    assert page.title() == "evidencedesk lab"


def test_abstention_shows_its_reason(page: object) -> None:
    page.fill("#query", "Do you sell spaceships to Mars?")
    page.click("#ask-btn")
    page.wait_for_selector("#answer .abstained")
    assert "Abstained" in page.locator("#answer").inner_text()


def test_evaluation_page(page: object) -> None:
    page.click('.tab[data-view="eval-view"]')
    page.click("#eval-btn")
    page.wait_for_selector("#eval-table tbody tr")
    assert "recall@5" in page.locator("#eval-table").inner_text()
    frame = page.frame_locator("#eval-report")
    frame.locator("svg").first.wait_for()
    page.screenshot(path=str(ARTIFACTS / "lab-eval.png"), full_page=True)
    page.click('.tab[data-view="traces-view"]')
    page.wait_for_selector("#trace-list li button")
    page.locator("#trace-list li button").first.click()
    page.wait_for_selector("#trace-detail .stage")
    page.click('.tab[data-view="lab-view"]')
