"""Shared constants and helpers of the service tests: paths, API keys and their scopes, clients."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from evidencedesk.config import Settings
from evidencedesk.server.app import create_app
from evidencedesk.server.settings import ServiceSettings, parse_service_settings
from evidencedesk.server.state import ServiceState

PUBLIC_KEY = "public-key-0123456789"
STAFF_KEY = "staff-key-0123456789ab"
AUDITOR_KEY = "auditor-key-0123456789"
BENGALI_KEY = "bengali-key-0123456789"

KEYS: dict[str, Any] = {
    "allow_anonymous": True,
    "keys": [
        {"name": "public", "key": PUBLIC_KEY, "scope": {"statuses": ["current"], "audiences": ["public"]}},
        {"name": "staff", "key": STAFF_KEY, "scope": {"audiences": ["public", "staff"]}, "ingest": True},
        {
            "name": "auditor",
            "key": AUDITOR_KEY,
            "scope": {"statuses": None, "audiences": None, "check_validity": False},
            "choose_date": True,
        },
        {"name": "bengali", "key": BENGALI_KEY, "scope": {"langs": ["bn"]}},
    ],
}


def headers(key: str | None) -> dict[str, str]:
    return {"X-API-Key": key} if key else {}


def make_client(store: Path, service: dict[str, Any] | ServiceSettings | None = None) -> TestClient:
    settings = service if isinstance(service, ServiceSettings) else parse_service_settings(service or KEYS)
    return TestClient(create_app(ServiceState(store, Settings(), settings)))


def free_port() -> int:
    """A TCP port free on the loopback interface right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
