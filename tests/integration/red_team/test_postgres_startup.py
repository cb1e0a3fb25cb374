"""Issue 9, attack 10 (PostgreSQL start-up): 8 processes open the same fresh database at once,
each creating the ledger's tables, types and functions as it starts. None may crash (release
1: `UniqueViolation` on `pg_type_typname_nsp_index` in 4 rounds of 5), and all of them then
write to the one store they share."""

from __future__ import annotations

import multiprocessing
from urllib.parse import urlparse, urlunparse
from uuid import uuid4

import pytest
from conftest import POSTGRES_URL

from ledger import Ledger

PROCESSES = 8
ROUNDS = 4

pytestmark = pytest.mark.skipif(not POSTGRES_URL, reason="needs RIN_TEST_POSTGRES_URL")


def opener(url: str, number: int, barrier: object) -> None:
    barrier.wait(timeout=60)  # type: ignore[attr-defined]
    with Ledger(store=url) as ledger:
        result = ledger.apply({"type": "register_party", "party": f"{1000 + number}",
                               "name": f"Party {number}", "roles": ["blender"]})
        assert result.status == "applied", result.error


def test_many_processes_open_a_fresh_database_at_once() -> None:
    import psycopg

    assert POSTGRES_URL is not None
    context = multiprocessing.get_context("spawn")
    for _ in range(ROUNDS):
        name = f"rin_startup_{uuid4().hex[:12]}"
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        url = urlunparse(urlparse(POSTGRES_URL)._replace(path=f"/{name}"))
        try:
            barrier = context.Barrier(PROCESSES)
            processes = [context.Process(target=opener, args=(url, n, barrier))
                         for n in range(PROCESSES)]
            for process in processes:
                process.start()
            for process in processes:
                process.join(timeout=120)
            assert [p.exitcode for p in processes] == [0] * PROCESSES
            with Ledger(store=url) as ledger:
                parties = [ledger.party(f"{1000 + n}").name for n in range(PROCESSES)]
                assert parties == [f"Party {n}" for n in range(PROCESSES)]
        finally:
            with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
                connection.execute(f"DROP DATABASE {name} WITH (FORCE)")
