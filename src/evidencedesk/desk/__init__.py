"""The application core: ``Desk``, the one façade every front end calls, and the types it hands out.

``facade.py`` holds the Desk; it delegates each job to a collaborator in its own module:

- ``state.py``: what they all share (the store, the settings, the lock, the per-build cache);
- ``index_upkeep.py``: ingest, embeddings, the memory-mapped snapshot, the stored chunks;
- ``searching.py``: which searcher a method gets, and the first stage (collapsing, diversity) every path ranks with;
- ``answering.py``: generators, the answerability gate, ``ask`` and ``ask_stream``;
- ``request.py``: ``AskRequest``, the one declaration of what an ask takes;
- ``records.py``: traces and evaluation runs in the store;
- ``evaluating.py``: evaluate, diagnose, strategies, size series, BEIR, reports, run comparison;
- ``lab_tools.py``: ``LabTools`` (``desk.lab``): the web lab's re-chunkings, in-memory searchers,
  prompt previews and the answerability gate.

Helpers that need no store are functions exported here: ``files_in``, ``documents_in`` and
``file_types`` (what an ingest of a folder would read, from ``evidencedesk.ingest.files``),
``holds_store`` (whether a location names a store, from ``evidencedesk.backends``), ``warm_up`` (the
compiled search kernels, before the first request) and ``words_shared`` (the query words a passage
holds, as a searcher reads them).

The faces import from here (``evidencedesk.desk``) or from ``evidencedesk``, never from the modules.
"""

from __future__ import annotations

from evidencedesk.backends import holds_store
from evidencedesk.ingest.files import documents_in, file_types, files_in
from evidencedesk.lab import PromptPreview, candidate_rows, leg_names, searcher_tokenizer, words_shared

# settings helpers that callers have long imported from here
from evidencedesk.wiring import EMBEDDINGS_FILE as EMBEDDINGS_FILE
from evidencedesk.wiring import RewriteOptions, hybrid_legs
from evidencedesk.wiring import leg_params as leg_params
from evidencedesk.wiring import searcher_params as searcher_params

from .answering import ScopedChunks, outside_scope
from .evaluating import Diagnosis, labelled_questions
from .facade import Desk
from .lab_tools import LabTools
from .request import AskRequest
from .searching import Serialized, warm_up

__all__ = [
    "AskRequest",
    "Desk",
    "Diagnosis",
    "LabTools",
    "PromptPreview",
    "RewriteOptions",
    "ScopedChunks",
    "Serialized",
    "candidate_rows",
    "documents_in",
    "file_types",
    "files_in",
    "holds_store",
    "hybrid_legs",
    "labelled_questions",
    "leg_names",
    "outside_scope",
    "searcher_tokenizer",
    "warm_up",
    "words_shared",
]
