"""What ``serve`` and ``mcp`` share: the service settings with the command line's anonymous tenants, and
the service state over the store, each failing with a message that names the flag or the store."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evidencedesk.cli.app import fail, open_desk, store_label

if TYPE_CHECKING:
    from evidencedesk.config import Settings
    from evidencedesk.server.settings import ServiceSettings
    from evidencedesk.server.state import ServiceState

KeysOpt = Annotated[
    Path | None,
    typer.Option("--keys", help="Service settings YAML: API keys and scopes, anonymous access, ingest root."),
]
AnonymousTenantOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--anonymous-tenant",
        help="A tenant a caller without a key may see (repeat for several); needed when the store holds "
        "several tenants and anonymous access is on.",
    ),
]


def service_settings(keys: Path | None, anonymous_tenants: list[str] | None) -> ServiceSettings:
    """The service settings of ``keys`` (defaults without one); ``anonymous_tenants`` (``--anonymous-tenant``)
    replace the anonymous scope's tenants. ConfigError for a bad file."""
    from evidencedesk.server.settings import load_service_settings

    service = load_service_settings(keys)
    if anonymous_tenants:
        scope = service.anonymous_scope.model_copy(update={"tenants": list(anonymous_tenants)})
        service = service.model_copy(update={"anonymous_scope": scope})
    return service


def open_state(settings: Settings, service: ServiceSettings, location: str, *, existing: bool = True) -> ServiceState:
    """The service state over the store at ``location``; exits naming the store (never a password) when it
    cannot be opened, or with the reason when the secure defaults refuse these settings for this store."""
    from evidencedesk.errors import ConfigError, StoreError
    from evidencedesk.server.state import ServiceState

    label = store_label(location)
    try:
        desk = open_desk(settings, location, existing=existing)
    except (StoreError, OSError) as exc:
        fail(f"cannot open store {label}: {str(exc).replace(location, label)}")
    try:
        return ServiceState(desk, settings, service)
    except ConfigError as exc:
        fail(str(exc), 2)
