"""Issue 9, attack 8 (committed but unreported lines): a store that fails part-way through a
file, a snapshot write that fails after its events committed, a writer that keeps losing to
other writers. Every committed line must be reported, in every failure mode, so that a line
without an id resent from the first unreported one is never applied twice."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import Store
from eventsourcing.persistence import IntegrityError, OperationalError
from store_access import app_of
from test_concurrency import generate, party
from test_snapshot_in_save import break_snapshot_table
from typer.testing import CliRunner

from ledger import Ledger
from ledger.application.store_failures import StoreError
from ledger.cli.main import app
from ledger.domain.party import Party
from ledger.infrastructure.retry import RETRY, Retry
from ledger.infrastructure.sqlite_recorder import BatchSQLiteApplicationRecorder

PRODUCER, BUYER = "1001", "2001"
SALES = 60  # id-less sales of 10 gallon-RINs (with 4 gallons of ethanol, EV 1.0 at 2.5/gal)
REPEATED_LINE = 5 + SALES // 2  # the first sale, sent again


def sale() -> dict[str, Any]:
    """A line without an id: only the report tells whether it was applied."""
    return {"type": "transfer", "date": "2024-01-11", "from": PRODUCER, "to": BUYER,
            "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 10}, "volume": 4}


FIRST_SALE = {**sale(), "id": "first"}


def setup() -> list[dict[str, Any]]:
    return [party(PRODUCER, "Producer", ["producer"], ("10011",)),
            party(BUYER, "Buyer", ["blender"]), generate(1, 1_000), FIRST_SALE]


def failing_after(calls: int, real: Callable[..., Any], error: Exception) -> Callable[..., Any]:
    """`real`, which raises `error` from its call number `calls + 1` on."""
    made = 0

    def insert(*args: Any, **kwargs: Any) -> Any:
        nonlocal made
        made += 1
        if made > calls:
            raise error
        return real(*args, **kwargs)
    return insert


def stored_sales(ledger: Ledger) -> int:
    notes = app_of(ledger).recorder.select_notifications(start=1, limit=10_000,
                                                     topics=[Party.TransferredOut.TOPIC])
    return len(notes)


@pytest.mark.parametrize("good_saves", [0, 1, 7, 25])
def test_a_store_failing_mid_file_reports_every_committed_line(
    store: Store, monkeypatch: pytest.MonkeyPatch, good_saves: int
) -> None:
    # The second batch repeats the first sale (an id already stored), so its save conflicts
    # and it is applied one line at a time: each line its own save.
    lines = [*setup(), *(sale() for _ in range(SALES // 2)), FIRST_SALE,
             *(sale() for _ in range(SALES // 2))]
    with store.ledger() as ledger:
        list(ledger.apply_many(lines[:4]))
        recorder = app_of(ledger).recorder
        monkeypatch.setattr(recorder, "insert_events", failing_after(
            good_saves, recorder.insert_events, OperationalError("disk I/O error (injected)")))
        reported = []
        with pytest.raises(StoreError) as failure:
            for result in ledger.apply_many(lines[4:], batch_size=40, first_line=5):
                reported.append(result)
        monkeypatch.undo()
        last = failure.value.last_committed_line
        assert [r.line for r in reported] == list(range(5, (last or 4) + 1))
        assert "line" in str(failure.value) and "disk I/O error" in str(failure.value)
        applied = [r for r in reported if r.status == "applied"]
        repeated = [r.status for r in reported if r.line == REPEATED_LINE]
        assert repeated in ([], ["duplicate"])
        # the store holds the first sale and exactly the sales reported, no more, no fewer
        assert stored_sales(ledger) - 1 == len(applied) == len(reported) - len(repeated)
        if good_saves > 1:  # the batch conflicted, then lines were committed one at a time
            assert reported, "no line of the one-at-a-time fallback was reported"
        # resend everything after the last line reported: nothing is applied twice
        again = list(ledger.apply_many(lines[(last or 4):], first_line=(last or 4) + 1))
        assert {r.status for r in again} <= {"applied", "duplicate"}
        assert stored_sales(ledger) == SALES + 1
        assert ledger.holdings(BUYER) == [{"party": BUYER, "d_code": 6, "vintage": 2024, "k": 1,
                                           "gallon_rins": (SALES + 1) * 10}]


def failing_after_commit(calls: int, real: Callable[..., Any],
                         error: Exception) -> Callable[..., Any]:
    """`real`, whose call number `calls + 1` commits, then raises `error` (a lost answer)."""
    made = 0

    def insert(*args: Any, **kwargs: Any) -> Any:
        nonlocal made
        made += 1
        ids = real(*args, **kwargs)
        if made == calls + 1:
            raise error
        return ids
    return insert


@pytest.mark.parametrize("error", [OperationalError("connection lost (injected)"),
                                   IntegrityError("conflict reported after commit (injected)")])
@pytest.mark.parametrize(("repeat", "good_saves"), [(False, 0), (True, 1), (True, 6)])
def test_a_save_failing_after_its_commit_is_reported_and_not_applied_twice(
    store: Store, monkeypatch: pytest.MonkeyPatch, repeat: bool, good_saves: int,
    error: Exception,
) -> None:
    # The save after `good_saves` calls commits, then fails: without the repeated first sale,
    # the batch's own save; with it, as above, the batch's save conflicts (call 1), then one
    # save per line.
    lines = [*setup(), *(sale() for _ in range(SALES // 2)), FIRST_SALE if repeat else sale(),
             *(sale() for _ in range(SALES // 2))]
    with store.ledger() as ledger:
        list(ledger.apply_many(lines[:4]))
        recorder = app_of(ledger).recorder
        monkeypatch.setattr(recorder, "insert_events", failing_after_commit(
            good_saves, recorder.insert_events, error))
        results = list(ledger.apply_many(lines[4:], batch_size=40, first_line=5))
        monkeypatch.undo()
        assert [r.line for r in results] == list(range(5, len(lines) + 1))
        sales = SALES + (not repeat)
        assert [r.status for r in results if not repeat or r.line != REPEATED_LINE] == [
            "applied"] * sales
        assert stored_sales(ledger) == 1 + sales  # each line once, the first sale included
        assert ledger.holdings(BUYER) == [{"party": BUYER, "d_code": 6, "vintage": 2024, "k": 1,
                                           "gallon_rins": (1 + sales) * 10}]


def test_a_failed_snapshot_write_does_not_fail_committed_commands(store: Store) -> None:
    # 1 registration + 120 × (Generated, Assigned) = 241 events: the save crosses version 200,
    # where the producer's snapshot is due
    lines = [party(PRODUCER, "Producer", ["producer"], ("10011",)),
             *(generate(b, 100) for b in range(1, 121))]
    with store.ledger() as ledger:
        # the snapshot is stored in its events' transaction (ledger/infrastructure/
        # snapshot_in_save.py): the database itself refuses it there
        list(ledger.apply_many(lines[:1]))  # the store checks its triggers when first written
        break_snapshot_table(ledger, store)
        results = list(ledger.apply_many(lines[1:], batch_size=500, first_line=2))
        assert [r.status for r in results] == ["applied"] * (len(lines) - 1)
        assert app_of(ledger).snapshots_failed == 1
    with store.ledger() as ledger:
        assert app_of(ledger).snapshots is not None
        assert app_of(ledger).snapshots.recorder.select_events(Party.create_id(PRODUCER)) == []
        assert ledger.party(PRODUCER).version == 241
        assert ledger.holdings(PRODUCER)[0]["gallon_rins"] == 120 * 100


def test_a_writer_out_of_retries_refuses_that_line_and_goes_on(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    contested = {**sale(), "id": "contested"}
    lines = [*setup(), sale(), contested, sale()]
    with store.ledger() as ledger:
        list(ledger.apply_many(lines[:4]))
        real = app_of(ledger).recorder.insert_events

        def always_beaten(stored_events: Any, **kwargs: Any) -> Any:
            """Another writer saves first every time the contested line is saved."""
            if any(b'"contested"' in event.state for event in stored_events):
                raise IntegrityError("another writer saved first (injected)")
            return real(stored_events, **kwargs)
        monkeypatch.setattr(app_of(ledger).recorder, "insert_events", always_beaten)
        monkeypatch.setattr(Retry, "pause", lambda self, attempt: None)
        results = list(ledger.apply_many(lines[4:], first_line=5))
        assert [(r.line, r.status) for r in results] == [
            (5, "applied"), (6, "rejected"), (7, "applied")]
        refused = results[1]
        assert refused.citation == "concurrency"
        assert f"gave up after {RETRY.attempts} conflicts" in (refused.error or "")
        assert ledger.apply(contested, 8).status == "rejected"
        monkeypatch.undo()
        assert stored_sales(ledger) == 3
        assert ledger.apply(contested, 9).status == "applied"


def test_rin_apply_reports_every_line_when_a_writer_runs_out_of_retries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Release 1 raised `RuntimeError` mid-file there and printed no `--json` results."""
    lines = [*setup(), sale(), {**sale(), "id": "contested"}, sale()]
    data = tmp_path / "lines.jsonl"
    data.write_bytes(b"\n".join(orjson.dumps(line) for line in lines) + b"\n")
    real = BatchSQLiteApplicationRecorder.insert_events

    def always_beaten(recorder: Any, stored_events: Any, **kwargs: Any) -> Any:
        if any(b'"contested"' in event.state for event in stored_events):
            raise IntegrityError("another writer saved first (injected)")
        return real(recorder, stored_events, **kwargs)
    monkeypatch.setattr(BatchSQLiteApplicationRecorder, "insert_events", always_beaten)
    monkeypatch.setattr(Retry, "pause", lambda self, attempt: None)
    out = CliRunner().invoke(app, ["--data", str(tmp_path), "apply", "--json", str(data)])
    results = [orjson.loads(line) for line in out.stdout.splitlines()]
    assert [(r["line"], r["status"]) for r in results] == [
        (1, "applied"), (2, "applied"), (3, "applied"), (4, "applied"), (5, "applied"),
        (6, "rejected"), (7, "applied")]
    assert results[5]["citation"] == "concurrency"
    assert out.exit_code == 1  # some lines refused, the rest applied

