"""A save that fails inside its transaction with an error that is neither a conflict nor the
store's (session 5's finding: `Ledger._apply` re-raised it raw, a traceback to a CLI user).

What can reach there in eventsourcing 9.5.6's save path: the library wraps every sqlite3 and
psycopg error in its `PersistenceError` classes (sqlite.py/postgres.py `transaction`), and the
operating system's are `OSError`: those are store faults, exit 3 "store failed". Anything else
(a `TypeError` of a value the transcoder or `orjson` cannot encode, a `KeyError` in the
ledger's own steps inside the transaction) is a fault of the ledger: exit 3 saying "internal
error", no traceback. Either way the transaction rolls back: nothing of the line is stored,
and the same line applies once the fault is gone.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import Store
from eventsourcing.persistence import OperationalError
from typer.testing import CliRunner

from ledger.application.store_failures import InternalFault, StoreError
from ledger.cli.main import app
from ledger.infrastructure.postgres_recorder import LedgerPostgresRecorder
from ledger.infrastructure.sqlite_recorder import BatchSQLiteApplicationRecorder
from red_team.test_exactly_once import sale, setup

FAULTS: dict[str, tuple[Exception, str]] = {  # injected error, what the user reads
    "a value the store cannot encode": (
        TypeError("Type is not JSON serializable: Decimal (injected)"),
        "internal error, not the input's or the store's: saving failed with TypeError: Type "
        "is not JSON serializable: Decimal (injected); nothing of the line was stored"),
    "a bug in the ledger's own step": (
        KeyError("party (injected)"),
        "internal error, not the input's or the store's: saving failed with KeyError: "
        "'party (injected)'"),
    "the disk": (
        OperationalError("disk I/O error (injected)"),
        "store failed: disk I/O error (injected)"),
}


def after_the_inserts(real: Callable[..., Any], error: Exception) -> Callable[..., Any]:
    """The recorder's step inside the saving transaction, which inserts, then raises `error`:
    the rows were written, so only the rollback keeps them out of the store."""

    def insert(self: Any, *args: Any, **kwargs: Any) -> Any:
        real(self, *args, **kwargs)
        raise error
    return insert


def inject(monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    for recorder in (BatchSQLiteApplicationRecorder, LedgerPostgresRecorder):
        monkeypatch.setattr(recorder, "insert_in_transaction",
                            after_the_inserts(recorder.insert_in_transaction, error))


def cli(store: Store, monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    for name, value in store.env.items():
        monkeypatch.setenv(name, value)
    options = ["--data", str(store.data), *(["--store", store.url] if store.url else [])]
    return CliRunner().invoke(app, [*options, *args])


@pytest.mark.parametrize("fault", FAULTS)
def test_a_save_failing_inside_its_transaction_exits_3_naming_it(
    store: Store, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fault: str
) -> None:
    error, message = FAULTS[fault]
    with store.ledger() as ledger:
        assert {r.status for r in ledger.apply_many(setup())} == {"applied"}
        before = ledger.position()
    lines = tmp_path / "sales.jsonl"
    lines.write_bytes(b"".join(orjson.dumps(sale()) + b"\n" for _ in range(3)))

    inject(monkeypatch, error)
    out = cli(store, monkeypatch, "apply", str(lines))
    assert out.exit_code == 3, out.output
    assert isinstance(out.exception, SystemExit)  # exited, not raised through the CLI
    assert "Traceback" not in out.output
    assert message in out.output and "last line committed: none" in out.output

    monkeypatch.undo()
    with store.ledger() as ledger:
        assert ledger.position() == before  # nothing of the three lines was stored
    again = cli(store, monkeypatch, "apply", str(lines))
    assert again.exit_code == 0, again.output
    with store.ledger() as ledger:  # 1,000 generated, the setup's sale and these three: 10 each
        assert ledger.holdings("1001")[0]["gallon_rins"] == 1_000 - 4 * 10


def test_a_single_apply_raises_store_error_caused_by_the_fault(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The library's one-line path (`Ledger.apply`, also the conflict path of a batch)."""
    with store.ledger() as ledger:
        assert {r.status for r in ledger.apply_many(setup())} == {"applied"}
        before = ledger.position()
        inject(monkeypatch, TypeError("Type is not JSON serializable: Decimal (injected)"))
        with pytest.raises(StoreError, match="internal error") as failure:
            ledger.apply(sale(), 7)
        assert isinstance(failure.value.__cause__, InternalFault)
        assert isinstance(failure.value.__cause__.__cause__, TypeError)
        monkeypatch.undo()
        assert ledger.position() == before
        assert ledger.apply(sale(), 7).status == "applied"
        assert ledger.holdings("1001")[0]["gallon_rins"] == 1_000 - 2 * 10
