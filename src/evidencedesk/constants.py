"""Names every layer agrees on, kept in one place. This module imports nothing, so the command line
can show them in its help without loading a numerical library."""

from __future__ import annotations

# The retrieval methods (``retrieval.factory.make_searcher``): four single legs and their fusion.
METHODS = ("bm25", "tfidf", "lsa", "dense", "hybrid")
LEGS = tuple(m for m in METHODS if m != "hybrid")  # the methods a hybrid search can fuse

# The embedding cache kept in an embedded store's folder (and beside a BEIR run's store).
EMBEDDINGS_FILE = "embeddings.sqlite"

__all__ = ["EMBEDDINGS_FILE", "LEGS", "METHODS"]
