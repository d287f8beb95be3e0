"""Why a chunk matched: the words it shares with the query and, for BM25, each term's contribution."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from evidencedesk.text.tokenizer import DEFAULT_TOKENIZER, Tokenizer

if TYPE_CHECKING:
    from evidencedesk.index.bm25 import TermScore
    from evidencedesk.retrieval.lexical import BM25Searcher


_CLITIC = re.compile(r"\w['’](\w)\b")  # the "s" of "Amcor's", the "t" of "don't"


def shared_words(query: str, text: str, tokenizer: Tokenizer | None = None) -> list[str]:
    """The query's words (lowercased, first-seen order, no repeats) whose term also occurs in ``text``.
    The single letter after an apostrophe ("Amcor's") is not a word the query shares with anything."""
    tok = tokenizer or DEFAULT_TOKENIZER
    terms = set(tok.tokenize(text))
    clitics = {m.group(1).lower() for m in _CLITIC.finditer(query)}
    out: dict[str, None] = {}
    for word in tok.words(query):
        if len(word) == 1 and word.lower() in clitics:
            continue
        term = tok.term(word)
        if term is not None and term in terms:
            out.setdefault(word.lower(), None)
    return list(out)


def explain(searcher: BM25Searcher, query: str, chunk_id: str) -> list[TermScore]:
    """Each distinct query term's tf in the chunk, df, idf and contribution; they sum to its BM25 score."""
    from evidencedesk.retrieval.lexical import BM25Searcher

    if not isinstance(searcher, BM25Searcher):
        raise ValueError(f"searcher: explain needs a BM25Searcher, got {type(searcher).__name__}")
    row = searcher.row_of.get(chunk_id)
    if row is None:
        raise ValueError(f"chunk_id: {chunk_id!r} is not in this index")
    return searcher.index.explain(searcher.query_terms(query), row)
