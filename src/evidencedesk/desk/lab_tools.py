"""The web lab's requests to the Desk, behind one object (``desk.lab``): the stored documents re-chunked
another way, a searcher built in memory over such chunks (configured as the Desk's searchers are), the
context and prompt a search would hand the generator, how many evidence phrases a chunking keeps
whole, and the answerability gate a language model answers behind."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from evidencedesk import lab
from evidencedesk.answer.generators.base import Generator
from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.config import Settings
from evidencedesk.documents import Chunk
from evidencedesk.lab import PromptPreview
from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.wiring import with_collapse

from .answering import Answering
from .searching import Serialized, checked_method
from .state import DeskState

if TYPE_CHECKING:
    from evidencedesk.answer.gate import AnswerabilityGate


class LabTools:
    """What the web lab (``evidencedesk serve``'s ``/lab``) and experiments ask of a Desk beyond search
    and ask: other chunkings of the stored documents and searchers over them, under the Desk's settings.

    A Desk makes one; reach it as ``desk.lab``.
    """

    def __init__(self, state: DeskState, answers: Answering) -> None:
        self._state = state
        self._answers = answers

    def rechunk(self, chunking: ChunkingConfig) -> list[Chunk]:
        """Every stored document chunked another way, held in memory.

        Args:
            chunking: The chunker, size, overlap and unit to cut with.

        Returns:
            The chunks in document order.

        Raises:
            TooLargeForMemory: the store holds more chunks than the Desk's ``max_memory_chunks``.
        """
        self._state.check_memory("re-chunking in the lab", "search the stored chunks (no chunker)")
        return lab.rechunk(self._state.store.documents(), chunking)

    def searcher_over(
        self, chunks: Sequence[Chunk], method: str | None = None, legs: Sequence[str] | None = None
    ) -> Searcher:
        """A searcher built in memory over ``chunks``, configured as the Desk's searchers are (parameters,
        hybrid legs, collapsing); not cached.

        Args:
            chunks: What to search, e.g. :meth:`rechunk`'s chunks.
            method: The retrieval method (default: ``retrieval.method``).
            legs: A hybrid's legs (default: the configured legs).

        Returns:
            The searcher; hand it to ``Desk.first_stage(over=...)`` for the ranking search shows.

        Raises:
            ConfigError: an unknown method or leg.
        """
        state = self._state
        method = checked_method(state, method, legs)
        split = bool(state.settings.retrieval.tenant_statistics)
        made = lab.memory_searcher(state.settings, chunks, method, legs, state.embeddings_file, split)
        return with_collapse(Serialized(made), state.settings)

    def prompt_preview(self, query: str, results: list[Candidate]) -> PromptPreview:
        """What a search would hand the generator: the assembled context and the prompt.

        Args:
            query: The question the prompt asks.
            results: Ranked candidates, e.g. ``Desk.search``'s.

        Returns:
            The context ``results`` assemble into under the settings' ``context.*`` (``.context``), and
            the prompt text built over it (``.prompt``).
        """
        return lab.prompt_preview(self._state.settings, query, results)

    def whole_answers(self, chunking: ChunkingConfig, labels: Sequence[Mapping[str, object]]) -> tuple[int, int, int]:
        """How well a chunking keeps labelled evidence together.

        Args:
            chunking: The chunking to cut the stored documents with (see :meth:`rechunk`).
            labels: Rows of a labels file (each with its ``evidence`` phrases).

        Returns:
            ``(chunks, whole, total)``: how many chunks the documents make, and how many of the
            ``total`` evidence phrases one chunk holds whole.
        """
        from evidencedesk.chunking.evidence import whole_evidence

        chunks = self.rechunk(chunking)
        whole, total = whole_evidence(chunks, list(labels))
        return len(chunks), whole, total

    def answerability_gate(self, generator: Generator, settings: Settings | None = None) -> AnswerabilityGate | None:
        """The gate a language-model generator answers behind: it abstains without calling the model when
        the fitted answerability model says the context does not answer.

        Args:
            generator: The generator that would answer.
            settings: The settings to read ``generator.answerability_gate`` from (default: the Desk's).

        Returns:
            The gate, or None: the gate is off, or ``generator`` is the extractive one (it decides
            answerability itself).
        """
        return self._answers.answerability_gate(generator, settings)


__all__ = ["LabTools"]
