"""The layering rules of shared/DESIGN.md, checked on every import (read with ``ast``, lazy ones inside
functions too):

1. the stages and the stores never import the evaluation stage, the settings, the core or the faces,
   and the evaluation stage never imports the settings, the core or the faces either;
2. the text layer and the names every layer shares (documents, errors, constants, urls, progress, json_types)
   import no stage at all;
3. the faces (``cli/``, ``server/``) import only the public API: the core (``desk``), the settings,
   the errors, the result types, and the names every layer shares (``constants``, ``urls``, ``json_types``). A face
   that needs a searcher, a prompt or a re-chunking asks the Desk (or ``desk.lab``) for it. From the core
   a face takes only the names in ``evidencedesk.desk.__all__``: never a module inside the package
   (the façade, the collaborators) nor a helper the package merely imports;
4. the stores (``store``, ``backends``) never import the parsers (``ingest``): a store is handed parsed
   documents through ``sync``. From ``chunking`` they take only its config and the default chunker;
5. nothing in the package imports ``evidencedesk.testing`` (the contract tests a backend's tests inherit).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT

PACKAGE = ROOT / "src" / "evidencedesk"
LOWER = ("text", "ingest", "chunking", "index", "retrieval", "answer", "store", "backends")
HIGHER = ("evaluation", "config", "desk", "wiring", "lab", "benchmarks", "cli", "server", "integrations", "testing")
STAGES = ("ingest", "chunking", "index", "retrieval", "answer", "store", "backends")
# the lowest layers, which the stages build on: they import nothing above themselves either
BASE = {"text": STAGES}
NOUNS = ("documents", "errors", "constants", "urls", "progress", "json_types")  # shared by every layer

FACES = ("cli", "server", "integrations")  # integrations: adapters for the tools users already run
# What a face may import: modules of the public API, and from the package itself the names that are
# the Desk, the settings, errors or result types (not the stages it also exports for library users).
FACE_MODULES = frozenset(
    {"desk", "config", "documents", "trace", "errors", "constants", "urls", "progress", "results", *FACES}
)
FACE_NAMES = frozenset({
    "Desk", "Settings", "load_settings", "load_labels", "Document", "Chunk", "Metadata", "Location", "Scope",
    "Candidate", "Part", "Searcher", "Trace", "Finding", "ChunkingConfig", "AnswerDelta", "AnswerDone",
    "AskEvent", "AskStream", "AskRequest", "Label", "LabelWarning", "FloorSuggestion", "IngestReport",
})  # fmt: skip


def _exported(init: Path) -> frozenset[str]:
    """The names in a package's ``__all__`` (read with ``ast``)."""
    tree = ast.parse(init.read_text(encoding="utf-8"))
    found = next(n.value for n in tree.body if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "__all__")
    return frozenset(ast.literal_eval(found))


# what a face may take from the core package: its exports, never its modules (the façade, the collaborators)
DESK_EXPORTS = _exported(PACKAGE / "desk" / "__init__.py")


def imported_names(path: Path, package_root: Path = PACKAGE) -> list[tuple[int, str]]:
    """What ``path`` (a file under ``package_root``) takes from other modules, absolute, with its line:
    ``x`` for ``import x``, ``x.y`` for ``from x import y`` (relative imports resolved)."""
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
            out += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return out


def imported_modules(path: Path, package_root: Path = PACKAGE) -> list[tuple[int, str]]:
    """``imported_names`` plus, for each ``from x import y``, the module ``x`` itself."""
    out = []
    for line, name in imported_names(path, package_root):
        if "." in name:
            out.append((line, name.rsplit(".", 1)[0]))
        out.append((line, name))
    return list(dict.fromkeys(out))


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "evidencedesk" else None


def _is_higher(layer: str | None, forbidden: tuple[str, ...]) -> bool:
    return layer is not None and any(layer == f or layer.startswith(f"{f}_") for f in forbidden)


@pytest.mark.parametrize("package", [*LOWER, "evaluation"])
def test_lower_layers_never_import_higher_ones(package: str) -> None:
    forbidden = tuple(h for h in HIGHER if h != package) + BASE.get(package, ())
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: imports {module}"
        for path in sorted((PACKAGE / package).rglob("*.py"))
        for line, module in imported_modules(path)
        if _is_higher(_layer(module), forbidden)
    ]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("package", NOUNS)
def test_the_shared_nouns_import_no_stage(package: str) -> None:
    paths = sorted((PACKAGE / package).rglob("*.py")) if (PACKAGE / package).is_dir() else [PACKAGE / f"{package}.py"]
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: imports {module}"
        for path in paths
        for line, module in imported_modules(path)
        if _is_higher(_layer(module), STAGES + HIGHER)
    ]
    assert not wrong, "\n".join(wrong)


def face_violations(path: Path, package_root: Path = PACKAGE) -> list[str]:
    """The imports of face module ``path`` that reach past the public API."""
    wrong = []
    for line, module in imported_names(path, package_root):
        parts = module.split(".")
        if parts[0] != "evidencedesk" or len(parts) == 1:
            continue
        inside_desk = parts[1] == "desk" and len(parts) > 2 and (len(parts) > 3 or parts[2] not in DESK_EXPORTS)
        if (
            (parts[1] in FACE_MODULES or parts[1] in NOUNS)
            and not inside_desk
            or (len(parts) == 2 and parts[1] in FACE_NAMES)
        ):
            continue
        wrong.append(f"{path.relative_to(package_root.parent.parent)}:{line}: imports {module}")
    return wrong


@pytest.mark.parametrize("face", FACES)
def test_faces_import_only_the_public_api(face: str) -> None:
    wrong = [w for path in sorted((PACKAGE / face).rglob("*.py")) for w in face_violations(path)]
    assert not wrong, "a face reaches past the Desk:\n" + "\n".join(wrong)


PAST_THE_DESK = (
    "from evidencedesk import Desk, Scope, make_searcher\n"
    "from evidencedesk.errors import StoreError\n"
    "from evidencedesk.store import Store\n"
    "def f():\n    from evidencedesk.answer.prompt import build_prompt\n"
    "from ..retrieval.explain import shared_words\n"
)
INSIDE_THE_DESK = (  # the core package exports what a face may use; its modules are the collaborators'
    "from evidencedesk.desk import AskRequest, Desk, leg_names\n"
    "from evidencedesk.desk.answering import ScopedChunks\n"
    "def f():\n    from evidencedesk.desk import facade, searcher_params\n"
    "from ..desk.state import DeskState\n"
)


@pytest.mark.parametrize(
    ("face", "source", "expected"),
    [
        ("server", PAST_THE_DESK, [
            "evidencedesk.answer.prompt.build_prompt", "evidencedesk.make_searcher",
            "evidencedesk.retrieval.explain.shared_words", "evidencedesk.store.Store",
        ]),
        ("cli", INSIDE_THE_DESK, [
            "evidencedesk.desk.answering.ScopedChunks", "evidencedesk.desk.facade",
            "evidencedesk.desk.searcher_params", "evidencedesk.desk.state.DeskState",
        ]),
    ],
    ids=["stages-and-stores", "desk-modules"],
)  # fmt: skip
def test_the_face_check_catches_imports_past_the_public_api(
    tmp_path: Path, face: str, source: str, expected: list[str]
) -> None:
    probe = tmp_path / "src" / "evidencedesk" / face / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text(source)
    found = sorted(w.split(": imports ")[1] for w in face_violations(probe, tmp_path / "src" / "evidencedesk"))
    assert found == expected
    assert {"AskRequest", "Desk"} <= DESK_EXPORTS and not {"answering", "facade", "state"} & DESK_EXPORTS


def test_the_check_sees_lazy_and_relative_imports(tmp_path: Path) -> None:
    """The parser behind the layer test finds an import inside a function and a relative one."""
    probe = tmp_path / "evidencedesk" / "retrieval" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text("def f():\n    from evidencedesk.evaluation import runner\n\nfrom ..config import Settings\n")
    modules = sorted(m for _, m in imported_modules(probe, tmp_path / "evidencedesk"))
    config, evaluation = "evidencedesk.config", "evidencedesk.evaluation"
    assert modules == [config, f"{config}.Settings", evaluation, f"{evaluation}.runner"]
    assert all(_is_higher(_layer(m), HIGHER) for m in modules)


STORES = ("store", "backends")
# What a store may take from the chunking stage: the config it records with each build, and the default
# chunker (loaded only when a store is made without one of its own). The parsers are out of reach.
STORE_MAY_USE = frozenset({"evidencedesk.chunking.config.ChunkingConfig", "evidencedesk.chunking.chunk_document"})


def store_violations(path: Path, package_root: Path = PACKAGE) -> list[str]:
    """The imports of store module ``path`` that reach the parsers or the chunkers."""
    wrong = []
    for line, name in imported_names(path, package_root):
        layer = _layer(name)
        if layer == "ingest" or (layer == "chunking" and name not in STORE_MAY_USE):
            wrong.append(f"{path.relative_to(package_root.parent.parent)}:{line}: imports {name}")
    return wrong


@pytest.mark.parametrize("package", STORES)
def test_the_stores_never_import_the_parsers(package: str) -> None:
    wrong = [w for path in sorted((PACKAGE / package).rglob("*.py")) for w in store_violations(path)]
    assert not wrong, "a store reaches the parsers:\n" + "\n".join(wrong)


def test_the_store_check_catches_parsers_and_chunkers(tmp_path: Path) -> None:
    probe = tmp_path / "src" / "evidencedesk" / "store" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text(
        "from evidencedesk.chunking.config import ChunkingConfig\n"
        "def f():\n    from evidencedesk.chunking import chunk_document, chunk_fixed\n"
        "    from evidencedesk.ingest.folder import parse_file\n"
        "from ..ingest import raw\n"
    )
    found = sorted(w.split(": imports ")[1] for w in store_violations(probe, tmp_path / "src" / "evidencedesk"))
    assert found == [
        "evidencedesk.chunking.chunk_fixed",
        "evidencedesk.ingest.folder.parse_file",
        "evidencedesk.ingest.raw",
    ]


def test_a_store_syncs_without_loading_a_parser(tmp_path: Path) -> None:
    """At run time too: opening both backends and syncing a document into the embedded store loads no
    module of the ingest stage."""
    script = (
        "import sys\n"
        "from evidencedesk.store import Store\n"
        "import evidencedesk.backends.postgres\n"
        "from evidencedesk.chunking.config import ChunkingConfig\n"
        "from evidencedesk.documents import Document, Metadata\n"
        f"with Store({str(tmp_path / 'store')!r}) as s:\n"
        "    doc = Document('a', 'A', 'a.txt', 'text', 'Alpha text.', 'h', Metadata())\n"
        "    assert s.sync([doc], ChunkingConfig()).added == ['a']\n"
        "print(sorted(m for m in sys.modules if m.startswith('evidencedesk.ingest')))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env)
    assert done.stdout.strip() == "[]"


def test_nothing_in_the_package_imports_the_contract_tests() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: imports {module}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if "testing" not in path.relative_to(PACKAGE).parts
        for line, module in imported_modules(path)
        if _layer(module) == "testing"
    ]
    assert not wrong, "\n".join(wrong)
