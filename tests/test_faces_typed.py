"""The faces (CLI, service, integrations) read the Desk's results as typed attributes.

Two checks over the source, by its syntax tree:

- a name bound to what a Desk method returns (``result = desk.ask(...)``) is never read by a
  string key (``result["answer"]``, ``result.get("answer")``): it is a typed result;
- the faces hold few string-key subscripts at all (request bodies, headers and settings files are
  still dictionaries), at most ``CEILING``.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "evidencedesk"
FACES = ("cli", "server", "integrations")
# the Desk methods that return results
RESULT_METHODS = {
    "ask",
    "search",
    "search_rows",
    "ingest",
    "embed",
    "evaluate",
    "strategies",
    "diagnose",
    "beir",
    "compare",
    "compare_runs",
}
CEILING = 40


def face_files() -> list[Path]:
    return sorted(p for face in FACES for p in (SRC / face).rglob("*.py"))


def string_key(node: ast.AST) -> str | None:
    """The key of ``x["key"]`` or ``x.get("key", ...)``, else None."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.slice.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node.args[0].value
    return None


def read_target(node: ast.AST) -> ast.AST | None:
    if isinstance(node, ast.Subscript):
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.value
    return None


def desk_results(function: ast.AST) -> set[str]:
    """Names assigned from a call of a result method on something that holds ``desk`` in its name."""
    names: set[str] = set()
    for node in ast.walk(function):
        if not isinstance(node, ast.Assign | ast.AnnAssign):
            continue
        value = node.value
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
            continue
        if value.func.attr not in RESULT_METHODS or "desk" not in ast.unparse(value.func.value):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def test_desk_results_are_never_read_by_string_key() -> None:
    offences = []
    for path in face_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            results = desk_results(function)
            for node in ast.walk(function):
                key = string_key(node)
                target = read_target(node)
                if key is not None and isinstance(target, ast.Name) and target.id in results:
                    offences.append(f"{path.relative_to(SRC)}:{node.lineno} {target.id}[{key!r}]")
    assert not offences, "Desk results read by string key:\n" + "\n".join(offences)


def test_string_key_subscripts_in_faces_are_few() -> None:
    counts = {}
    for path in face_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        n = sum(1 for node in ast.walk(tree) if isinstance(node, ast.Subscript) and string_key(node) is not None)
        if n:
            counts[str(path.relative_to(SRC))] = n
    total = sum(counts.values())
    worst = sorted(counts.items(), key=lambda kv: -kv[1])[:8]
    assert total <= CEILING, f"{total} string-key subscripts in the faces (at most {CEILING}): {worst}"
