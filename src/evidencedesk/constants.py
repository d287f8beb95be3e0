"""Names every layer agrees on, kept in one place. This module imports nothing, so the command line
can show them in its help without loading a numerical library."""

from __future__ import annotations

# The retrieval methods (``retrieval.factory.make_searcher``): four single legs and their fusion.
METHODS = ("bm25", "tfidf", "lsa", "dense", "hybrid")
LEGS = tuple(m for m in METHODS if m != "hybrid")  # the methods a hybrid search can fuse

# The chunkers (``chunking``) and the units their sizes count in.
CHUNKERS = ("fixed", "recursive", "section", "paragraph", "structure", "parent_child")
UNITS = ("chars", "words")

# The exit code of ``evidencedesk compare`` when a metric regressed (``evaluation.gate``).
EXIT_REGRESSED = 3

# The embedding cache kept in an embedded store's folder (and beside a BEIR run's store).
EMBEDDINGS_FILE = "embeddings.sqlite"

__all__ = ["CHUNKERS", "EMBEDDINGS_FILE", "EXIT_REGRESSED", "LEGS", "METHODS", "UNITS"]
