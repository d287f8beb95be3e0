"""What kind of answer a question expects, and whether a unit of the context offers one.

A customer often states a quantity ("five weeks ago", "60 km", "a 45,000 taka bike", "40% off") and
the policy that answers states its limit in the same dimension ("within 30 days", "no more than
20 km", "orders up to 20,000 BDT", "a discount of 30% or more"). Other questions name the kind of
answer they want: "how long" and "when" want a time, "cost" and "price" want an amount of money,
"which command" wants a line of code.

``asked(question)`` returns the dimensions a question asks about; ``offers(text, kind, wanted)`` is
True when a unit states a quantity of one of them (or is code, when code is wanted).
"""

from __future__ import annotations

import re
import unicodedata

from evidencedesk.text import words

CODE = "code"

# unit word (lowercase, as written) -> dimension; Bangla words match with any suffix (দিনের, টাকার)
UNITS: dict[str, str] = {
    **dict.fromkeys(["day", "days", "week", "weeks", "month", "months", "year", "years", "hour", "hours",
                     "minute", "minutes", "দিন", "সপ্তাহ", "মাস", "বছর", "ঘণ্টা", "মিনিট", "কর্মদিবস"], "time"),
    **dict.fromkeys(["km", "kilometre", "kilometres", "kilometer", "kilometers", "কিলোমিটার"], "distance"),
    **dict.fromkeys(["bdt", "taka", "tk", "টাকা"], "money"),
    **dict.fromkeys(["%", "percent", "শতাংশ"], "percent"),
    **dict.fromkeys(["kg", "kilo", "kilos", "কেজি"], "mass"),
    **dict.fromkeys(["cm", "mm", "সেমি"], "length"),
    **dict.fromkeys(["psi", "bar"], "pressure"),
    **dict.fromkeys(["nm"], "torque"),
}  # fmt: skip
NUMBER_WORDS = frozenset(
    ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "fifteen",
     "twenty", "thirty", "forty", "fifty", "sixty", "hundred", "thousand", "half",
     "এক", "দুই", "তিন", "চার", "পাঁচ", "ছয়", "সাত", "আট", "নয়", "দশ")
)  # fmt: skip
# question words that ask for a dimension without stating a quantity
CUES: dict[str, str] = {
    **dict.fromkeys(["cost", "costs", "price", "prices", "priced"], "money"),
    **dict.fromkeys(["command", "commands", "terminal", "cli"], CODE),
    **dict.fromkeys(["কবে", "কতদিন"], "time"),
}
_PHRASE_CUES = (
    (re.compile(r"\bhow\s+(long|soon)\b", re.IGNORECASE), "time"),
    (re.compile(r"(^|[.?!]\s+)when\b", re.IGNORECASE), "time"),
)
_MIN_BANGLA_UNIT = 2
UNIT_REACH = 2  # a unit word may follow its number with one word between


def _is_number(token: str) -> bool:
    return token in NUMBER_WORDS or token.isdigit()


def _unit_of(token: str) -> str | None:
    token = token.lower()
    if token in UNITS:
        return UNITS[token]
    if token.isascii():
        return None
    token = unicodedata.normalize("NFC", token)
    for unit, dim in UNITS.items():
        if not unit.isascii() and len(unit) >= _MIN_BANGLA_UNIT and token.startswith(unit):
            return dim
    return None


def quantities(text: str) -> set[str]:
    """Dimensions of the quantities stated in ``text``: a number followed by a unit word, at most one word between
    ("5 business days")."""
    tokens = words(text.replace("%", " percent "))
    out: set[str] = set()
    for i, here in enumerate(tokens):
        if not _is_number(here):
            continue
        for after in tokens[i + 1 : i + 1 + UNIT_REACH]:
            dim = _unit_of(after)
            if dim is not None:
                out.add(dim)
                break
    return out


def asked(question: str) -> set[str]:
    """Dimensions ``question`` asks about: quantities it states, and cue words such as "how long" or "cost"."""
    out = quantities(question)
    out.update(CUES[w] for w in words(question) if w in CUES)
    out.update(dim for pattern, dim in _PHRASE_CUES if pattern.search(question))
    return out


def offers(text: str, kind: str, wanted: set[str]) -> bool:
    """True when a unit (its text and kind) offers an answer of a wanted dimension."""
    if not wanted:
        return False
    if CODE in wanted and kind == "code":
        return True
    return bool(quantities(text) & wanted)


__all__ = ["CODE", "CUES", "NUMBER_WORDS", "UNITS", "asked", "offers", "quantities"]
