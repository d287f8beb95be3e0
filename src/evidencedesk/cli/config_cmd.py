"""``evidencedesk config show``: print the effective configuration (file values over defaults)."""

from __future__ import annotations

from pathlib import Path

import typer

from evidencedesk.cli import options as opt
from evidencedesk.cli.app import app, fail, print_json

config_app = typer.Typer(help="Inspect the configuration (evidencedesk.yaml).", no_args_is_help=True)
app.add_typer(config_app, name="config")


@config_app.command("show")
def show(config: opt.Config = None, json: opt.Json = False) -> None:
    """Print the effective configuration: the file's values over the defaults, validated."""
    import yaml

    from evidencedesk.config import CONFIG_NAME, load_settings
    from evidencedesk.errors import ConfigError

    try:
        settings = load_settings(config)
    except ConfigError as exc:
        fail(str(exc), 2)
    data = settings.to_dict()
    if json:
        print_json(data)
        return
    source = config if config is not None else (Path(CONFIG_NAME) if Path(CONFIG_NAME).is_file() else None)
    typer.echo(f"# source: {source if source is not None else 'defaults (no evidencedesk.yaml here)'}")
    typer.echo(yaml.safe_dump(data, sort_keys=False, allow_unicode=True).rstrip())
