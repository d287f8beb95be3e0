"""The public names are a promise: this test pins them, and each must import."""

import ast
import inspect
from importlib import import_module

import evidencedesk

PINNED = [
    "AnswerDelta", "AnswerDone", "AskEvent", "AskRequest", "AskStream", "BM25Searcher", "Candidate", "Chunk",
    "ChunkingConfig", "ConfigError", "CrossEncoderReranker",
    "DenseSearcher", "Desk", "Document", "EvidencedeskError", "ExtractiveGenerator", "Finding", "FloorSuggestion",
    "GenerationError", "HybridSearcher", "IngestError", "IngestReport", "Label", "LabelError", "LabelWarning",
    "Location", "LsaSearcher", "Metadata",
    "OverlapReranker", "Part", "Scope", "Searcher", "Settings", "SnapshotError", "Store", "StoreError",
    "StoreProtocol", "TfidfSearcher", "Trace", "TwoStage", "ask", "assemble", "chunk_document", "diagnose", "evaluate",
    "get_generator", "load_labels", "load_settings", "make_searcher", "metrics", "mmr", "normalized_fusion",
    "parse_folder", "rrf", "validate",
]  # fmt: skip


def test_public_names_are_pinned() -> None:
    assert evidencedesk.__all__ == sorted(PINNED)


def test_every_public_name_resolves() -> None:
    for name in evidencedesk.__all__:
        assert getattr(evidencedesk, name) is not None, name


def test_unknown_name_is_an_attribute_error() -> None:
    try:
        evidencedesk.NoSuchThing  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_every_public_error_is_an_evidencedesk_error() -> None:
    errors = [name for name in evidencedesk.__all__ if name.endswith("Error")]
    assert len(errors) == 7
    for name in errors:
        assert issubclass(getattr(evidencedesk, name), evidencedesk.EvidencedeskError), name


def test_errors_raised_inside_the_package_are_the_exported_ones(tmp_path) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    try:
        evidencedesk.Store(not_a_folder)
    except evidencedesk.EvidencedeskError as exc:
        assert type(exc) is evidencedesk.StoreError
        assert str(not_a_folder) in str(exc)
    else:
        raise AssertionError("expected StoreError")
    bad = tmp_path / "evidencedesk.yaml"
    bad.write_text("retrieval: {method: nonsense}\n")
    try:
        evidencedesk.load_settings(bad)
    except ValueError as exc:  # ConfigError stays a ValueError for older handlers
        assert isinstance(exc, evidencedesk.ConfigError)
        assert "retrieval" in str(exc)
    else:
        raise AssertionError("expected ConfigError")


def test_type_checkers_see_the_same_names_as_the_lazy_loader() -> None:
    """The ``if TYPE_CHECKING`` imports name exactly the public names, from the modules they load from."""
    tree = ast.parse(inspect.getsource(evidencedesk))
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    seen = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names:
            assert alias.asname == alias.name, f"{alias.name}: re-export it as itself"
            seen[alias.name] = getattr(import_module(node.module), alias.name)
    assert sorted(seen) == evidencedesk.__all__
    for name, value in seen.items():
        assert getattr(evidencedesk, name) is value, name
    assert callable(evidencedesk.validate) and callable(evidencedesk.mmr)
