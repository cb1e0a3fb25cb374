"""A small service written from docs/library.md and the README's library section alone (no
reading of `ledger/`): one `Ledger` shared by writer threads, readers taking snapshots during the
writes, a second OS process writing to the same store, a downstream follower, and the typed
errors the docs promise. Each assert is a promise of those pages, or (marked "docs silent") what
a service developer needs where the pages say nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ledger import (
    BadArgument,
    Holding,
    Ledger,
    LibraryError,
    LoggedEvent,
    UnknownParty,
)

ROOT = Path(__file__).resolve().parents[2]
GENERATED = 100_000  # gallon-RINs of the one batch: 100,000 gallons of ethanol, D6
LOT = 10  # each transfer moves 10 gallon-RINs with 10 gallons (1 a gallon, under §80.1428(a)(4))
BLENDERS = ("2001", "2002", "2003", "2004")


def transfer(to: str) -> dict[str, object]:
    return {"type": "transfer", "date": "2024-02-01", "from": "1001", "to": to,
            "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": LOT}, "volume": LOT}


def market(ledger: Ledger) -> None:
    """A producer holding one generated batch, and four blenders holding nothing yet."""
    first = ledger.apply({"type": "register_party", "party": "1001", "name": "Prairie Ethanol",
                          "roles": ["producer"], "facilities": ["20001"]})
    assert first.status == "applied"
    for blender in BLENDERS:
        assert ledger.apply({"type": "register_party", "party": blender, "name": f"B{blender}",
                             "roles": ["blender"]}).status == "applied"
    made = ledger.apply({"type": "generate", "date": "2024-01-10", "party": "1001",
                         "facility": "20001", "batch": "00001", "fuel": "ethanol", "d_code": 6,
                         "volume": GENERATED})
    assert made.status == "applied", made.to_dict()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "rin-data"


@pytest.fixture
def ledger(folder: Path) -> Iterator[Ledger]:
    with Ledger(str(folder)) as opened:
        market(opened)
        yield opened


def held(ledger: Ledger, party: str) -> int:
    return sum(row.gallon_rins for row in ledger.holdings(party))


class SnapshotReader(threading.Thread):
    """Reads every party at one position, over and over, until told to stop; keeps each total."""

    def __init__(self, ledger: Ledger) -> None:
        super().__init__()
        self.ledger, self.stop = ledger, threading.Event()
        self.totals: list[int] = []
        self.blender_sums: list[int] = []
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                rows = self.ledger.snapshot().holdings()
                self.totals.append(sum(row.gallon_rins for row in rows))
                self.blender_sums.append(
                    sum(row.gallon_rins for row in rows if row.party in BLENDERS))
        except BaseException as error:  # reported by the test, not lost in the thread
            self.failure = error


def test_threads_share_one_ledger_while_snapshots_read_committed_totals(ledger: Ledger,
                                                                         folder: Path) -> None:
    """Threads may share one `Ledger` (docs/library.md, "Sharing"); a snapshot reads every party
    at one position, so its total is always the generated 100,000 (both sides of a transfer or
    neither) and what the blenders hold is a whole number of lots."""
    per_thread = 15
    results: dict[str, list[str]] = {}

    def writer(blender: str) -> None:
        results[blender] = [ledger.apply(transfer(blender)).status for _ in range(per_thread)]

    reader = SnapshotReader(ledger)
    reader.start()
    writers = [threading.Thread(target=writer, args=(blender,)) for blender in BLENDERS]
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join()
    reader.stop.set()
    reader.join()

    assert reader.failure is None, repr(reader.failure)
    assert all(statuses == ["applied"] * per_thread for statuses in results.values()), results
    assert reader.totals and set(reader.totals) == {GENERATED}
    assert all(total % LOT == 0 for total in reader.blender_sums)
    assert reader.blender_sums == sorted(reader.blender_sums)  # a later snapshot never sees less
    for blender in BLENDERS:
        assert ledger.holdings(blender) == [
            Holding(blender, d_code=6, vintage=2024, k=1, gallon_rins=per_thread * LOT)]
    assert held(ledger, "1001") == GENERATED - len(BLENDERS) * per_thread * LOT
    assert not list(folder.rglob("views.sqlite"))  # the library's reads made no read model


SECOND_PROCESS = """
import json, sys
from ledger import Ledger
with Ledger(sys.argv[1]) as ledger:
    print("ready", flush=True)
    transfer = {"type": "transfer", "date": "2024-02-01", "from": "1001", "to": "2004",
                "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 10}, "volume": 10}
    print(json.dumps([ledger.apply(dict(transfer)).status for _ in range(int(sys.argv[2]))]))
"""


def test_a_second_process_writes_and_a_follower_gets_every_event_once_in_order(
        ledger: Ledger, folder: Path) -> None:
    """A process of its own (its own `Ledger` on the same folder, as the docs say processes
    must) writes while this one writes and reads; `follow(after=N)` yields every event after N
    once, in log order, whichever process stored it, and a follower that stops and resumes
    after the last id it handled misses and repeats nothing."""
    start = ledger.position()
    followed: list[LoggedEvent] = []

    theirs = ours_count = 20
    expected = 2 * (theirs + ours_count)  # each transfer: its two sides

    def downstream() -> None:
        with Ledger(str(folder)) as own:  # a downstream service's own Ledger
            for logged in own.follow(after=start, timeout=15):  # 15 s: a loaded machine
                followed.append(logged)
                if len(followed) == expected:
                    break

    follower = threading.Thread(target=downstream)
    follower.start()
    reader = SnapshotReader(ledger)
    reader.start()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    other = subprocess.Popen([sys.executable, "-c", SECOND_PROCESS, str(folder), str(theirs)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert other.stdout is not None and other.stdout.readline() == "ready\n"
    ours = [ledger.apply(transfer("2001")).status for _ in range(ours_count)]  # while it writes
    out, err = other.communicate(timeout=120)
    reader.stop.set()
    reader.join()
    follower.join(timeout=120)

    assert other.returncode == 0, err
    assert json.loads(out) == ["applied"] * theirs and ours == ["applied"] * ours_count
    assert reader.failure is None, repr(reader.failure)
    assert set(reader.totals) == {GENERATED}
    assert held(ledger, "2004") == theirs * LOT and held(ledger, "2001") == 20 * LOT
    assert held(ledger, "1001") == GENERATED - (theirs + 20) * LOT

    ids = [logged.notification_id for logged in followed]
    assert ids == sorted(set(ids)) and all(i > start for i in ids)  # once each, in log order
    names = [type(logged.event).__name__ for logged in followed]
    assert names.count("TransferredOut") == names.count("TransferredIn") == theirs + 20
    assert len(followed) == expected
    assert list(ledger.follow(after=ids[-1], timeout=0)) == []  # nothing but those was stored
    assert ids[-1] == ledger.position()  # the follower reached the log's end

    # stop after the first 15, keep the last id handled, resume after it (docs: "each event is
    # then handled once")
    first: list[int] = []
    for logged in ledger.follow(after=start, timeout=0.5):
        first.append(logged.notification_id)
        if len(first) == 15:
            break
    rest = [logged.notification_id for logged in ledger.follow(after=first[-1], timeout=0.5)]
    assert first + rest == ids


def test_unknown_parties_and_bad_arguments_are_typed_errors(ledger: Ledger) -> None:
    """docs/library.md "Errors that are not refusals": `UnknownParty` (a `KeyError`) and
    `BadArgument` (a `ValueError` naming the argument), both `LibraryError`s; nothing else
    escapes for bad input."""
    for read in (ledger.holdings, ledger.blocks):
        with pytest.raises(UnknownParty) as unknown:
            read("9999")
        assert unknown.value.party == "9999" and isinstance(unknown.value, KeyError | LibraryError)
        assert str(unknown.value) == "party 9999 is not registered"
    with pytest.raises(UnknownParty):
        ledger.snapshot().holdings("9999")  # docs silent on a snapshot's unknown party
    bad: list[tuple[Callable[[], object], str]] = [
        (lambda: ledger.holdings("2001", as_of="2024-02-30"), "as_of"),
        (lambda: ledger.holdings("2001", as_of="2024/02/01"), "as_of"),
        (lambda: ledger.holdings("2001", as_of="20240201"), "as_of"),
        (lambda: ledger.holdings("2001", as_of=20240201), "as_of"),  # type: ignore[arg-type]
        (lambda: ledger.blocks("2001", as_of="yesterday"), "as_of"),
        (lambda: ledger.holdings("2001", known_at=-1), "known_at"),
        (lambda: ledger.holdings("2001", known_at="12"), "known_at"),  # type: ignore[arg-type]
        (lambda: ledger.holdings(2001), "party"),  # type: ignore[arg-type]
        (lambda: list(ledger.follow(after=-1, timeout=0)), "after"),
        (lambda: list(ledger.follow(after=0, timeout=-1)), "timeout"),
    ]
    for call, argument in bad:
        with pytest.raises(BadArgument) as error:
            call()
        assert isinstance(error.value, ValueError | LibraryError)
        assert error.value.argument == argument, (argument, error.value)


def test_a_bad_command_is_a_refusal_naming_the_field_and_stores_nothing(ledger: Ledger) -> None:
    """A bad command is a `Result` (status rejected, a `Refusal` naming the field), not an
    exception, and stores nothing (README "The library")."""
    before = ledger.position()
    bad_date = {**transfer("2001"), "date": "2024-02-30"}
    unknown = {**transfer("9999")}
    for command, field in ((bad_date, "date"), (unknown, "to")):
        result = ledger.apply(command, line=7)
        assert result.status == "rejected" and result.refusal is not None, result.to_dict()
        assert result.refusal.line == 7 and result.refusal.field == field, result.refusal
    assert ledger.position() == before
    assert held(ledger, "2001") == 0


def test_apply_many_with_ids_is_followed_once_and_a_resend_adds_nothing(ledger: Ledger) -> None:
    """A service resending a file after a failure (README: "a line with an `id` is safe to
    resend"): `apply_many` over JSON bytes yields one result a line; the resend is all
    `duplicate`, and `follow` sees the first sending's events only, no command records."""
    start = ledger.position()
    lines = [json.dumps({**transfer("2003"), "id": f"t-{n}"}).encode() for n in range(5)]
    assert [result.status for result in ledger.apply_many(lines)] == ["applied"] * 5
    after_first = ledger.position()
    assert [result.status for result in ledger.apply_many(lines)] == ["duplicate"] * 5
    assert ledger.position() == after_first  # docs silent: a duplicate stores nothing new
    names = [type(logged.event).__name__ for logged in ledger.follow(after=start, timeout=0)]
    assert names == ["TransferredOut", "TransferredIn"] * 5
    assert held(ledger, "2003") == 5 * LOT
