"""Answer kinds: what a question asks for, and whether a unit of text offers it.

Questions that ask for a fact want an answer of a kind: "how long" and "when" want a time or
date, "how much" and "cost" an amount, "who" a name, "where" a place, "is/can/do ..." a yes or no.
A question that states a quantity ("a 40 km ride") asks about that dimension too.

Language knowledge comes from general resources, not from lists written for one corpus:

* units of measure and their dimension from the Unicode CLDR unit names that Babel ships
  (``duration-day`` is "days", "Tage", "দিন"), for English plus each language a caller names;
* money from the Unicode currency-symbol category ``Sc`` (``$``, ``€``, ``৳``), the ISO 4217 codes
  and the currency names of CLDR ("taka", "euros", "Dollar");
* month names from CLDR, so "12 March 1066" and "März 2024" read as dates;
* the interrogatives of each language from ``question_words``.

``asked(question)`` returns the kinds a question asks about; ``offers(text, kind, wanted)`` is True
when a unit states an answer of one of them (a quantity of that dimension, a date, or code).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from evidencedesk.answer.generators.question_words import kinds_asked
from evidencedesk.text import STOPWORDS, words

CODE = "code"
TIME = "time"
MONEY = "money"
PERCENT = "percent"
DATE = "date"
NUMBER = "number"
# CLDR unit categories -> the dimension a question asks about ("how long" is a duration)
_CATEGORY = {"duration": TIME, "concentr": PERCENT, "length": "length", "mass": "mass", "volume": "volume",
             "area": "area", "speed": "speed", "temperature": "temperature", "pressure": "pressure",
             "energy": "energy", "power": "power", "digital": "digital", "electric": "electric",
             "torque": "torque", "force": "force"}  # fmt: skip
DEFAULT_LANGUAGES = ("en",)
UNIT_REACH = 2  # a unit word may follow its number with one word between ("5 business days")
_DIGITS = re.compile(r"\d")


def _pattern_words(pattern: str) -> list[str]:
    """The unit word of a CLDR pattern: the word right after ``{0}`` ("{0} kilometers per hour" gives
    "kilometers"), or the one right before it when the number comes last."""
    if "{0}" not in pattern:
        return []
    before, _, after = pattern.partition("{0}")
    following = [w for w in words(after) if not w.isdigit()]
    if following:
        return following[:1]
    preceding = [w for w in words(before) if not w.isdigit()]
    return preceding[-1:]


@lru_cache(maxsize=64)
def unit_words(language: str) -> dict[str, str]:
    """Unit word (lowercase) -> dimension, for ``language``, from CLDR via Babel ({} when Babel lacks it)."""
    try:
        from babel import Locale, UnknownLocaleError
    except ImportError:  # pragma: no cover - babel is a core dependency
        return {}
    try:
        locale = Locale.parse(language.replace("-", "_"))
    except (UnknownLocaleError, ValueError, TypeError):
        return {}
    out: dict[str, str] = {}
    patterns = locale._data.get("unit_patterns", {})
    for key in patterns:
        dim = _CATEGORY.get(str(key).split("-")[0])
        if dim is None:
            continue
        for width in patterns[key].values():
            for form, pattern in width.items():
                if form != "per" and isinstance(pattern, str):
                    for w in _pattern_words(pattern):
                        if (len(w) > 1 or not w.isalpha()) and w not in STOPWORDS:
                            out.setdefault(w, dim)
    for code, name in locale.currencies.items():
        out.setdefault(code.lower(), MONEY)
        names = [name]
        plural = locale._data.get("currency_names_plural", {}).get(code, {})
        names.extend(v for v in plural.values() if isinstance(v, str))
        for n in names:
            tail = words(n)
            if tail and not tail[-1].isdigit():
                out.setdefault(tail[-1], MONEY)
    out.setdefault("percent", PERCENT)
    return out


@lru_cache(maxsize=64)
def month_names(language: str) -> frozenset[str]:
    """The month names of ``language`` (wide and abbreviated, lowercase) from CLDR."""
    try:
        from babel import Locale, UnknownLocaleError

        locale = Locale.parse(language.replace("-", "_"))
    except (ImportError, UnknownLocaleError, ValueError, TypeError):
        return frozenset()
    out: set[str] = set()
    for context in ("format", "stand-alone"):
        for width in ("wide", "abbreviated"):
            out.update(w for name in locale.months.get(context, {}).get(width, {}).values() for w in words(name))
    return frozenset(w for w in out if len(w) > 2)


def _languages(languages: Iterable[str] | None) -> tuple[str, ...]:
    extra = tuple(dict.fromkeys(lang.split("-")[0].lower() for lang in (languages or ()) if lang))
    return tuple(dict.fromkeys(DEFAULT_LANGUAGES + extra))


@lru_cache(maxsize=64)
def languages_months(languages: tuple[str, ...]) -> frozenset[str]:
    return frozenset().union(*(month_names(lang) for lang in languages))


@lru_cache(maxsize=64)
def languages_units(languages: tuple[str, ...]) -> dict[str, str]:
    merged: dict[str, str] = {}
    for lang in languages:
        for w, dim in unit_words(lang).items():
            merged.setdefault(w, dim)
    return merged


def is_currency_symbol(ch: str) -> bool:
    """True for a character of the Unicode category ``Sc`` ($, €, ৳, ₹ ...)."""
    return unicodedata.category(ch) == "Sc"


def unit_of(token: str, units: dict[str, str]) -> str | None:
    """The dimension of a unit word, allowing an inflection suffix (``Tagen`` for ``Tag``, ``দিনের`` for ``দিন``)."""
    token = unicodedata.normalize("NFC", token.lower())
    if token in units:
        return units[token]
    for cut in (1, 2, 3):
        stem_ = token[:-cut]
        if len(stem_) >= (2 if not token.isascii() else 3) and stem_ in units:
            return units[stem_]
    return None


# spelled-out numbers (language knowledge, not of any corpus): "five weeks", "zwei Wochen", "তিন দিন"
NUMBER_WORDS = frozenset(
    ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "fifteen",
     "twenty", "thirty", "forty", "fifty", "sixty", "hundred", "thousand", "half",
     "ein", "eine", "einen", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun", "zehn", "zwölf",
     "zwanzig", "dreißig", "hundert", "tausend", "halb",
     "এক", "দুই", "তিন", "চার", "পাঁচ", "ছয়", "সাত", "আট", "নয়", "দশ")
)  # fmt: skip


def _is_number(token: str) -> bool:
    return token.isdigit() or token in NUMBER_WORDS


def quantities(text: str, languages: Iterable[str] | None = None) -> set[str]:
    """Dimensions of the quantities stated in ``text``: a number with a unit word after it (at most one word
    between, "5 business days"), a currency symbol next to a number ("$20", "20 €"), a percent sign."""
    langs = _languages(languages)
    units = languages_units(langs)
    out: set[str] = set()
    if "%" in text:
        out.add(PERCENT)
    if _DIGITS.search(text) and any(is_currency_symbol(ch) for ch in text):
        out.add(MONEY)
    tokens = words(text)
    months = languages_months(langs)
    for i, here in enumerate(tokens):
        if here in months:
            out.add(DATE)
        if not _is_number(here):
            continue
        if len(here) == 4 and here.isascii() and here.isdigit() and 1000 <= int(here) <= 2199:
            out.add(DATE)
        for after in tokens[i + 1 : i + 1 + UNIT_REACH]:
            dim = unit_of(after, units)
            if dim is not None:
                out.add(dim)
                break
    if DATE in out:
        out.add(TIME)
    return out


def asked(question: str, languages: Iterable[str] | None = None) -> set[str]:
    """Kinds ``question`` asks about: the dimensions of quantities it states, and its interrogatives
    ("how long" a time, "how much" an amount, "who" a name, "where" a place, "is ..." yes or no)."""
    out = quantities(question, languages)
    out.update(kinds_asked(question))
    return out


def offers(text: str, kind: str, wanted: set[str], languages: Iterable[str] | None = None) -> bool:
    """True when a unit (its text and kind) offers an answer of a wanted kind."""
    if not wanted:
        return False
    if CODE in wanted and kind == "code":
        return True
    found = quantities(text, languages)
    if NUMBER in wanted and any(w.isdigit() or (w in NUMBER_WORDS and len(w) > 2) for w in words(text)):
        return True
    return bool(found & wanted)


__all__ = [
    "CODE",
    "DATE",
    "MONEY",
    "NUMBER",
    "NUMBER_WORDS",
    "PERCENT",
    "TIME",
    "asked",
    "is_currency_symbol",
    "month_names",
    "offers",
    "quantities",
    "languages_months",
    "languages_units",
    "unit_of",
    "unit_words",
]
