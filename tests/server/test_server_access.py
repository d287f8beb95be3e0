"""Keys, scopes and visibility, without HTTP: narrowing, coverage, stored records, settings files."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from evidencedesk.config import ConfigError
from evidencedesk.documents import Metadata
from evidencedesk.retrieval.scope import Scope
from evidencedesk.server.access import AccessError, Caller, KeyRing, covers, record_visible, request_scope
from evidencedesk.server.settings import digest, load_service_settings, no_keys_file, parse_service_settings
from tests.support.server import PUBLIC_KEY

PUBLIC = Caller("public", Scope())
STAFF = Caller("staff", Scope(audiences=frozenset({"public", "staff"})))
AUDITOR = Caller("auditor", Scope.everything())


def test_request_scope_narrows_and_never_widens() -> None:
    assert request_scope(PUBLIC, None) == Scope()
    wider = request_scope(PUBLIC, {"audiences": ["public", "staff"], "statuses": ["current", "superseded"]})
    assert wider.audiences == {"public"} and wider.statuses == {"current"}
    assert request_scope(STAFF, {}).audiences == {"public", "staff"}
    assert request_scope(STAFF, {"tenants": ["kestrel"]}).audiences == {"public", "staff"}  # no field, no limit
    assert request_scope(STAFF, {"audiences": ["staff"]}).audiences == {"staff"}
    outside = request_scope(PUBLIC, {"audiences": ["staff"]})  # the intersection is empty: nothing passes
    assert not outside.allows(Metadata(audience="staff")) and not outside.allows(Metadata(audience="public"))
    assert request_scope(PUBLIC, {"check_validity": False}).check_validity is True


def test_request_dates_need_a_key_that_may_choose_them() -> None:
    with pytest.raises(AccessError) as err:
        request_scope(PUBLIC, {"valid_at": "2025-01-01"})
    assert err.value.status == 403
    chooser = Caller("chooser", Scope(), choose_date=True)
    assert request_scope(chooser, {"valid_at": "2025-01-01"}).valid_at == date(2025, 1, 1)
    assert request_scope(AUDITOR, {"valid_at": date(2024, 5, 1)}).check_validity is True
    with pytest.raises(ValueError, match="valid_at"):
        request_scope(chooser, {"valid_at": "yesterday"})
    with pytest.raises(ValueError, match="unknown"):
        request_scope(PUBLIC, {"colour": ["red"]})


def test_covers() -> None:
    assert covers(STAFF.scope, Scope())
    assert not covers(Scope(), STAFF.scope)
    assert covers(Scope.everything(), STAFF.scope)
    assert not covers(Scope(), Scope(langs=None, check_validity=False))
    assert not covers(Scope(langs=frozenset({"en"})), Scope())  # any language is wider than English
    assert covers(Scope(langs=frozenset({"en", "bn"})), Scope(langs=frozenset({"bn"})))
    assert not covers(Scope(), Scope(valid_at=date(2020, 1, 1)))


def _trace(scope: Scope, audience: str = "public") -> dict:
    cand = {"chunk_id": "d:c0", "doc_id": "d", "metadata": {"status": "current", "audience": audience}}
    return {"scope": scope.to_dict(), "retrieved": [cand], "context_candidates": [cand], "context": ["d:c0"]}


def test_record_visible_needs_a_covered_scope_and_allowed_chunks() -> None:
    assert record_visible(Scope(), _trace(Scope()))
    # Made under a wider scope, even if every chunk it holds happens to be public: hidden.
    assert not record_visible(Scope(), _trace(STAFF.scope))
    # Claims a public scope but holds a staff chunk: hidden.
    assert not record_visible(Scope(), _trace(Scope(), audience="staff"))
    assert not record_visible(Scope(), {"context": []})  # no recorded scope: never shown
    assert not record_visible(Scope(), _trace(Scope()), chunk_ok=lambda cid: False)


def test_keyring_compares_digests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVD_TEST_KEY", "env-key-0123456789abc")
    settings = parse_service_settings(
        {
            "allow_anonymous": False,
            "keys": [
                {"name": "a", "key": PUBLIC_KEY},
                {"name": "b", "key_env": "EVD_TEST_KEY", "scope": {"audiences": None}},
                {"name": "c", "key_sha256": digest("hashed-key-0123456789").upper(), "ingest": True},
            ],
        }
    )
    ring = KeyRing(settings)
    assert ring.identify(PUBLIC_KEY).name == "a"
    assert ring.identify(" env-key-0123456789abc ").scope.audiences is None
    assert ring.identify("hashed-key-0123456789").ingest is True
    for bad in (None, "", "nope"):
        with pytest.raises(AccessError) as err:
            ring.identify(bad)
        assert err.value.status == 401


def test_a_keyless_ring_serves_any_well_formed_key_as_anonymous() -> None:
    keyless = KeyRing(no_keys_file())
    assert keyless.keyless
    for placeholder in (None, "sk-no-key-required", "none", PUBLIC_KEY):
        assert keyless.identify(placeholder) is keyless.anonymous
    with pytest.raises(AccessError, match="malformed API key: blank; send a key"):
        keyless.identify("  ")
    # with keys configured, an unknown key is refused and the refusal says what to send
    keyed = KeyRing(parse_service_settings({"allow_anonymous": True, "keys": [{"name": "a", "key": PUBLIC_KEY}]}))
    assert not keyed.keyless
    with pytest.raises(AccessError) as err:
        keyed.identify("sk-no-key-required")
    assert err.value.message == (
        "unknown API key: use a key from the service's keys file or send none for the anonymous scope"
    )
    closed = KeyRing(parse_service_settings({"allow_anonymous": False}))  # no keys and no anonymous: nobody
    assert not closed.keyless
    with pytest.raises(AccessError, match="an API key is required; send a key from the service's keys file as "
                       "X-API-Key or Authorization: Bearer KEY"):  # fmt: skip
        closed.identify(None)
    with pytest.raises(AccessError) as err:
        closed.identify("sk-no-key-required")
    assert err.value.status == 401 and err.value.message == "unknown API key: use a key from the service's keys file"


def test_settings_errors_name_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="exactly one of key"):
        parse_service_settings({"keys": [{"name": "x"}]})
    with pytest.raises(ConfigError, match="keys.0.key"):
        parse_service_settings({"keys": [{"name": "x", "key": "short"}]})
    with pytest.raises(ConfigError, match="duplicate name"):
        parse_service_settings({"keys": [{"name": "x", "key": PUBLIC_KEY}, {"name": "x", "key": PUBLIC_KEY + "1"}]})
    with pytest.raises(ConfigError, match="audiences: an empty list"):
        parse_service_settings({"anonymous_scope": {"audiences": []}})
    with pytest.raises(ConfigError, match="colour: unknown key"):
        parse_service_settings({"colour": "red"})
    monkeypatch.delenv("EVD_UNSET_KEY", raising=False)
    with pytest.raises(ConfigError, match="EVD_UNSET_KEY is unset"):
        parse_service_settings({"keys": [{"name": "x", "key_env": "EVD_UNSET_KEY"}]})
    path = tmp_path / "keys.yaml"
    path.write_text("ingest_root: docs\nlabels: l.jsonl\nallow_anonymous: false\n", encoding="utf-8")
    loaded = load_service_settings(path)
    assert loaded.ingest_root == tmp_path / "docs" and loaded.labels_path() == tmp_path / "l.jsonl"
    assert not loaded.allow_anonymous
    with pytest.raises(ConfigError, match="not found"):
        load_service_settings(tmp_path / "missing.yaml")
    assert load_service_settings(None).allow_anonymous
