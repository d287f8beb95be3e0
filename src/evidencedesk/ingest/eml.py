"""E-mail messages (.eml), read with the standard library's ``email`` package.

The body is the message's ``text/plain`` part, else its ``text/html`` part converted like an HTML file;
attachments are left out. Title: metadata ``title``, else the Subject, else the file stem. The sender
and the date are kept as extra metadata (``from``, ``sent``). The whole body is one untitled section.
"""

from __future__ import annotations

from collections.abc import Mapping
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import parsedate_to_datetime

from selectolax.lexbor import LexborHTMLParser

from evidencedesk.documents import Document
from evidencedesk.ingest.errors import IngestError
from evidencedesk.ingest.html import html_to_markdown
from evidencedesk.ingest.metadata import declared
from evidencedesk.ingest.raw import content_hash
from evidencedesk.ingest.text import whole_section


def _body(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    content = part.get_content()
    if not isinstance(content, str):
        return ""
    if part.get_content_subtype() == "html":
        return html_to_markdown(LexborHTMLParser(content))
    return content.replace("\r\n", "\n").replace("\r", "\n")


def _headers(message: EmailMessage) -> dict[str, object]:
    found: dict[str, object] = {}
    subject = " ".join(str(message.get("subject", "")).split())
    if subject:
        found["title"] = subject
    sender = str(message.get("from", "")).strip()
    if sender:
        found["from"] = sender
    try:
        sent = parsedate_to_datetime(str(message.get("date", "")))
    except (TypeError, ValueError):
        sent = None
    if sent is not None:
        found["sent"] = sent.date().isoformat()
    return found


def parse_eml(raw: bytes, rel: str, fields: Mapping[str, object] | None = None) -> Document:
    """Parse an e-mail file's bytes; ``rel`` is its path relative to the ingested folder, ``fields``
    metadata declared outside the file (it wins over the headers)."""
    try:
        message = BytesParser(policy=policy.default).parsebytes(raw)
        text = _body(message)
    except (LookupError, ValueError) as exc:
        raise IngestError(rel, f"not a readable e-mail: {exc}") from None
    if not text.strip():
        raise IngestError(rel, "empty file: the message has no text body")
    info = declared(rel, {**_headers(message), **(fields or {})})
    return info.document(rel, "email", text, content_hash(raw), whole_section(text))
