"""`Ledger.log`, the read port over the notification log (ledger/application/event_log.py),
and the one pager under it (ledger/infrastructure/notification_pages.py): what the read side
may rely on, and that nothing outside the ledger reaches its eventsourcing application."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markets import three_party_market

from ledger import Ledger
from ledger.domain.party import Party
from ledger.infrastructure.command_records import CommandRecord
from projections import Views, project
from projections.runner import TOPICS

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    book = Ledger(tmp_path)
    assert {r.status for r in book.apply_many(three_party_market(separated=40_000))} == {
        "applied"}
    return book


def test_events_come_decoded_with_their_notification_ids_in_log_order(ledger: Ledger) -> None:
    logged = list(ledger.log.events())
    ids = [e.notification_id for e in logged]
    assert ids == list(range(1, ledger.position() + 1))  # SQLite ids have no gaps
    assert isinstance(logged[0].event, Party.Registered)
    assert logged[0].event.party_id == "1001"  # the market registers the producer first
    assert isinstance(logged[-1].event, Party.TransferredIn)  # it ends with a sale: out, in
    assert isinstance(logged[-2].event, Party.TransferredOut)


def test_after_stop_and_topics_select_the_same_events_as_a_full_read(ledger: Ledger) -> None:
    everything = list(ledger.log.events())
    middle = [e for e in everything if 3 < e.notification_id <= 9]
    assert [e.notification_id for e in ledger.log.events(3, stop=9)] == [
        e.notification_id for e in middle]
    sales = [e.notification_id for e in ledger.log.events(topics=[
        Party.TransferredOut.TOPIC])]
    assert sales == [e.notification_id for e in everything
                     if isinstance(e.event, Party.TransferredOut)]
    assert len(sales) == 2  # 40,000 to the blender, 10,000 separated RINs sold on


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7])
def test_pages_hold_at_most_size_and_end_with_the_first_shorter_one(
        ledger: Ledger, size: int) -> None:
    pages = list(ledger.log.pages(size=size))
    assert all(len(page) == size for page in pages[:-1])
    assert len(pages[-1]) < size  # perhaps empty, when the count divides evenly
    assert [e.notification_id for page in pages for e in page] == list(
        range(1, ledger.position() + 1))


def test_a_projection_whose_batches_end_exactly_at_the_end_of_the_log(ledger: Ledger,
                                                                     tmp_path: Path) -> None:
    """A full last page is followed by the pager's empty one: the follower stops at the end
    instead of recording the same position twice (which it would take for edited rows)."""
    followed = len(list(ledger.log.events(topics=TOPICS)))
    position = project(ledger, tmp_path / "views.sqlite", batch_size=followed)
    assert position == ledger.position()
    assert project(ledger, tmp_path / "views.sqlite", batch_size=followed) == position
    assert Views(ledger, tmp_path / "views.sqlite").verify() == []


def test_position_moves_with_each_save_and_history_reads_one_aggregate(ledger: Ledger) -> None:
    before = ledger.position()
    assert ledger.apply({"type": "register_party", "id": "r-9", "party": "4001",
                         "name": "Late", "roles": ["blender"]}).status == "applied"
    assert ledger.position() == before + 1  # the registration (its id: a row of rin_commands)
    (registered,) = ledger.log.history(Party.create_id("4001"))
    assert isinstance(registered, Party.Registered) and registered.party_id == "4001"
    assert ledger.log.history(CommandRecord.create_id("r-9")) == []  # no record event
    assert ledger.log.name == "RinLedger"  # the views' tracking rows are kept under it


def test_the_ledger_keeps_its_application_private(ledger: Ledger) -> None:
    assert not hasattr(ledger, "app")


@pytest.mark.parametrize("folder", ["projections", "ledger/cli"])
def test_the_read_side_and_the_cli_reach_no_write_side_internals(folder: str) -> None:
    """They read through `Ledger`'s ports: no `.app`, `._app`, recorder or mapper."""
    pattern = re.compile(r"\.(_?app|recorder|mapper)\b(?!\.command|\(\))")
    found = [f"{path.relative_to(ROOT)}:{n}" for path in (ROOT / folder).rglob("*.py")
             for n, line in enumerate(path.read_text().splitlines(), start=1)
             if "ledger" in line and pattern.search(line)]
    assert found == []
