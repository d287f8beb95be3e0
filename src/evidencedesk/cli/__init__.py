"""Command line: ``evidencedesk COMMAND``. Each command lives in its own module of this package."""

from __future__ import annotations

import importlib
import pkgutil

from evidencedesk.cli.app import app

for _mod in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _mod != "app":
        importlib.import_module(f"{__name__}.{_mod}")


def main() -> None:
    app()


__all__ = ["app", "main"]
