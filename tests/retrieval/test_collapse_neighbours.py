"""Collapsing shows one chunk per page, but the chunks it folds away still reach the context, and a
diagnosis names the one that held the answer."""

from __future__ import annotations

from evidencedesk.answer.generators import get_generator
from evidencedesk.answer.pipeline import ask
from evidencedesk.documents import Chunk, Location
from evidencedesk.evaluation.labels import Gold, Label
from evidencedesk.evaluation.taxonomy import diagnose
from evidencedesk.retrieval.collapse import Collapsed, collapse, expand_folded
from evidencedesk.retrieval.factory import make_searcher


def chunk(doc: str, n: int, text: str, page: int, kind: str = "text") -> Chunk:
    return Chunk(f"{doc}:c{n}", doc, text, kind=kind, location=Location(("Restructuring",), n, n, (page,)))


# the prose of a page ranks first; the table on the same page holds the figure
PROSE = chunk(
    "amcor",
    106,
    "The restructuring liability balance at December 31, 2022 was reviewed by the "
    "restructuring committee, which reports the restructuring liability each quarter.",
    40,
)
TABLE = chunk("amcor", 105, "| Item | Amount |\n| --- | --- |\n| Balance at December 31, 2022 | $93 |", 40,
              kind="table")  # fmt: skip
OTHER = [chunk("amcor", 200 + n, f"Restructuring plans of segment {n} closed plants in the year.", 50 + n)
         for n in range(6)]  # fmt: skip
CHUNKS = [PROSE, TABLE, *OTHER]
QUESTION = "What was the restructuring liability balance at December 31, 2022?"


def test_collapse_folds_the_same_page_chunk_into_the_one_it_keeps() -> None:
    full = make_searcher("bm25", CHUNKS).search(QUESTION, 10)
    assert [c.chunk.id for c in full[:2]] == [PROSE.id, TABLE.id]
    kept, dropped = collapse(full, 3, "page")
    assert dropped and [c.chunk.id for c in kept][0] == PROSE.id and TABLE.id not in [c.chunk.id for c in kept]
    assert [f.chunk.id for f in kept[0].folded] == [TABLE.id]
    assert kept[0].to_dict()["collapsed"] == [TABLE.id]
    assert [c.chunk.id for c in expand_folded(kept)][:2] == [PROSE.id, TABLE.id]
    assert "collapsed" not in kept[1].to_dict()


def test_the_context_takes_the_folded_neighbour_and_the_answer_states_the_figure() -> None:
    searcher = Collapsed(make_searcher("bm25", CHUNKS), "page")
    by_id = {c.id: c for c in CHUNKS}
    checked, trace = ask(QUESTION, searcher, by_id, get_generator("extractive"), k=3, budget_tokens=2000)
    assert TABLE.id not in [c.chunk.id for c in trace.retrieved]  # the list shows one chunk per page
    assert TABLE.id in [c.chunk.id for c in trace.context]  # the context still holds the table
    assert "93" in checked.answer

    _, before = ask(QUESTION, searcher, by_id, get_generator("extractive"), k=3, budget_tokens=2000,
                    neighbours="none")  # fmt: skip
    assert TABLE.id not in [c.chunk.id for c in before.context]
    label = Label("q1", QUESTION, ("figures",), True, (Gold("Balance at December 31, 2022 | $93", 2),))
    findings = diagnose(label, before, CHUNKS, k=3)
    retrieval = next(f for f in findings if f.stage == "retrieval")
    assert f"collapsed away: {TABLE.id} holds it but shares page 40 with rank 1 ({PROSE.id})" in retrieval.detail
    assert "it did not reach the context" in retrieval.detail


def test_outside_scope_names_the_superseded_document_that_outranks_every_allowed_one() -> None:
    from dataclasses import replace

    from evidencedesk.desk import outside_scope
    from evidencedesk.documents import Metadata
    from evidencedesk.retrieval.scope import Scope

    old = replace(chunk("policy-2023", 1, "The bicycle allowance is 25 euros per month.", 1),
                  metadata=Metadata(status="superseded"))  # fmt: skip
    current = chunk("handbook", 1, "Office hours are nine to five.", 1)
    found = make_searcher("bm25", [old, current]).search("bicycle allowance per month", 5, Scope.everything())
    assert [o.to_dict() for o in outside_scope(found, Scope())] == [
        {"doc_id": "policy-2023", "chunk_id": old.id, "rank": 1, "why": "status superseded"}
    ]
    assert outside_scope(found, Scope(statuses=None)) == []  # inside this scope: nothing to say
