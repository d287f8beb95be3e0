"""BM25: the formula, validation, odd queries, tie order, incremental updates, and parity with bm25s and rank_bm25."""

from __future__ import annotations

import gzip
import json
import math
import random

import numpy as np
import pytest

from evidencedesk.documents import Chunk, Metadata
from evidencedesk.index.bm25 import BM25Index, lucene_idf
from evidencedesk.retrieval.lexical import BM25Searcher
from evidencedesk.retrieval.scope import Scope
from evidencedesk.text.tokenizer import Tokenizer
from tests.support.paths import SCIFACT, require_dataset

EVERYTHING = Scope.everything()
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "omicron",
    "pi",
    "rho",
    "sigma",
]


def make(cid: str, text: str, **meta: object) -> Chunk:
    return Chunk(cid, cid.split(":")[0], text, metadata=Metadata(**meta))


def random_chunks(rng: random.Random, n: int, prefix: str) -> list[Chunk]:
    return [
        make(f"{prefix}{d}:c{i}", " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 25))))
        for d in range(n)
        for i in range(rng.randint(1, 2))
    ]


def test_lucene_idf_is_positive_even_for_common_terms() -> None:
    idf = lucene_idf(10, np.array([1, 5, 10]))
    assert idf == pytest.approx([math.log(1 + 9.5 / 1.5), math.log(1 + 5.5 / 5.5), math.log(1 + 0.5 / 10.5)])
    assert (idf > 0).all()


def test_scores_follow_the_formula_by_hand() -> None:
    docs = [["a", "b", "a"], ["b", "c"], ["c", "c", "c", "d"]]
    idx = BM25Index(docs, k1=1.2, b=0.5)
    avgdl = (3 + 2 + 4) / 3
    n = 3

    def term(tf: int, dl: int, df: int) -> float:
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        return idf * tf * 2.2 / (tf + 1.2 * (0.5 + 0.5 * dl / avgdl))

    expected = [term(2, 3, 1) + term(1, 3, 2), term(1, 2, 2) + term(1, 2, 2), term(3, 4, 2)]
    # a repeated query term counts once
    assert idx.score_all(["a", "b", "c", "a"]) == pytest.approx(expected, abs=1e-12)


def reference_scores(docs: list[list[str]], query: list[str], k1: float = 1.5, b: float = 0.75) -> list[float]:
    """BM25 with Lucene idf, one document at a time in plain Python."""
    n, avgdl = len(docs), sum(map(len, docs)) / len(docs)
    df = {t: sum(t in d for d in docs) for t in query}
    out = []
    for doc in docs:
        total = 0.0
        for t in dict.fromkeys(query):
            tf, df_t = doc.count(t), df[t]
            if tf:
                idf = math.log(1 + (n - df_t + 0.5) / (df_t + 0.5))
                total += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / avgdl))
        out.append(total)
    return out


def test_rare_terms_in_a_large_index_take_the_sorted_path_with_the_same_scores() -> None:
    rng = random.Random(5)
    docs = [[rng.choice(WORDS) for _ in range(rng.randint(3, 9))] for _ in range(1500)]
    for n in (7, 300, 301, 1200):
        docs[n] = docs[n][:2] + ["rare"] * (1 + n % 3) + (["rarer"] if n % 2 else [])
    idx = BM25Index(docs)
    for query, hits in ((["rare", "rarer"], 4), (["rarer"], 2), (["rare", "alpha"], None), (["nothing"], 0)):
        rows, scores = idx.scores(query)
        want = np.array(reference_scores(docs, query))
        assert list(rows) == list(np.flatnonzero(want > 0))
        assert hits is None or len(rows) == hits
        assert np.allclose(scores, want[rows], rtol=0, atol=1e-12)


@pytest.mark.parametrize(("kwargs", "field"), [({"k1": -1}, "k1"), ({"k1": float("nan")}, "k1"), ({"b": 1.5}, "b")])
def test_parameters_are_validated(kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        BM25Searcher([make("a:c0", "x")], **kwargs)


def test_bad_inputs_raise_clear_errors() -> None:
    s = BM25Searcher([make("a:c0", "router reset")])
    with pytest.raises(ValueError, match="k"):
        s.search("router", k=0)
    with pytest.raises(ValueError, match="duplicate"):
        BM25Searcher([make("a:c0", "x"), make("a:c0", "y")])
    with pytest.raises(ValueError, match="doc_ids"):
        s.remove("a")


@pytest.mark.parametrize(
    "query",
    ["", "   \n\t", "?!... ---", "((((", "\x00\x01\x1b[31m", "router.*+?[](){}|^$\\", "router " * 5000, "রাউটার"],
)
def test_odd_and_hostile_queries(query: str) -> None:
    s = BM25Searcher([make("a:c0", "reset the router"), make("b:c0", "change the password")])
    got = s.search(query, k=3)
    words = set(s.tokenizer.tokenize(query))
    assert [c.chunk.id for c in got] == (["a:c0"] if "router" in words else [])


def test_empty_corpus_and_no_match() -> None:
    assert BM25Searcher([]).search("anything") == []
    assert BM25Searcher([make("a:c0", "alpha")]).search("omega") == []


def test_ties_break_by_chunk_id_whatever_the_insertion_order() -> None:
    chunks = [make(f"d{n}:c0", "same words here") for n in (5, 1, 9, 3, 7)]
    for order in (chunks, chunks[::-1]):
        got = BM25Searcher(order).search("words", k=3)
        assert [c.chunk.id for c in got] == ["d1:c0", "d3:c0", "d5:c0"]
        assert len({c.score for c in got}) == 1


def test_restricted_postings_give_the_same_scores_as_filtering_on_the_fly() -> None:
    rng = random.Random(3)
    chunks = random_chunks(rng, 60, "d")
    chunks = [Chunk(c.id, c.doc_id, c.text, metadata=Metadata(status=rng.choice(["current", "draft"]))) for c in chunks]
    s = BM25Searcher(chunks)
    for query in ("alpha beta", "sigma rho pi", "gamma"):
        tokens = s.tokenizer.tokenize(query)
        mask = Scope().mask(chunks)
        first = s.index.scores(tokens, mask)  # no key: filtered on the fly
        for _ in range(3):  # the second use of a key builds restricted postings
            rows, scores = s.index.scores(tokens, mask, key="current")
            assert np.array_equal(rows, first[0]) and np.allclose(scores, first[1], rtol=0, atol=1e-12)
        assert mask[rows].all()
        full = s.index.score_all(tokens)
        assert np.allclose(full[rows], scores, rtol=0, atol=1e-12)
        assert set(np.flatnonzero(full > 0)) & set(np.flatnonzero(mask)) == set(rows)


def assert_same_as_fresh(s: BM25Searcher, queries: list[str]) -> None:
    fresh = BM25Searcher(list(s.chunks), s.tokenizer, s.k1, s.b)
    assert fresh.index.n_docs == s.index.n_docs and fresh.index.avgdl == pytest.approx(s.index.avgdl, abs=1e-12)
    for q in queries:
        got, want = s.scores(q, EVERYTHING), fresh.scores(q, EVERYTHING)
        assert got.keys() == want.keys()
        assert all(abs(got[c] - want[c]) <= 1e-9 for c in got)
        ids = [c.chunk.id for c in s.search(q, 10, EVERYTHING)]
        assert ids == [c.chunk.id for c in fresh.search(q, 10, EVERYTHING)]


def test_add_replace_and_delete_equal_a_fresh_build() -> None:
    rng = random.Random(11)
    queries = [" ".join(rng.sample(WORDS, 3)) for _ in range(15)] + ["alpha", "brand new words"]
    s = BM25Searcher(random_chunks(rng, 30, "a"))
    assert_same_as_fresh(s, queries)

    s.add(random_chunks(rng, 10, "b") + [make("new:c0", "brand new words appear here")])  # new terms too
    assert_same_as_fresh(s, queries)
    assert s.search("brand")[0].chunk.id == "new:c0"

    replaced = s.chunks[3]
    s.add([make(replaced.id, "entirely replaced text about omicron")])  # same id: replaces
    assert sum(c.id == replaced.id for c in s.chunks) == 1
    assert_same_as_fresh(s, queries + ["replaced omicron"])

    removed = s.remove(["a1", "a2", "b3", "new"])
    assert removed >= 4 and not {c.doc_id for c in s.chunks} & {"a1", "a2", "b3", "new"}
    assert_same_as_fresh(s, queries)
    assert s.search("brand") == []
    assert s.remove(["nothing"]) == 0

    s.remove(list({c.doc_id for c in s.chunks}))
    assert len(s) == 0 and s.search("alpha") == []
    s.add(random_chunks(rng, 5, "c"))
    assert_same_as_fresh(s, queries)


def test_updates_keep_the_scope_masks_current() -> None:
    s = BM25Searcher([make("a:c0", "router reset")])
    assert len(s.search("router")) == 1
    s.add([make("b:c0", "router manual", status="draft"), make("c:c0", "router guide", audience="staff")])
    assert [c.chunk.id for c in s.search("router")] == ["a:c0"]
    assert len(s.search("router", scope=EVERYTHING)) == 3
    s.remove(["a"])
    assert s.search("router") == []


# -- parity with the reference implementations ---------------------------------------------------------------
@pytest.fixture(scope="module")
def scifact_tokens() -> tuple[list[list[str]], list[list[str]]]:
    require_dataset(SCIFACT / "corpus.jsonl.gz", "the bm25s and rank_bm25 parity tests")
    tok = Tokenizer()
    with gzip.open(SCIFACT / "corpus.jsonl.gz", "rt", encoding="utf-8") as f:
        docs = [json.loads(line) for _, line in zip(range(400), f, strict=False)]
    with (SCIFACT / "queries.jsonl").open(encoding="utf-8") as f:
        queries = [json.loads(line)["text"] for _, line in zip(range(60), f, strict=False)]
    corpus = [tok.tokenize(f"{d['title']} {d['text']}") for d in docs]
    return corpus, [list(dict.fromkeys(tok.tokenize(q))) for q in queries]


def test_parity_with_bm25s_lucene(scifact_tokens: tuple[list[list[str]], list[list[str]]]) -> None:
    import bm25s  # a pinned dev dependency: missing, the test fails rather than skips

    corpus, queries = scifact_tokens
    ours = BM25Index(corpus, k1=1.5, b=0.75)
    ref = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    ref.index(corpus, show_progress=False)
    compared = 0
    for q in queries:
        known = [t for t in q if t in ref.vocab_dict]
        if not known:
            continue
        theirs = ref.get_scores(known)
        mine = ours.score_all(q) / (1.5 + 1)  # like Lucene 8+, bm25s drops the constant (k1 + 1) factor
        assert np.allclose(mine, theirs, rtol=0, atol=1e-5)
        order = np.argsort(-mine, kind="stable")
        top = order[:10]
        docs, scores = ref.retrieve([known], k=10, show_progress=False)
        their_top, their_scores = docs[0], scores[0]
        assert np.allclose(their_scores, mine[top], rtol=0, atol=1e-5)
        if mine[order[9]] - mine[order[10]] > 1e-5:  # no tie at the cut: the same ten documents
            assert set(their_top) == set(top)
        for i in range(10):  # the same order wherever neighbours are not tied
            clear = all(abs(mine[top[i]] - mine[top[j]]) > 1e-5 for j in range(10) if j != i)
            assert not clear or their_top[i] == top[i]
        compared += 1
    assert compared >= 50


def test_parity_with_rank_bm25_given_lucene_idf(scifact_tokens: tuple[list[list[str]], list[list[str]]]) -> None:
    import rank_bm25  # a pinned dev dependency

    class LuceneOkapi(rank_bm25.BM25Okapi):  # BM25Okapi floors a Robertson idf; give it Lucene's instead
        def _calc_idf(self, nd: dict[str, int]) -> None:
            for word, freq in nd.items():
                self.idf[word] = math.log(1 + (self.corpus_size - freq + 0.5) / (freq + 0.5))

    corpus, queries = scifact_tokens
    ours = BM25Index(corpus, k1=1.5, b=0.75)
    ref = LuceneOkapi(corpus, k1=1.5, b=0.75)
    for q in queries[:20]:
        mine, theirs = ours.score_all(q), ref.get_scores(q)
        assert np.allclose(mine, theirs, rtol=0, atol=1e-9)
        assert list(np.argsort(-mine, kind="stable")[:10]) == list(np.argsort(-theirs, kind="stable")[:10])


def test_best_hint_keeps_the_true_top_k_on_a_large_index() -> None:
    from evidencedesk.retrieval.rows import top_k

    rng = np.random.default_rng(7)
    vocab = [f"w{n}" for n in range(40)]
    docs = [list(rng.choice(vocab, size=int(rng.integers(3, 30)))) for _ in range(6000)]
    index = BM25Index(docs)
    tie = np.arange(len(docs))
    for query in (["w0", "w1", "w2"], ["w3"], vocab[:12]):
        rows, scores = index.scores(query)
        cut_rows, cut_scores = index.scores(query, best=10)
        if len(query) > 1:
            assert len(cut_rows) < len(rows)  # the floor did cut (one term's postings are returned as they are)
        assert set(cut_rows.tolist()) <= set(rows.tolist())
        want = top_k(rows, scores, 10, tie)
        got = top_k(cut_rows, cut_scores, 10, tie)
        assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()


def test_per_language_terms_match_each_chunk_in_its_own_language() -> None:
    chunks = [
        Chunk("de:c0", "de", "Die Fahrräder werden nach der Rücksendung geprüft.", metadata=Metadata(lang="de")),
        Chunk("en:c0", "en", "Returned bikes are checked within five days.", metadata=Metadata(lang="en")),
        Chunk("bn:c0", "bn", "ফেরত দেওয়া সাইকেল পাঁচ দিনের মধ্যে পরীক্ষা করা হয়।", metadata=Metadata(lang="bn")),
    ]
    auto = BM25Searcher(chunks, Tokenizer(stem=True, stopwords="auto", language="auto"))
    english = BM25Searcher(chunks, Tokenizer(stem=True, stopwords="english"))
    assert auto.langs == ["bn", "de", "en"]
    # "Fahrrad" (singular) reaches "Fahrräder" only through the German stemmer
    assert [c.chunk.id for c in auto.search("Fahrrad", 3, EVERYTHING)] == ["de:c0"]
    assert english.search("Fahrrad", 3, EVERYTHING) == []
    # English and Bangla queries find their chunks with either tokenizer
    for searcher in (auto, english):
        assert searcher.search("return bike", 1, EVERYTHING)[0].chunk.id == "en:c0"
        assert searcher.search("সাইকেল ফেরত", 1, EVERYTHING)[0].chunk.id == "bn:c0"


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("n_docs", [300, 6000])
def test_top_selects_what_top_k_over_every_score_selects(
    n_docs: int, compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``BM25Index.top`` (selection while summing) against ``top_k`` over all scores: the same rows in
    the same order with the same scores, with ties, fewer matches than k, masks and cached views; by
    the compiled pass and by NumPy (what a process does before it has loaded the compiled pass)."""
    from evidencedesk.index import bm25
    from evidencedesk.index.top_rows import top_k

    monkeypatch.setattr(bm25, "kernel_loaded", lambda: compiled)

    rng = np.random.default_rng(n_docs)
    vocab = [f"w{n}" for n in range(60)]
    # few distinct lengths and words: many exact score ties at the cut
    docs = [list(rng.choice(vocab, size=int(rng.choice([4, 8])))) for _ in range(n_docs)]
    index = BM25Index(docs)
    tie = rng.permutation(n_docs)
    masks = [None, rng.random(n_docs) < 0.1, np.ones(n_docs, dtype=bool)]
    queries = [["w0", "w1"], ["w2"], vocab[:15], ["nowhere"], ["w59", "nowhere"]]
    for k in (1, 10, 50):
        for m, allowed in enumerate(masks):
            for _ in range(2):  # the second pass reads the cached view of the mask
                for query in queries:
                    rows, scores = index.scores(query, allowed)
                    want = top_k(rows, scores, k, tie) if len(rows) else (rows, scores)
                    got = index.top(query, k, tie, allowed, key=m)
                    assert got[0].tolist() == want[0].tolist(), (query, k, m)
                    assert np.allclose(got[1], want[1], rtol=0, atol=1e-12)
