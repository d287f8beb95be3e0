"""The short answer line: the few words of the best unit that state the fact a question asks for.

A fact question ("how long", "when", "how much", "who", "where", "is ...") gets a first line of at
most ``MAX_WORDS`` words copied verbatim from the unit it is taken from, so it is grounded and
its citation checks like any quote:

* a time, date, amount or count: the number with its unit, currency symbol or month ("30 days",
  "$1,200", "12 March 1066", "৩০ দিন"), the one nearest the question's words in the unit;
* a person, place or named thing ("who", "where", "which dynasty"): the run of capitalised words
  that holds no question word, nearest the question's words, with the words of its clause around
  it (at most ``PHRASE_WORDS``), since which name is meant is a guess the reader can then check;
* yes or no: the clause that says so (whether it means yes or no is left to the reader, since a
  wrong "No" is worse than none);
* any other fact ("What is X?"): the clause of the unit that holds the question's words, without
  them, cut to the ``MAX_WORDS`` words that keep its numbers.

Questions that ask why or how get no short line: their answer is the quote itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from evidencedesk.answer.generators.answer_types import (
    NUMBER_WORDS,
    is_currency_symbol,
    languages_months,
    languages_units,
    unit_of,
)
from evidencedesk.answer.generators.lexical_match import term
from evidencedesk.answer.generators.question_words import (
    DATE,
    ENTITY,
    MONEY,
    NUMBER,
    PERSON,
    PLACE,
    TIME,
    YESNO,
    is_fact_question,
)  # fmt: skip
from evidencedesk.text import STOPWORDS

MAX_WORDS = 12
_TOKEN = re.compile(r"\S+")
_EDGE = re.compile(r"^[\"'“‘(\[]+|[\"'”’)\],.;:!?।]+$")
_CLAUSE = re.compile(r"[,;:](?=\s)|[()\u2013\u2014]|\s-\s")  # "1,500" is no clause break
_CONNECTORS = frozenset({"of", "de", "the", "von", "van", "der", "du", "la", "and", "y"})


def _bare(token: str) -> str:
    return _EDGE.sub("", token)


def _tokens(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def _is_num(tok: str) -> bool:
    b = _bare(tok)
    core = "".join(ch for ch in b if not is_currency_symbol(ch) and ch not in "%")
    return bool(core) and any(ch.isdigit() for ch in core) and all(ch.isdigit() or ch in ".,-–/" for ch in core)


def _span(text: str, toks: list[tuple[str, int, int]], i: int, j: int) -> str:
    """The verbatim text of tokens i..j (inclusive), outer punctuation removed."""
    raw = text[toks[i][1] : toks[j][2]]
    return _EDGE.sub("", raw.strip()) or raw.strip()


def _question_hits(toks: list[tuple[str, int, int]], qterms: frozenset[str]) -> list[int]:
    return [i for i, (t, _, _) in enumerate(toks) if term(_bare(t).lower()) in qterms]


def _nearest(cands: list[tuple[int, int]], hits: list[int]) -> tuple[int, int] | None:
    if not cands:
        return None
    if not hits:
        return cands[0]
    return min(cands, key=lambda c: min(abs(c[0] - h) for h in hits))


def _quantity_spans(toks: list[tuple[str, int, int]], kinds: set[str], langs: tuple[str, ...],
                    qterms: frozenset[str]) -> list[tuple[int, int]]:  # fmt: skip
    units = languages_units(langs)
    months = set(languages_months(langs))
    want_dims = set(kinds)
    out: list[tuple[int, int]] = []
    n = len(toks)
    for i, (tok, _, _) in enumerate(toks):
        low = _bare(tok).lower()
        is_month = low in months
        spelled = NUMBER in want_dims and low in NUMBER_WORDS and len(low) > 2
        if not (_is_num(tok) or is_month or spelled):
            continue
        if term(low) in qterms:  # the question's own number names the topic, not the answer
            continue
        start, end = i, i
        before = _bare(toks[i - 1][0]) if i > 0 else ""
        if before and ((before.lower() in months and not is_month) or (is_month and before.isdigit())):
            start = i - 1  # "December 25", "12 March"
        # extend over a month, a year, a unit word, "million", up to 3 tokens
        k = i + 1
        while k < n and k <= i + 3:
            nxt = _bare(toks[k][0]).lower()
            dim = unit_of(nxt, units) if nxt else None
            if nxt in months or _is_num(toks[k][0]) or dim is not None or nxt in ("million", "billion", "thousand"):
                end = k
                if toks[k][0].endswith((",", ".", ";")) and dim is not None:
                    break
                k += 1
                continue
            break
        symbol = any(is_currency_symbol(ch) for ch in tok)
        if end == i and not is_month and not symbol and start == i and k < n and not tok.endswith((",", ".", ";")):
            nxt = _bare(toks[i + 1][0]).lower() if i + 1 < n else ""
            if nxt and nxt not in STOPWORDS and (NUMBER in want_dims or MONEY in want_dims):
                end = i + 1  # "300 knights", "12 ships"
        span_dims = {unit_of(_bare(toks[x][0]).lower(), units) or "" for x in range(start, end + 1)}
        has_symbol = any(is_currency_symbol(ch) for x in range(start, end + 1) for ch in toks[x][0])
        if has_symbol:
            span_dims.add(MONEY)
        if any(_bare(toks[x][0]).lower() in months for x in range(start, end + 1)) or (
            _bare(tok).isdigit() and len(_bare(tok)) == 4
        ):
            span_dims.update((DATE, TIME))
        out.append((start, end) if (span_dims & want_dims or NUMBER in want_dims or not span_dims - {""}) else (-1, -1))
    preferred = [s for s in out if s[0] >= 0]
    return preferred


def _name_spans(toks: list[tuple[str, int, int]], qterms: frozenset[str]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    i, n = 0, len(toks)
    while i < n:
        b = _bare(toks[i][0])
        if b[:1].isupper() and term(b.lower()) not in qterms and b.lower() not in STOPWORDS:
            j = i
            while j + 1 < n:
                nb = _bare(toks[j + 1][0])
                if toks[j][0].endswith((",", ".", ";", ":")):
                    break
                if nb[:1].isupper() or (
                    nb.lower() in _CONNECTORS and j + 2 < n and _bare(toks[j + 2][0])[:1].isupper()
                ):
                    j += 1
                    continue
                break
            named = any(term(_bare(toks[x][0]).lower()) in qterms for x in range(i, j + 1))
            if (i > 0 or j > i) and not named:  # a lone capital that opens the sentence is no name
                out.append((i, j))
            i = j + 1
        else:
            i += 1
    return out


def _clause_answer(text: str, qterms: frozenset[str]) -> str:
    """The clause of ``text`` with the most question words, those words removed from its ends, <= MAX_WORDS."""
    pieces = [p.strip() for p in _CLAUSE.split(text) if p.strip()]
    if not pieces:
        return ""
    scored = []
    for n, p in enumerate(pieces):
        toks = [_bare(t).lower() for t in p.split()]
        q = sum(term(t) in qterms for t in toks)
        new = sum(1 for t in toks if t and t not in STOPWORDS and term(t) not in qterms)
        scored.append((q + 0.5 * min(new, 4), new, n))
    best = max(scored, key=lambda s: (s[0], -s[2]))
    n = best[2]
    if best[1] == 0 and n + 1 < len(pieces):
        n += 1
    words = pieces[n].split()
    while (
        words and (term(_bare(words[0]).lower()) in qterms or _bare(words[0]).lower() in STOPWORDS) and len(words) > 1
    ):
        words.pop(0)
    return _EDGE.sub("", " ".join(_window(words, qterms)))


def _window(words: list[str], qterms: frozenset[str]) -> list[str]:
    """At most ``MAX_WORDS`` consecutive words of a clause: the window that keeps its numbers and the most
    words the question does not already hold (the earliest such window), so "... no more than 20 km in
    total" keeps "20 km" instead of stopping before it."""
    if len(words) <= MAX_WORDS:
        return words

    def worth(w: str) -> float:
        b = _bare(w)
        if _is_num(w):
            return 3.0
        low = b.lower()
        return 1.0 if b and low not in STOPWORDS and term(low) not in qterms else 0.0

    values = [worth(w) for w in words]
    best = max(range(len(words) - MAX_WORDS + 1), key=lambda i: (sum(values[i : i + MAX_WORDS]), -i))
    return words[best : best + MAX_WORDS]


def _typed(text: str, toks: list[tuple[str, int, int]], hits: list[int], qterms: frozenset[str], kinds: set[str],
           langs: tuple[str, ...]) -> str:  # fmt: skip
    span: tuple[int, int] | None = None
    if kinds & {TIME, DATE, MONEY, NUMBER}:
        span = _nearest(_quantity_spans(toks, kinds, langs, qterms), hits)
    name = False
    if span is None and kinds & {PERSON, PLACE, ENTITY}:
        span = _nearest(_name_spans(toks, qterms), hits)
        name = span is not None
    if span is None:
        return ""
    if name:
        span = _phrase(toks, span)
    return _span(text, toks, span[0], min(span[1], span[0] + MAX_WORDS - 1))


PHRASE_WORDS = 8  # a name with its clause: at most this many words


def _phrase(toks: list[tuple[str, int, int]], span: tuple[int, int]) -> tuple[int, int]:
    """The name with the words of its clause around it, at most ``PHRASE_WORDS`` words: which of a sentence's
    names answers "who" or "where" is a guess, and the words beside it ("southern China", "his son
    Zhenjin") let the reader check it."""
    i, j = span
    lo, hi = i, j
    while lo > 0 and not _CLAUSE_END.search(toks[lo - 1][0]) and hi - lo + 1 < PHRASE_WORDS:
        lo -= 1
        if hi - lo + 1 >= PHRASE_WORDS:
            break
        if hi + 1 < len(toks) and not _CLAUSE_END.search(toks[hi][0]):
            hi += 1
    while hi + 1 < len(toks) and not _CLAUSE_END.search(toks[hi][0]) and hi - lo + 1 < PHRASE_WORDS:
        hi += 1

    def in_name(x: int) -> bool:
        b = _bare(toks[x][0])
        return b[:1].isupper() or b.lower() in _CONNECTORS

    if hi + 1 < len(toks) and in_name(hi + 1) and not _CLAUSE_END.search(toks[hi][0]):
        while hi > j and in_name(hi):  # never stop inside a further name ("the Battle" of Hastings)
            hi -= 1
        if hi > j:  # nor on the word that introduces it ("after")
            hi -= 1
    while lo < i and _bare(toks[lo][0]).lower() in STOPWORDS:
        lo += 1
    while hi > j and _bare(toks[hi][0]).lower() in STOPWORDS:
        hi -= 1
    return lo, hi


_CLAUSE_END = re.compile(r"[,;:.!?)\]]$")


def typed_span(question_terms: Iterable[str], unit_text: str, kinds: set[str],
               languages: Iterable[str] = ("en",)) -> str:  # fmt: skip
    """The span of ``unit_text`` of a kind the question asks for (a number, date or amount with its unit, or
    a name the question does not hold), nearest the question's words; "" when there is none."""
    text = " ".join(unit_text.split())
    qterms = frozenset(question_terms)
    toks = _tokens(text)
    langs = tuple(dict.fromkeys(("en", *languages)))
    return _typed(text, toks, _question_hits(toks, qterms), qterms, kinds, langs)


def short_answer(question_terms: Iterable[str], unit_text: str, kinds: set[str],
                 languages: Iterable[str] = ("en",)) -> str:  # fmt: skip
    """The short line for a fact question, copied from ``unit_text`` ("" when the question asks why or how,
    or when no typed answer is found and the unit itself is at most ``MAX_WORDS`` words)."""
    if not is_fact_question(kinds):
        return ""
    text = " ".join(unit_text.split())
    qterms = frozenset(question_terms)
    langs = tuple(dict.fromkeys(("en", *languages)))
    toks = _tokens(text)
    hits = _question_hits(toks, qterms)
    if YESNO in kinds:
        # whether the unit says yes or no is left to the reader: a wrong "No" is worse than none
        return "" if len(toks) <= MAX_WORDS else _clause_answer(text, qterms)
    typed = _typed(text, toks, hits, qterms, kinds, langs)
    if typed:
        return typed
    if len(toks) <= MAX_WORDS:
        return ""  # the unit itself is short enough to be the first line
    return _clause_answer(text, qterms)


__all__ = ["MAX_WORDS", "short_answer", "typed_span"]
