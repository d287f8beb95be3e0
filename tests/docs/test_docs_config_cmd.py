"""`evidencedesk config show` prints the effective configuration from load_settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evidencedesk.cli import app
from evidencedesk.config import Settings


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_defaults_without_a_file(in_tmp: Path) -> None:
    res = CliRunner().invoke(app, ["config", "show", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == Settings().to_dict()


def test_file_in_working_directory_is_used(in_tmp: Path) -> None:
    (in_tmp / "evidencedesk.yaml").write_text("retrieval:\n  k: 9\n  legs: [{method: bm25}]\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["config", "show", "--json"])
    data = json.loads(res.stdout)
    assert data["retrieval"]["k"] == 9
    assert [leg["method"] for leg in data["retrieval"]["legs"]] == ["bm25"]
    text = CliRunner().invoke(app, ["config", "show"]).stdout
    assert text.startswith("# source: evidencedesk.yaml")
    assert "k: 9" in text


def test_explicit_config_and_errors(in_tmp: Path) -> None:
    (in_tmp / "other.yaml").write_text("context:\n  order: edges\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["config", "show", "--config", "other.yaml", "--json"])
    assert json.loads(res.stdout)["context"]["order"] == "edges"
    (in_tmp / "bad.yaml").write_text("context:\n  budget: 3\n", encoding="utf-8")
    bad = CliRunner().invoke(app, ["config", "show", "--config", "bad.yaml"])
    assert bad.exit_code == 2
    assert "context.budget: unknown key" in bad.output
    missing = CliRunner().invoke(app, ["config", "show", "--config", "nope.yaml"])
    assert missing.exit_code == 2 and "not found" in missing.output
