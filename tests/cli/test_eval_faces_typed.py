"""The evaluation faces read the Desk's typed results by attribute, never a result dict by a string key."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import ROOT

FACES = ("src/evidencedesk/cli/evaluate.py", "src/evidencedesk/cli/beir.py", "src/evidencedesk/server/routes_eval.py")
ALLOWED = {"REFUSALS"}  # the service's own table of refusal schemas, not a result


def string_subscripts(path: Path) -> list[str]:
    """``name[...]`` reads by a string literal in ``path``, as ``line: source``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
        ):
            root = node.value
            while isinstance(root, ast.Subscript | ast.Attribute):
                root = root.value
            if not (isinstance(root, ast.Name) and root.id in ALLOWED):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_eval_faces_read_no_result_by_a_string_key() -> None:
    for face in FACES:
        assert string_subscripts(ROOT / face) == [], face
