"""Fixtures for chunking tests: Documents built by hand, as a parser would hand them over."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from evidencedesk.documents import Document, Metadata, Section

MakeDoc = Callable[..., Document]


@pytest.fixture
def make_doc() -> MakeDoc:
    def make(
        text: str,
        *,
        first_line: int = 1,
        fmt: str = "markdown",
        doc_id: str = "doc",
        sections: tuple[Section, ...] = (),
        metadata: Metadata | None = None,
    ) -> Document:
        return Document(
            id=doc_id,
            title="A title",
            path="folder/doc.md",
            format=fmt,
            text=text,
            content_hash="0" * 64,
            metadata=metadata or Metadata(),
            sections=sections,
            first_line=first_line,
        )

    return make
