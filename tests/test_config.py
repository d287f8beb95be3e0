import ast
import re
from dataclasses import FrozenInstanceError, fields
from pathlib import Path

import pytest

from evidencedesk.config import ConfigError, Overrides, Settings, load_settings, override, parse_settings


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


# each typed override and the settings key it changes (what a config file or a dotted key would set)
OVERRIDDEN = {
    "k": ("retrieval.k", 3),
    "rerank_candidates": ("retrieval.rerank.candidates", 40),
    "tenant_statistics": ("retrieval.tenant_statistics", True),
    "chunker": ("chunker.name", "fixed"),
    "size": ("chunker.size", 60),
    "overlap": ("chunker.overlap", 10),
    "unit": ("chunker.unit", "chars"),
    "generator": ("generator.name", "openai"),
    "model": ("generator.model", "m"),
    "max_tokens": ("generator.max_tokens", 64),
    "base_url": ("generator.base_url", "http://127.0.0.1:9/v1"),
    "budget_tokens": ("context.budget_tokens", 300),
    "floor": ("context.floor", 0.25),
    "dedup_threshold": ("context.dedup_threshold", 0.5),
    "order": ("context.order", "edges"),
    "statuses": ("scope.statuses", ["draft"]),
    "audiences": ("scope.audiences", ["internal"]),
    "langs": ("scope.langs", ["de"]),
    "tenants": ("scope.tenants", ["acme"]),
}


def test_every_typed_override_changes_the_key_it_names_and_nothing_else() -> None:
    assert set(OVERRIDDEN) == {f.name for f in fields(Overrides)}
    base = parse_settings({"retrieval": {"legs": [{"method": "bm25"}, {"method": "tfidf"}]}})
    for name, (key, value) in OVERRIDDEN.items():
        typed = Overrides(**{name: value}).apply(base)
        assert typed == override(base, **{key: value}), name
        assert typed.model_dump(exclude={key.split(".")[0]}) == base.model_dump(exclude={key.split(".")[0]}), name


def test_typed_overrides_are_validated_keep_unset_keys_unset_and_merge() -> None:
    base = parse_settings({"retrieval": {"legs": [{"method": "bm25"}, {"method": "tfidf"}]}})
    assert Overrides().apply(base) is base and not Overrides() and Overrides(k=1)
    changed = Overrides(k=3, order="edges").apply(base)
    assert changed.retrieval.k == 3 and changed.context.order == "edges"
    assert changed.retrieval.legs[1].model_fields_set == {"method"}  # a TF-IDF leg still keeps its own words
    assert base.retrieval.k == 5  # settings are never changed in place
    with pytest.raises(ConfigError, match=r"override: retrieval\.k: "):
        Overrides(k=-2).apply(base)
    with pytest.raises(ConfigError, match=r"override: context\.order: "):
        Overrides(order="middle").apply(base)
    with pytest.raises(ConfigError, match="overlap"):
        Overrides(size=10, overlap=20).apply(base)
    merged = Overrides(k=3, floor=0.1) | Overrides(k=4, order="edges")
    assert merged == Overrides(k=4, floor=0.1, order="edges")
    with pytest.raises(FrozenInstanceError):
        merged.k = 5  # type: ignore[misc]


def test_the_package_changes_settings_without_dotted_keys() -> None:
    """No module builds a mapping keyed by dotted settings keys or calls ``override`` (that helper is for
    keys a person writes); the core changes settings with ``Overrides`` or ``model_copy``."""
    src = Path(__file__).resolve().parents[1] / "src" / "evidencedesk"
    dotted = re.compile(r"^(store|chunker|retrieval|context|generator|scope)\.[a-z_.]+$")
    found = []
    for path in sorted(src.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            keys: list[ast.expr | None] = []
            if isinstance(node, ast.Dict):
                keys = list(node.keys)
            elif isinstance(node, ast.Tuple) and len(node.elts) == 2:
                keys = [node.elts[0]]  # (key, value) pairs
            elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "override":
                found.append(f"{path.name}:{node.lineno}: override(...)")
            for key in keys:
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and dotted.match(key.value):
                    found.append(f"{path.name}:{node.lineno}: {key.value}")
    assert found == []
