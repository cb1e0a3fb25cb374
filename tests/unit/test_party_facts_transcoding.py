"""A Party v3 snapshot's facts round-trip through the store's JSON exactly: years and D codes
stay `int` keys (JSON would make them strings), dates, blocks and serial sets stay themselves."""

from __future__ import annotations

from copy import deepcopy
from datetime import date
from decimal import Decimal
from typing import Any

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
from ledger.infrastructure import transcodings
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
        reversed={"r-1": date(2024, 3, 1)},
    )
    decoded = transcoder.decode(transcoder.encode({"facts": facts}))["facts"]
    assert decoded == facts
    assert decoded.reversed == {"r-1": date(2024, 3, 1)}
    assert list(decoded.unblended[2024].counted) == [4, 6]
    assert all(type(year) is int for year in [*decoded.batches, *decoded.applied])


def test_a_long_history_loads_undecoded_until_a_year_is_read(monkeypatch: Any) -> None:
    """A party's snapshot holds every batch it generated and every block it retired for
    compliance; loading it decodes none of them, reading a year decodes that year only, and
    what a command adds to a year read is stored again with the rest unchanged."""
    transcoder = JSONTranscoder()
    transcoder.register(DecimalAsStr())
    register_transcodings(transcoder)
    years = {year: [AppliedRetirement(RinBlock(KEY.with_k(2), n * 10 + 1, n * 10 + 10),
                                      "compliance", "BBD") for n in range(50)]
             for year in range(2011, 2021)}
    facts = PartyFacts(applied=dict(years),
                       batches={2010: {f"{n:05d}": RinBlock(KEY, 1, n + 1) for n in range(300)}})
    data = transcoder.encode({"facts": facts})
    decoded_blocks: list[str] = []
    real = transcodings.stored_block
    monkeypatch.setattr(transcodings, "stored_block",
                        lambda *record: decoded_blocks.append(record[0]) or real(*record))
    loaded: PartyFacts = transcoder.decode(data)["facts"]
    assert decoded_blocks == []
    assert len(loaded.batches[2010]) == 300 and decoded_blocks == []
    assert loaded.applied[2015] == years[2015]
    assert len(decoded_blocks) == 50
    assert loaded.batches[2010]["00007"] == RinBlock(KEY, 1, 8)
    assert len(decoded_blocks) == 51
    copy = deepcopy(loaded)
    extra = AppliedRetirement(RinBlock(KEY.with_k(2), 9_001, 9_010), "remedial_invalid", "BBD")
    loaded.applied.setdefault(2015, []).append(extra)
    assert copy.applied[2015] == years[2015]  # a copy changes apart
    again: PartyFacts = transcoder.decode(transcoder.encode({"facts": loaded}))["facts"]
    assert again.applied[2015] == [*years[2015], extra]
    assert again.applied[2012] == years[2012]
    assert again.batches[2010]["00299"] == RinBlock(KEY, 1, 300)


def test_facts_stored_before_reversals_existed_have_reversed_nothing() -> None:
    """A snapshot written before `reverse` (§80.1452(d)) holds no `reversed` entry."""
    transcoder = JSONTranscoder()
    transcoder.register(DecimalAsStr())
    register_transcodings(transcoder)
    stored = transcoder.encode({"facts": PartyFacts(reversed={"x": date(2024, 1, 1)})})
    older = stored.replace(b'"reversed":', b'"dropped":')  # a key the decoder never reads
    assert b"reversed" not in older
    assert transcoder.decode(older)["facts"].reversed == {}


def test_a_retirement_added_to_a_stored_year_decodes_none_of_its_blocks(monkeypatch: Any
                                                                        ) -> None:
    """Replaying a retirement, or snapshotting after it, costs what it adds: the year's
    earlier blocks stay undecoded, and stored again, they come back in order with the new
    ones after them (§80.1427, §80.1474(b))."""
    transcoder = JSONTranscoder()
    transcoder.register(DecimalAsStr())
    register_transcodings(transcoder)
    earlier = [AppliedRetirement(RinBlock(KEY.with_k(2), n * 10 + 1, n * 10 + 10),
                                 "compliance", "BBD") for n in range(40)]
    data = transcoder.encode({"facts": PartyFacts(applied={2015: earlier})})
    decoded_blocks: list[str] = []
    real = transcodings.stored_block
    monkeypatch.setattr(transcodings, "stored_block",
                        lambda *record: decoded_blocks.append(record[0]) or real(*record))
    loaded: PartyFacts = transcoder.decode(data)["facts"]
    copy = deepcopy(loaded)
    new = [AppliedRetirement(RinBlock(KEY.with_k(2), 901, 950), "remedial_invalid", "BBD")]
    loaded.add_applied(2015, new)
    loaded.add_applied(2016, new)
    stored = transcoder.encode({"facts": loaded})
    assert decoded_blocks == []  # neither adding nor storing read the year
    assert copy.applied[2015] == earlier  # a copy taken before changes apart
    again: PartyFacts = transcoder.decode(stored)["facts"]
    assert again.applied[2015] == [*earlier, *new]
    assert again.applied[2016] == new
    loaded.add_applied(2015, new)  # a year read takes the new ones as they are
    assert loaded.applied[2015] == [*earlier, *new, *new]


def test_facts_made_in_memory_take_retirements_too() -> None:
    """Facts never stored (a new party) keep a plain dict of years."""
    facts = PartyFacts()
    block = AppliedRetirement(RinBlock(KEY.with_k(2), 1, 5), "compliance", "RF")
    facts.add_applied(2024, [block])
    facts.add_applied(2024, [block])
    assert facts.applied == {2024: [block, block]}


def test_a_snapshot_encodes_a_year_once_then_only_what_is_added(monkeypatch: Any) -> None:
    """A party's years, made in memory or read by a rule, are encoded by the next snapshot and
    then kept as stored: the snapshot after renders only the retirements added since, and the
    years still read back whole and in order (§80.1427)."""
    transcoder = JSONTranscoder()
    transcoder.register(DecimalAsStr())
    register_transcodings(transcoder)
    earlier = [AppliedRetirement(RinBlock(KEY.with_k(2), n * 10 + 1, n * 10 + 10),
                                 "compliance", "BBD") for n in range(30)]
    facts = PartyFacts()
    facts.add_applied(2015, earlier)
    rendered: list[RinBlock] = []
    real = transcodings.block_record
    monkeypatch.setattr(transcodings, "block_record",
                        lambda block: rendered.append(block) or real(block))
    transcoder.encode({"facts": facts})
    assert len(rendered) == 30
    new = [AppliedRetirement(RinBlock(KEY.with_k(2), 901, 950), "compliance", "RF")]
    facts.add_applied(2015, new)
    stored = transcoder.encode({"facts": facts})
    assert len(rendered) == 31  # the one block added, not the 30 before it
    assert facts.applied[2015] == [*earlier, *new]  # read back, from what was stored
    transcoder.encode({"facts": facts})
    assert len(rendered) == 31 + 31  # a year read is encoded again whole (a rule may change it)
    again: PartyFacts = transcoder.decode(stored)["facts"]
    assert again.applied == {2015: [*earlier, *new]}
