"""What the red-team modules share: a market, a store, and an attacker's hands on its files.

The attacker can read and write every file under the data folder with plain `sqlite3`, but
does not hold the private key (when the store has one).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from markets import three_party_market
from store_access import as_release_2
from typer.testing import CliRunner, Result

from ledger.application.ledger import Ledger
from ledger.cli.main import app
from ledger.infrastructure.signing import keygen

#: one D6 batch of 100,000 gallon-RINs (§80.1415), 40,000 sold with 16,000 gallons, separated,
#: 10,000 K=2 sold on; then `TRANSFERS` sales of 10 K=2 each with command ids
TRANSFERS = 210
MARKET: list[dict[str, Any]] = [
    *three_party_market(separated=40_000),
    *({"type": "transfer", "id": f"t-{n:04d}", "date": "2024-03-01", "from": "2001",
       "to": "3001", "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 10}}
      for n in range(TRANSFERS)),
]


def build(data: Path, key: Path | None = None, commands: list[dict[str, Any]] = MARKET,
          *, record_events: bool = False) -> None:
    """The market in a new store; with `record_events`, a store of the format before issue 15,
    whose command records are `CommandRecord` events (a store holding them keeps writing them,
    ledger/infrastructure/command_table.py)."""
    with Ledger(data, key=key) as ledger:
        if record_events:
            as_release_2(ledger)
        results = list(ledger.apply_many(commands))
    assert all(r.status == "applied" for r in results), [r for r in results if r.error]


def make_key(folder: Path) -> Path:
    private, _ = keygen(folder / "rin.key")
    return private


@contextmanager
def files(data: Path) -> Iterator[sqlite3.Connection]:
    """The attacker's connection to the event store (committed on exit)."""
    connection = sqlite3.connect(data / "events.sqlite")
    try:
        yield connection
        connection.commit()
    finally:
        connection.close()


def rin(data: Path, *args: str, key: Path | None = None) -> Result:
    """Run the `rin` command line in this process on `data`."""
    options = ["--data", str(data), *(["--key", str(key)] if key else [])]
    return CliRunner().invoke(app, [*options, *args])


def verify(data: Path, *args: str) -> Result:
    return rin(data, "verify", *args)
