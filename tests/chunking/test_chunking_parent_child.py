"""Parent-child: structure-sized children that carry their whole section as parent."""

from __future__ import annotations

from evidencedesk.chunking import ChunkingConfig, chunk_parent_child, chunk_structure, parent_id

BODY = """Preamble words here.

# One
alpha beta gamma. delta epsilon zeta.

eta theta iota.

## Two
| k | v |
|---|---|
| a | 1 |
| b | 2 |
"""


def test_children_carry_their_section_as_parent(make_doc):
    doc = make_doc(BODY, doc_id="kc-x")
    config = ChunkingConfig("parent_child", size=4, unit="words")
    children = chunk_parent_child(doc, config)
    assert [c.parent_id for c in children] == ["kc-x:p0"] + ["kc-x:p1"] * 4 + ["kc-x:p2"] * 3
    parents = {c.parent_id: c.parent_text for c in children}
    assert parents == {
        "kc-x:p0": "Preamble words here.",
        "kc-x:p1": "# One\nalpha beta gamma. delta epsilon zeta.\n\neta theta iota.",
        "kc-x:p2": "## Two\n| k | v |\n|---|---|\n| a | 1 |\n| b | 2 |",
    }
    assert [c.id for c in children] == [f"kc-x:c{n}" for n in range(len(children))]


def test_children_are_the_structure_chunks(make_doc):
    doc = make_doc(BODY)
    children = chunk_parent_child(doc, ChunkingConfig("parent_child", size=4, unit="words"))
    plain = chunk_structure(doc, ChunkingConfig("structure", size=4, unit="words"))
    assert [(c.id, c.text, c.kind, c.location) for c in children] == [(c.id, c.text, c.kind, c.location) for c in plain]
    assert all(c.parent_id is None for c in plain)


def test_every_child_lies_in_its_parent(make_doc):
    children = chunk_parent_child(make_doc(BODY), ChunkingConfig("parent_child", size=4, unit="words"))
    for child in children:
        assert all(line in child.parent_text for line in child.text.split("\n"))


def test_parent_id_format():
    assert parent_id("kc-returns-v3", 2) == "kc-returns-v3:p2"
