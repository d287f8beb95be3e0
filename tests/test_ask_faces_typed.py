"""The faces that ask read the typed AskResult: none reads an ask field by a string key (``out["answer"]``,
``result.get("citations")``), so mypy sees every use of the result."""

from __future__ import annotations

import ast
from dataclasses import fields

import pytest

from evidencedesk.results.ask import AskResult
from tests.support.paths import ROOT

PACKAGE = ROOT / "src" / "evidencedesk"
ASK_FACES = (
    "cli/ask.py", "cli/demo.py", "server/asking.py", "server/routes_query.py", "server/routes_openai.py",
    "server/routes_lab.py", "server/sse.py", "server/metrics.py", "integrations/mcp_server.py",
)  # fmt: skip
FIELDS = frozenset(f.name for f in fields(AskResult))
# functions of those files that read another result, not an ask's (the lab's search preview)
OTHERS = {"server/routes_lab.py": {"lab_search"}}


def string_key_reads(source: str, names: frozenset[str], skip: set[str] | None = None) -> list[tuple[int, str]]:
    """``(line, key)`` for each read of a key in ``names`` by a string literal: a subscript that is not
    assigned to, or a ``.get("key")`` call; the functions named in ``skip`` are not read."""
    tree = ast.parse(source)
    skipped = {
        id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name in (skip or set())
        for n in ast.walk(f)
    }  # fmt: skip
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            key = node.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            key = node.args[0] if node.args else None
        else:
            continue
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value in names:
            out.append((node.lineno, key.value))
    return out


@pytest.mark.parametrize("face", ASK_FACES)
def test_no_ask_face_reads_the_result_by_a_string_key(face: str) -> None:
    found = string_key_reads((PACKAGE / face).read_text(encoding="utf-8"), FIELDS, OTHERS.get(face))
    assert not found, f"{face} reads ask fields by string key: {found}"


def test_the_check_sees_subscripts_and_get_but_not_writes() -> None:
    probe = 'out["answer"]\nx = r.get("citations")\nrow["shared_words"] = 1\nd["trace_id"] = 2\ny = d["other"]\n'
    assert string_key_reads(probe, FIELDS) == [(1, "answer"), (2, "citations")]
    assert string_key_reads(f"def lab_search():\n    {probe.splitlines()[0]}\n", FIELDS, {"lab_search"}) == []
