from pathlib import Path

import pytest

from evidencedesk.config import ConfigError, Settings, load_settings, override, parse_settings


def test_defaults_describe_a_bm25_plus_dense_hybrid() -> None:
    s = Settings()
    assert s.retrieval.method == "hybrid"
    assert [leg.method for leg in s.retrieval.legs] == ["bm25", "dense"]
    assert s.retrieval.fusion.k == 60
    assert s.scope.to_scope().statuses == frozenset({"current"})


def test_cookbook_shape_is_accepted(tmp_path: Path) -> None:
    cfg = tmp_path / "evidencedesk.yaml"
    cfg.write_text(
        "retrieval:\n"
        "  legs:\n"
        "    - {method: dense, depth: 40}\n"
        "    - {method: bm25, depth: 40, k1: 1.2}\n"
        "  fusion: {method: rrf, k: 60}\n"
        "  rerank: {method: overlap, candidates: 30}\n"
        "  diversity: {method: mmr, lambda: 0.5}\n"
        "context: {budget_tokens: 600, order: edges}\n"
        "generator: {name: openai, base_url: 'http://127.0.0.1:9/v1', model: smol}\n",
        encoding="utf-8",
    )
    s = load_settings(cwd=tmp_path)
    assert s.retrieval.legs[1].k1 == 1.2
    assert s.retrieval.diversity.lambda_ == 0.5
    assert s.context.order == "edges"
    assert s.generator.name == "openai"


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"retrieval": {"fusion": {"bogus": 1}}}, "retrieval.fusion.bogus: unknown key"),
        ({"retrieval": {"k": 0}}, "retrieval.k"),
        ({"chunker": {"size": 10, "overlap": 10}}, "chunker"),
        ({"generator": {"name": "gpt"}}, "generator.name"),
        ({"scope": {"statuses": "current"}}, "scope.statuses"),
        ({"retrieval": {"legs": [{"method": "dense", "model": "minilm-1000"}]}}, "retrieval.legs.0"),
    ],
)
def test_bad_values_name_their_key(data: dict, key: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_settings(data, "evidencedesk.yaml")
    assert key in str(err.value)
    assert str(err.value).startswith("evidencedesk.yaml")


def test_broken_yaml_names_file_and_line(tmp_path: Path) -> None:
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("retrieval:\n  k: 3\n  legs: [\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad.yaml: line \d+ invalid YAML"):
        load_settings(cfg)


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "nope.yaml")


def test_no_file_means_defaults(tmp_path: Path) -> None:
    assert load_settings(cwd=tmp_path) == Settings()


def test_cli_style_overrides_are_validated() -> None:
    s = override(Settings(), **{"retrieval.k": 3, "context.floor": None})
    assert s.retrieval.k == 3
    with pytest.raises(ConfigError, match="retrieval.k"):
        override(Settings(), **{"retrieval.k": -2})
