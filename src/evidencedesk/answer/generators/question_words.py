"""Interrogatives: which kind of answer a question's own words ask for, in English, German and Bangla.

This is grammar, not knowledge of any corpus: "when"/"wann"/"কবে" ask for a time, "who"/"wer"/"কে" for
a person, "where"/"wo"/"কোথায়" for a place, "why"/"warum"/"কেন" for a reason, "how"/"wie"/"কীভাবে"
for a way (unless a measure follows: "how long", "wie viel"), and a question that opens with an
auxiliary or modal verb ("Is ...", "Kann ich ...") for yes or no, and "what/which + noun" ("which
dynasty", "welche Stadt") with no other interrogative for a named thing (``entity``).

``kinds_asked(question)`` returns the kinds; ``is_fact_question`` says whether a short answer line
suits the question (every kind but reason and way).
"""

from __future__ import annotations

import re

from evidencedesk.text import STOPWORDS, words

TIME, MONEY, NUMBER, PERSON, PLACE, YESNO, REASON, WAY, CODE, DATE, ENTITY = (
    "time", "money", "number", "person", "place", "yesno", "reason", "way", "code", "date", "entity",
)  # fmt: skip
# word -> kinds, for single-word interrogatives and cue words
_WORD_KINDS: dict[str, tuple[str, ...]] = {
    # English
    "when": (TIME, DATE), "who": (PERSON,), "whom": (PERSON,), "whose": (PERSON,), "where": (PLACE,),
    "why": (REASON,), "cost": (MONEY,), "costs": (MONEY,), "price": (MONEY,), "fee": (MONEY,),
    "fees": (MONEY,), "command": (CODE,), "commands": (CODE,),
    # German
    "wann": (TIME, DATE), "wer": (PERSON,), "wem": (PERSON,), "wen": (PERSON,), "wo": (PLACE,),
    "wohin": (PLACE,), "woher": (PLACE,), "warum": (REASON,), "wieso": (REASON,), "weshalb": (REASON,),
    "kosten": (MONEY,), "kostet": (MONEY,), "preis": (MONEY,), "gebühr": (MONEY,), "wieviel": (NUMBER, MONEY),
    "befehl": (CODE,),
    # Bangla
    "কবে": (TIME, DATE), "কখন": (TIME, DATE), "কতদিন": (TIME,), "কে": (PERSON,), "কাকে": (PERSON,),
    "কোথায়": (PLACE,), "কেন": (REASON,), "কীভাবে": (WAY,), "কিভাবে": (WAY,), "কত": (NUMBER, MONEY),
    "খরচ": (MONEY,), "দাম": (MONEY,),
}  # fmt: skip
# "how"/"wie" + measure word
_HOW = frozenset({"how", "wie"})
_HOW_MEASURE: dict[str, tuple[str, ...]] = {
    "long": (TIME,), "soon": (TIME,), "often": (TIME, NUMBER), "old": (TIME, NUMBER), "much": (MONEY, NUMBER),
    "many": (NUMBER,), "far": (NUMBER,), "big": (NUMBER,), "large": (NUMBER,), "high": (NUMBER,),
    "lange": (TIME,), "bald": (TIME,), "oft": (TIME, NUMBER), "alt": (TIME, NUMBER), "viel": (MONEY, NUMBER),
    "viele": (NUMBER,), "weit": (NUMBER,), "groß": (NUMBER,), "hoch": (NUMBER,), "teuer": (MONEY,),
}  # fmt: skip
_WHAT_YEAR = re.compile(r"\b(what|which|welche[mnrs]?|in\s+welchem)\s+(year|century|decade|date|day|jahr|jahrhundert)",
                        re.IGNORECASE)  # fmt: skip
# "what country", "which dynasty", "welche Stadt": a named thing of some class
_WHAT_NOUN = re.compile(r"\b(what|which|welche[mnrs]?)\s+(\w+)", re.IGNORECASE)
# a question that opens with one of these (auxiliary and modal verbs) asks for yes or no
_YESNO_OPENERS = frozenset({
    "is", "are", "was", "were", "am", "can", "could", "do", "does", "did", "will", "would", "should", "shall",
    "may", "might", "must", "has", "have", "had",
    "ist", "sind", "war", "waren", "kann", "können", "darf", "dürfen", "muss", "müssen", "soll", "sollen",
    "gibt", "gilt", "habe", "hat", "haben", "wird", "werden", "bekomme", "bekommt", "bin",
})  # fmt: skip
_BANGLA_YESNO = ("কি ", "কী ")  # "... কি পাব?" asks yes or no when no other interrogative is present


_CLAUSES = re.compile(r"[,;.!?।]")
LEAD = 3  # an interrogative counts within the first words of a clause ("and when ...", "in what year")


def kinds_asked(question: str) -> set[str]:
    """The kinds of answer ``question`` asks for (possibly none, e.g. "What is X?").

    Interrogatives count near the start of a clause, so "Can I pay when the courier comes?" asks
    yes or no, not a time; cue words ("cost", "price") and Bangla interrogatives count anywhere.
    """
    tokens = words(question)
    out: set[str] = set()
    for clause in _CLAUSES.split(question):
        ctoks = words(clause)
        for i, w in enumerate(ctoks):
            lead = i < LEAD
            if w in _HOW and lead and i + 1 < len(ctoks):
                nxt = ctoks[i + 1]
                if nxt in _HOW_MEASURE:
                    out.update(_HOW_MEASURE[nxt])
                elif not out:
                    out.add(WAY)
            if w in _WORD_KINDS and (lead or w.isascii() is False or _WORD_KINDS[w] in ((MONEY,), (CODE,))):
                out.update(_WORD_KINDS[w])
    if _WHAT_YEAR.search(question):
        out.update((TIME, DATE))
    elif not out:
        noun = _WHAT_NOUN.search(question)
        if noun and noun.group(2).lower() not in STOPWORDS and noun.start() <= len(question) // 2:
            out.add(ENTITY)
    if tokens and tokens[0] in _YESNO_OPENERS and not out:
        out.add(YESNO)
    if not out and any(m in f" {question} " for m in _BANGLA_YESNO) and question.strip().endswith("?"):
        out.add(YESNO)
    return out


def is_fact_question(kinds: set[str]) -> bool:
    """True when a short first line can answer: the question does not ask why or how."""
    return not (kinds & {REASON, WAY})


__all__ = ["CODE", "DATE", "ENTITY", "MONEY", "NUMBER", "PERSON", "PLACE", "REASON", "TIME", "WAY", "YESNO",
           "is_fact_question", "kinds_asked"]  # fmt: skip
