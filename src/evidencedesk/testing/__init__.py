"""Test suites a third party reuses: the storage contract as pytest mixins (``store_contract``).

Nothing in evidencedesk imports this package; a backend's own tests do (it needs pytest).
"""

from evidencedesk.testing.store_contract import RecordStoreContract, StoreContract

__all__ = ["RecordStoreContract", "StoreContract"]
