"""IngestError: why one file could not be turned into a Document (defined with the other errors)."""

from evidencedesk.errors import IngestError

__all__ = ["IngestError"]
