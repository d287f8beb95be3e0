"""The public API: the registry, the fields every chunk carries, determinism, and config hashes."""

from __future__ import annotations

from datetime import date

import pytest

import evidencedesk.chunking as chunking
from evidencedesk.chunking import CHUNKERS, ChunkingConfig, chunk_document, get_chunker
from evidencedesk.documents import Metadata

DOC = """# Returns

You can return most items within 30 days of the delivery date. Items must be unused.

## Refunds

Approved refunds go back to the original payment method.

| Method | Days |
|--------|------|
| Card | 5 |
| bKash | 2 |

```bash
returns --status
```
"""

CONFIGS = [ChunkingConfig(name=name, size=12, unit="words") for name in CHUNKERS] + [
    ChunkingConfig(name="fixed", size=60, unit="chars"),
    ChunkingConfig(name="fixed", size=8, overlap=3, unit="words"),
    ChunkingConfig(name="recursive", size=40, overlap=10, unit="chars"),
]


def test_public_names_are_pinned():
    assert set(chunking.__all__) >= {"CHUNKERS", "ChunkingConfig", "chunk_document", "get_chunker", "whole_evidence"}
    assert all(hasattr(chunking, name) for name in chunking.__all__)


@pytest.mark.parametrize("name", CHUNKERS)
def test_every_name_has_a_chunker(name):
    assert callable(get_chunker(name))


def test_unknown_chunker_name_is_a_value_error():
    with pytest.raises(ValueError, match="unknown name 'windows'.*fixed"):
        get_chunker("windows")


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.name}-{c.size}{c.unit}")
def test_every_chunk_carries_the_document_fields(make_doc, config):
    meta = Metadata(status="superseded", valid_from=date(2024, 1, 1), audience="staff", tags=("x",))
    doc = make_doc(DOC, first_line=5, doc_id="kc-returns", metadata=meta)
    chunks = chunk_document(doc, config)
    assert chunks
    assert [c.id for c in chunks] == [f"kc-returns:c{n}" for n in range(len(chunks))]
    lines = DOC.split("\n")
    for c in chunks:
        assert (c.doc_id, c.title, c.source, c.metadata) == ("kc-returns", "A title", "folder/doc.md", meta)
        assert c.text.strip()
        assert c.text == c.text.strip("\n") and c.text == c.text.rstrip()
        assert 5 <= c.location.first_line <= c.location.last_line <= 4 + len(lines)
    starts = [c.location.first_line for c in chunks]
    assert starts == sorted(starts)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.name}-{c.size}{c.unit}")
def test_same_text_and_config_give_the_same_chunks(make_doc, config):
    first = chunk_document(make_doc(DOC), config)
    again = chunk_document(make_doc(DOC), config)
    assert [c.to_dict() for c in first] == [c.to_dict() for c in again]


@pytest.mark.parametrize("name", CHUNKERS)
def test_blank_document_gives_no_chunks(make_doc, name):
    assert chunk_document(make_doc("\n  \n\n"), ChunkingConfig(name=name)) == []


def test_chunk_document_uses_the_named_chunker(make_doc):
    doc = make_doc(DOC)
    for name in CHUNKERS:
        config = ChunkingConfig(name=name, size=12)
        assert chunk_document(doc, config) == get_chunker(name)(doc, config)
    sizes = {name: len(chunk_document(doc, ChunkingConfig(name=name, size=12))) for name in CHUNKERS}
    assert sizes["section"] == 2 and sizes["fixed"] != sizes["section"]


@pytest.mark.parametrize(
    "changed",
    [{"name": "fixed"}, {"size": 121}, {"overlap": 10}, {"unit": "chars"}, {"separators": ("\n",)}],
)
def test_config_hash_changes_with_every_parameter(changed):
    base = ChunkingConfig()
    assert ChunkingConfig(**{**base.to_dict(), "separators": base.separators, **changed}).hash() != base.hash()
    assert ChunkingConfig().hash() == base.hash()
