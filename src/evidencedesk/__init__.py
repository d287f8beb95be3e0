"""evidencedesk: answer questions from a folder of documents with citations, and find where it fails."""

__version__ = "0.1.0"
