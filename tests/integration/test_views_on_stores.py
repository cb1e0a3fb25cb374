"""The read models follow the event store whichever it is: SQLite, or PostgreSQL in CI."""

from __future__ import annotations

from pathlib import Path

from conftest import Store

from projections import Views

SAMPLE = Path(__file__).parents[1] / "data" / "sample.jsonl"  # a copy of shared/examples


def test_views_follow_the_store_and_verify(store: Store) -> None:
    with store.ledger() as ledger:
        results = list(ledger.apply_many(SAMPLE.read_text().splitlines()))
        assert {r.status for r in results} == {"applied"}
        views = Views(ledger, store.data / "views.sqlite")
        rows = {row["category"]: row for row in views.compliance(2024, "3001")}
        # 1,200,000 gal × 0.59 % = 7,080 CB, no D3 or D7 retired → 7,080 short, carried
        assert (rows["CB"]["rvo"], rows["CB"]["deficit"], rows["CB"]["status"]) == (
            7_080, 7_080, "deficit_carried")
        # 60,000 D4 count toward BBD (2.82 % → 33,840, of which at most 33,840 is applied,
        # §80.1427(a)(1)) and AB; with 90,000 D6 toward RF: 60,000 + 90,000 = 150,000
        assert rows["BBD"]["applied"] == 33_840 and rows["RF"]["applied"] == 150_000
        assert views.verify() == []
