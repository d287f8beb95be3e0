"""``evidencedesk serve``: the HTTP service and the web lab over one store (uvicorn)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evidencedesk.cli.app import (
    ConfigOpt,
    JsonOpt,
    StoreOpt,
    app,
    console,
    fail,
    load_config,
    open_desk,
    print_json,
    store_label,
)


@app.command()
def serve(
    store: StoreOpt = None,
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port.")] = 8000,
    config: ConfigOpt = None,
    keys: Annotated[
        Path | None,
        typer.Option("--keys", help="Service settings YAML: API keys and scopes, anonymous access, ingest root."),
    ] = None,
    log_level: Annotated[str, typer.Option("--log-level", help="uvicorn log level.")] = "info",
    as_json: JsonOpt = False,
) -> None:
    """Serve search, ask, ingest, eval, traces and metrics over HTTP, and the lab at /."""
    from evidencedesk.config import ConfigError
    from evidencedesk.server.settings import load_service_settings

    if not 0 < port < 65536:
        fail(f"--port: must be between 1 and 65535, got {port}", 2)
    settings = load_config(config)
    try:
        service = load_service_settings(keys)
    except ConfigError as exc:
        fail(str(exc), 2)
    location = store if store is not None else settings.store
    label = store_label(location)

    import uvicorn

    from evidencedesk.errors import StoreError
    from evidencedesk.server.app import create_app
    from evidencedesk.server.state import ServiceState

    try:
        desk = open_desk(settings, location, existing=False)
    except (StoreError, OSError) as exc:  # name the store, never a password
        fail(f"cannot open store {label}: {str(exc).replace(location, label)}")
    state = ServiceState(desk, settings, service)
    url = f"http://{host}:{port}/"
    info = {
        "url": url,
        "store": label,
        "anonymous": service.allow_anonymous,
        "keys": [k.name for k in service.keys],
        "ingest_root": str(service.ingest_root) if service.ingest_root else None,
    }
    if as_json:
        print_json(info)
    else:
        who = "anonymous: public scope" if service.allow_anonymous else "anonymous: refused (401)"
        console.print(f"serving {label} at {url} ({len(service.keys)} key(s); {who})", highlight=False)
    uvicorn.run(create_app(state), host=host, port=port, log_level=log_level)
