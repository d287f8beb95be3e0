"""``evidencedesk mcp`` spawned as a real subprocess and driven by the ``mcp`` SDK's own stdio client:
the three tools, inside the scope of the key the server was started with."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.paths import ROOT
from tests.support.security import (
    KEYS,
    QUERY,
    SCOPES,
    all_markers,
    allowed_markers,
    build_store,
    service_settings,
    stored_doc_id,
    write_labels,
)

pytest.importorskip("mcp")
pytestmark = pytest.mark.slow  # each test starts the server as a subprocess

from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

CLI = "from evidencedesk.cli import main; main()"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    import yaml

    root = tmp_path_factory.mktemp("mcp-three-tenants")
    store = build_store(root)
    keys = root / "keys.yaml"
    keys.write_text(yaml.safe_dump(service_settings(write_labels(root / "labels.jsonl"))), encoding="utf-8")
    yield {"store": store, "keys": keys}


def params(world: dict[str, Path], key: str | None, *extra: str, env: dict[str, str] | None = None) -> Any:
    args = ["-c", CLI, "mcp", "--store", str(world["store"]), "--keys", str(world["keys"]), *extra]
    if key is not None:
        args += ["--api-key", key]
    # the subprocess runs this checkout's code, with the venv's libraries
    env = {"PYTHONPATH": str(ROOT / "src"), **(env or {})}
    return StdioServerParameters(command=sys.executable, args=args, env=env)


def session_calls(server: Any, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Start the server, list its tools, make ``calls`` in order; the results by position (and ``tools``)."""

    async def run() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            out["tools"] = sorted(t.name for t in (await session.list_tools()).tools)
            for i, (name, arguments) in enumerate(calls):
                out[str(i)] = await session.call_tool(name, arguments)
        return out

    return anyio.run(run)


def structured(result: Any) -> Any:
    assert not result.is_error, result.content
    data = result.structured_content
    return data["result"] if isinstance(data, dict) and set(data) == {"result"} else data


def raw(result: Any) -> str:
    return json.dumps(result.model_dump(mode="json"), ensure_ascii=False)


def allowed_docs(name: str) -> set[str]:
    tenants, audiences = SCOPES[name]
    return {stored_doc_id(t, a) for t in tenants for a in audiences}


@pytest.mark.parametrize("name", ["acme-staff", "globex-staff", "initech-public"])
def test_the_tools_answer_inside_the_key_s_scope(world: dict[str, Path], name: str) -> None:
    wide = {"tenants": ["acme", "globex", "initech"], "audiences": ["public", "staff"], "statuses": None}
    foreign = next(d for d in ("acme:d00", "globex:d11", "initech:d20") if d not in allowed_docs(name))
    calls = [
        ("search", {"query": QUERY, "k": 20}),
        ("search", {"query": QUERY, "k": 20, "scope": wide}),  # a wider scope only narrows the key's
        ("ask", {"question": QUERY}),
        ("get_chunk", {"chunk_id": f"{foreign}:c0"}),
        ("get_chunk", {"chunk_id": f"{sorted(allowed_docs(name))[0]}:c0"}),
    ]
    out = session_calls(params(world, KEYS[name]), calls)
    assert out["tools"] == ["ask", "get_chunk", "search"]
    forbidden = all_markers() - allowed_markers(name)
    for i in range(len(calls)):
        assert not [m for m in forbidden if m in raw(out[str(i)])], (name, calls[i])
    for i in ("0", "1"):
        hits = structured(out[i])
        assert hits and {h["doc_id"] for h in hits} == allowed_docs(name)
        assert [h["rank"] for h in hits] == list(range(1, len(hits) + 1))
    answer = structured(out["2"])
    assert answer["abstained"] is False and answer["citations"], answer
    assert {c["doc_id"] for c in answer["citations"]} <= allowed_docs(name)
    assert all(f"[{c['chunk_id']}]" in answer["answer"] for c in answer["citations"])
    hidden = out["3"]
    assert hidden.is_error and hidden.content[0].text.endswith(f": no chunk '{foreign}:c0'")
    chunk = structured(out["4"])
    assert chunk["doc_id"] in allowed_docs(name) and chunk["text"]


def test_the_key_can_come_from_the_environment_and_an_answer_leaves_its_trace(world: dict[str, Path]) -> None:
    from evidencedesk.store import Store

    server = params(world, None, env={"EVIDENCEDESK_API_KEY": KEYS["acme-public"]})
    out = session_calls(server, [("ask", {"question": QUERY}), ("ask", {"question": "Do you sell spaceships?"})])
    answer, abstained = structured(out["0"]), structured(out["1"])
    assert {c["doc_id"] for c in answer["citations"]} == {"acme:d00"}
    assert abstained["abstained"] is True and abstained["abstain_reason"] and abstained["citations"] == []
    with Store(world["store"]) as db:
        assert db.load_trace(answer["trace_id"], owner="acme-public") is not None
        assert db.load_trace(answer["trace_id"], owner="acme-staff") is None


def test_without_a_key_the_anonymous_scope_applies(world: dict[str, Path]) -> None:
    out = session_calls(params(world, None), [("search", {"query": QUERY, "k": 20})])
    assert {h["doc_id"] for h in structured(out["0"])} == allowed_docs(None)  # type: ignore[arg-type]


def test_bad_tool_input_is_a_tool_error_naming_the_field(world: dict[str, Path]) -> None:
    calls = [
        ("search", {"query": "   "}),
        ("search", {"query": QUERY, "k": 100000}),
        ("ask", {"question": QUERY, "scope": {"valid_at": "2020-01-01"}}),
        ("search", {"query": QUERY, "scope": {"colour": ["red"]}}),
        ("search", {"query": QUERY, "method": "magic"}),
    ]
    out = session_calls(params(world, KEYS["acme-staff"]), calls)
    texts = [out[str(i)].content[0].text for i in range(len(calls)) if out[str(i)].is_error]
    assert len(texts) == len(calls), texts
    assert texts[0].endswith(": query: must not be empty")
    assert "k: between 1 and" in texts[1]
    assert "may not choose the validity date" in texts[2]
    assert "colour" in texts[3]
    assert "method" in texts[4]


def test_a_bad_key_is_refused_before_anything_is_served(world: dict[str, Path], tmp_path: Path) -> None:
    import subprocess

    cmd = [sys.executable, "-c", CLI, "mcp", "--store", str(world["store"]), "--keys", str(world["keys"]),
           "--api-key", "not-a-key-0123456789"]  # fmt: skip
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"}
    proc = subprocess.run(cmd, capture_output=True, text=True, input="", env=env, timeout=300)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "--api-key (or EVIDENCEDESK_API_KEY): unknown API key" in proc.stderr
    # several tenants and anonymous access without named tenants: refused as by `serve`
    import yaml

    open_keys = tmp_path / "keys.yaml"
    open_keys.write_text(yaml.safe_dump({"allow_anonymous": True}), encoding="utf-8")
    cmd = [sys.executable, "-c", CLI, "mcp", "--store", str(world["store"]), "--keys", str(open_keys)]
    proc = subprocess.run(cmd, capture_output=True, text=True, input="", env=env, timeout=300)
    assert proc.returncode == 2 and "tenants" in proc.stderr and proc.stdout == ""
