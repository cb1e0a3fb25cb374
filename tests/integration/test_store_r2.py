"""The store written before the aggregate kept its rules' facts (tests/data/make_store_r2.py)
still loads, verifies and decides new commands as it did: the facts a rule reads from a party's
past (§80.1426(g), §80.1429(b)(7), (b)(10), §80.1431, §80.1474(b)) come out of its history, also
for parties 2001 and 3001 whose snapshot was taken by the older Party class.

Every number below was written down by hand when the store was made (see make_store_r2.py)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from store_access import app_of
from typer.testing import CliRunner

from ledger import Ledger
from ledger.cli.main import app
from ledger.domain.party import Party
from ledger.domain.vocabulary import FuelDirection, Role

DATA = Path(__file__).resolve().parents[1] / "data" / "store_r2"
HOLDINGS = {  # party → {(D code, vintage, K): gallon-RINs}
    # 100,000 generated − 40,000 sold; 4,000 of the rest separated under (b)(10)
    "1001": {(6, 2024, 1): 56_000, (6, 2024, 2): 4_000},
    # delayed biodiesel: 1,000 gal × EV 1.5, separated at once (§80.1426(g)(11)), 2010 fuel
    "1002": {(4, 2010, 2): 1_500},
    # 40,000 bought, 20,000 separated, 1,100 + 210 × 10 sold, 200 × 10 bought from 4001
    "2001": {(6, 2024, 1): 20_000, (6, 2024, 2): 20_000 - 1_100 - 2_100 + 2_000},
    # 1,100 + 2,100 bought − 1,000 retired for 2024 − 300 replaced
    "3001": {(6, 2024, 2): 1_900},
    # 10,000 generated, 3,000 separated as obligated party, 200 × 10 sold
    "4001": {(6, 2024, 1): 7_000, (6, 2024, 2): 1_000},
}
#: registered + 1 bought + 1 separated + 211 sales + 200 purchases = 414, and so on
VERSIONS = {"1001": 6, "1002": 4, "2001": 414, "3001": 215, "4001": 205}
D6 = {"d_code": 6, "vintage": 2024}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    shutil.copytree(DATA, tmp_path / "r2")
    return tmp_path / "r2"


def held(ledger: Ledger, party: str) -> dict[tuple[int, int, int], int]:
    return {(r["d_code"], r["vintage"], r["k"]): r["gallon_rins"]
            for r in ledger.holdings(party)}


def refused(ledger: Ledger, cmd: dict[str, Any], rule: str) -> str:
    result = ledger.apply(cmd)
    assert (result.status, result.rule) == ("rejected", rule), result
    return str(result.error)


def applied(ledger: Ledger, cmd: dict[str, Any]) -> None:
    result = ledger.apply(cmd)
    assert result.status == "applied", result.error


def test_the_store_verifies_and_holds_what_was_written_down(store: Path) -> None:
    out = CliRunner().invoke(app, ["--data", str(store), "verify"])
    assert out.exit_code == 0, out.output
    with Ledger(store) as ledger:
        for party, expected in HOLDINGS.items():
            assert held(ledger, party) == expected
            assert ledger.party(party).version == VERSIONS[party]


def test_new_commands_decide_from_the_stored_history(store: Path) -> None:
    with Ledger(store) as ledger:
        # §80.1429(b)(7)(v): 4,000 own D6 may be separated; 3,000 were: 1,001 more is too many
        sep = {"type": "separate", "date": "2024-04-01", "party": "4001",
               "reason": "obligated_party", "rins": {**D6, "k": 1, "company": "4001"}}
        refused(ledger, {**sep, "volume": "1001", "rins": {**sep["rins"], "quantity": 1_001}},
                "SEP-OBLIGATED-CAP")
        applied(ledger, {**sep, "volume": "1000", "rins": {**sep["rins"], "quantity": 1_000}})
        # §80.1474(b): 500 of the 1,000 retired for 2024 are invalid, 300 replaced: 200 left
        remedial = {"type": "retire", "date": "2025-03-01", "party": "3001",
                    "reason": "remedial_invalid", "compliance_year": 2024}
        error = refused(ledger, {**remedial, "rins": {**D6, "k": 2, "quantity": 201}},
                        "REPLACE-NEEDED")
        assert "200 invalid gallon-RINs used for 2024 left to replace, not 201" in error
        applied(ledger, {**remedial, "rins": {**D6, "k": 2, "quantity": 200}})
        # §80.1429(b)(10): 1001's serials 40,001-44,000 were separated to replace invalid RINs
        refused(ledger, {"type": "transfer", "date": "2024-04-01", "from": "1001", "to": "2001",
                         "rins": {**D6, "k": 2, "quantity": 10}}, "SEP-REPLACEMENT-ONLY")
        # §80.1426(g)(9): 1002's delayed RINs were generated on 2011-04-15
        error = refused(ledger, {
            "type": "generate", "date": "2011-04-20", "party": "1002", "facility": "20002",
            "batch": "DRN02", "fuel": "biodiesel", "d_code": 4, "volume": 1_000,
            "production_start": "2011-01-10", "production_end": "2011-01-31",
            "pathway_effective_date": "2011-03-01"}, "DELAYED-ONE-DATE")
        assert "generated delayed RINs on 2011-04-15" in error
        # §80.1431(a): a finding against 4001's batch, which has 10,000 gallon-RINs
        batch = "1" "2024" "4001" "40001" "00001" "10" "6"
        finding = {"type": "invalidate", "date": "2025-03-01", "reason": "improperly_generated"}
        refused(ledger, {**finding, "rin": batch + "00009999" "00010001"}, "INVALID-GENERATED")
        applied(ledger, {**finding, "rin": batch + "00000001" "00000010"})
        refused(ledger, {**finding, "rin": batch + "00000005" "00000010"}, "INVALID-ONCE")
        assert held(ledger, "4001") == {(6, 2024, 1): 6_000, (6, 2024, 2): 2_000}
        assert held(ledger, "3001") == {(6, 2024, 2): 1_700}


def test_older_snapshots_are_replayed_past_and_the_facts_equal_a_replay(store: Path) -> None:
    """The snapshots of 2001, 3001 and 4001 were taken by Party v2, after the facts their later
    commands read (4001's (b)(7) separation, 3001's compliance retirement): none is loaded."""
    with Ledger(store) as ledger:
        for party in ("2001", "3001", "4001"):
            oid = Party.create_id(party)
            assert app_of(ledger).snapshots is not None
            assert app_of(ledger).snapshots.recorder.select_events(oid)  # stored, v2 ...
            assert list(app_of(ledger).snapshots.get(oid)) == []  # ... and never loaded
            replayed = None
            for event in app_of(ledger).events.get(oid):
                replayed = event.mutate(replayed)
            assert isinstance(replayed, Party)
            assert ledger.party(party).facts == replayed.facts
        assert ledger.party("4001").facts.unblended[2024].own == {6: 3_000}
        [retired] = ledger.party("3001").facts.applied[2024][:1]
        assert (retired.reason, retired.block.gallon_rins) == ("compliance", 1_000)


def test_stored_vocabulary_decodes_to_the_enums(store: Path) -> None:
    """Roles stored as plain strings by the older code are `Role`s; directions compare equal."""
    with Ledger(store) as ledger:
        assert ledger.party("4001").roles == [Role.PRODUCER, Role.OBLIGATED_PARTY, Role.REFINER]
        assert all(type(role) is Role for role in ledger.party("3001").roles)
        moved = [e for e in app_of(ledger).events.get(Party.create_id("1001"))
                 if isinstance(e, Party.TransferredOut)]
        assert [e.to_party for e in moved] == ["2001"]
    assert FuelDirection("delivered") is FuelDirection.DELIVERED
