"""A ledger keeps saved aggregates in memory only while no other writer has stored anything."""

from __future__ import annotations

from pathlib import Path

from conftest import Store

SETUP = [
    {"type": "register_party", "party": "1001", "name": "P", "roles": ["producer"],
     "facilities": ["20001"]},
    {"type": "register_party", "party": "2001", "name": "B", "roles": ["blender"]},
    {"type": "register_party", "party": "2002", "name": "C", "roles": ["blender"]},
    {"type": "generate", "date": "2024-01-10", "party": "1001", "facility": "20001",
     "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 1000},
]


def sell(to: str, quantity: int) -> dict[str, object]:
    return {"type": "transfer", "date": "2024-01-11", "from": "1001", "to": to,
            "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": quantity},
            "volume": quantity}


def test_a_cached_party_is_reloaded_after_another_writer_sells_its_rins(store: Store) -> None:
    with store.ledger() as first, store.ledger() as second:
        assert {r.status for r in first.apply_many(SETUP)} == {"applied"}
        assert first.apply(sell("2001", 600)).status == "applied"  # 1001 now cached by `first`
        assert second.apply(sell("2002", 400)).status == "applied"  # the other writer sells
        # `first` must see that 1001 holds nothing now: its cached copy still shows 400
        again = first.apply(sell("2001", 400))
        assert again.status == "rejected" and again.rule == "RINS-NOT-HELD", again.error
        parties = ("1001", "2001", "2002")
        held = {p: sum(r["gallon_rins"] for r in first.holdings(p)) for p in parties}
        assert held == {"1001": 0, "2001": 600, "2002": 400}  # 1,000 generated, none twice


def test_a_refused_save_does_not_leave_unsaved_changes_in_memory(tmp_path: Path) -> None:
    from ledger import Ledger

    with Ledger(tmp_path) as first, Ledger(tmp_path) as second:
        assert {r.status for r in first.apply_many(SETUP)} == {"applied"}
        second.apply({"type": "register_party", "party": "3001", "name": "O",
                      "roles": ["obligated_party"]})
        # first's batch conflicts with nothing but runs after another writer: still exact
        results = list(first.apply_many([sell("2001", 700), sell("2002", 700)]))
        assert [r.status for r in results] == ["applied", "rejected"]
        assert sum(r["gallon_rins"] for r in second.holdings("1001")) == 300
