"""§80.1428(d): a divided batch-RIN's daughters are batch-RINs of their own, seen and moved by
their own codes; the parent's code names no held block any more.

Before this change `holdings --blocks` merged the daughters back into the parent's code and
the parent's code still moved them (every test here failed on 89ea268).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from markets import ok

from ledger import Ledger
from projections import Views

# 1001's ethanol batch E0001: 1.0 × 10,000 gal = 10,000 D6 gallon-RINs, RR 10, K=1
PREFIX = "12024100120001E0001106"
PARENT = PREFIX + "00000001" "00010000"
# split into 4,000 + 6,000: serials 1-4,000 and 4,001-10,000 (4,000 + 6,000 = 10,000, (d)(2))
FIRST = PREFIX + "00000001" "00004000"
SECOND = PREFIX + "00004001" "00010000"


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with Ledger(tmp_path) as book:
        ok(book, type="register_party", party="1001", name="P", roles=["producer"],
           facilities=["20001"])
        for party in ("2001", "2002"):
            ok(book, type="register_party", party=party, name="B", roles=["blender"])
        ok(book, type="generate", date="2024-01-31", party="1001", facility="20001",
           batch="E0001", fuel="ethanol", d_code=6, volume=10_000)
        daughters = ok(book, type="split", date="2024-02-01", party="1001", rin=PARENT,
                       sizes=[4_000, 6_000]).rins
        assert daughters == [FIRST, SECOND]
        yield book


def transfer(rins: dict[str, Any], volume: int, seller: str = "1001", buyer: str = "2001",
             on: str = "2024-02-05") -> dict[str, Any]:
    return {"type": "transfer", "date": on, "from": seller, "to": buyer, "rins": rins,
            "volume": volume}


def codes(ledger: Ledger, party: str) -> list[str]:
    return [row["rin"] for row in ledger.blocks(party)]


def projected(ledger: Ledger, party: str) -> list[tuple[str, int]]:
    return [(r["rin"], r["gallon_rins"]) for r in Views(ledger).holdings(party, blocks=True)]


def test_the_daughters_are_seen_apart(ledger: Ledger) -> None:
    assert codes(ledger, "1001") == [FIRST, SECOND]
    assert projected(ledger, "1001") == [(FIRST, 4_000), (SECOND, 6_000)]


def test_a_daughter_moves_by_its_code_and_the_parent_code_is_refused(ledger: Ledger) -> None:
    before = ledger.position()
    refused = ledger.apply(transfer({"code": PARENT}, 10_000))
    assert (refused.status, refused.rule, refused.citation, refused.field) == (
        "rejected", "SPLIT-PARENT", "§80.1428(d)", "rins.code")
    assert FIRST in (refused.error or "") and SECOND in (refused.error or "")
    assert ledger.position() == before
    # 6,000 assigned gallon-RINs with 2,400 gal: 6,000 ≤ 2.5 × 2,400 = 6,000
    ok(ledger, **transfer({"code": SECOND}, 2_400))
    assert codes(ledger, "2001") == [SECOND]
    assert codes(ledger, "1001") == [FIRST]
    # the split again: the parent is gone, and so is its code for a split
    again = ledger.apply({"type": "split", "date": "2024-02-06", "party": "1001", "rin": PARENT,
                          "sizes": [5_000, 5_000]})
    assert again.status == "rejected"


def test_daughters_moved_together_stay_apart_at_the_buyer(ledger: Ledger) -> None:
    # FIFO 10,000 D6 K=1 with 10,000 gal: both daughters, each as its own block
    ok(ledger, **transfer({"d_code": 6, "vintage": 2024, "k": 1, "quantity": 10_000}, 10_000))
    assert codes(ledger, "2001") == [FIRST, SECOND]
    assert projected(ledger, "2001") == [(FIRST, 4_000), (SECOND, 6_000)]
    refused = ledger.apply(transfer({"code": PARENT}, 10_000, "2001", "2002", "2024-02-06"))
    assert (refused.status, refused.rule) == ("rejected", "SPLIT-PARENT")
    ok(ledger, **transfer({"code": FIRST}, 1_600, "2001", "2002", "2024-02-06"))  # 4,000 / 2.5
    assert codes(ledger, "2002") == [FIRST]


def test_a_daughter_can_itself_be_divided(ledger: Ledger) -> None:
    # 6,000 = 1,000 + 5,000: serials 4,001-5,000 and 5,001-10,000
    grand = ok(ledger, type="split", date="2024-02-02", party="1001", rin=SECOND,
               sizes=[1_000, 5_000]).rins
    assert grand == [PREFIX + "00004001" "00005000", PREFIX + "00005001" "00010000"]
    assert codes(ledger, "1001") == [FIRST, *grand]
    assert [n for _, n in projected(ledger, "1001")] == [4_000, 1_000, 5_000]
