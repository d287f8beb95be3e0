"""Talking to a chat model: the messages it is sent, and its reply read into answer, cited ids or abstention.

The parser records what the model wrote and nothing more. A citation of an id the model was never
shown is kept as written: validation, not the parser, decides which citations stand.
"""

from __future__ import annotations

import re

from evidencedesk.answer.citations import cited_ids
from evidencedesk.answer.context import AssembledContext, render
from evidencedesk.answer.generators.base import Generation
from evidencedesk.answer.prompt import ABSTAIN_PREFIX, build_prompt
from evidencedesk.errors import GenerationError
from evidencedesk.retrieval.candidates import Candidate

ABSTAIN_ANSWER = "The documents shown do not support an answer."


# ``INSUFFICIENT: reason`` (or the bare word alone) at the start of a line, allowing Markdown
# emphasis or a quote around the word.
_ABSTAIN = re.compile(
    rf"^[\s>*_`\"']*{re.escape(ABSTAIN_PREFIX.rstrip(':'))}[\s*_`\"']*(?::(?P<reason>.*)|$)",
    re.IGNORECASE | re.MULTILINE,
)


def chat_messages(question: str, context: list[Candidate]) -> list[dict[str, str]]:
    """The chat messages for ``context`` shown in the order given (``prompt.build_prompt``'s layout)."""
    return build_prompt(question, AssembledContext(list(context), render(context)))


def abstention_reason(text: str) -> str | None:
    """The reason after ``INSUFFICIENT:`` when a line of the reply starts with it, else None."""
    match = _ABSTAIN.search(text)
    if match is None:
        return None
    reason = (match.group("reason") or "").strip().strip("*_`\"'").strip()
    return reason or "the model replied INSUFFICIENT without saying what is missing"


def parse_reply(text: str) -> Generation:
    """Turn a model's raw reply into a :class:`Generation`.

    A reply with a line starting ``INSUFFICIENT:`` is an abstention (even if it also says more: a
    model that says the context is insufficient has not given a supported answer). Otherwise the
    answer is the reply with surrounding whitespace removed, citations left in place, and
    ``cited`` lists every bracketed chunk id exactly as the model wrote it
    (``citations.cited_ids``: ``[doc:c1]``, ``[doc:c1, doc:c2]``). An empty reply is an
    abstention too. An abstention's answer is the fixed ``ABSTAIN_ANSWER``; the model's own words
    about what is missing go to ``reason``.
    """
    raw = text
    reason = abstention_reason(text)
    if reason is not None:
        return Generation(answer=ABSTAIN_ANSWER, cited=(), abstained=True, reason=reason, raw=raw)
    answer = text.strip()
    if not answer:
        return Generation(ABSTAIN_ANSWER, (), abstained=True, reason="the model returned an empty reply", raw=raw)
    return Generation(answer=answer, cited=cited_ids(answer), abstained=False, reason="", raw=raw)


__all__ = ["ABSTAIN_ANSWER", "GenerationError", "abstention_reason", "chat_messages", "cited_ids", "parse_reply"]
