"""``evidencedesk serve``: the HTTP service and the web lab over one store (uvicorn)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evidencedesk.cli import options as opt
from evidencedesk.cli.app import app, console, fail, load_config, print_json, store_label
from evidencedesk.cli.service_open import AnonymousTenantOpt, KeysOpt, open_state, service_settings


@app.command()
def serve(
    store: opt.Store = None,
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port.")] = 8000,
    config: opt.Config = None,
    keys: KeysOpt = None,
    anonymous_tenant: AnonymousTenantOpt = None,
    labels: Annotated[
        Path | None,
        typer.Option(
            "--labels",
            help="Labelled questions (JSON lines) the lab lists and POST /eval scores; overrides the keys file's "
            "labels:. Default: none, or the bundled example's labels over the example store.",
        ),
    ] = None,
    log_level: Annotated[str, typer.Option("--log-level", help="uvicorn log level.")] = "info",
    as_json: opt.Json = False,
) -> None:
    """Serve search, ask, ingest, eval, traces and metrics over HTTP, and the lab at /."""
    from evidencedesk.errors import ConfigError
    from evidencedesk.server.access import check_bind

    if not 0 < port < 65536:
        fail(f"--port: must be between 1 and 65535, got {port}", 2)
    settings = load_config(config)
    try:
        service = service_settings(keys, anonymous_tenant)
        if labels is not None:
            if not labels.is_file():
                fail(f"--labels: no such file: {labels}", 2)
            service = service.model_copy(update={"labels": labels.resolve()})
        check_bind(service, host)
    except ConfigError as exc:
        fail(str(exc), 2)
    location = store if store is not None else settings.store
    label = store_label(location)

    import uvicorn

    from evidencedesk.server.app import create_app

    state = open_state(settings, service, location, existing=False)
    url = f"http://{host}:{port}/"
    info = {
        "url": url,
        "store": label,
        "anonymous": service.allow_anonymous,
        "keys": [k.name for k in service.keys],
        "ingest_root": str(service.ingest_root) if service.ingest_root else None,
        "labels": str(service.labels) if service.labels else None,
    }
    if as_json:
        print_json(info)
    else:
        tenants = service.anonymous_scope.tenants
        shown = f"public scope, tenants {', '.join(tenants)}" if tenants else "public scope"
        who = f"anonymous: {shown}" if service.allow_anonymous else "anonymous: refused (401)"
        console.print(f"serving {label} at {url} ({len(service.keys)} key(s); {who})", highlight=False)
    uvicorn.run(create_app(state), host=host, port=port, log_level=log_level)
