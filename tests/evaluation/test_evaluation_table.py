"""answer_matches and the retrieval-by-answer table, on real chunks and hand-built traces."""

from __future__ import annotations

from evidencedesk.evaluation.table import CELLS, answer_matches, cell_of, retrieval_by_answer
from evidencedesk.retrieval.candidates import ranked
from evidencedesk.trace import Trace
from tests.support.evaluation import by_id, holder


def test_answer_matches_needs_every_number_and_enough_key_words() -> None:
    expected = "No: returns are accepted within 30 days of delivery; five weeks is past the window."
    assert answer_matches(expected, "You can return most items within 30 days of the delivery date.")
    assert not answer_matches(expected, "You can return most items within 60 days of the delivery date.")
    assert not answer_matches(expected, "")
    assert not answer_matches(expected, None)
    fee = "A 1,500 BDT restocking fee for bikes returned without the original box and packing."
    assert answer_matches(fee, "Bikes without the original box carry a restocking fee of 1500 BDT.")
    assert answer_matches(fee, "বাক্স ছাড়া ফেরত দিলে ১,৫০০ টাকা restocking fee for bikes")  # Bangla digits read as numbers
    words_only = "Gift cards cannot be exchanged for cash."
    assert answer_matches(words_only, "Sorry, gift cards can never be exchanged for cash.")
    assert not answer_matches(words_only, "Gift vouchers are welcome.")


def test_the_four_cells(labels, chunks) -> None:
    label = by_id(labels, "q01")
    gold = holder(label, chunks)
    other = next(c for c in chunks if label.grade_of(c) == 0 and c.doc_id != gold.doc_id)
    with_gold = ranked([(gold, 0.9)], "bm25")
    without = ranked([(other, 0.9)], "bm25")
    right = "You can return most items within 30 days of the delivery date."
    traces = {
        "working": Trace(label.question, retrieved=with_gold, context=with_gold, answer=right, cited=(gold.id,)),
        "generation or context failure": Trace(
            label.question, retrieved=with_gold, context=with_gold, answer="Within 60 days.", cited=(gold.id,)
        ),
        "retrieval miss": Trace(label.question, retrieved=without, context=without, abstained=True),
        "right without evidence": Trace(label.question, retrieved=without, context=without, answer=right),
    }
    for expected, trace in traces.items():
        assert cell_of(label, trace, chunks) == expected
    miscited = Trace(label.question, retrieved=with_gold, context=with_gold, answer=right, cited=(other.id,))
    assert cell_of(label, miscited, chunks) == "generation or context failure"  # right, but cites what it was not shown
    unanswerable = next(x for x in labels if not x.answerable)
    pairs = [(label, t) for t in traces.values()]
    pairs += [(unanswerable, Trace(unanswerable.question, abstained=True))]
    pairs += [(unanswerable, Trace(unanswerable.question, answer="Yes, we sell them."))]
    table = retrieval_by_answer(pairs, chunks)
    assert [table.count(c) for c in CELLS] == [1, 1, 1, 1]
    assert table.abstained_correctly == [unanswerable.id]
    assert table.answered_unanswerable == [unanswerable.id]
    assert table.to_dict()["cells"]["working"] == {"count": 1, "ids": [label.id]}
