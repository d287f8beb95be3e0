"""The Typer app and the options every command shares (store, JSON output, scope)."""

from __future__ import annotations

import json
import sys
from datetime import date
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console

from evidencedesk.retrieval.scope import Scope

app = typer.Typer(
    name="evidencedesk",
    help="Answer questions from a folder of documents with citations, and show stage by stage where it fails.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err_console = Console(stderr=True)

DEFAULT_STORE = Path(".evidencedesk")

StoreOpt = Annotated[Path, typer.Option("--store", help="Store directory (embedded SQLite store).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of tables.")]
StatusOpt = Annotated[
    list[str] | None, typer.Option("--status", help="Allowed document status (repeatable). Default: current.")
]
AudienceOpt = Annotated[
    list[str] | None, typer.Option("--audience", help="Allowed audience (repeatable). Default: public.")
]
LangOpt = Annotated[list[str] | None, typer.Option("--lang", help="Allowed language (repeatable). Default: any.")]
TenantOpt = Annotated[list[str] | None, typer.Option("--tenant", help="Allowed tenant (repeatable). Default: any.")]
ValidAtOpt = Annotated[
    str | None, typer.Option("--valid-at", help="Validity date YYYY-MM-DD, or 'any' to skip the check. Default: today.")
]


def fail(message: str, code: int = 1) -> NoReturn:
    """Print a clear error on stderr and exit (1 = error, 2 = usage)."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def scope_from_options(
    status: list[str] | None = None,
    audience: list[str] | None = None,
    lang: list[str] | None = None,
    tenant: list[str] | None = None,
    valid_at: str | None = None,
) -> Scope:
    """Build a Scope from the shared CLI options; unset options keep the safe defaults."""
    base = Scope()
    check = True
    day: date | None = None
    if valid_at:
        if valid_at.lower() == "any":
            check = False
        else:
            try:
                day = date.fromisoformat(valid_at)
            except ValueError:
                fail(f"--valid-at: not an ISO date (YYYY-MM-DD): {valid_at!r}", 2)
    try:
        return Scope(
            statuses=frozenset(status) if status else base.statuses,
            audiences=frozenset(audience) if audience else base.audiences,
            langs=frozenset(lang) if lang else None,
            tenants=frozenset(tenant) if tenant else None,
            valid_at=day,
            check_validity=check,
        )
    except ValueError as exc:
        fail(str(exc), 2)
