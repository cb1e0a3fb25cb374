"""The notification log follows the commands' order, also when many are saved in one batch."""

from __future__ import annotations

from pathlib import Path

from ledger import Ledger
from ledger.simulation import small_market as market_lines


def test_batched_events_are_logged_in_command_order(tmp_path: Path) -> None:
    lines = list(market_lines())
    position = {line["id"]: index for index, line in enumerate(lines)}
    with Ledger(tmp_path) as ledger:
        results = list(ledger.apply_many(lines, batch_size=500))  # the whole demo in one batch
        assert {r.status for r in results} == {"applied"}
        order = [
            position[event.client_id]
            for event in (logged.event for logged in ledger.log.events())
            if "Party." in type(event).__qualname__ and event.client_id is not None
        ]
    # each event comes from the command of its line: never from a line before one already logged
    assert order == sorted(order)
    assert len(order) > len(lines)  # transfers log two events, generation two or three
