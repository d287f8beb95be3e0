"""``evidencedesk serve``: starts uvicorn over a store with a keys file; bad options exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from evidencedesk.cli import app
from tests.support.server import PUBLIC_KEY, free_port

SERVE = "from evidencedesk.cli import main; main()"


@pytest.mark.slow
def test_serve_answers_over_http(kestrel_store: Path, tmp_path: Path) -> None:
    keys = tmp_path / "keys.yaml"
    keys.write_text(f"allow_anonymous: false\nkeys:\n  - name: web\n    key: {PUBLIC_KEY}\n", encoding="utf-8")
    port = free_port()
    cmd = [sys.executable, "-c", SERVE, "serve", "--store", str(kestrel_store), "--port", str(port),
           "--keys", str(keys), "--log-level", "warning", "--json"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        # a loaded machine can be slow to answer: the limit here is for a hung service, not a speed check
        assert httpx.get(f"{url}/documents", timeout=60).status_code == 401
        query = "How long is the frame warranty?"
        body = {"query": query, "method": "bm25"}
        r = httpx.post(f"{url}/search", json=body, headers={"X-API-Key": PUBLIC_KEY}, timeout=60)
        cli = CliRunner().invoke(app, ["search", query, "--store", str(kestrel_store), "--method", "bm25", "--json"])
        assert r.status_code == 200 and r.json() == json.loads(cli.stdout) and r.json()
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    info = json.loads(out.decode())
    assert info["url"] == f"{url}/" and info["keys"] == ["web"] and info["anonymous"] is False


def test_serve_rejects_bad_options(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = tmp_path / "keys.yaml"
    bad.write_text("keys:\n  - name: x\n", encoding="utf-8")
    result = runner.invoke(app, ["serve", "--store", str(tmp_path / "s"), "--keys", str(bad)])
    assert result.exit_code == 2 and "exactly one of key" in result.stderr
    result = runner.invoke(app, ["serve", "--store", str(tmp_path / "s"), "--port", "70000"])
    assert result.exit_code == 2 and "--port" in result.stderr


def test_service_compiles_the_search_kernel_before_its_first_request(kestrel_store: Path) -> None:
    # in a fresh process, so that no earlier test has compiled it already
    script = f"""
from fastapi.testclient import TestClient
from evidencedesk.index import postings_kernel
from evidencedesk.server.app import create_app
from evidencedesk.config import Settings
from evidencedesk.server.settings import ServiceSettings
from evidencedesk.server.state import ServiceState
state = ServiceState({str(kestrel_store)!r}, Settings(), ServiceSettings())
assert postings_kernel._kernel is None
with TestClient(create_app(state)):
    print(postings_kernel._kernel is not None)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
