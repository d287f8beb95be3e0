"""The public names are a promise: this test pins them, and each must import."""

import evidencedesk

PINNED = [
    "BM25Searcher", "Candidate", "Chunk", "ChunkingConfig", "ConfigError", "CrossEncoderReranker",
    "DenseSearcher", "Desk", "Document", "ExtractiveGenerator", "Finding", "HybridSearcher", "Location",
    "LsaSearcher", "Metadata", "OverlapReranker", "Part", "Scope", "Searcher", "Settings", "Store",
    "TfidfSearcher", "Trace", "TwoStage", "ask", "assemble", "chunk_document", "diagnose", "evaluate",
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
