"""``/v1/chat/completions`` and ``/v1/models`` through the official ``openai`` client, against the
service running on a real socket: answers with citations, streamed and not, inside each key's scope,
and every refusal in OpenAI's error shape."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.live_server import live_service
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

openai = pytest.importorskip("openai")

ABSENT = "Do you sell spaceships to Mars?"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("openai-three-tenants")
    store = build_store(root)
    with live_service(store, service_settings(write_labels(root / "labels.jsonl"))) as url:
        yield url


def client(url: str, name: str = "acme-staff", key: str | None = None) -> Any:
    return openai.OpenAI(base_url=f"{url}/v1", api_key=key or KEYS[name], max_retries=0, timeout=120)


def ask(url: str, name: str, question: str = QUERY, **kw: Any) -> Any:
    return client(url, name).chat.completions.create(
        model="evidencedesk", messages=[{"role": "user", "content": question}], **kw
    )


def extra_answer(url: str, trace_id: str) -> str:
    """The validated answer stored in the trace (the chat text adds its sources after it)."""
    r = httpx.get(f"{url}/traces/{trace_id}", headers={"X-API-Key": KEYS["acme-staff"]}, timeout=60)
    assert r.status_code == 200, r.text
    return str(r.json()["answer"])


def allowed_docs(name: str) -> set[str]:
    tenants, audiences = SCOPES[name]
    return {stored_doc_id(t, a) for t in tenants for a in audiences}


def test_an_answer_carries_its_citations_as_markers_and_in_the_extra_field(service: str) -> None:
    done = ask(service, "acme-staff")
    assert done.object == "chat.completion" and done.model == "evidencedesk"
    choice = done.choices[0]
    assert choice.finish_reason == "stop" and choice.message.role == "assistant"
    extra = done.model_extra["evidencedesk"]
    assert extra["abstained"] is False and extra["abstain_reason"] == ""
    cited = [c["chunk_id"] for c in extra["citations"]]
    assert cited, extra
    for cid in cited:  # every citation is a marker in the text, and names its document
        assert f"[{cid}]" in choice.message.content
    assert {c["doc_id"] for c in extra["citations"]} <= allowed_docs("acme-staff")
    assert all(c["title"] and c["source"] for c in extra["citations"])
    # chat front ends show the text only: it names each citation's file and place in it
    answer, _, listed = choice.message.content.partition("\n\nSources:\n")
    assert answer == extra_answer(service, extra["trace_id"])
    assert listed.splitlines() == [f"- [{c['chunk_id']}] {c['source']}: {c['location']}" for c in extra["citations"]]
    assert all(c["source"].endswith(".md") and "lines" in c["location"] for c in extra["citations"])
    assert done.id == f"chatcmpl-{extra['trace_id']}"
    # the trace is stored as on /ask, for the key that asked
    trace = httpx.get(f"{service}/traces/{extra['trace_id']}", headers={"X-API-Key": KEYS["acme-staff"]}, timeout=60)
    assert trace.status_code == 200 and trace.json()["citations"] == cited
    other = httpx.get(f"{service}/traces/{extra['trace_id']}", headers={"X-API-Key": KEYS["acme-public"]}, timeout=60)
    assert other.status_code == 404


def test_the_streamed_answer_is_the_same_answer(service: str) -> None:
    whole = ask(service, "globex-staff")
    chunks = list(ask(service, "globex-staff", stream=True))
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text == whole.choices[0].message.content
    assert all(c.object == "chat.completion.chunk" and c.id == chunks[0].id for c in chunks)
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    assert all(c.choices[0].finish_reason is None for c in chunks[:-1])
    extra = last.model_extra["evidencedesk"]
    assert [c["chunk_id"] for c in extra["citations"]] == [
        c["chunk_id"] for c in whole.model_extra["evidencedesk"]["citations"]
    ]
    assert extra["trace_id"] != whole.model_extra["evidencedesk"]["trace_id"]  # a second question, a second trace


def test_the_raw_stream_is_server_sent_events_ending_with_done(service: str) -> None:
    body = {"model": "evidencedesk", "stream": True, "messages": [{"role": "user", "content": QUERY}]}
    with httpx.stream("POST", f"{service}/v1/chat/completions", json=body, headers=_auth("acme-public"),
                      timeout=120) as r:  # fmt: skip
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = [line for line in r.iter_lines() if line]
    assert all(e.startswith("data: ") for e in events)
    assert events[-1] == "data: [DONE]"
    last = json.loads(events[-2].removeprefix("data: "))
    assert last["choices"][0]["finish_reason"] == "stop" and "evidencedesk" in last


def test_an_abstention_is_an_ordinary_answer(service: str) -> None:
    for stream in (False, True):
        if stream:
            chunks = list(ask(service, "acme-staff", ABSENT, stream=True))
            text = "".join(c.choices[0].delta.content or "" for c in chunks)
            extra = chunks[-1].model_extra["evidencedesk"]
        else:
            done = ask(service, "acme-staff", ABSENT)
            text, extra = done.choices[0].message.content, done.model_extra["evidencedesk"]
        assert extra["abstained"] is True and extra["abstain_reason"], extra
        assert text.strip() and extra["citations"] == [] and "Sources:" not in text


@pytest.mark.parametrize("name", ["acme-public", "acme-staff", "globex-staff", "initech-public"])
def test_a_tenant_scoped_key_sees_only_its_tenant(service: str, name: str) -> None:
    forbidden = all_markers() - allowed_markers(name)
    # asking for every tenant only narrows the key's scope: it never widens it
    wide = {"tenants": ["acme", "globex", "initech"], "audiences": ["public", "staff"], "statuses": None}
    for extra_body in (None, {"scope": wide}):
        done = ask(service, name, extra_body=extra_body)
        chunks = list(ask(service, name, stream=True, extra_body=extra_body))
        for raw in (done.model_dump_json(), json.dumps([c.model_dump() for c in chunks])):
            assert not [m for m in forbidden if m in raw], (name, raw[:500])
        docs = {c["doc_id"] for c in done.model_extra["evidencedesk"]["citations"]}
        assert docs and docs <= allowed_docs(name)
        assert any(m in done.choices[0].message.content for m in allowed_markers(name))


def test_models_lists_the_ids_chat_accepts(service: str) -> None:
    ids = [m.id for m in client(service).models.list()]
    assert ids == ["evidencedesk", "evidencedesk-extractive"]
    done = client(service).chat.completions.create(
        model="evidencedesk-extractive", messages=[{"role": "user", "content": QUERY}]
    )
    assert done.model == "evidencedesk-extractive" and done.choices[0].message.content


def _auth(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEYS[name]}"}


def _error(r: httpx.Response) -> dict[str, Any]:
    body = r.json()
    assert set(body) == {"error"} and set(body["error"]) == {"message", "type", "param", "code"}, body
    return body["error"]  # type: ignore[no-any-return]


def test_a_bad_key_gets_401_in_the_openai_shape(service: str) -> None:
    with pytest.raises(openai.AuthenticationError) as caught:
        client(service, key="not-a-key-0123456789").chat.completions.create(
            model="evidencedesk", messages=[{"role": "user", "content": QUERY}]
        )
    assert caught.value.status_code == 401
    assert caught.value.body == {
        "message": "unknown API key: use a key from the service's keys file or send none for the anonymous scope",
        "type": "authentication_error", "param": None, "code": "invalid_api_key",
    }  # fmt: skip
    with pytest.raises(openai.AuthenticationError):
        list(client(service, key="not-a-key-0123456789").models.list())
    body = {"model": "evidencedesk", "messages": [{"role": "user", "content": QUERY}]}
    for headers in ({}, {"Authorization": "Basic abc"}, {"X-API-Key": "wrong-key-0123456789"}):
        r = httpx.post(f"{service}/v1/chat/completions", json=body, headers=headers, timeout=60)
        # no key: the anonymous scope (this service allows it); a malformed or wrong key: 401
        if not headers:
            assert r.status_code == 200
            continue
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        assert _error(r)["type"] == "authentication_error"


@pytest.mark.parametrize(
    ("messages", "model", "status", "param", "says"),
    [
        ([], "evidencedesk", 400, "messages", "at least one message"),
        ([{"role": "user", "content": QUERY}, {"role": "assistant", "content": "Hi"}], "evidencedesk", 400,
         "messages[1].role", "last message must come from the user"),
        ([{"role": "system", "content": QUERY}], "evidencedesk", 400, "messages[0].role", "got 'system'"),
        ([{"role": "user", "content": "   "}], "evidencedesk", 400, "messages[0].content", "must not be empty"),
        ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}], "evidencedesk", 400,
         "messages[0].content", "only text parts"),
        ([{"role": "user", "content": QUERY}], "gpt-4o", 404, "model", "does not exist here"),
    ],
)  # fmt: skip
def test_bad_input_gets_a_clear_4xx_in_the_openai_shape(
    service: str, messages: list[dict[str, Any]], model: str, status: int, param: str, says: str
) -> None:
    errors = {400: openai.BadRequestError, 404: openai.NotFoundError}
    for stream in (False, True):
        with pytest.raises(errors[status]) as caught:
            client(service).chat.completions.create(model=model, messages=messages, stream=stream)  # type: ignore[arg-type]
        assert caught.value.status_code == status
        error = caught.value.body
        assert error["param"] == param and says in error["message"], error
        assert error["type"] == ("not_found_error" if status == 404 else "invalid_request_error")
    if status == 404:
        assert error["code"] == "model_not_found"


def test_a_malformed_body_is_400_naming_the_field(service: str) -> None:
    cases = [
        ({"model": "evidencedesk"}, "messages"),
        ({"model": "evidencedesk", "messages": [{"content": QUERY}]}, "messages[0].role"),
        ({"messages": [{"role": "user", "content": QUERY}]}, "model"),
        ({"model": "evidencedesk", "messages": [{"role": "user", "content": QUERY}], "n": 2}, "n"),
        ({"model": "evidencedesk", "messages": [{"role": "user", "content": QUERY}], "k": 0}, "k"),
    ]
    for body, param in cases:
        r = httpx.post(f"{service}/v1/chat/completions", json=body, headers=_auth("acme-staff"), timeout=60)
        assert r.status_code == 400, (body, r.text)
        error = _error(r)
        assert error["param"] == param and error["message"].startswith(param), (body, error)
    r = httpx.post(f"{service}/v1/chat/completions", content=b"{not json", headers=_auth("acme-staff"), timeout=60)
    assert r.status_code == 400 and _error(r)["type"] == "invalid_request_error"


def test_a_scope_the_key_may_not_choose_is_refused_in_the_openai_shape(service: str) -> None:
    body = {"model": "evidencedesk", "messages": [{"role": "user", "content": QUERY}],
            "scope": {"valid_at": "2020-01-01"}}  # fmt: skip
    r = httpx.post(f"{service}/v1/chat/completions", json=body, headers=_auth("acme-staff"), timeout=60)
    assert r.status_code == 403 and _error(r)["type"] == "permission_error"


def test_unused_openai_options_are_accepted(service: str) -> None:
    done = ask(service, "acme-public", temperature=0.2, max_tokens=50, top_p=1, user="someone")
    assert done.model_extra["evidencedesk"]["citations"]
    history = [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "Hello, ask me about the handbooks."},
        {"role": "user", "content": [{"type": "text", "text": QUERY}]},
    ]
    again = client(service, "acme-public").chat.completions.create(model="evidencedesk", messages=history)
    assert again.choices[0].message.content == done.choices[0].message.content


def test_chat_counts_against_the_ask_rate_limit(tmp_path: Path) -> None:
    store = build_store(tmp_path)
    settings = service_settings(write_labels(tmp_path / "labels.jsonl"))
    settings["limits"] = {"requests": 1, "cost": None, "window_seconds": 3600}
    with live_service(store, settings) as url:
        assert ask(url, "acme-public").choices[0].message.content
        with pytest.raises(openai.RateLimitError) as caught:
            ask(url, "acme-public")
        assert caught.value.status_code == 429 and caught.value.response.headers["retry-after"]
        assert caught.value.body["type"] == "rate_limit_error"


def test_a_keyless_service_serves_a_placeholder_key_as_anonymous(tmp_path: Path) -> None:
    """`serve` without a keys file (loopback only): an OpenAI client must send some key, and any key
    is the anonymous caller it would be without one, with the anonymous scope and nothing more."""
    store = build_store(tmp_path)
    keyless = {"allow_anonymous": True, "anonymous_scope": {"tenants": ["acme"]}}  # serve --anonymous-tenant acme
    with live_service(store, keyless) as url:
        for placeholder in ("sk-no-key-required", "none"):
            placeholder_client = openai.OpenAI(base_url=f"{url}/v1", api_key=placeholder, max_retries=0, timeout=120)
            done = placeholder_client.chat.completions.create(
                model="evidencedesk", messages=[{"role": "user", "content": QUERY}]
            )
            extra = done.model_extra["evidencedesk"]
            assert extra["citations"]
            assert {c["doc_id"] for c in extra["citations"]} <= {stored_doc_id("acme", "public")}
            assert "evidencedesk" in [m.id for m in placeholder_client.models.list()]
            # the anonymous caller owns no trace, with or without a placeholder
            r = httpx.get(f"{url}/traces/{extra['trace_id']}", headers={"X-API-Key": placeholder}, timeout=60)
            assert r.status_code == 404
        # a malformed header is still refused
        r = httpx.get(f"{url}/documents", headers={"Authorization": "Basic abc"}, timeout=60)
        assert r.status_code == 401
