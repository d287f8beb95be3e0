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


def test_each_leg_is_shown_with_its_own_fields(in_tmp: Path) -> None:
    import typing

    import yaml

    from evidencedesk.cli.config_cmd import LEG_FIELDS
    from evidencedesk.config import LegSettings

    assert set(LEG_FIELDS) == set(typing.get_args(LegSettings.model_fields["method"].annotation))
    (in_tmp / "legs.yaml").write_text(
        "retrieval:\n  legs:\n    - method: bm25\n      k1: 1.2\n    - method: dense\n      model: bge-small\n"
        "    - method: lsa\n    - method: tfidf\n      stopwords: english\n",
        encoding="utf-8",
    )
    res = CliRunner().invoke(app, ["config", "show", "--config", "legs.yaml"])
    assert res.exit_code == 0, res.output
    legs = yaml.safe_load(res.stdout)["retrieval"]["legs"]
    assert legs == [
        {"method": "bm25", "depth": 100, "k1": 1.2, "b": 0.75, "stem": True, "stopwords": "auto", "language": "auto",
         "contextual": True},
        {"method": "dense", "depth": 100, "model": "bge-small", "contextual": True},
        {"method": "lsa", "depth": 100, "rank": 100},
        {"method": "tfidf", "depth": 100, "stem": True, "stopwords": "english", "language": "auto"},
    ]  # fmt: skip
    # --json keeps every field of every leg (the settings' own JSON), and the shown YAML reads back the same
    full = json.loads(CliRunner().invoke(app, ["config", "show", "--config", "legs.yaml", "--json"]).stdout)
    assert all("k1" in leg and "model" in leg for leg in full["retrieval"]["legs"])
    (in_tmp / "shown.yaml").write_text(res.stdout, encoding="utf-8")
    again = json.loads(CliRunner().invoke(app, ["config", "show", "--config", "shown.yaml", "--json"]).stdout)
    assert again == full
