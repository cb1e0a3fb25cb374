"""§80.1426(g)(10)(i)-(ii): a delayed batch records the production date EMTS designates,
07/01/2010 for 2010 fuel and 01/01/2011 for 2011 fuel, not the day its fuel was first made;
Generated v3 carries it, and older stored events get it from their batch number and
production start."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path
from typing import Any

from test_upcasting import V1_EVENTS, append_event, load_v1_store

from ledger import Ledger
from ledger.domain.party import Party

STORE_R1 = Path(__file__).parents[1] / "data" / "store_r1"


def generated(book: Ledger, party: str) -> list[Party.Generated]:
    return [e for e in book.log.history(Party.create_id(party))
            if isinstance(e, Party.Generated)]


def delayed(batch: str, start: str, end: str) -> dict[str, Any]:
    # new pathway effective 2011-03-01: window 2010-07-01 .. 2011-02-28, deadline
    # 2011-03-01 + 60 days = 2011-04-30; 1001 transferred no (f)(6) RINs, so (g)(7): by volume
    return {"type": "generate", "date": "2011-04-15", "party": "1001", "facility": "20001",
            "batch": batch, "fuel": "biodiesel", "d_code": 4, "volume": 1_000,
            "production_start": start, "production_end": end,
            "pathway_effective_date": "2011-03-01"}


def test_a_delayed_batch_records_the_emts_production_date(tmp_path: Path) -> None:
    with Ledger(tmp_path) as book:
        assert book.apply({"type": "register_party", "party": "1001", "name": "P",
                           "roles": ["producer"], "facilities": ["20001"]}).status == "applied"
        for line in (delayed("DRN01", "2010-10-01", "2010-10-28"),
                     delayed("DRN02", "2011-01-10", "2011-01-31"),
                     {"type": "generate", "date": "2011-05-31", "party": "1001",
                      "facility": "20001", "batch": "00001", "fuel": "ethanol", "d_code": 6,
                      "volume": 1_000, "production_start": "2011-05-02",
                      "production_end": "2011-05-31"}):
            result = book.apply(line)
            assert result.status == "applied", result.error
        rows = [(e.rin.key.batch, e.rin.key.vintage, e.effective_date, e.production_start,
                 e.production_date) for e in generated(book, "1001")]
    assert rows == [
        # (g)(10)(i): 2010 fuel → year 2010, production date 07/01/2010; generated 2011-04-15
        ("DRN01", 2010, date(2011, 4, 15), date(2010, 10, 1), date(2010, 7, 1)),
        # (g)(10)(ii): 2011 fuel → year 2011, production date 01/01/2011
        ("DRN02", 2011, date(2011, 4, 15), date(2011, 1, 10), date(2011, 1, 1)),
        # an ordinary batch: its first day of production
        ("00001", 2011, date(2011, 5, 31), date(2011, 5, 2), date(2011, 5, 2)),
    ]


def test_release_1_generations_upcast_to_their_production_start(tmp_path: Path) -> None:
    shutil.copytree(STORE_R1, tmp_path / "r1")
    with Ledger(tmp_path / "r1") as book:
        # release 1's 1001 batch 00001 of 2024 named no production period
        assert [(e.rin.key.batch, e.production_start, e.production_date)
                for e in generated(book, "1001")] == [("00001", None, None)]
    ledger = load_v1_store(tmp_path / "v1")
    # events_v1.json: 1001's batch produced 2024-01-01 .. 2024-01-31; 1002's named no period
    assert [e.production_date for e in generated(ledger, "1001")] == [date(2024, 1, 1)]
    assert [e.production_date for e in generated(ledger, "1002")] == [None]
    ledger.close()


def test_a_stored_v2_delayed_batch_upcasts_to_07_01_2010(tmp_path: Path) -> None:
    ledger = load_v1_store(tmp_path)
    rows = json.loads(V1_EVENTS.read_text())
    (registered,) = [r for r in rows if r["topic"] == "rin_ledger:Party.Registered"
                     and json.loads(r["state"])["party_id"] == "1001"]
    mine = [r for r in rows if r["originator_id"] == registered["originator_id"]]
    (row,) = [r for r in mine if r["topic"] == "rin_ledger:Party.Generated"]
    state = json.loads(row["state"])
    # what version 2 stored for a DRN01 batch of 2010 fuel made from 2010-10-01, 1,500 RINs
    state["rin"]["_data_"] = ["1201010012000" "1DRN01154" "00000001" "00001500", "2011-04-15",
                              "biodiesel"]
    state["production_start"]["_data_"] = "2010-10-01"
    state.update(class_version=2, renewable_fraction_method=None)
    append_event(tmp_path, mine, "rin_ledger:Party.Generated", state)
    ledger.close()
    with Ledger(tmp_path) as book:
        last = generated(book, "1001")[-1]
        assert (last.rin.key.batch, last.production_start, last.production_date) == (
            "DRN01", date(2010, 10, 1), date(2010, 7, 1))
