"""Where the ledger keeps its data and how its event store is configured: the one home of the
data folder (`./rin-data`), the store's file names and the eventsourcing environment.

A store is a SQLite file under the data folder, or a PostgreSQL database given by URL
(`--store` / `RIN_STORE`); the read models always live in a SQLite file in the data folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from ledger.infrastructure.sqlite_files import sqlite_path
from ledger.infrastructure.sqlite_recorder import TOPIC as RECORDER_TOPIC

#: the environment variables that name the data folder and the store (`--data`, `--store`)
DATA_VARIABLE, STORE_VARIABLE = "RIN_DATA", "RIN_STORE"
TRADE_WINDOW_VARIABLE = "RIN_TRADE_WINDOW"
#: the data folder when neither `--data` nor RIN_DATA names one
DEFAULT_DATA = "./rin-data"
#: the event store application's name: a follower's tracking records are kept under it
APPLICATION = "RinLedger"
EVENTS_FILE = "events.sqlite"
VIEWS_FILE = "views.sqlite"
# Aggregates kept in memory between commands; fast-forwarded from the store on each use, so
# another writer's events are never missed (about the number of parties in the market).
AGGREGATE_CACHE_MAXSIZE = "5000"
#: business days an EMTS posting waits before `expire_trades` ends it (EMTS practice; §80.1452(c)
#: gives a buyer 10 business days to report); `Ledger(trade_window=…)` or RIN_TRADE_WINDOW
TRADE_WINDOW = 10
#: needs psycopg
POSTGRES_RECORDER_TOPIC = "ledger.infrastructure.postgres_recorder:LedgerPostgresRecorder"

#: a URL's options (`?sslmode=require`…) are not passed to the server: silently dropping one
#: would, for instance, connect without the TLS it asked for
UNSUPPORTED_OPTIONS = ("a PostgreSQL URL here is postgresql://user:password@host:port/database: "
                       "options after it (?sslmode=…) are not supported; set them in the "
                       "environment libpq reads (PGSSLMODE=require)")


def data_folder(data: str | os.PathLike[str] | None = None) -> Path:
    """The data folder: `data`, else RIN_DATA, else `./rin-data` (not created here)."""
    return Path(data or os.environ.get(DATA_VARIABLE) or DEFAULT_DATA)


#: the data folder a PostgreSQL ledger was opened with (`Ledger(data, store=url)`): its read
#: models, head.json and keys live there, not in RIN_DATA or ./rin-data
DATA_FOLDER = "RIN_DATA_FOLDER"


def store_folder(env: dict[str, Any]) -> Path:
    """The folder of the store configured by `env`: its SQLite file's, or for PostgreSQL
    (which has none) the data folder, where the read models and keys go."""
    events = env.get("SQLITE_DBNAME")
    return Path(events).parent if events else data_folder(env.get(DATA_FOLDER))


def trade_window(window: int | None = None, env: dict[str, str] | None = None) -> int:
    """The posting window in business days: `window`, else RIN_TRADE_WINDOW in `env` (a
    library caller's environment, `Ledger(env=…)`), else in the process environment, else 10;
    a value that is not a whole number of days from 0 up is refused, naming where it came
    from."""
    if window is None:
        source = env if env is not None and TRADE_WINDOW_VARIABLE in env else os.environ
        given = source.get(TRADE_WINDOW_VARIABLE, str(TRADE_WINDOW))
        if not (given.isascii() and given.isdigit()):
            raise ValueError(f"{TRADE_WINDOW_VARIABLE} is a number of business days (0 or more), "
                             f"not {given[:40]!r}")
        return int(given)
    if window < 0:
        raise ValueError(f"the trade window is a number of business days, not {window}")
    return window


def store_env(
    data: str | os.PathLike[str] | None = None, store: str | None = None
) -> dict[str, Any]:
    """Environment for the event store: a SQLite file under `data`, or a PostgreSQL URL."""
    store = store or os.environ.get(STORE_VARIABLE)
    if store and store.startswith(("postgresql://", "postgres://")):
        url = urlparse(store)
        if url.query or url.fragment or url.params:
            raise ValueError(UNSUPPORTED_OPTIONS)
        return {
            "PERSISTENCE_MODULE": "eventsourcing.postgres",
            "POSTGRES_DBNAME": url.path.lstrip("/") or "rin",
            "POSTGRES_HOST": url.hostname or "localhost",
            "POSTGRES_PORT": str(url.port or 5432),
            "POSTGRES_USER": unquote(url.username or "postgres"),
            "POSTGRES_PASSWORD": unquote(url.password or ""),
            "POSTGRES_LOCK_TIMEOUT": "30",  # seconds, as SQLite's: 0 (the library's) waits for ever
            "APPLICATION_RECORDER_TOPIC": POSTGRES_RECORDER_TOPIC,
            "AGGREGATE_CACHE_MAXSIZE": AGGREGATE_CACHE_MAXSIZE,
            **({DATA_FOLDER: os.fspath(data)} if data is not None else {}),
        }
    folder = data_folder(data)
    folder.mkdir(parents=True, exist_ok=True)
    return {
        "PERSISTENCE_MODULE": "eventsourcing.sqlite",
        "SQLITE_DBNAME": sqlite_path(folder / EVENTS_FILE),  # a folder "file:…" is no URI
        "SQLITE_LOCK_TIMEOUT": "30",
        "APPLICATION_RECORDER_TOPIC": RECORDER_TOPIC,
        "AGGREGATE_CACHE_MAXSIZE": AGGREGATE_CACHE_MAXSIZE,
    }
