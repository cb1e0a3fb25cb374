"""A Party v3 snapshot's facts round-trip through the store's JSON exactly: years and D codes
stay `int` keys (JSON would make them strings), dates, blocks and serial sets stay themselves."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from eventsourcing.persistence import DecimalAsStr, JSONTranscoder

from ledger.domain.party_facts import (
    AppliedRetirement,
    DelayedFacts,
    PartyFacts,
    ReportedYear,
    UnblendedYear,
)
from ledger.domain.ranges import SerialSet
from ledger.domain.rin import BatchId, BlockKey, RinBlock
from ledger.infrastructure.transcodings import register_transcodings

KEY = BlockKey(1, 2010, "1002", "20002", "00007", 15, 4, date(2010, 9, 1), "biodiesel")


def test_party_facts_round_trip_with_int_keys() -> None:
    transcoder = JSONTranscoder()
    transcoder.register(DecimalAsStr())
    register_transcodings(transcoder)
    block = RinBlock(KEY, 1, 1_500)
    facts = PartyFacts(
        batches={2010: {"00007": block}}, produced={2010: Decimal("1000.5")},
        fuels={"biodiesel": date(2010, 9, 1)}, first_year={"20002": 2010},
        delayed=DelayedFacts(
            window={BatchId(2010, "1002", "20002", "00007"): SerialSet.of([(1, 10), (20, 30)])},
            retired=[(date(2011, 4, 1), 2010, 21)], generated={2010: 21},
            generated_on={date(2011, 4, 15)},
        ),
        replacement=[RinBlock(KEY.with_k(2), 1, 5)],
        reports={2024: ReportedYear({"RF": 1_000}, "net", 0, ["refinery"])},
        applied={2024: [AppliedRetirement(RinBlock(KEY.with_k(2), 6, 9), "compliance", "BBD")]},
        unblended={2024: UnblendedYear({4: 10}, {4: 12, 6: 1})},
    )
    decoded = transcoder.decode(transcoder.encode({"facts": facts}))["facts"]
    assert decoded == facts
    assert list(decoded.unblended[2024].counted) == [4, 6]
    assert all(type(year) is int for year in [*decoded.batches, *decoded.applied])
