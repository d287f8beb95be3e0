"""Layers point one way: the stages and the stores never import the evaluation stage, the settings,
the core or the front ends (every import is read with ``ast``, lazy ones inside functions too)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.paths import ROOT

PACKAGE = ROOT / "src" / "evidencedesk"
LOWER = ("text", "ingest", "chunking", "index", "retrieval", "answer", "store", "backends")
HIGHER = ("evaluation", "config", "desk", "wiring", "service_ops", "cli", "server")
# the lowest layers, which the stages build on: they import nothing above themselves either
BASE = {"text": ("ingest", "chunking", "index", "retrieval", "answer", "store", "backends")}


def imported_modules(path: Path, package_root: Path = PACKAGE) -> list[tuple[int, str]]:
    """Every module ``path`` (a file under ``package_root``) imports, absolute, with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = ".".join(path.relative_to(package_root.parent).with_suffix("").parts[:-1])
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            out.append((node.lineno, base))
            out += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return out


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "evidencedesk" else None


def _is_higher(layer: str | None, forbidden: tuple[str, ...]) -> bool:
    return layer is not None and any(layer == f or layer.startswith(f"{f}_") for f in forbidden)


@pytest.mark.parametrize("package", LOWER)
def test_lower_layers_never_import_higher_ones(package: str) -> None:
    forbidden = HIGHER + BASE.get(package, ())
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: imports {module}"
        for path in sorted((PACKAGE / package).rglob("*.py"))
        for line, module in imported_modules(path)
        if _is_higher(_layer(module), forbidden)
    ]
    assert not wrong, "\n".join(wrong)


def test_the_check_sees_lazy_and_relative_imports(tmp_path: Path) -> None:
    """The parser behind the layer test finds an import inside a function and a relative one."""
    probe = tmp_path / "evidencedesk" / "retrieval" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text("def f():\n    from evidencedesk.evaluation import runner\n\nfrom ..config import Settings\n")
    modules = sorted(m for _, m in imported_modules(probe, tmp_path / "evidencedesk"))
    config, evaluation = "evidencedesk.config", "evidencedesk.evaluation"
    assert modules == [config, f"{config}.Settings", evaluation, f"{evaluation}.runner"]
    assert all(_is_higher(_layer(m), HIGHER) for m in modules)
