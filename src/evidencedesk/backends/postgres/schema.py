"""The PostgreSQL schema of the scale-out store, as numbered migrations applied in order.

Everything lives in one PostgreSQL schema (``evidencedesk`` unless told otherwise), so several
stores can share a database. ``schema_migrations`` records each applied version; opening a store
applies the missing ones under an advisory lock, and refuses a database newer than this code.

Tables: ``documents`` and ``chunks`` (the system of record, metadata as columns), ``chunk_terms``
(the BM25 side: raw term frequencies, length, distinct term ids and the encoded ``sparsevec``),
``vocab`` (term ids and document frequencies), ``bm25_stats`` (chunk count, total length and the
settings the weights were encoded with), ``chunk_vectors`` (dense vectors, typed to the
embedder's dimension when first used), ``builds``, ``traces``, ``eval_runs`` and ``settings``.
``chunk_terms`` and ``chunk_vectors`` copy the scope columns of their chunk, so a search filters
one table in its WHERE clause. ``vocab.df`` and ``bm25_stats`` stay equal to what ``chunk_terms``
holds: a trigger subtracts whatever a statement (or cascade) removes, and the writer, the only one
to add term rows, adds its own counts before its transaction ends.
"""

from __future__ import annotations

import psycopg
from psycopg import sql

from evidencedesk.errors import PgStoreError
from evidencedesk.store.tenant_ids import build_row, migration_build, renames

SCHEMA_VERSION = 4
DEFAULT_SCHEMA = "evidencedesk"

_SCOPE_COLUMNS = """
    doc_id text COLLATE "C" NOT NULL,
    status text NOT NULL,
    audience text NOT NULL,
    lang text NOT NULL,
    tenant text NOT NULL,
    valid_from date,
    valid_to date"""

# the metadata of a document and of each of its chunks: the whole mapping, and the scope fields as columns
_METADATA_COLUMNS = """metadata jsonb NOT NULL,
    status text NOT NULL,
    valid_from date,
    valid_to date,
    audience text NOT NULL,
    lang text NOT NULL,
    tenant text NOT NULL"""

_V1 = f"""
CREATE TABLE settings (key text PRIMARY KEY, value jsonb NOT NULL);
CREATE TABLE builds (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    created_at text NOT NULL,
    chunking jsonb NOT NULL,
    chunking_hash text NOT NULL,
    n_documents integer NOT NULL,
    n_chunks integer NOT NULL,
    report jsonb NOT NULL
);
CREATE TABLE documents (
    id text COLLATE "C" PRIMARY KEY,
    path text NOT NULL,
    format text NOT NULL,
    title text NOT NULL,
    content_hash text NOT NULL,
    chunking_hash text NOT NULL,
    build_id bigint,
    {_METADATA_COLUMNS},
    sections jsonb NOT NULL,
    text text NOT NULL,
    first_line integer NOT NULL
);
CREATE TABLE chunks (
    id text COLLATE "C" PRIMARY KEY,
    doc_id text COLLATE "C" NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    n integer NOT NULL,
    text text NOT NULL,
    kind text NOT NULL,
    heading_path jsonb NOT NULL,
    first_line integer NOT NULL,
    last_line integer NOT NULL,
    parent_id text,
    parent_text text,
    {_METADATA_COLUMNS},
    text_hash text NOT NULL
);
CREATE INDEX chunks_doc ON chunks (doc_id, n);
CREATE TABLE vocab (
    id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    term text COLLATE "C" NOT NULL UNIQUE,
    df integer NOT NULL DEFAULT 0
);
CREATE TABLE bm25_stats (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    n_chunks bigint NOT NULL DEFAULT 0,
    total_length bigint NOT NULL DEFAULT 0,
    k1 double precision NOT NULL DEFAULT 1.5,
    b double precision NOT NULL DEFAULT 0.75,
    tokenizer jsonb,
    encoded_avgdl double precision
);
INSERT INTO bm25_stats DEFAULT VALUES;
CREATE TABLE chunk_terms (
    chunk_id text COLLATE "C" PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,{_SCOPE_COLUMNS},
    dl integer NOT NULL,
    terms integer[] NOT NULL,
    tfs integer[] NOT NULL,
    weights sparsevec
) WITH (toast_tuple_target = 8160);  -- keep term rows inline: a search reads them all, detoasting is slow
CREATE INDEX chunk_terms_terms ON chunk_terms USING gin (terms);
CREATE TABLE chunk_vectors (
    chunk_id text COLLATE "C" PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,{_SCOPE_COLUMNS},
    embedding vector NOT NULL
) WITH (toast_tuple_target = 8160);
CREATE TABLE traces (
    id text PRIMARY KEY,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    created_at text NOT NULL,
    data jsonb NOT NULL
);
CREATE TABLE eval_runs (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    created_at text NOT NULL,
    build_id bigint,
    data jsonb NOT NULL
);

-- BM25 document side: tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)) per term, as a sparsevec.
CREATE FUNCTION bm25_weights(terms integer[], tfs integer[], dl integer, k1 float8, b float8, avgdl float8,
                             dim integer) RETURNS sparsevec
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT ('{{' || coalesce(string_agg(u.t::text || ':' || (
        u.tf::float8 * (k1 + 1) / (u.tf::float8 + k1 * (1 - b + b * (
            CASE WHEN avgdl > 0 THEN dl::float8 / avgdl ELSE 1 END))))::text, ',' ORDER BY u.t), '')
        || '}}/' || dim)::sparsevec
    FROM unnest(terms, tfs) AS u(t, tf)
$$;

CREATE FUNCTION chunk_terms_added() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE bm25_stats SET n_chunks = n_chunks + s.n, total_length = total_length + s.len
    FROM (SELECT count(*) AS n, coalesce(sum(dl), 0) AS len FROM added) AS s;
    UPDATE vocab v SET df = v.df + d.n
    FROM (SELECT t, count(*) AS n FROM added, unnest(added.terms) AS t GROUP BY t) AS d WHERE v.id = d.t;
    RETURN NULL;
END $$;
CREATE FUNCTION chunk_terms_removed() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE bm25_stats SET n_chunks = n_chunks - s.n, total_length = total_length - s.len
    FROM (SELECT count(*) AS n, coalesce(sum(dl), 0) AS len FROM removed) AS s;
    UPDATE vocab v SET df = v.df - d.n
    FROM (SELECT t, count(*) AS n FROM removed, unnest(removed.terms) AS t GROUP BY t) AS d WHERE v.id = d.t;
    RETURN NULL;
END $$;
CREATE TRIGGER chunk_terms_insert AFTER INSERT ON chunk_terms
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION chunk_terms_added();
CREATE TRIGGER chunk_terms_delete AFTER DELETE ON chunk_terms
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION chunk_terms_removed();
"""

# Version 2: traces and evaluation runs remember the API key that made them, and row-level security
# keyed by tenant guards the tables holding document text, as a second wall under each query's WHERE
# clause. A session that sets ``evidencedesk.tenants`` (a JSON array of tenant names)
# reads and writes only those tenants' rows; a session that leaves it unset or empty is not limited.
# FORCE makes the policies bind the tables' owner too; superusers and BYPASSRLS roles pass regardless,
# so a deployment that wants the wall connects as an ordinary role.
_TENANT_TABLES = ("documents", "chunks", "chunk_terms", "chunk_vectors")
_TENANT_CHECK = (
    "coalesce(current_setting('evidencedesk.tenants', true), '') = '' "
    "OR tenant IN (SELECT jsonb_array_elements_text(current_setting('evidencedesk.tenants', true)::jsonb))"
)
_V2 = """
ALTER TABLE traces ADD COLUMN owner text;
ALTER TABLE eval_runs ADD COLUMN owner text;
CREATE INDEX traces_owner ON traces (owner);
""" + "".join(
    f"""
ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
ALTER TABLE {table} FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_rows ON {table} USING ({_TENANT_CHECK}) WITH CHECK ({_TENANT_CHECK});
"""
    for table in _TENANT_TABLES
)
TENANT_SETTING = "evidencedesk.tenants"

# Version 3: impact-ordered BM25 postings (see ``bm25_blocks``). Each term row gets a row id that is
# never reused (an ingest reserves a range of the sequence and writes them itself); ``bm25_blocks``
# lists, per tenant and term, those row ids best weight first, in blocks.
# The ``blocks_*`` counters in ``bm25_stats`` decide between adding blocks and building them all again.
_V3 = f"""
ALTER TABLE chunk_terms ADD COLUMN row_id bigint GENERATED BY DEFAULT AS IDENTITY;
CREATE UNIQUE INDEX chunk_terms_row ON chunk_terms (row_id);
CREATE TABLE bm25_blocks (
    id bigint GENERATED ALWAYS AS IDENTITY,
    gen integer NOT NULL,
    tenant text NOT NULL,
    term_id integer NOT NULL,
    max_w real NOT NULL,
    rows bytea NOT NULL,
    ws bytea NOT NULL
) WITH (toast_tuple_target = 8160);  -- a block (about 3 KB) stays inline: no compression attempt, no TOAST reads
ALTER TABLE bm25_blocks ALTER COLUMN rows SET STORAGE EXTERNAL, ALTER COLUMN ws SET STORAGE EXTERNAL;
CREATE INDEX bm25_blocks_term ON bm25_blocks (term_id, max_w DESC, id);
CREATE INDEX bm25_blocks_tenant ON bm25_blocks (term_id, tenant, max_w DESC, id);
ALTER TABLE bm25_blocks ENABLE ROW LEVEL SECURITY;
ALTER TABLE bm25_blocks FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_rows ON bm25_blocks USING ({_TENANT_CHECK}) WITH CHECK ({_TENANT_CHECK});
ALTER TABLE bm25_stats
    ADD COLUMN blocks_base_last bigint,
    ADD COLUMN blocks_base_rows bigint NOT NULL DEFAULT 0,
    ADD COLUMN blocks_last bigint,
    ADD COLUMN blocks_delta_rows bigint NOT NULL DEFAULT 0,
    ADD COLUMN blocks_gens integer NOT NULL DEFAULT 0,
    ADD COLUMN blocks_removed bigint NOT NULL DEFAULT 0;
-- inserts come only from the writer, in rounds: it adds their counts itself, once per transaction for the
-- document frequencies (a trigger per round rewrote every touched vocab row each time)
DROP TRIGGER chunk_terms_insert ON chunk_terms;
DROP FUNCTION chunk_terms_added();
CREATE OR REPLACE FUNCTION chunk_terms_removed() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE bm25_stats SET n_chunks = n_chunks - s.n, total_length = total_length - s.len,
                          blocks_removed = blocks_removed + s.n
    FROM (SELECT count(*) AS n, coalesce(sum(dl), 0) AS len FROM removed) AS s;
    UPDATE vocab v SET df = v.df - d.n
    FROM (SELECT t, count(*) AS n FROM removed, unnest(removed.terms) AS t GROUP BY t) AS d WHERE v.id = d.t;
    RETURN NULL;
END $$;
"""

# Version 4: document ids scoped by tenant (``documents.stored_id``). Renaming a document carries its
# chunks' ids and their term and vector rows along (ON UPDATE CASCADE); ``scope_ids`` renames the rows
# of a store written before, in the same transaction (see ``store.tenant_ids``).
_V4 = """
ALTER TABLE chunks DROP CONSTRAINT chunks_doc_id_fkey,
    ADD CONSTRAINT chunks_doc_id_fkey FOREIGN KEY (doc_id) REFERENCES documents(id) ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE chunk_terms DROP CONSTRAINT chunk_terms_chunk_id_fkey,
    ADD CONSTRAINT chunk_terms_chunk_id_fkey FOREIGN KEY (chunk_id) REFERENCES chunks(id)
        ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE chunk_vectors DROP CONSTRAINT chunk_vectors_chunk_id_fkey,
    ADD CONSTRAINT chunk_vectors_chunk_id_fkey FOREIGN KEY (chunk_id) REFERENCES chunks(id)
        ON DELETE CASCADE ON UPDATE CASCADE;
"""


def scope_ids(conn: psycopg.Connection) -> None:
    """Rename every document of a tenant other than ``default`` (its chunks, term and vector rows follow)."""
    moved = renames((str(r[0]), str(r[1])) for r in conn.execute("SELECT id, tenant FROM documents").fetchall())
    if not moved:
        return
    follow = "CASE WHEN left({col}, %(n)s) = %(old)s THEN %(new)s || substr({col}, %(n)s + 1) ELSE {col} END"
    for old, new in moved.items():
        params = {"old": old, "new": new, "n": len(old)}
        conn.execute("UPDATE documents SET id = %(new)s WHERE id = %(old)s", params)  # chunks.doc_id follows
        conn.execute(
            f"UPDATE chunks SET id = {follow.format(col='id')}, parent_id = {follow.format(col='parent_id')} "
            "WHERE doc_id = %(new)s",
            params,
        )  # chunk_terms.chunk_id and chunk_vectors.chunk_id follow
        for table in ("chunk_terms", "chunk_vectors"):
            conn.execute(f"UPDATE {table} SET doc_id = %(new)s WHERE doc_id = %(old)s", params)
    latest = conn.execute("SELECT chunking, chunking_hash FROM builds ORDER BY id DESC LIMIT 1").fetchone()
    chunking, chunking_hash = (dict(latest[0]), str(latest[1])) if latest else ({}, "")
    size = conn.execute("SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM chunks)").fetchone()
    assert size is not None
    report = migration_build(moved, {**chunking, "hash": chunking_hash}, (int(size[0]), int(size[1])))
    row = conn.execute(
        "INSERT INTO builds (created_at, chunking, chunking_hash, n_documents, n_chunks, report)"
        " VALUES (%s, %s::jsonb, %s, %s, %s, %s::jsonb) RETURNING id",
        build_row(report, chunking_hash),
    ).fetchone()
    assert row is not None
    conn.execute("UPDATE documents SET build_id = %s WHERE id = ANY(%s)", (row[0], list(moved.values())))


# version -> DDL; append new versions, never edit an applied one.
MIGRATIONS: dict[int, str] = {1: _V1, 2: _V2, 3: _V3, 4: _V4}


def _lock_key(schema: str) -> int:
    """A stable 63-bit advisory lock key for one store schema."""
    import hashlib

    return int.from_bytes(hashlib.sha256(f"evidencedesk:{schema}".encode()).digest()[:8], "big") >> 1


def lock(conn: psycopg.Connection, schema: str) -> None:
    """Take the store's transaction-level advisory lock (one writer at a time)."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(schema),))


def search_path(conn: psycopg.Connection, schema: str, local: bool = False) -> sql.Composed:
    """``SET search_path``: the store's schema, then the schema holding pgvector's types."""
    row = conn.execute(
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
    ).fetchone()
    names = [schema] + ([row[0]] if row and row[0] != schema else [])
    head = "SET LOCAL search_path TO {}" if local else "SET search_path TO {}"
    return sql.SQL(head).format(sql.SQL(", ").join(sql.Identifier(n) for n in names))


def applied_version(conn: psycopg.Connection, schema: str) -> int:
    exists = conn.execute(
        "SELECT 1 FROM pg_tables WHERE schemaname = %s AND tablename = 'schema_migrations'", (schema,)
    ).fetchone()
    if not exists:
        return 0
    row = conn.execute(sql.SQL("SELECT max(version) FROM {}.schema_migrations").format(sql.Identifier(schema)))
    value = row.fetchone()
    return int(value[0]) if value and value[0] is not None else 0


def migrate(conn: psycopg.Connection, schema: str) -> int:
    """Create the schema and apply the missing migrations; returns the version now applied.

    ``conn`` must be in autocommit mode; the migrations run in one transaction.
    """
    if applied_version(conn, schema) == SCHEMA_VERSION:
        return SCHEMA_VERSION
    with conn.transaction():
        conn.execute("SET LOCAL client_min_messages = warning")
        lock(conn, schema)
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.Error as exc:
            raise PgStoreError(f"the pgvector extension is not available in this database: {exc}") from None
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        ident = sql.Identifier(schema)
        conn.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {}.schema_migrations (version integer PRIMARY KEY, applied_at text)"
            ).format(ident)
        )
        version = applied_version(conn, schema)
        if version > SCHEMA_VERSION:
            raise PgStoreError(
                f"store schema {schema!r} has version {version}; this version reads up to {SCHEMA_VERSION}"
            )
        conn.execute(search_path(conn, schema, local=True))
        for number in sorted(MIGRATIONS):
            if number > version:
                conn.execute(MIGRATIONS[number].encode())  # bytes: sent as a simple query (many statements)
                if number == 4:
                    scope_ids(conn)
                conn.execute(
                    sql.SQL("INSERT INTO {}.schema_migrations VALUES (%s, now()::text)").format(ident), (number,)
                )
    return SCHEMA_VERSION
