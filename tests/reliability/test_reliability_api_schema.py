"""schemathesis against the service's own OpenAPI schema, in process (ASGI): no request gets a 5xx,
and every answer matches the schema (a documented status code and content type, a body that
validates against the response's schema).

Both valid requests and ones that break the schema (wrong types, out-of-range numbers, missing
fields: schemathesis's negative mode) are sent, each with the admin key and without any key. What
JSON cannot carry (NaN, Infinity, huge integers in a body, odd encodings, long file names) is in
``test_reliability_hostile_inputs``."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.config import SchemathesisConfig

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.config import Settings
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.server.app import create_app
from evidencedesk.server.settings import parse_service_settings
from evidencedesk.server.state import ServiceState
from evidencedesk.store import Store
from tests.support.reliability import COUNTS, write_versioned

ROOT = Path(__file__).resolve().parents[2]
KESTREL_DOCS = ROOT / "examples" / "kestrel" / "docs"
KEY = "reliability-key-0123456789"


def _store(root: Path) -> Path:
    docs = root / "docs"
    if KESTREL_DOCS.is_dir() and any(KESTREL_DOCS.iterdir()):
        shutil.copytree(KESTREL_DOCS, docs)
    else:
        write_versioned(docs, 1, 6)
    with Store(root / "store") as s:
        ingest_folder(s, docs, ChunkingConfig())
    return root / "store"


_root = Path(tempfile.mkdtemp(prefix="evidencedesk-schema-"))  # the schema is read at collection time
atexit.register(shutil.rmtree, _root, ignore_errors=True)
SERVICE = parse_service_settings(
    {
        "allow_anonymous": True,
        "anonymous_scope": {"tenants": ["kestrel", "default"]},  # the store holds two tenants: name them
        "ingest_root": str(_root),
        "keys": [
            {
                "name": "fuzzer",
                "key": KEY,
                "scope": {"statuses": None, "audiences": None},
                "ingest": True,
                "admin": True,  # reaches /metrics and every stored record
                "limits": {"requests": None, "cost": None},  # every generated request reaches its route
            }
        ],
    }
)
APP = create_app(ServiceState(_store(_root), Settings(), SERVICE), close_on_shutdown=False)
CONFIG = SchemathesisConfig.from_dict({"generation": {"mode": "all"}})  # valid and invalid requests alike
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
schema = schemathesis.openapi.from_asgi("/openapi.json", APP, config=CONFIG)


@pytest.mark.slow
@schema.parametrize()
@settings(
    max_examples=5,
    deadline=timedelta(seconds=60),
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_no_request_gets_a_server_error(case: schemathesis.Case) -> None:
    for headers in ({"X-API-Key": KEY}, {}):  # with the key, and as an anonymous caller
        response = case.call(headers=headers, timeout=300)  # the first dense request embeds the corpus
        COUNTS["schemathesis: requests"] += 1
        COUNTS[f"schemathesis: {response.status_code // 100}xx answers"] += 1
        assert response.status_code < 500, f"{case.method} {case.path}: {response.status_code} {response.text[:500]}"
        case.validate_response(response, checks=CHECKS)
