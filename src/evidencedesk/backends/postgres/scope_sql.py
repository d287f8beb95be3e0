"""A Scope as a SQL condition over the scope columns (status, audience, lang, tenant, doc_id, validity).

The condition goes into the WHERE clause of the search itself, so the database never ranks a row
the scope forbids. It allows exactly the rows ``Scope.allows`` allows. Values travel as named
parameters (``scope_*``), never spliced into the SQL text.
"""

from __future__ import annotations

import json
from typing import TypeAlias

import psycopg
from psycopg import sql

from evidencedesk.retrieval.scope import Scope

SqlParams: TypeAlias = dict[str, object]
"""Named parameters of a statement (``%(name)s``), each a value the driver adapts."""

_SET_COLUMNS = (
    ("statuses", "status"), ("audiences", "audience"), ("langs", "lang"), ("tenants", "tenant"), ("doc_ids", "doc_id"),
)  # fmt: skip


def scope_condition(scope: Scope | None, alias: str = "") -> tuple[sql.Composed, SqlParams]:
    """``(cond AND cond ...)`` and its parameters; ``TRUE`` when the scope allows everything."""
    scope = scope if scope is not None else Scope()

    def col(name: str) -> sql.Composable:
        return sql.Identifier(alias, name) if alias else sql.Identifier(name)

    parts: list[sql.Composable] = []
    params: SqlParams = {}
    for field, column in _SET_COLUMNS:
        allowed = getattr(scope, field)
        if allowed is None:
            continue
        # PostgreSQL text cannot hold NUL, so such a value matches nothing (Scope.narrow uses one for "nothing")
        values = sorted(v for v in allowed if "\x00" not in v)
        if not values:
            parts.append(sql.SQL("FALSE"))
            continue
        name = f"scope_{field}"
        params[name] = values
        parts.append(sql.SQL("{} = ANY({}::text[])").format(col(column), sql.Placeholder(name)))
    if scope.check_validity:
        params["scope_day"] = scope.day
        day = sql.Placeholder("scope_day")
        parts.append(
            sql.SQL("({f} IS NULL OR {f} <= {d}::date) AND ({t} IS NULL OR {d}::date <= {t})").format(
                f=col("valid_from"), t=col("valid_to"), d=day
            )
        )
    if not parts:
        return sql.Composed([sql.SQL("TRUE")]), params
    return sql.Composed([sql.SQL("("), sql.SQL(" AND ").join(parts), sql.SQL(")")]), params


def limit_tenants(conn: psycopg.Connection, scope: Scope | None) -> None:
    """Inside the current transaction, let row-level security show only the scope's tenants.

    A second wall under the WHERE clause (see the schema's version 2): even a query that forgot the
    tenant condition then reads no other tenant's rows. A scope allowing any tenant sets nothing.
    """
    if scope is None or scope.tenants is None:
        return
    names = sorted(v for v in scope.tenants if "\x00" not in v)
    conn.execute("SELECT set_config('evidencedesk.tenants', %s, true)", (json.dumps(names),))
