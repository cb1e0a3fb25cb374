"""FuelMoved v2 records where fuel produced without RINs was made (§80.1426(c)(3)(i)); a v1
event, stored before the field existed, loads with no facility and changes nothing else."""

from __future__ import annotations

import json
from pathlib import Path

from test_upcasting import V1_EVENTS, append_event, load_v1_store

from ledger import Ledger
from ledger.domain.party import Party

# What release 1 stored for 1002 producing 5,000 gal without RINs on 2024-02-20 (no facility,
# no class_version: version 1).
V1_FUEL_MOVED = {
    "timestamp": {"_type_": "datetime_iso", "_data_": "2026-11-30T09:51:53.652000+00:00"},
    "effective_date": {"_type_": "date_iso", "_data_": "2024-02-20"},
    "client_id": "f-0001", "direction": "produced",
    "volume": {"_type_": "decimal_str", "_data_": "5000"}, "counterparty": None, "ptd": None,
}


def test_v1_fuel_moved_upcasts_without_a_facility(tmp_path: Path) -> None:
    ledger = load_v1_store(tmp_path)
    rows = [row for row in json.loads(V1_EVENTS.read_text())
            if row["topic"].startswith("rin_ledger:Party.")
            and json.loads(row["state"]).get("party_id", "1002") == "1002"]
    (registered,) = [row for row in rows if row["topic"] == "rin_ledger:Party.Registered"]
    party_rows = [row for row in rows if row["originator_id"] == registered["originator_id"]]
    append_event(tmp_path, party_rows, "rin_ledger:Party.FuelMoved", V1_FUEL_MOVED)
    ledger.close()
    with Ledger(tmp_path) as book:
        moved = [e for e in book.log.history(Party.create_id("1002"))
                 if isinstance(e, Party.FuelMoved)]
        assert [(e.direction, e.volume, e.facility) for e in moved] == [
            ("produced", 5_000, None)]
        # release 1's biodiesel batch: 60,000 gallon-RINs / EV 1.5 = 40,000 gal, + 5,000 gal
        # produced without RINs = 45,000 gal produced in 2024 (§80.1426(c)(2))
        assert book.party("1002").produced[2024] == 45_000
        # new fuel produced without RINs records its facility
        result = book.apply({"type": "generate", "date": "2024-03-01", "party": "1002",
                             "facility": "20011", "batch": "00009", "fuel": "biodiesel",
                             "d_code": 4, "volume": 100, "generate_rins": False,
                             "new_facility_year": 1})
        assert result.status == "applied", result.error
        moved = [e for e in book.log.history(Party.create_id("1002"))
                 if isinstance(e, Party.FuelMoved)]
        assert [e.facility for e in moved] == [None, "20011"]
