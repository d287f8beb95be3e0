"""``evidencedesk config show``: print the effective configuration (file values over defaults).

Each retrieval leg is printed with the fields its method reads, so a BM25 leg shows no embedding
model and a dense leg no ``k1``; ``--json`` keeps every field (the settings' own JSON).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from evidencedesk.cli import options as opt
from evidencedesk.cli.app import app, fail, print_json
from evidencedesk.json_types import JsonObject

if TYPE_CHECKING:
    from evidencedesk.config import Settings

# the fields each method's searcher reads (evidencedesk.wiring.leg_params), besides method and depth
LEG_FIELDS: dict[str, tuple[str, ...]] = {
    "bm25": ("k1", "b", "stem", "stopwords", "language", "contextual"),
    "tfidf": (),
    "lsa": ("rank",),
    "dense": ("model", "contextual"),
}
# TF-IDF and LSA read the word options only when the leg sets them itself (their defaults are BM25's)
WORD_FIELDS = ("stem", "stopwords", "language")


def shown_legs(settings: Settings) -> list[JsonObject]:
    """Each leg as a mapping of ``method``, ``depth`` and the fields its method reads."""
    out: list[JsonObject] = []
    for leg in settings.retrieval.legs:
        values = leg.model_dump(mode="json")
        words = WORD_FIELDS if leg.method == "bm25" or leg.model_fields_set & set(WORD_FIELDS) else ()
        named = LEG_FIELDS[leg.method] + words
        out.append({k: v for k, v in values.items() if k in ("method", "depth") or k in named})
    return out


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
    data["retrieval"]["legs"] = shown_legs(settings)
    source = config if config is not None else (Path(CONFIG_NAME) if Path(CONFIG_NAME).is_file() else None)
    typer.echo(f"# source: {source if source is not None else 'defaults (no evidencedesk.yaml here)'}")
    typer.echo(yaml.safe_dump(data, sort_keys=False, allow_unicode=True).rstrip())
