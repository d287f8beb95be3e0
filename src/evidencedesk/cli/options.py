"""The options several commands share, as ``Annotated`` types for a command's signature.

A command module imports this module as one name, ``from evidencedesk.cli import options as opt``,
and declares ``store: opt.Store = None``; an option only one command has stays in its own signature.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evidencedesk.constants import METHODS

Method = Annotated[
    str | None,
    typer.Option("--method", help=f"One of {', '.join(METHODS)}. Default: the config's (hybrid of bm25 and dense)."),
]
Config = Annotated[
    Path | None, typer.Option("--config", help="evidencedesk.yaml (default: ./evidencedesk.yaml if present).")
]
Store = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="A store folder (embedded SQLite) or a postgresql://USER@HOST:PORT/DB URL. "
        "Default: the config's store (.evidencedesk).",
    ),
]
Json = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of tables.")]
Status = Annotated[
    list[str] | None,
    typer.Option("--status", help="Allowed document status (repeatable). Default: the config's scope (current)."),
]
Audience = Annotated[
    list[str] | None,
    typer.Option("--audience", help="Allowed audience (repeatable). Default: the config's scope (public)."),
]
Lang = Annotated[
    list[str] | None, typer.Option("--lang", help="Allowed language (repeatable). Default: the config's scope (any).")
]
Tenant = Annotated[
    list[str] | None,
    typer.Option("--tenant", help="Allowed tenant (repeatable). Default: the config's scope (any)."),
]
ValidAt = Annotated[
    str | None, typer.Option("--valid-at", help="Validity date YYYY-MM-DD, or 'any' to skip the check. Default: today.")
]
