"""The Typer app and the helpers every command shares (config, store, JSON output, scope); the options
several commands share are in ``evidencedesk.cli.options``.

Every command reads the one configuration model, ``evidencedesk.config.Settings`` (``./evidencedesk.yaml``
or ``--config PATH``); flags given on the command line override the file. Heavy libraries (numpy,
scipy, pypdfium2, onnxruntime) load inside the commands, so ``evidencedesk --help`` starts quickly.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click
import typer
from rich.console import Console
from typer.core import TyperGroup

from evidencedesk.constants import METHODS
from evidencedesk.errors import EvidencedeskError, exit_code
from evidencedesk.urls import is_postgres_url, redact_url

if TYPE_CHECKING:
    from evidencedesk import Scope
    from evidencedesk.config import Overrides, Settings
    from evidencedesk.desk import Desk


class _Commands(TyperGroup):
    """Runs a command and turns the core's errors into a message on stderr and an exit code
    (``errors.exit_code``: 2 for a bad setting, flag or argument, 1 for any other failure)."""

    def invoke(self, ctx: Any) -> object:  # ctx: typer's vendored click Context, which has no public name
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise  # typer.Exit is a RuntimeError: a command's own exit passes through
        except (EvidencedeskError, ValueError, ImportError, OSError, RuntimeError) as exc:
            fail(str(exc).strip() or type(exc).__name__, exit_code(exc))


app = typer.Typer(
    name="evidencedesk",
    cls=_Commands,
    help="Answer questions from a folder of documents with citations, and show stage by stage where it fails.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err_console = Console(stderr=True)

DEFAULT_STORE = ".evidencedesk"  # Settings.store's default
# A copy of a library constant for the help texts, kept here so that building the app imports no
# numerical library; tests/cli/test_config_cli.py checks that it matches its source.
DEFAULT_MAX_BYTES = 10_000_000  # evidencedesk.ingest.raw.DEFAULT_MAX_BYTES


def fail(message: str, code: int = 1) -> NoReturn:
    """Print a clear error on stderr and exit (1 = error, 2 = usage)."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


def check_method(method: str | None) -> None:
    """Exit 2 naming the methods when ``method`` (``--method``; None: the config's) is not one of them."""
    if method is not None and method not in METHODS:
        fail(f"--method: unknown method {method!r}; choose from {', '.join(METHODS)}", 2)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def scope_flags(
    status: list[str] | None = None,
    audience: list[str] | None = None,
    lang: list[str] | None = None,
    tenant: list[str] | None = None,
) -> dict[str, Overrides]:
    """The scope flags as overrides of the config's ``scope`` section (unset flags keep the config's)."""
    from evidencedesk.config import Overrides

    return {
        "--status": Overrides(statuses=status or None),
        "--audience": Overrides(audiences=audience or None),
        "--lang": Overrides(langs=lang or None),
        "--tenant": Overrides(tenants=tenant or None),
    }


def _explain_override(message: str, by_key: Mapping[str, str]) -> str:
    """``override: retrieval.k: ...`` lines from ConfigError, with the flag that set the key named."""
    lines = []
    for line in message.splitlines():
        rest = line.removeprefix("override: ")
        key, sep, why = rest.partition(": ")
        flag = by_key.get(key)
        lines.append(f"{flag} ({key}): {why}" if sep and flag else rest)
    return "\n".join(lines)


def _flag_keys(settings: Settings, flags: Mapping[str, Overrides]) -> dict[str, str]:
    """The settings key each refused flag sets (``retrieval.k`` -> ``--k``): each flag's change is tried alone."""
    from evidencedesk.errors import ConfigError

    by_key: dict[str, str] = {}
    for flag, change in flags.items():
        try:
            change.apply(settings)
        except ConfigError as exc:
            for line in str(exc).splitlines():
                by_key.setdefault(line.removeprefix("override: ").partition(": ")[0], flag)
    return by_key


def load_config(config: Path | None, flags: Mapping[str, Overrides] | None = None) -> Settings:
    """The configuration (``config``, or ./evidencedesk.yaml, or the defaults) with the command's flags
    applied: ``flags`` maps a flag name to the change it makes; None values keep the file's value.
    A bad file or flag value exits 2, naming the key (and the flag)."""
    from evidencedesk.config import Overrides, load_settings
    from evidencedesk.errors import ConfigError

    flags = flags or {}
    try:
        settings = load_settings(config)
    except ConfigError as exc:
        fail(str(exc), 2)
    changes = Overrides()
    for change in flags.values():
        changes = changes | change
    try:
        return changes.apply(settings)
    except ConfigError as exc:
        fail(_explain_override(str(exc), _flag_keys(settings, flags)), 2)


def store_label(location: str) -> str:
    """The store for messages: a folder as given, a URL without its password."""
    return redact_url(location)


def open_desk(settings: Settings, store: str | None, *, existing: bool = True, lines: bool = True) -> Desk:
    """A Desk over ``store`` (default: the config's store), a folder or a postgresql:// URL.

    ``existing``: the command reads, so a folder without a store is an error (and none is created).
    Long steps (embedding the corpus for a first dense search) show progress on stderr: a bar on a
    terminal, else plain lines unless ``lines`` is false (``--json``).
    A store that cannot be opened or reached raises StoreError naming it (a URL without password).
    """
    from evidencedesk.desk import Desk, holds_store

    location = store if store is not None else settings.store
    label = store_label(location)
    if not is_postgres_url(location):
        if "://" in location:
            fail(f"--store: unsupported URL {label!r}; use a folder or postgresql://USER@HOST:PORT/DB", 2)
        path = Path(location)
        if existing and not holds_store(path):
            fail(f"no store at {path}: run `evidencedesk ingest FOLDER --store {path}` first")
    from evidencedesk.cli.waits import Waits

    desk = Desk(location, settings)
    desk.step_progress = Waits(err_console, lines=lines).step  # a first dense search embeds the corpus
    return desk


def config_scope(settings: Settings, valid_at: str | None = None) -> Scope:
    """The config's scope (after the scope flags) with ``--valid-at`` applied."""
    from dataclasses import replace
    from datetime import date

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
        return replace(settings.scope.to_scope(), valid_at=day, check_validity=check)
    except ValueError as exc:
        fail(str(exc), 2)
