"""The service on a free loopback port, run by uvicorn in a thread: for clients that need a real socket
(the ``openai`` package, the HTTP retriever adapters)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from evidencedesk.config import Settings
from evidencedesk.server.app import create_app
from evidencedesk.server.settings import parse_service_settings
from evidencedesk.server.state import ServiceState
from tests.support.server import free_port


@contextmanager
def live_service(store: Path, service: dict[str, Any], settings: Settings | None = None) -> Iterator[str]:
    """The base URL (``http://127.0.0.1:PORT``) of the service over ``store``, stopped on leaving."""
    state = ServiceState(store, settings or Settings(), parse_service_settings(service))
    port = free_port()
    config = uvicorn.Config(create_app(state), host="127.0.0.1", port=port, log_level="warning", ws="none")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        # a limit for a service that never starts, not a speed check: its start compiles the search kernel
        # (numba) when its cache is stale, which takes minutes on a loaded machine
        deadline = time.monotonic() + 600
        while True:
            if not thread.is_alive():
                raise RuntimeError("the service stopped while starting")
            try:
                if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the service did not start on {url}") from None
                time.sleep(0.1)
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=30)
