"""docs/cli.md is generated from the Typer app and must match it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from tests.support.docs_runner import REPO


def _generator():
    spec = importlib.util.spec_from_file_location("gen_cli_docs", REPO / "scripts" / "gen_cli_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_cli_reference_is_current() -> None:
    fresh = _generator().render()
    committed = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert committed == fresh, "docs/cli.md is stale: run python scripts/gen_cli_docs.py"


def test_reference_lists_every_command_and_option() -> None:
    import typer

    from evidencedesk.cli import app

    text = _generator().render()
    root = typer.main.get_command(app)
    for name, command in root.commands.items():
        subcommands = getattr(command, "commands", None) or {"": command}
        for sub, leaf in subcommands.items():
            title = " ".join(x for x in ("evidencedesk", name, sub) if x)
            assert f"## `{title}`" in text
            for param in leaf.params:
                if param.param_type_name == "option" and param.name != "help":
                    assert f"`{param.opts[0]}`" in text, (title, param.opts)


def test_check_mode_reports_staleness() -> None:
    ok = subprocess.run([sys.executable, "scripts/gen_cli_docs.py", "--check"], cwd=REPO, capture_output=True)
    assert ok.returncode == 0, ok.stderr
