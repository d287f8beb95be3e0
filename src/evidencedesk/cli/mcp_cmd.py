"""``evidencedesk mcp``: the Model Context Protocol server (stdio) over one store, inside one key's scope."""

from __future__ import annotations

from typing import Annotated

import typer

from evidencedesk.cli import options as opt
from evidencedesk.cli.app import app, fail, load_config
from evidencedesk.cli.service_open import AnonymousTenantOpt, KeysOpt, open_state, service_settings

KEY_ENV = "EVIDENCEDESK_API_KEY"


@app.command()
def mcp(
    store: opt.Store = None,
    config: opt.Config = None,
    keys: KeysOpt = None,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            envvar=KEY_ENV,
            show_envvar=True,
            help="The API key whose scope every tool call runs in, looked up in --keys (or set "
            "EVIDENCEDESK_API_KEY). Default: no key, the anonymous scope of the keys file.",
        ),
    ] = None,
    anonymous_tenant: AnonymousTenantOpt = None,
) -> None:
    """Serve search, ask and get_chunk as Model Context Protocol tools over stdin/stdout, inside one
    API key's scope (needs the package's mcp extra). Nothing else is written to stdout."""
    from evidencedesk.errors import AccessError, ConfigError

    try:
        import mcp as _sdk  # noqa: F401 - only to say clearly what is missing
    except ImportError:
        fail("the MCP server needs the mcp package: install the mcp extra (pip install 'evidencedesk[mcp]')", 1)
    from evidencedesk.integrations.mcp_server import serve_stdio

    settings = load_config(config)
    try:
        service = service_settings(keys, anonymous_tenant)
    except ConfigError as exc:
        fail(str(exc), 2)
    state = open_state(settings, service, store if store is not None else settings.store)
    try:
        caller = state.keys.identify(api_key)
    except AccessError as exc:
        state.close()
        fail(f"--api-key (or {KEY_ENV}): {exc.message}", 2)
    try:
        serve_stdio(state, caller)
    finally:
        state.close()
