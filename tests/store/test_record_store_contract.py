"""The record half of the storage contract (``RecordStore``): traces and evaluation runs, on each backend.

Every test runs once on the embedded store and once on PostgreSQL (``each_store``, see
``tests/support/contract.py``). An owner is the API key that made a record: a read with an owner
sees only that key's records, a read without one (outside the service, or an admin) sees all.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.store.contract import RecordStore, StoreProtocol


def save_traces(store: RecordStore, owners: dict[str, str | None]) -> None:
    """Save one trace per ``{trace id: owner}``, in that order (so the last is the newest)."""
    for trace_id, owner in owners.items():
        store.save_trace(trace_id, {"trace_id": trace_id}, owner=owner)


def ids(records: list[dict[str, object]], key: str = "trace_id") -> list[object]:
    return [r[key] for r in records]


# -- traces ---------------------------------------------------------------------------------------


def test_a_saved_trace_loads_back_as_plain_json(each_store: StoreProtocol) -> None:
    each_store.save_trace("t1", {"query": "hello", "day": date(2024, 5, 1), "hits": [1, 2]})
    assert each_store.load_trace("t1") == {"query": "hello", "day": "2024-05-01", "hits": [1, 2]}
    assert each_store.load_trace("missing") is None


def test_traces_are_listed_newest_first_up_to_the_limit(each_store: StoreProtocol) -> None:
    assert each_store.traces() == []
    save_traces(each_store, {"t1": None, "t2": None, "t3": None})
    assert ids(each_store.traces()) == ["t3", "t2", "t1"]
    assert ids(each_store.traces(limit=2)) == ["t3", "t2"]
    with pytest.raises(ValueError, match="limit"):
        each_store.traces(limit=0)


def test_saving_a_trace_again_replaces_it_and_makes_it_the_newest(each_store: StoreProtocol) -> None:
    save_traces(each_store, {"t1": None, "t2": None})
    each_store.save_trace("t1", {"trace_id": "t1", "again": True})
    assert each_store.load_trace("t1") == {"trace_id": "t1", "again": True}
    assert ids(each_store.traces()) == ["t1", "t2"]


def test_only_the_newest_traces_are_kept(each_store: StoreProtocol) -> None:
    save_traces(each_store, {"t1": None, "t2": None, "t3": None})
    each_store.save_trace("t4", {"trace_id": "t4"}, keep=2)
    assert ids(each_store.traces()) == ["t4", "t3"] and each_store.load_trace("t1") is None
    each_store.save_trace("t5", {"trace_id": "t5"}, keep=None)
    assert ids(each_store.traces()) == ["t5", "t4", "t3"]


def test_an_empty_trace_id_or_a_keep_below_one_is_refused(each_store: StoreProtocol) -> None:
    with pytest.raises(ValueError, match="trace_id"):
        each_store.save_trace("", {})
    with pytest.raises(ValueError, match="keep"):
        each_store.save_trace("t1", {}, keep=0)
    assert each_store.traces() == []


def test_an_owner_sees_only_its_own_traces(each_store: StoreProtocol) -> None:
    save_traces(each_store, {"a1": "key-a", "b1": "key-b", "n1": None, "a2": "key-a"})
    assert ids(each_store.traces(owner="key-a")) == ["a2", "a1"]
    assert ids(each_store.traces(owner="key-b")) == ["b1"]
    assert each_store.traces(owner="key-c") == []
    assert each_store.load_trace("a1", owner="key-a") == {"trace_id": "a1"}
    assert each_store.load_trace("a1", owner="key-b") is None and each_store.load_trace("n1", owner="key-a") is None
    assert ids(each_store.traces()) == ["a2", "n1", "b1", "a1"]  # without an owner: every trace


# -- evaluation runs ------------------------------------------------------------------------------


def test_a_saved_eval_run_loads_back_with_its_id_time_and_build(each_store: StoreProtocol, corpus: Path) -> None:
    before = each_store.save_eval_run({"metrics": {"mrr": 0.25}})
    build = ingest_folder(each_store, corpus, ChunkingConfig()).build_id
    run_id = each_store.save_eval_run({"metrics": {"mrr": 0.5}, "day": date(2024, 5, 1)})
    saved = each_store.load_eval_run(run_id)
    assert saved is not None and saved["id"] == run_id and saved["created_at"]
    assert {k: saved[k] for k in ("metrics", "day", "build_id")} == {
        "metrics": {"mrr": 0.5},
        "day": "2024-05-01",
        "build_id": build,
    }
    unbuilt = each_store.load_eval_run(before)
    assert unbuilt is not None and unbuilt["build_id"] is None  # saved before any build
    assert each_store.load_eval_run(run_id + 1000) is None


def test_an_eval_run_keeps_the_build_it_names(each_store: StoreProtocol, corpus: Path) -> None:
    first = ingest_folder(each_store, corpus, ChunkingConfig()).build_id
    ingest_folder(each_store, corpus, ChunkingConfig(name="fixed", size=50))
    saved = each_store.load_eval_run(each_store.save_eval_run({"build_id": first}))
    assert saved is not None and saved["build_id"] == first


def test_eval_runs_are_listed_oldest_first(each_store: StoreProtocol) -> None:
    assert each_store.eval_runs() == []
    run_ids = [each_store.save_eval_run({"n": n}) for n in range(3)]
    runs = each_store.eval_runs()
    assert ids(runs, "id") == run_ids == sorted(run_ids) and ids(runs, "n") == [0, 1, 2]
    assert runs == [each_store.load_eval_run(i) for i in run_ids]


def test_an_owner_sees_only_its_own_eval_runs(each_store: StoreProtocol) -> None:
    a1 = each_store.save_eval_run({"n": 1}, owner="key-a")
    b1 = each_store.save_eval_run({"n": 2}, owner="key-b")
    n1 = each_store.save_eval_run({"n": 3})
    a2 = each_store.save_eval_run({"n": 4}, owner="key-a")
    assert ids(each_store.eval_runs(owner="key-a"), "id") == [a1, a2]
    assert ids(each_store.eval_runs(owner="key-b"), "id") == [b1]
    assert each_store.eval_runs(owner="key-c") == []
    assert each_store.load_eval_run(a1, owner="key-b") is None and each_store.load_eval_run(n1, owner="key-a") is None
    found = each_store.load_eval_run(b1, owner="key-b")
    assert found is not None and found["n"] == 2
    assert ids(each_store.eval_runs(), "id") == [a1, b1, n1, a2]  # without an owner: every run
