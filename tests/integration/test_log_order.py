"""The notification log follows the commands' order, also when many are saved in one batch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ledger import Ledger
from ledger.simulation import small_market as market_lines


def test_batched_events_are_logged_in_command_order(tmp_path: Path) -> None:
    lines = list(market_lines())
    position = {line["id"]: index for index, line in enumerate(lines)}
    with Ledger(tmp_path) as ledger:
        results = list(ledger.apply_many(lines, batch_size=500))  # the whole demo in one batch
        assert {r.status for r in results} == {"applied"}
        order = [
            line_of(event, position)
            for event in (logged.event for logged in ledger.log.events())
            if "Party." in type(event).__qualname__ and event.client_id is not None
        ]
    # each event comes from the command of its line: never from a line before one already logged
    assert order == sorted(order)
    assert len(order) > len(lines)  # transfers log two events, generation two or three


def line_of(event: Any, position: dict[str, int]) -> int:
    """The line an event came from: its command id's, or for the events of an EMTS trade
    (§80.1452), which name the postings (and may carry the other side's id), the latest line
    among the command and the postings it names."""
    named = [event.client_id, getattr(event, "posting", None),
             *(getattr(event, "postings", None) or [])]
    return max(position[i] for i in named if i in position)
