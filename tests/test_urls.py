"""Store locations: PostgreSQL URLs are recognised, and messages never show a password."""

from __future__ import annotations

from evidencedesk.urls import is_postgres_url, redact_url


def test_a_password_never_reaches_a_message() -> None:
    assert redact_url("postgresql://ana:s3cret@db:5432/desk") == "postgresql://ana:***@db:5432/desk"
    assert redact_url("postgresql://ana@db/desk") == "postgresql://ana@db/desk"
    assert redact_url("stores/main") == "stores/main"  # a folder, as given


def test_postgres_urls() -> None:
    assert is_postgres_url("postgresql://db/x") and is_postgres_url("postgres://db/x")
    assert not is_postgres_url("sqlite:///x") and not is_postgres_url("folder") and not is_postgres_url(None)
