"""The web lab's requests to the Desk: the stored documents re-chunked another way, a searcher built
in memory over such chunks (configured as the Desk's searchers are), the context and prompt a search
would hand the generator, and how many evidence phrases a chunking keeps whole."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evidencedesk import lab
from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.documents import Chunk
from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.wiring import with_collapse

from .searching import Serialized, checked_method
from .state import DeskState


class LabTools:
    """Re-chunkings, in-memory searchers over them, and prompt previews, under the Desk's settings."""

    def __init__(self, state: DeskState) -> None:
        self.state = state

    def rechunk(self, chunking: ChunkingConfig) -> list[Chunk]:
        self.state.check_memory("re-chunking in the lab", "search the stored chunks (no chunker)")
        return lab.rechunk(self.state.store.documents(), chunking)

    def searcher_over(self, chunks: Sequence[Chunk], method: str | None, legs: Sequence[str] | None) -> Searcher:
        state = self.state
        method = checked_method(state, method, legs)
        split = bool(state.settings.retrieval.tenant_statistics)
        made = lab.memory_searcher(state.settings, chunks, method, legs, state.embeddings_file, split)
        return with_collapse(Serialized(made), state.settings)

    def prompt_preview(self, query: str, results: list[Candidate]) -> dict[str, Any]:
        return lab.prompt_preview(self.state.settings, query, results)

    def whole_answers(self, chunking: ChunkingConfig, labels: Sequence[Mapping[str, Any]]) -> tuple[int, int, int]:
        from evidencedesk.chunking.evidence import whole_evidence

        chunks = self.rechunk(chunking)
        whole, total = whole_evidence(chunks, list(labels))
        return len(chunks), whole, total


__all__ = ["LabTools"]
