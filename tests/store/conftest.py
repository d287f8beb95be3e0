"""Helpers for store tests: small Markdown corpora written into tmp_path."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from evidencedesk.store import Store


def _policy(doc_id: str, sections: dict[str, str], **front: str) -> str:
    """A Markdown document with front matter and one ``##`` section per entry."""
    head = "\n".join(f"{k}: {v}" for k, v in {"id": doc_id, "title": doc_id.title(), **front}.items())
    body = "\n\n".join(f"## {name}\n\n{text}" for name, text in sections.items())
    return f"---\n{head}\n---\n\n# {doc_id.title()}\n\n{body}\n"


@pytest.fixture
def policy() -> Callable[..., str]:
    """``policy(doc_id, {heading: text}, **front_matter)``: a Markdown document as a string."""
    return _policy


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "alpha.md").write_text(
        _policy("alpha", {"One": "Alpha one says hello.", "Two": "Alpha two says goodbye."}), encoding="utf-8"
    )
    (folder / "beta.md").write_text(
        _policy(
            "beta",
            {"First": "Beta first section.", "Second": "Beta second section.", "Third": "Beta third section."},
            status="draft",
        ),
        encoding="utf-8",
    )
    (folder / "notes").mkdir()
    (folder / "notes" / "gamma.txt").write_text("Gamma is plain text.\n\nWith two paragraphs.\n", encoding="utf-8")
    return folder


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "store")
    yield s
    s.close()
