"""Both stores implement the storage contract; the capability protocols tell them apart.

The assignments to ``StoreProtocol`` are checked by ``mypy --strict`` in ``make test``; the
``isinstance`` checks run here, on the real stores.
"""

from __future__ import annotations

from pathlib import Path

from evidencedesk.store import Store
from evidencedesk.store.contract import HoldsSnapshots, HoldsVectors, SearchesInside, StoreProtocol
from tests.support.contract import round_trip


def test_embedded_store_meets_the_contract(tmp_path: Path, corpus: Path) -> None:
    with Store(tmp_path / "store") as store:
        contract: StoreProtocol = store
        round_trip(contract, corpus)
        assert isinstance(store, HoldsSnapshots)
        assert store.snapshot_dir == tmp_path / "store" / "snapshot"
        assert not isinstance(store, SearchesInside)
        assert not isinstance(store, HoldsVectors)
