"""One recipe asks for a caller on every service face (``server.asking``): /ask whole and streamed,
/v1/chat/completions, the lab's ask and the MCP server's ask tool each store the trace for the key
and count the answer, and the service's limits are checked in that one place."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from evidencedesk.server.asking import AskOrder, ask_for
from tests.support.paths import ROOT
from tests.support.security import KEYS, QUERY, auth, build_store, service_settings, write_labels
from tests.support.server import make_client

FACES = [ROOT / "src/evidencedesk/server", ROOT / "src/evidencedesk/integrations"]
RECIPE = ROOT / "src/evidencedesk/server/asking.py"


def _calls(name: str) -> set[Path]:
    """The files of the service faces that call a method or function called ``name``."""
    found = set()
    for folder in FACES:
        for path in folder.glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call):
                    called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                    if called == name:
                        found.add(path)
    return found


@pytest.mark.parametrize("name", ["ask_stream", "save_trace", "record_ask", "AnswerDone"])
def test_only_the_recipe_asks_stores_traces_counts_asks_and_drains(name: str) -> None:
    if name == "AnswerDone":  # the one drain of a stream read whole (sse.py sends the stream's events)
        users = {
            p
            for folder in FACES
            for p in folder.glob("*.py")
            if "isinstance(event, AnswerDone)" in p.read_text(encoding="utf-8")
        }
        assert users == {RECIPE, ROOT / "src/evidencedesk/server/sse.py"}
        return
    assert _calls(name) == {RECIPE}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    root = tmp_path_factory.mktemp("recipe")
    settings = service_settings(write_labels(root / "labels.jsonl"))
    settings["max_candidates"] = 12
    with make_client(build_store(root), settings) as c:
        yield c


def _asks(client: TestClient) -> int:
    return int(client.get("/metrics?format=json", headers=auth("admin")).json()["counts"]["asks"])


def _traces(client: TestClient) -> set[str]:
    return {t["trace_id"] for t in client.get("/traces", headers=auth("acme-staff")).json()}


def test_every_face_stores_the_trace_for_the_key_and_counts_the_ask(client: TestClient) -> None:
    before, made = _asks(client), []
    who = auth("acme-staff")
    made.append(client.post("/ask", json={"question": QUERY}, headers=who).json()["trace_id"])
    streamed = client.post("/ask", json={"question": QUERY, "stream": True}, headers=who)
    assert streamed.status_code == 200 and "event: done" in streamed.text
    chat = {"model": "evidencedesk", "messages": [{"role": "user", "content": QUERY}]}
    made.append(client.post("/v1/chat/completions", json=chat, headers=who).json()["evidencedesk"]["trace_id"])
    made.append(client.post("/lab/ask", json={"query": QUERY, "method": "bm25"}, headers=who).json()["trace_id"])
    state = client.app.state.service  # type: ignore[attr-defined]
    caller = state.keys.identify(KEYS["acme-staff"])
    made.append(ask_for(state, caller, AskOrder(QUERY)).trace_id)  # what the MCP ask tool calls
    assert _asks(client) == before + 5
    assert set(made) <= _traces(client) and len(_traces(client)) >= 5
    assert all(client.get(f"/traces/{t}", headers=auth("acme-public")).status_code == 404 for t in made)


def test_the_limits_are_the_same_on_every_face(client: TestClient) -> None:
    who = auth("acme-staff")
    ask = client.post("/ask", json={"question": QUERY, "k": 20}, headers=who)
    assert ask.status_code == 400 and ask.json()["detail"] == "candidates: at most 12 here, got 20"
    chat = {"model": "evidencedesk", "messages": [{"role": "user", "content": QUERY}], "k": 20}
    refused = client.post("/v1/chat/completions", json=chat, headers=who)
    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == "candidates: at most 12 here, got 20"
    lab = client.post("/lab/ask", json={"query": QUERY, "method": "bm25", "k": 20}, headers=who)
    assert lab.status_code == 400 and lab.json()["detail"] == "candidates: at most 12 here, got 20"
