"""Strict authentication, secure defaults at start, rate and cost limits, streamed body limits, retention."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evidencedesk.cli.app import app as cli
from evidencedesk.config import ConfigError
from evidencedesk.server.access import check_bind
from evidencedesk.server.limits import RateLimiter
from evidencedesk.server.settings import LimitSpec, no_keys_file, parse_service_settings
from evidencedesk.store import Store
from tests.support.security import KEYS, QUERY, auth, build_store, service_settings, write_labels
from tests.support.server import make_client


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_store(tmp_path_factory.mktemp("limits"))


def test_without_keys_the_service_binds_loopback_only() -> None:
    for host in ("127.0.0.1", "::1", "localhost", "127.0.0.2"):
        check_bind(no_keys_file(), host)
    for host in ("0.0.0.0", "192.168.1.5", "::"):
        with pytest.raises(ConfigError, match="loopback"):
            check_bind(no_keys_file(), host)
    check_bind(parse_service_settings({"keys": [{"name": "a", "key": KEYS["admin"]}]}), "0.0.0.0")
    out = CliRunner().invoke(cli, ["serve", "--store", "unused", "--host", "0.0.0.0"])
    assert out.exit_code == 2 and "loopback" in out.output


def test_a_store_of_several_tenants_needs_named_anonymous_tenants(store: Path) -> None:
    with pytest.raises(ConfigError, match="3 tenants"):
        make_client(store, no_keys_file())
    with pytest.raises(ConfigError, match="anonymous_scope.tenants"):
        make_client(store, {"allow_anonymous": True, "keys": []})
    named = {"allow_anonymous": True, "anonymous_scope": {"tenants": ["acme"]}}
    with make_client(store, named) as c:
        assert c.post("/search", json={"query": QUERY, "method": "bm25"}).status_code == 200
    with make_client(store, {"keys": [{"name": "a", "key": KEYS["admin"]}]}) as c:  # a keys file: anonymous is off
        assert c.post("/search", json={"query": QUERY, "method": "bm25"}).status_code == 401
    out = CliRunner().invoke(cli, ["serve", "--store", str(store)])
    assert out.exit_code == 2 and "3 tenants" in out.output


def test_unknown_or_malformed_credentials_are_401(store: Path) -> None:
    with make_client(store, service_settings(write_labels(store.parent / "l.jsonl"))) as c:
        body = {"query": QUERY, "method": "bm25"}
        assert c.post("/search", json=body).status_code == 200  # anonymous is on here
        for bad in (
            {"X-API-Key": "wrong-key-0123456789"},
            {"X-API-Key": ""},
            {"X-API-Key": "   "},
            {"Authorization": "Bearer"},
            {"Authorization": "Bearer   "},
            {"Authorization": "Basic dXNlcjpwYXNz"},
            {"Authorization": KEYS["admin"]},
            {"Authorization": f"Bearer {KEYS['admin']}", "X-API-Key": KEYS["acme-public"]},
        ):
            r = c.post("/search", json=body, headers=bad)
            assert r.status_code == 401, (bad, r.text)
            assert r.headers["www-authenticate"] == "Bearer"
        assert c.post("/search", json=body, headers={"Authorization": f"Bearer {KEYS['admin']}"}).status_code == 200


def test_rate_limiter_window_and_cost() -> None:
    now = [100.0]
    limiter = RateLimiter(clock=lambda: now[0])
    spec = LimitSpec(requests=2, cost=5, window_seconds=10)
    assert limiter.charge("k", spec, 1) is None and limiter.charge("k", spec, 1) is None
    assert limiter.charge("k", spec, 1) == pytest.approx(10)  # third call in the window
    assert limiter.charge("other", spec, 1) is None  # per key
    now[0] = 104.0
    assert limiter.charge("k", spec, 1) == pytest.approx(6)
    now[0] = 110.5
    assert limiter.charge("k", spec, 4) is None  # both old calls expired
    assert limiter.charge("k", spec, 2) == pytest.approx(10)  # 4 + 2 > 5 cost units
    assert limiter.charge("k", spec, 6) == pytest.approx(10)  # more than the whole budget


def test_429_with_retry_after_on_limited_routes(store: Path) -> None:
    settings = service_settings(write_labels(store.parent / "l2.jsonl"))
    settings["limits"] = {"requests": 3, "cost": 100, "window_seconds": 60}
    with make_client(store, settings) as c:
        ask = {"question": QUERY, "method": "bm25"}
        for _ in range(3):
            assert c.post("/ask", json=ask, headers=auth("acme-public")).status_code == 200
        r = c.post("/lab/search", json={"query": QUERY, "method": "bm25"}, headers=auth("acme-public"))
        assert r.status_code == 429 and 0 < int(r.headers["retry-after"]) <= 60
        assert c.post("/ask", json=ask, headers=auth("acme-staff")).status_code == 200  # another key's own window
        assert c.get("/documents", headers=auth("acme-public")).status_code == 200  # reads are not limited
        assert c.post("/search", json={"query": QUERY}, headers=auth("acme-public")).status_code == 200
    settings["limits"] = {"requests": None, "cost": 25, "window_seconds": 60}
    with make_client(store, settings) as c:
        assert c.post("/eval", json={"method": "bm25", "save": False}, headers=auth("admin")).status_code == 200
        r = c.post("/eval", json={"method": "bm25", "save": False}, headers=auth("admin"))  # 20 + 20 > 25
        assert r.status_code == 429 and "retry-after" in r.headers


def _chunks(total: int, size: int = 65536) -> Iterator[bytes]:
    yield b'{"query": "'
    for _ in range(total // size):
        yield b"x" * size
    yield b'"}'


def test_body_limit_holds_without_content_length(store: Path) -> None:
    settings = {**service_settings(write_labels(store.parent / "l3.jsonl")), "max_body_bytes": 10_000}
    with make_client(store, settings) as c:
        r = c.post("/search", content=_chunks(200_000), headers={"content-type": "application/json"})
        assert "content-length" not in r.request.headers  # streamed: only counting can stop it
        assert r.status_code == 413 and "larger than 10000" in r.json()["detail"]
        lying = c.post(
            "/search",
            content=b'{"query": "' + b"x" * 50_000 + b'"}',
            headers={"content-type": "application/json", "content-length": "20"},
        )
        assert lying.status_code in (400, 413, 422)  # never served past the limit
        assert c.post("/search", json={"query": QUERY, "method": "bm25"}).status_code == 200


def test_trace_retention_keeps_the_newest(store: Path, tmp_path: Path) -> None:
    settings = {**service_settings(write_labels(tmp_path / "l.jsonl")), "trace_retention": 3}
    ids = []
    with make_client(store, settings) as c:
        for i in range(5):
            r = c.post("/ask", json={"question": f"{QUERY} {i}", "method": "bm25"}, headers=auth("admin"))
            ids.append(r.json()["trace_id"])
        listed = [t["trace_id"] for t in c.get("/traces", headers=auth("admin")).json()]
    assert listed[:3] == ids[::-1][:3] and not set(ids[:2]) & set(listed)
    with Store(store) as db:
        assert len(db.traces(100)) <= 3
