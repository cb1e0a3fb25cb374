"""BatchInvalidation.invalidate with no store: a finding of serials S..E of one batch
(§80.1431(a)); a serial already found invalid is refused and nothing is triggered."""

from __future__ import annotations

from datetime import date

import pytest

from ledger.domain.errors import RuleViolation
from ledger.domain.invalidation import BatchInvalidation
from ledger.domain.rin import BlockKey, RinBlock

KEY = BlockKey(1, 2024, "1001", "10001", "CG001", 15, 4, date(2024, 1, 31), "biodiesel")
BATCH = RinBlock(KEY, 1, 100_000)
ON = date(2025, 6, 1)


def test_open_then_invalidate_records_the_exact_serials() -> None:
    record = BatchInvalidation.open(BATCH)
    block = record.invalidate(1, 50_000, ON, "improperly_generated", note="audit", client_id="f-1")
    opened, found = record.collect_events()
    assert isinstance(opened, BatchInvalidation.Opened) and opened.generated == BATCH
    assert isinstance(found, BatchInvalidation.Invalidated)
    assert (found.rins, found.reason, found.note, found.client_id) == (
        [RinBlock(KEY, 1, 50_000)], "improperly_generated", "audit", "f-1")
    assert block == RinBlock(KEY, 1, 50_000)
    # 40,001-60,000 of any K: 10,000 of them (40,001-50,000) are invalid
    assert record.invalid_in(RinBlock(KEY.with_k(2), 40_001, 60_000)) == 10_000


def test_a_serial_is_found_invalid_once() -> None:
    record = BatchInvalidation.open(BATCH)
    record.invalidate(1, 50_000, ON, "improperly_generated", note=None, client_id=None)
    record.collect_events()
    with pytest.raises(RuleViolation) as caught:
        record.invalidate(50_000, 50_001, ON, "improperly_generated", note=None, client_id=None)
    assert (caught.value.rule_id, caught.value.citation) == ("INVALID-ONCE", "§80.1431(a)")
    assert record.pending_events == []
    record.invalidate(50_001, 100_000, ON, "improperly_generated", note=None, client_id=None)
    assert record.invalid_in(BATCH) == 100_000
