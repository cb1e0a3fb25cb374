"""Party v7 stores each year of `facts.applied` (the retirements applied to a compliance year's
RVOs, §80.1427, §80.1474(b)) as one string; a v6 snapshot's list of records per year still
reads into the same retirements, and stored again it takes the v7 layout."""

from __future__ import annotations

from datetime import date
from typing import Any

import orjson
import pytest
from eventsourcing.domain import Snapshot
from eventsourcing.persistence import DecimalAsStr, JSONTranscoder

from ledger.domain.party import Party
from ledger.domain.party_facts import AppliedRetirement, PartyFacts
from ledger.domain.rin import BlockKey, RinBlock
from ledger.infrastructure import transcodings
from ledger.infrastructure.snapshot_seal import is_current, loads_as_current
from ledger.infrastructure.transcodings import register_transcodings

KEY = BlockKey(2, 2023, "1002", "20002", "00007", 15, 4, date(2023, 9, 1), "biodiesel")
#: the block's 38-character code: K, vintage, company, facility, batch, RR, D, serials
CODE_1_10 = "22023100220002000071540000000100000010"


def transcoder() -> JSONTranscoder:
    made = JSONTranscoder()
    made.register(DecimalAsStr())
    register_transcodings(made)
    return made


def retirement(start: int, end: int, reason: str = "compliance",
               category: str | None = "BBD") -> AppliedRetirement:
    return AppliedRetirement(RinBlock(KEY, start, end), reason, category)


def stored_applied(facts: PartyFacts) -> Any:
    return orjson.loads(transcoder().encode({"facts": facts}))["facts"]["_data_"]["applied"]


def test_a_year_is_stored_as_one_string_of_its_records() -> None:
    """Written out by hand: code, generation date, fuel, reason, category (none: empty)."""
    assert RinBlock(KEY, 1, 10).code == CODE_1_10
    facts = PartyFacts(applied={2023: [retirement(1, 10), retirement(11, 20, category=None)]})
    assert stored_applied(facts) == [[2023, (
        f"{CODE_1_10}|2023-09-01|biodiesel|compliance|BBD;"
        "22023100220002000071540000001100000020|2023-09-01|biodiesel|compliance|")]]
    loaded = transcoder().decode(transcoder().encode({"facts": facts}))["facts"]
    assert loaded.applied[2023] == [retirement(1, 10), retirement(11, 20, category=None)]
    assert loaded.applied[2023][1].category is None


@pytest.mark.parametrize("fuel", ["bio|diesel", "bio;diesel", ""])
def test_a_year_whose_fields_hold_a_separator_stays_a_list_and_reads_back(fuel: str) -> None:
    odd = AppliedRetirement(RinBlock(BlockKey(2, 2023, "1002", "20002", "00008", 15, 4,
                                              date(2023, 9, 1), fuel), 1, 5), "compliance", "")
    facts = PartyFacts(applied={2023: [retirement(1, 10), odd], 2024: [retirement(11, 20)]})
    stored = dict(stored_applied(facts))
    assert isinstance(stored[2023], list) and isinstance(stored[2024], str)
    loaded = transcoder().decode(transcoder().encode({"facts": facts}))["facts"]
    assert loaded.applied[2023] == [retirement(1, 10), odd]
    assert loaded.applied[2023][1].category == ""  # not read back as "no category"


def test_a_v6_year_reads_the_same_and_is_stored_again_as_v7() -> None:
    """The v6 layout (tests/data/store_r4's snapshot has it): a list of records per year."""
    v6 = {"_type_": "party_facts", "_data_": {
        **orjson.loads(transcoder().encode(PartyFacts()))["_data_"],
        "applied": [[2023, [[CODE_1_10, "2023-09-01", "biodiesel", "compliance", "BBD"]]]]}}
    loaded: PartyFacts = transcoder().decode(orjson.dumps({"facts": v6}))["facts"]
    assert loaded.applied[2023] == [retirement(1, 10)]
    again: PartyFacts = transcoder().decode(orjson.dumps({"facts": v6}))["facts"]
    assert stored_applied(again) == stored_applied(PartyFacts(applied={2023: [retirement(1, 10)]}))


def test_a_retirement_added_to_a_stored_year_reads_none_of_it(monkeypatch: Any) -> None:
    """Replaying a retirement appends its record to the year's string, decoding no block; the
    year reads back in order, earlier blocks first (§80.1427)."""
    earlier = [retirement(n * 10 + 1, n * 10 + 10) for n in range(30)]
    data = transcoder().encode({"facts": PartyFacts(applied={2023: earlier})})
    decoded: list[str] = []
    real = transcodings.stored_block
    monkeypatch.setattr(transcodings, "stored_block",
                        lambda *record: decoded.append(record[0]) or real(*record))
    loaded: PartyFacts = transcoder().decode(data)["facts"]
    new = [retirement(901, 950, "remedial_invalid")]
    loaded.add_applied(2023, new)
    loaded.add_applied(2024, new)
    stored = dict(stored_applied(loaded))
    assert decoded == []
    assert isinstance(stored[2023], str) and stored[2023].count(";") == 30
    again: PartyFacts = transcoder().decode(transcoder().encode({"facts": loaded}))["facts"]
    assert again.applied[2023] == [*earlier, *new] and again.applied[2024] == new


def test_an_emptied_year_reads_back_empty() -> None:
    """An unretire may take back every block applied to a year (§80.1452(d))."""
    loaded = transcoder().decode(transcoder().encode({"facts": PartyFacts(applied={2023: []})}))
    assert loaded["facts"].applied[2023] == []


def snapshot_of(version: int) -> Any:
    party = Party.register("1001", "Ethanol Co", ["producer"], ["20001"])
    snapshot = Snapshot.take(party)
    snapshot.state["class_version"] = version
    return snapshot


def test_a_v6_snapshot_loads_as_current_an_older_one_is_replayed_past() -> None:
    """v6 differs from v7 only in the stored layout of `applied`, which v7 reads (above); a v5
    snapshot is replayed past, as before; the audit still compares a v6 one via its upcast."""
    assert Party.class_version == 7
    assert loads_as_current(snapshot_of(7)) and loads_as_current(snapshot_of(6))
    assert not loads_as_current(snapshot_of(5))
    assert not is_current(snapshot_of(6))  # the audit re-encodes it before comparing


def test_a_class_without_a_declared_range_loads_only_its_current_snapshots(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(Party, "snapshots_load_from")
    assert loads_as_current(snapshot_of(7)) and not loads_as_current(snapshot_of(6))


def test_a_holdings_slot_is_one_string_a_v6_one_reads_the_same_and_an_odd_one_stays_a_list(
        ) -> None:
    """Party v7 lays out a slot's holding records the same way (prefix, generation date, fuel,
    acquisition date, serial intervals); v6's lists of records still read."""
    holdings_codec = transcodings.HoldingsAsRecords()
    holdings = holdings_codec.decode([[4, 2023, 2, [
        [KEY.prefix, "2023-09-01", "biodiesel", "2023-10-02", [[1, 10], [21, 30]]]]]])
    assert holdings.held_gallon_rins(RinBlock(KEY, 1, 30), date(2023, 10, 2)) == 20
    assert holdings_codec.encode(holdings) == [[4, 2023, 2, (
        f"{KEY.prefix}|2023-09-01|biodiesel|2023-10-02|1-10,21-30")]]
    again = holdings_codec.decode(orjson.loads(orjson.dumps(holdings_codec.encode(holdings))))
    assert list(again.blocks()) == list(holdings.blocks())
    odd_key = BlockKey(2, 2023, "1002", "20002", "00007", 15, 4, date(2023, 9, 1), "bio|diesel")
    odd = holdings_codec.decode([[4, 2023, 2, [
        [odd_key.prefix, "2023-09-01", "bio|diesel", "2023-10-02", [[1, 10]]]]]])
    [[*_, stored]] = holdings_codec.encode(odd)
    assert isinstance(stored, list)
    assert list(holdings_codec.decode([[4, 2023, 2, stored]]).blocks()) == list(odd.blocks())
