"""Typed results of the Desk: what ask, search, ingest and eval return, with ``to_dict()`` giving the public JSON."""
