"""Store locations: is it a PostgreSQL URL, and the URL as messages may show it (no password).
This module imports nothing from the package, so every layer and face can use it."""

from __future__ import annotations

from urllib.parse import urlsplit

POSTGRES_SCHEMES = ("postgresql", "postgres")


def is_postgres_url(target: object) -> bool:
    """True for ``postgresql://...`` and ``postgres://...``."""
    return isinstance(target, str) and urlsplit(target).scheme in POSTGRES_SCHEMES


def redact_url(location: str) -> str:
    """``location`` for messages: a URL with its password replaced by ``***``; anything else as given."""
    parts = urlsplit(location)
    if parts.password is None:
        return location
    return parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@")).geturl()


__all__ = ["POSTGRES_SCHEMES", "is_postgres_url", "redact_url"]
