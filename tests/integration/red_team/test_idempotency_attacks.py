"""Red team on idempotency with command rows (`rin_commands`, issue 15): a file replayed is all
duplicates and stores nothing; an id reused with other content is refused, naming the line and
the command applied under that id; two processes applying the same lines at once on one SQLite
store apply each line once (one applied, the other duplicate), never twice.

The market (red_team/attacker.py): 7 lines without ids, then the 210 transfers t-0000 … t-0209
of 10 K=2 RINs each from 2001 to 3001, dated 2024-03-01; 3001 held 10,000 K=2 before them.
"""

from __future__ import annotations

import multiprocessing
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from ledger.application.ledger import Ledger
from red_team.attacker import MARKET, rin

SETUP, TRANSFERS = MARKET[:7], MARKET[7:]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    with Ledger(data) as ledger:
        assert all(r.status == "applied" for r in ledger.apply_many(SETUP))
    return data


def write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def test_a_file_replayed_is_all_duplicates_and_stores_nothing(data: Path) -> None:
    transfers = write(data.parent / "transfers.jsonl", TRANSFERS)
    first = rin(data, "apply", str(transfers))
    assert first.exit_code == 0 and "210 applied, 0 duplicate, 0 rejected" in first.output
    with Ledger(data) as ledger:
        position = ledger.position()
    again = rin(data, "apply", str(transfers))
    assert again.exit_code == 0 and "0 applied, 210 duplicate, 0 rejected" in again.output
    with Ledger(data) as ledger:
        assert ledger.position() == position
        assert ledger.party("3001").holdings.totals() == {(6, 2024, 2): 10_000 + 210 * 10}


def test_an_id_reused_with_other_content_is_refused_naming_both(data: Path) -> None:
    """In the same file (the first still in the transaction) and in a later file."""
    changed = {**TRANSFERS[5], "date": "2024-03-02"}
    out = rin(data, "apply", str(write(data.parent / "a.jsonl", [*TRANSFERS[:6], changed])))
    assert out.exit_code == 1
    assert ("line 7: format: id: already used by a different command: t-0005 was applied "
            "before as a transfer of 2024-03-01") in out.output
    out = rin(data, "apply", str(write(data.parent / "b.jsonl", [changed])))
    assert ("line 1: format: id: already used by a different command: t-0005 was applied "
            "before as a transfer of 2024-03-01") in out.output
    with Ledger(data) as ledger:
        assert ledger.party("3001").holdings.totals() == {(6, 2024, 2): 10_000 + 6 * 10}


def apply_in_process(data: str, batch_size: int, start: Any, results: Any) -> None:
    sys.path[:0] = [str(Path(__file__).parents[1])]  # red_team, for a spawned process
    with Ledger(Path(data)) as ledger:
        start.wait()
        results.put([r.status for r in ledger.apply_many(TRANSFERS, batch_size=batch_size)])


@pytest.mark.parametrize("batch_size", [200, 1])
def test_two_processes_applying_the_same_lines_apply_each_once(data: Path,
                                                                batch_size: int) -> None:
    context = multiprocessing.get_context("spawn")
    start, results = context.Barrier(2), context.Queue()
    writers = [context.Process(target=apply_in_process,
                               args=(str(data), batch_size, start, results)) for _ in range(2)]
    for writer in writers:
        writer.start()
    statuses = [results.get(timeout=300) for _ in writers]
    for writer in writers:
        writer.join(timeout=60)
        assert writer.exitcode == 0
    assert Counter(tuple(sorted(line)) for line in zip(*statuses, strict=True)) == {
        ("applied", "duplicate"): len(TRANSFERS)}
    with Ledger(data) as ledger:
        assert ledger.party("3001").holdings.totals() == {(6, 2024, 2): 10_000 + 210 * 10}
        assert ledger.audit() == []
