"""The public JSON of ask, search, ingest and eval on the example, held byte for byte.

The JSON that ``--json`` prints and the service returns is a contract: callers parse it. These tests
run the real CLI (in-process) and the real service (TestClient) on the bundled example and compare
each output with a file under ``tests/golden/``. Only what changes from run to run is set aside
before comparing: trace ids, timings and wall-clock rates are replaced by a placeholder, paths
inside the checkout are made relative to it, and floats are rounded to six decimals (scores come
from ONNX models whose last bits depend on the CPU).

Each command and the service run in a process of their own: the models embed and score texts in
batches, and a batch's make-up moves a vector's last bits, so what an earlier test of the same
process asked could otherwise tip a borderline answer.

After a deliberate change of the JSON, rewrite the files and review the diff::

    EVIDENCEDESK_UPDATE_GOLDEN=1 pytest tests/golden
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import KESTREL_DOCS

GOLDEN = Path(__file__).parent
# paths inside the checkout are written relative to it, so the files hold in any clone
ROOT = str(Path(__file__).resolve().parents[2]) + "/"
LABELS = KESTREL_DOCS.parent / "labels.jsonl"
UPDATE = os.environ.get("EVIDENCEDESK_UPDATE_GOLDEN") == "1"
# keys whose values differ between two identical runs
VOLATILE = {"trace_id", "timings", "seconds", "per_second", "run_id", "created", "created_at", "elapsed_ms"}
QUESTIONS = {
    "frames": "How long is the warranty on frames?",
    "five-weeks": "can I return a bike after five weeks",
    "unanswerable": "Do you sell scooters for dogs?",
}
# the service, asked in a process of its own: prints {name: response JSON}
SERVICE = """
import json, sys
from fastapi.testclient import TestClient
from evidencedesk.config import Settings
from evidencedesk.server.app import create_app
from evidencedesk.server.settings import ScopeSpec, ServiceSettings
from evidencedesk.server.state import ServiceState

store, questions = sys.argv[1], json.loads(sys.argv[2])
service = ServiceSettings(allow_anonymous=True, anonymous_scope=ScopeSpec(tenants=["kestrel", "default"]))
out = {}
with TestClient(create_app(ServiceState(store, Settings(), service))) as client:
    r = client.post("/search", json={"query": questions["frames"]})
    assert r.status_code == 200, r.text
    out["http-search"] = r.json()
    for name in ("frames", "unanswerable"):
        r = client.post("/ask", json={"question": questions[name]})
        assert r.status_code == 200, r.text
        out["http-ask-" + name] = r.json()
print(json.dumps(out))
"""


def stable(value: Any) -> Any:
    """``value`` with volatile fields replaced and floats rounded, so two runs compare equal."""
    if isinstance(value, dict):
        return {k: ("<volatile>" if k in VOLATILE else stable(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [stable(v) for v in value]
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, str) and value.startswith(ROOT):
        return value[len(ROOT) :]
    return value


def check(name: str, value: Any) -> None:
    text = json.dumps(stable(value), indent=2, ensure_ascii=False) + "\n"
    path = GOLDEN / f"{name}.json"
    if UPDATE:
        path.write_text(text, encoding="utf-8")
        return
    assert path.is_file(), f"{path} missing: run with EVIDENCEDESK_UPDATE_GOLDEN=1 and review it"
    assert text == path.read_text(encoding="utf-8"), f"{name}: the JSON differs from {path.name}"


def run(*args: str) -> Any:
    """The JSON a fresh Python process prints for ``args`` (its own process: see the module's note)."""
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=900)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return json.loads(proc.stdout)


def cli(*args: str) -> Any:
    return run("-m", "evidencedesk", *args)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = str(tmp_path_factory.mktemp("golden") / "store")
    check("ingest", cli("ingest", str(KESTREL_DOCS), "--store", path, "--json"))
    yield path


def test_search_json(store: str) -> None:
    check("search-hybrid", cli("search", QUESTIONS["frames"], "--store", store, "--json"))
    check("search-bm25", cli("search", "gift card expiry", "--store", store, "--method", "bm25", "--json"))


@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_ask_json(store: str, name: str) -> None:
    check(f"ask-{name}", cli("ask", QUESTIONS[name], "--store", store, "--json"))


def test_eval_json(store: str) -> None:
    check("eval-retrieval", cli("eval", str(LABELS), "--store", store, "--no-answers", "--json"))
    check("eval", cli("eval", str(LABELS), "--store", store, "--json"))


def test_service_json(store: str) -> None:
    for name, body in run("-c", SERVICE, store, json.dumps(QUESTIONS)).items():
        check(name, body)
