"""Several processes may open a fresh PostgreSQL store at once (issue 9, attack 10).

The library creates its tables, composite types and functions when an application starts;
PostgreSQL does not make `CREATE TABLE IF NOT EXISTS` safe against another session creating
the same table (a `UniqueViolation` on `pg_type_typname_nsp_index`, the table's row type). A
session-level advisory lock, one per schema, lets one process at a time do that set-up; the
others wait for it, then find everything in place.

The set-up is versioned where it can change: the save function
(ledger/infrastructure/postgres_function.py) is named by its version (`rin_save_v1`) and made by
`CREATE OR REPLACE` at every open, under this lock, so a store made before it gets it the first
time a release with it opens the store, and a later version is a new function beside it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from eventsourcing.persistence import OperationalError
from eventsourcing.utils import Environment

POSTGRES = "eventsourcing.postgres"


def lock_key(schema: str) -> int:
    """A signed 64-bit advisory-lock key naming the ledger's set-up in `schema`."""
    digest = hashlib.sha256(f"rin-ledger set-up {schema}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@contextmanager
def setup_lock(name: str, env: Mapping[str, str]) -> Iterator[None]:
    """Hold the set-up lock of the store `env` configures for application `name` (read as the
    application reads it: `env` over the process environment), if it is PostgreSQL."""
    settings = Environment(name, {**os.environ, **env})
    if settings.get("PERSISTENCE_MODULE") != POSTGRES:
        yield
        return
    import psycopg

    try:
        connection = psycopg.connect(
            dbname=settings.get("POSTGRES_DBNAME"), host=settings.get("POSTGRES_HOST"),
            port=settings.get("POSTGRES_PORT"), user=settings.get("POSTGRES_USER"),
            password=settings.get("POSTGRES_PASSWORD"), autocommit=True,
            connect_timeout=int(settings.get("POSTGRES_CONNECT_TIMEOUT", "30")),
        )
    except psycopg.Error as error:
        raise OperationalError(str(error)) from error
    with connection:  # closing the session releases its advisory lock, whatever happens
        connection.execute(
            "SELECT pg_advisory_lock(%s)", (lock_key(settings.get("POSTGRES_SCHEMA") or "public"),)
        )
        yield
