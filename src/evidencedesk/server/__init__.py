"""The HTTP service (FastAPI) with per-key scopes, and the web lab it serves from ``static/``."""

from evidencedesk.server.app import build_app, create_app
from evidencedesk.server.settings import KeySpec, ScopeSpec, ServiceSettings, load_service_settings
from evidencedesk.server.state import ServiceState

__all__ = [
    "KeySpec",
    "ScopeSpec",
    "ServiceSettings",
    "ServiceState",
    "build_app",
    "create_app",
    "load_service_settings",
]
