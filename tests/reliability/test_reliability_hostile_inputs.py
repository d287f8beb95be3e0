"""What schemathesis cannot send: JSON numbers no JSON encoder writes (NaN, Infinity, 1e999), integers
past 64 bits, long names, odd encodings and character sets, repeated or malformed credentials, and
multipart uploads of any shape. No request gets a 5xx, and no upload leaves a staged file behind."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.config import Settings
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.server.app import create_app
from evidencedesk.server.settings import parse_service_settings
from evidencedesk.server.state import ServiceState
from evidencedesk.store import Store
from tests.support.reliability import COUNTS, write_versioned

KEY = "hostile-admin-key-0123456789"
INGEST_KEY = "hostile-ingest-key-0123456789"
FUZZ = settings(
    max_examples=60,
    deadline=timedelta(seconds=60),
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)

# JSON literals as text: Python's reader accepts NaN and Infinity, 1e999 reads as infinity
NUMBERS = ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "99999999999999999999999999", "-9223372036854775809",
           "9223372036854775808", "0", "-1", "1.5", "1e-320", "null", "true", "[]", "{}"]  # fmt: skip
TEXTS = ['"' + "x" * 5000 + '"', '"\\ud800"', '"\\u0000"', '"\\ufeff\\u202e"', '"' + "é" * 300 + '"', '""', '"../.."']
BODIES = {
    # route -> (a body that would be served, the fields a value is put into)
    "/search": ('{"query": "warranty", %s}', ["k", "query", "method", "scope.check_validity", "scope.valid_at",
                                               "scope.doc_ids", "scope.tenants"]),
    "/ask": ('{"question": "How long is the warranty?", %s}', ["k", "budget", "candidates", "question",
                                                              "scope.check_validity", "generator", "rerank"]),
    "/eval": ('{"labels": "no-such-labels.jsonl", %s}', ["k", "floor", "labels", "scope.check_validity"]),
    "/lab/search": ('{"query": "warranty", %s}', ["k", "chunker", "question_id", "scope.valid_at"]),
    "/ingest": ('{"path": "docs", %s}', ["path", "embed", "chunker"]),
}  # fmt: skip
PATHS = ["/eval/runs/{}", "/eval/runs/{}/report", "/documents/{}", "/documents/{}/chunks", "/chunks/{}", "/traces/{}"]
ODD_IDS = ["99999999999999999999", "-99999999999999999999", "9223372036854775808", "0", "-1", "1e3", "NaN",
           "x" * 5000, "%00", "%ff%fe", "..%2f..%2fetc%2fpasswd", "é" * 300,
           "kestrel:kc-returns-v3:c99999999999999999999"]  # fmt: skip
ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "utf-32", "latin-1"]
CHARSETS = ["", "; charset=utf-8", "; charset=utf-16", "; charset=latin-1", "; charset=no-such-codec", ";;;="]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Path]]:
    root = tmp_path_factory.mktemp("hostile")
    write_versioned(root / "docs", 1, 4)
    with Store(root / "store") as store:
        ingest_folder(store, root / "docs", ChunkingConfig())
    service = parse_service_settings(
        {
            "allow_anonymous": True,
            "ingest_root": str(root),
            "keys": [
                {
                    "name": "admin",
                    "key": KEY,
                    "scope": {"statuses": None, "audiences": None},
                    "admin": True,
                    "limits": {"requests": None, "cost": None},
                },
                {"name": "writer", "key": INGEST_KEY, "ingest": True, "limits": {"requests": None, "cost": None}},
            ],
        }  # fmt: skip
    )
    app = create_app(ServiceState(root / "store", Settings(), service))
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client, root / "store"
    shutil.rmtree(root, ignore_errors=True)


def _body(route: str, field: str, literal: str) -> str:
    template, _ = BODIES[route]
    if field.startswith("scope."):
        return template % f'"scope": {{"{field[6:]}": {literal}}}'
    return template % f'"{field}": {literal}'


def _served(response: object, what: str) -> None:
    status = getattr(response, "status_code", 0)
    COUNTS["hostile inputs: requests"] += 1
    COUNTS[f"hostile inputs: {status // 100}xx answers"] += 1
    assert status < 500, f"{what}: {status} {getattr(response, 'text', '')[:300]}"


@st.composite
def json_requests(draw: st.DrawFn) -> tuple[str, bytes, str]:
    route = draw(st.sampled_from(sorted(BODIES)))
    field = draw(st.sampled_from(BODIES[route][1]))
    literal = draw(st.sampled_from(NUMBERS + TEXTS))
    encoding = draw(st.sampled_from(ENCODINGS))
    text = _body(route, field, literal)
    data = (
        text.encode(encoding, errors="surrogatepass")
        if encoding.startswith("utf")
        else text.encode(encoding, "replace")
    )
    return route, data, "application/json" + draw(st.sampled_from(CHARSETS))


@FUZZ
@given(request=json_requests(), keyed=st.booleans())
def test_odd_json_bodies_never_get_a_server_error(world: tuple[TestClient, Path], request: tuple[str, bytes, str],
                                                   keyed: bool) -> None:  # fmt: skip
    client, _ = world
    route, data, ctype = request
    key = (INGEST_KEY if route == "/ingest" else KEY) if keyed else None
    headers = {"content-type": ctype, **({"X-API-Key": key} if key else {})}
    _served(client.post(route, content=data, headers=headers), f"POST {route} {data[:120]!r} {ctype}")


@FUZZ
@given(path=st.sampled_from(PATHS), ident=st.sampled_from(ODD_IDS) | st.text(max_size=300), keyed=st.booleans())
def test_odd_ids_in_paths_never_get_a_server_error(world: tuple[TestClient, Path], path: str, ident: str,
                                                    keyed: bool) -> None:  # fmt: skip
    client, _ = world
    url = path.format(ident if ident in ODD_IDS and "%" in ident else quote(ident, safe=":"))  # some sent raw
    _served(client.get(url, headers={"X-API-Key": KEY} if keyed else {}), f"GET {url[:200]}")


CREDENTIALS = st.lists(
    st.tuples(
        st.sampled_from(["X-API-Key", "Authorization"]),
        st.sampled_from([KEY, INGEST_KEY, "", " ", "Bearer", f"Bearer {KEY}", f"Basic {KEY}", "x" * 10000, "anonymous"])
        | st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=255), max_size=64),
    ),
    max_size=3,
)


@FUZZ
@given(credentials=CREDENTIALS)
def test_odd_credentials_never_get_a_server_error(
    world: tuple[TestClient, Path], credentials: list[tuple[str, str]]
) -> None:
    client, _ = world
    headers = [(name, value.encode("latin-1")) for name, value in credentials]
    response = client.get("/documents", headers=headers)  # type: ignore[arg-type]
    _served(response, f"GET /documents with {[(n, v[:40]) for n, v in credentials]}")
    values = {name.lower(): {v for n, v in credentials if n.lower() == name.lower()} for name, _ in credentials}
    if any(len(v) > 1 for v in values.values()):
        assert response.status_code == 401  # two different credentials are never served as one of them


NAMES = (
    st.sampled_from(["a.md", "b.txt", "x" * 300 + ".md", "é" * 120 + ".md", "../up.md", ".hidden.md", "con.md",
                     "a\\b.md", "nul\x00.md", "tab\t.md", "new\nline.md", "", ".", "..", "no-extension", "x.exe",
                     "\u202etxt.md"])
    | st.text(max_size=80).map(lambda s: s + ".md")
)  # fmt: skip
CONTENTS = st.sampled_from(
    [b"# t\n\ntext\n", b"", b"\xff\xfe\x00bad", b"---\nid: a:b\n---\n", b"---\n- [\n", b"\x00" * 64]
)


@FUZZ
@given(
    files=st.lists(st.tuples(NAMES, CONTENTS), min_size=0, max_size=4),
    embed=st.sampled_from([None, "true", "false", "maybe", ""]),
    chunker=st.sampled_from([None, "{}", '{"size": NaN}', '{"size": 99999999999999999999}', "not json", '{"name": 1}']),
)
def test_any_multipart_upload_gets_no_server_error_and_leaves_nothing(
    world: tuple[TestClient, Path], files: list[tuple[str, bytes]], embed: str | None, chunker: str | None
) -> None:
    client, store = world
    fields = {k: v for k, v in (("embed", embed), ("chunker", chunker)) if v is not None}
    parts = [("files", (name, data, "text/plain")) for name, data in files] or None
    try:
        response = client.post("/ingest", files=parts, data=fields, headers={"X-API-Key": INGEST_KEY})
    except UnicodeEncodeError:  # a name the client itself cannot put in a header: never sent
        return
    _served(response, f"multipart {[(n[:40], d[:20]) for n, d in files]} {fields}")
    uploads = store / "uploads"
    assert not uploads.exists() or not any(p.is_file() for p in uploads.rglob("*"))
