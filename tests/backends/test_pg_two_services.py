"""Two `evidencedesk serve` processes over one PostgreSQL primary give identical answers, and an ingest
through one is seen by the other."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import pytest

from evidencedesk.backends import open_store
from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.ingest.sync import ingest_folder
from tests.support.paths import KESTREL_DOCS, kestrel_available
from tests.support.server import PUBLIC_KEY, free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]
SERVE = "from evidencedesk.cli import main; main()"
QUESTIONS = [
    "How long is the frame warranty?",
    "What torque do the stem bolts take?",
    "Can I return a bike after 30 days?",
    "Who pays for shipping on a warranty claim?",
]


@pytest.fixture()
def database(pg_url: str) -> Iterator[str]:
    """A database of its own (the services use the default store schema in it), dropped afterwards."""
    name = f"evidencedesk_two_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(pg_url)
    yield urlunsplit(parts._replace(path=f"/{name}"))
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _start(url: str, config: Path, keys: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    cmd = [sys.executable, "-c", SERVE, "serve", "--store", url, "--config", str(config), "--keys", str(keys),
           "--port", str(port), "--log-level", "warning"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return proc, base
        except httpx.TransportError:
            time.sleep(0.2)
    proc.kill()
    raise AssertionError("the service did not start")


def _post(base: str, path: str, body: dict[str, Any]) -> Any:
    r = httpx.post(f"{base}{path}", json=body, headers={"X-API-Key": PUBLIC_KEY}, timeout=120)
    assert r.status_code == 200, r.text
    return r.json()


def test_two_service_processes_over_one_primary_answer_identically(database: str, tmp_path: Path) -> None:
    if not kestrel_available():
        pytest.skip("examples/kestrel is missing")
    store = open_store(database)
    try:
        ingest_folder(store, KESTREL_DOCS, ChunkingConfig())
    finally:
        store.close()
    config = tmp_path / "evidencedesk.yaml"
    config.write_text("retrieval:\n  legs:\n    - method: bm25\n", encoding="utf-8")
    keys = tmp_path / "keys.yaml"
    keys.write_text(f"allow_anonymous: false\nkeys:\n  - name: web\n    key: {PUBLIC_KEY}\n", encoding="utf-8")
    one, a = _start(database, config, keys)
    try:
        two, b = _start(database, config, keys)
        try:
            for q in QUESTIONS:
                hits = _post(a, "/search", {"query": q, "k": 5})
                assert hits and hits == _post(b, "/search", {"query": q, "k": 5}), q
                x, y = _post(a, "/ask", {"question": q}), _post(b, "/ask", {"question": q})
                assert (x["answer"], x["citations"], x["context"]) == (y["answer"], y["citations"], y["context"]), q
            # a document written through the database is seen by both processes' next search
            extra = tmp_path / "extra"
            extra.mkdir()
            (extra / "note.md").write_text("# Note\n\nThe zebraphone bell rings twice.\n", encoding="utf-8")
            store = open_store(database)
            try:
                ingest_folder(store, extra, ChunkingConfig(), remove_missing=False)
            finally:
                store.close()
            for base in (a, b):
                found = _post(base, "/search", {"query": "zebraphone bell", "k": 3})
                assert found and "zebraphone" in found[0]["text"]
        finally:
            two.terminate()
            two.communicate(timeout=30)
    finally:
        one.terminate()
        one.communicate(timeout=30)
