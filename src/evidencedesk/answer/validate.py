"""Validation: check every citation and every sentence before an answer is shown.

Two checks in code, applied to a generator's raw output:

1. Citations. Each cited id is ``shown`` (in the context the generator saw), ``not_shown``
   (exists in the index but the generator never saw it) or ``unknown`` (exists nowhere). Only
   shown ids can support anything; the others become ``citation/unsupported_answer`` findings and
   are removed from the answer.
2. Support. Each sentence must be backed by the shown chunks it cites: every number in it must
   appear there, and at least ``min_share`` (0.6) of its stemmed content words. A sentence that
   fails is dropped and flagged (``generation/unsupported_answer``); a sentence that cites nothing
   is flagged as ``citation/unsupported_answer``.

If no supported sentence is left, the validated answer is an abstention that says what is missing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple, TypedDict

from evidencedesk.answer.citations import segments
from evidencedesk.answer.context import shown_text
from evidencedesk.answer.generators.base import Generation
from evidencedesk.answer.prompt import ABSTAIN_PREFIX, is_abstention
from evidencedesk.answer.units import split_sentences
from evidencedesk.retrieval.candidates import Candidate
from evidencedesk.text import STOPWORDS, content_words, numbers, share_present, stem, words
from evidencedesk.trace import Finding

MIN_SHARE = 0.6
# punctuation that opens a stretch of answer text and belongs to the sentence before the citation
LEADING_PUNCT = re.compile(r"^[ \t]*([.,;:!?)\]]+)")
SHOWN, NOT_SHOWN, UNKNOWN = "shown", "not_shown", "unknown"


class SentenceCheckDict(TypedDict):
    """A SentenceCheck as JSON."""

    sentence: str
    cited: list[str]
    supported: bool
    why: str


class ValidatedDict(TypedDict):
    """A ValidatedAnswer as JSON."""

    answer: str
    citations: list[str]
    abstained: bool
    reason: str
    sentences: list[SentenceCheckDict]
    flagged: list[SentenceCheckDict]
    citation_status: dict[str, str]
    findings: list[dict[str, str]]
    raw: str


class SentenceCheck(NamedTuple):
    """One answer sentence, the ids it cites, whether its shown cited chunks support it, and why."""

    sentence: str
    cited: tuple[str, ...]
    supported: bool
    why: str

    def to_dict(self) -> SentenceCheckDict:
        return {"sentence": self.sentence, "cited": list(self.cited), "supported": self.supported, "why": self.why}


@dataclass(frozen=True)
class ValidatedAnswer:
    """The answer that may be shown: supported sentences only, citing only chunks that were shown."""

    answer: str
    cited: tuple[str, ...]
    abstained: bool
    reason: str = ""
    sentences: list[SentenceCheck] = field(default_factory=list)
    citation_status: dict[str, str] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    raw: str = ""  # the generator's answer before validation

    @property
    def flagged(self) -> list[SentenceCheck]:
        """Sentences that were dropped because their cited chunks do not support them."""
        return [s for s in self.sentences if not s.supported]

    def to_dict(self) -> ValidatedDict:
        return {
            "answer": self.answer,
            "citations": list(self.cited),
            "abstained": self.abstained,
            "reason": self.reason,
            "sentences": [s.to_dict() for s in self.sentences],
            "flagged": [s.to_dict() for s in self.flagged],
            "citation_status": dict(self.citation_status),
            "findings": [f.to_dict() for f in self.findings],
            "raw": self.raw,
        }


def _exists(all_chunk_ids: Callable[[str], bool] | Container[str]) -> Callable[[str], bool]:
    if callable(all_chunk_ids) and not isinstance(all_chunk_ids, Container):
        return all_chunk_ids
    return lambda cid: cid in all_chunk_ids


def _missing_words(sentence: str, have: set[str]) -> list[str]:
    out: dict[str, None] = {}
    for w in words(sentence):
        if w in STOPWORDS or w.isdigit() or (w.isascii() and len(w) < 2):
            continue
        if stem(w) not in have:
            out.setdefault(w, None)
    return list(out)


def check_support(sentence: str, texts: Iterable[str], min_share: float = MIN_SHARE) -> tuple[bool, str, list[str]]:
    """``(supported, why, missing)`` for one sentence against the texts of its shown cited chunks."""
    joined = "\n".join(texts)
    have_numbers = set(numbers(joined))
    have_words = set(content_words(joined))
    lost_numbers = [x for x in numbers(sentence) if x not in have_numbers]
    needed = content_words(sentence)
    share = share_present(needed, have_words)
    if lost_numbers:
        return False, f"number(s) {', '.join(lost_numbers)} not in the cited chunk(s)", lost_numbers
    if share < min_share:
        missing = _missing_words(sentence, have_words)
        why = f"only {share:.0%} of its content words are in the cited chunk(s) (needs {min_share:.0%})"
        return False, why, missing
    return True, f"all numbers and {share:.0%} of content words found", []


def checkable(sentence: str) -> bool:
    """Whether ``sentence`` has a content word or a number to check against its citations."""
    return bool(content_words(sentence) or numbers(sentence))


def validate(
    generation: Generation,
    context_candidates: list[Candidate],
    all_chunk_ids: Callable[[str], bool] | Container[str],
    min_share: float = MIN_SHARE,
) -> ValidatedAnswer:
    """Check ``generation`` against the candidates it was shown; ``all_chunk_ids`` says which ids exist."""
    if not 0.0 < min_share <= 1.0:
        raise ValueError(f"min_share: must be in (0, 1], got {min_share}")
    raw = generation.answer
    if generation.abstained or is_abstention(raw):
        reason = generation.reason or raw.strip()[len(ABSTAIN_PREFIX) :].strip() or "the generator abstained"
        return ValidatedAnswer(raw.strip(), (), True, reason, raw=raw)
    exists = _exists(all_chunk_ids)
    shown = {c.chunk.id: shown_text(c.chunk) for c in context_candidates}
    findings: list[Finding] = []
    status: dict[str, str] = {}
    for cid in (*generation.cited, *(cid for seg in segments(raw) for cid in seg.cited)):
        if cid in status:
            continue
        status[cid] = SHOWN if cid in shown else NOT_SHOWN if exists(cid) else UNKNOWN
        if status[cid] == NOT_SHOWN:
            findings.append(Finding("citation", "unsupported_answer", f"cited {cid} exists but was not shown"))
        elif status[cid] == UNKNOWN:
            findings.append(Finding("citation", "unsupported_answer", f"cited {cid} exists nowhere in the index"))
    checks: list[SentenceCheck] = []
    kept_parts: list[str] = []
    kept_ids: dict[str, None] = {}
    missing: dict[str, None] = {}
    last_kept = False
    for seg in segments(raw):
        usable = tuple(cid for cid in seg.cited if status.get(cid) == SHOWN)
        lead = LEADING_PUNCT.match(seg.text)
        if lead and last_kept:  # punctuation after a citation ("... [id].") stays with the sentence before it
            kept_parts[-1] += lead.group(1)
        last_kept = False
        kept: list[str] = []
        for sentence in split_sentences(seg.text[lead.end() if lead else 0 :]):
            if not checkable(sentence):
                if any(ch.isalnum() for ch in sentence):
                    checks.append(SentenceCheck(sentence, seg.cited, True, "nothing to check"))
                    kept.append(sentence)
                continue
            if not seg.cited:
                checks.append(SentenceCheck(sentence, (), False, "cites no chunk"))
                findings.append(Finding("citation", "unsupported_answer", f"sentence cites no chunk: {sentence!r}"))
                missing.update(dict.fromkeys(["a citation"]))
                continue
            if not usable:
                checks.append(SentenceCheck(sentence, seg.cited, False, "cites no chunk that was shown"))
                missing.update(dict.fromkeys(["a chunk that was shown"]))
                continue
            ok, why, lacking = check_support(sentence, (shown[c] for c in usable), min_share)
            checks.append(SentenceCheck(sentence, seg.cited, ok, why))
            if ok:
                kept.append(sentence)
            else:
                missing.update(dict.fromkeys(lacking))
                findings.append(
                    Finding(
                        "generation",
                        "unsupported_answer",
                        f"{sentence!r} is not supported by {', '.join(usable)}: {why}",
                    )
                )
        if any(checkable(s) for s in kept):
            sep = "\n" if "\n" in seg.text.strip() else " "
            kept_parts.append(sep.join(kept) + " " + " ".join(f"[{c}]" for c in usable))
            kept_ids.update(dict.fromkeys(usable))
            last_kept = True
    if not kept_parts:
        absent = ", ".join(missing) or "a supported statement"
        answer = f"The documents shown do not support an answer; missing from the cited chunks: {absent}."
        reason = f"no sentence of the answer is supported by the chunks it cites (missing: {absent})"
        return ValidatedAnswer(answer, (), True, reason, checks, status, findings, raw)
    joiner = "\n" if "\n" in raw.strip() else " "
    return ValidatedAnswer(joiner.join(kept_parts), tuple(kept_ids), False, "", checks, status, findings, raw)


DROP, ABSTAIN = "drop", "abstain"
ON_UNSUPPORTED = (DROP, ABSTAIN)


def enforce(checked: ValidatedAnswer, on_unsupported: str = DROP) -> ValidatedAnswer:
    """Apply the policy for unsupported content to a validated answer.

    ``drop`` returns it as validated (unsupported sentences removed and flagged). ``abstain``
    replaces the whole answer with an abstention when any sentence was unsupported or any citation
    pointed outside the context shown, keeping the checks and findings that say why.
    """
    if on_unsupported not in ON_UNSUPPORTED:
        raise ValueError(f"on_unsupported: must be one of {', '.join(ON_UNSUPPORTED)}, got {on_unsupported!r}")
    if on_unsupported == DROP or checked.abstained:
        return checked
    bad_ids = [cid for cid, status in checked.citation_status.items() if status != SHOWN]
    if not checked.flagged and not bad_ids:
        return checked
    what = [f"{len(checked.flagged)} unsupported sentence(s)"] if checked.flagged else []
    what += [f"citation(s) of chunks not shown: {', '.join(bad_ids)}"] if bad_ids else []
    reason = f"the answer held {' and '.join(what)} (on_unsupported: abstain)"
    answer = "The documents shown do not support the whole answer, so none is given."
    return ValidatedAnswer(
        answer, (), True, reason, checked.sentences, checked.citation_status, checked.findings, checked.raw
    )


__all__ = [
    "ABSTAIN",
    "DROP",
    "LEADING_PUNCT",
    "MIN_SHARE",
    "ON_UNSUPPORTED",
    "enforce",
    "NOT_SHOWN",
    "SHOWN",
    "UNKNOWN",
    "SentenceCheck",
    "ValidatedAnswer",
    "check_support",
    "checkable",
    "validate",
]
