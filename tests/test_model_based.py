"""Model-based testing: random command sequences against the Ledger and a tiny reference model.

The reference model is plain dicts: per party, per (company, batch, K), the set of gallon-RIN
serials held, plus gallons of renewable fuel and the serials retired. It predicts whether each
command is applied or rejected and what every party then holds (FIFO: earliest generation,
then company, facility, batch, then lowest serial), and the test compares after every step.
Dates only move forward, so every RIN held was acquired on or before the day it moves.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from ledger.ledger import Ledger, Result
from ledger.party import Party
from ledger.rin import parse_code
from projections import Views

EXAMPLES, STEPS = 50, 30
COUNTS: Counter[str] = Counter()
PARTIES = {  # party → (roles, facilities)
    "1001": (["producer"], ["20001"]),
    "1002": (["producer"], ["20002"]),
    "2001": (["blender"], []),
    "3001": (["obligated_party"], []),
    "4001": (["rin_owner"], []),
}
FACILITY = {"1001": "20001", "1002": "20002"}
Key = tuple[str, str, int]  # (company, batch, K) — every batch here is D6 ethanol of 2024
party_ids = st.sampled_from(sorted(PARTIES))
quantities = st.integers(1, 3_000)
gallons = st.integers(1, 3_000)


class LedgerVersusModel(RuleBasedStateMachine):
    """Drive the Ledger and the model with the same commands; they must always agree."""

    def __init__(self) -> None:
        super().__init__()
        self.folder = tempfile.mkdtemp(prefix="rin-model-")
        self.ledger = Ledger(self.folder)
        self.day = date(2024, 1, 1)
        self.registered: set[str] = set()
        self.held: dict[str, dict[Key, set[int]]] = {p: {} for p in PARTIES}
        self.fuel: dict[str, Decimal] = {p: Decimal(0) for p in PARTIES}
        self.retired: dict[tuple[str, str], set[int]] = {}
        # per party, per batch (company, batch): the first serials of daughters it knows
        # (§80.1428(d)): from its own splits, and from daughters it received together
        self.cuts: dict[str, dict[tuple[str, str], set[int]]] = {p: {} for p in PARTIES}
        self.generated: dict[tuple[str, str], tuple[int, date]] = {}  # batch → (count, date)
        # end-of-day K=1 totals and fuel per party, for the quarter-end check (§80.1428(a)(5))
        self.days: dict[date, tuple[dict[str, int], dict[str, Decimal]]] = {}
        self.rvo: dict[str, int] = {}  # 3001's 2024 RVOs, as last reported
        self.retired_for_2024 = 0  # D6 gallon-RINs 3001 retired for 2024 compliance

    def teardown(self) -> None:
        self.ledger.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    # ---- the model ---------------------------------------------------------------------

    def total(self, party: str, k: int) -> int:
        return sum(len(s) for (_, _, kk), s in self.held[party].items() if kk == k)

    def pick_fifo(self, party: str, k: int, quantity: int) -> list[tuple[Key, set[int]]]:
        """The model's FIFO: earliest generation, then company, facility, batch; lowest serial."""
        def order(key: Key) -> tuple[date, str, str, str]:
            company, batch, _ = key
            return (self.generated[(company, batch)][1], company, FACILITY[company], batch)

        picked, need = [], quantity
        for key in sorted((key for key in self.held[party] if key[2] == k), key=order):
            take = set(sorted(self.held[party][key])[:need])
            if take:
                picked.append((key, take))
                need -= len(take)
        return picked

    def move(self, party: str, picked: list[tuple[Key, set[int]]], to: str | None,
             new_k: int | None = None) -> None:
        for (company, batch, k), serials in picked:
            mine = self.held[party][(company, batch, k)]
            mine -= serials
            if not mine:
                del self.held[party][(company, batch, k)]
            if to is not None:
                target = (company, batch, new_k or k)
                self.held[to].setdefault(target, set()).update(serials)
                # the seller moves daughters as separate blocks: the buyer learns each cut
                # with serials on both sides of it in what it received
                known = self.cuts[party].get((company, batch), set())
                learned = {c for c in known if c in serials and c - 1 in serials}
                self.cuts[to].setdefault((company, batch), set()).update(learned)

    # ---- driving both --------------------------------------------------------------------

    def apply(self, command: dict[str, Any], expect: bool, what: str) -> Result:
        result = self.ledger.apply(command)
        COUNTS[f"{what}: {result.status}"] += 1
        COUNTS[f"why {what}: {result.rule or result.field}"] += result.status == "rejected"
        assert (result.status == "applied") == expect, (command, result, expect)
        return result

    def dated(self, command: dict[str, Any], advance: int) -> dict[str, Any]:
        self.day = min(self.day + timedelta(days=advance), date(2024, 12, 31))
        return {**command, "date": self.day.isoformat()}

    @initialize(volume=gallons, rvo=st.integers(0, 6_000))
    def start_market(self, volume: int, rvo: int) -> None:
        for party in ("1001", "2001", "3001"):  # 1002 and 4001 wait for the register rule
            self.register(party)
        self.report_obligation(rvo, rvo // 3)
        self.generate("1001", volume, reuse=1, advance=0)

    @rule(rf=st.integers(0, 6_000), ab=st.integers(0, 3_000))
    def report_obligation(self, rf: int, ab: int) -> None:
        """3001 reports (or amends) its 2024 RVOs; the latest report counts."""
        rvo = {"CB": ab // 4, "BBD": ab // 2, "AB": ab, "RF": rf}
        command = {"type": "report_obligation", "party": "3001", "year": 2024, "rvo": rvo}
        self.apply(command, True, "report_obligation")
        self.rvo = rvo

    def some_party(self, data: st.DataObject, holding_k: int | None = None) -> str:
        """Mostly a registered party holding K=`holding_k` RINs (or fuel), if any do; or any."""
        likely = sorted(p for p in self.registered
                        if (self.total(p, holding_k) if holding_k else self.fuel[p]))
        if likely and data.draw(st.integers(0, 9)):
            return data.draw(st.sampled_from(likely))
        return data.draw(party_ids)

    def other_party(self, data: st.DataObject, party: str) -> str:
        """Mostly a registered party other than `party`; now and then any."""
        others = sorted(self.registered - {party})
        return data.draw(st.sampled_from(others) if others and data.draw(st.integers(0, 9))
                         else party_ids)

    def some_quantity(self, data: st.DataObject, most: int | Decimal, least: int = 1) -> int:
        """Mostly between `least` and `most`; now and then anything."""
        low, high = least, int(most)
        return data.draw(st.integers(low, high) if low <= high and data.draw(st.integers(0, 5))
                         else quantities)

    @rule(data=st.data())
    @precondition(lambda self: len(self.registered) < len(PARTIES))
    def register_next(self, data: st.DataObject) -> None:
        """Mostly a party not yet registered; now and then one again (refused)."""
        new = sorted(set(PARTIES) - self.registered)
        self.register(data.draw(st.sampled_from(new) if data.draw(st.integers(0, 5))
                                else party_ids))

    def register(self, party: str) -> None:
        roles, facilities = PARTIES[party]
        command = {"type": "register_party", "party": party, "name": f"Party {party}",
                   "roles": roles, "facilities": facilities}
        self.apply(command, party not in self.registered, "register")
        self.registered.add(party)

    @rule(producer=st.sampled_from(sorted(FACILITY)), volume=gallons,
          reuse=st.integers(0, 9), advance=st.integers(0, 3))
    def generate(self, producer: str, volume: int, reuse: int, advance: int) -> None:
        used = sorted(batch for company, batch in self.generated if company == producer)
        batch = used[0] if reuse == 0 and used else f"{len(used) + 1:05d}"
        command = self.dated({"type": "generate", "party": producer,
                              "facility": FACILITY[producer], "batch": batch, "fuel": "ethanol",
                              "d_code": 6, "volume": str(volume)}, advance)
        ok = producer in self.registered and (producer, batch) not in self.generated
        self.apply(command, ok, "generate")
        if ok:  # ethanol, EV 1.0: `volume` standardized gallons × 1.0 = `volume` gallon-RINs
            self.generated[(producer, batch)] = (volume, self.day)
            self.held[producer][(producer, batch, 1)] = set(range(1, volume + 1))
            self.fuel[producer] += volume

    @rule(data=st.data(), advance=st.integers(0, 3))
    def transfer_assigned(self, data: st.DataObject, advance: int) -> None:
        seller = self.some_party(data, holding_k=1)
        buyer = self.other_party(data, seller)
        quantity = self.some_quantity(data, self.total(seller, 1))
        volume = self.some_quantity(data, self.fuel[seller], -(-quantity * 2 // 5))
        command = self.dated({"type": "transfer", "from": seller, "to": buyer,
                              "volume": str(volume), "rins": {"d_code": 6, "vintage": 2024,
                                                              "k": 1, "quantity": quantity}},
                             advance)
        ok = (seller in self.registered and buyer in self.registered and seller != buyer
              and self.total(seller, 1) >= quantity and quantity <= Decimal("2.5") * volume
              and volume <= self.fuel[seller])
        self.apply(command, ok, "transfer K=1 with fuel")
        if ok:
            self.move(seller, self.pick_fifo(seller, 1, quantity), buyer)
            self.fuel[seller] -= volume
            self.fuel[buyer] += volume

    @rule(data=st.data(), advance=st.integers(0, 3))
    def transfer_separated(self, data: st.DataObject, advance: int) -> None:
        seller = self.some_party(data, holding_k=2)
        buyer = "3001" if data.draw(st.booleans()) else self.other_party(data, seller)
        quantity = self.some_quantity(data, self.total(seller, 2))
        command = self.dated({"type": "transfer", "from": seller, "to": buyer,
                              "rins": {"d_code": 6, "vintage": 2024, "k": 2,
                                       "quantity": quantity}}, advance)
        ok = (seller in self.registered and buyer in self.registered and seller != buyer
              and self.total(seller, 2) >= quantity)
        self.apply(command, ok, "transfer K=2")
        if ok:
            self.move(seller, self.pick_fifo(seller, 2, quantity), buyer)

    @rule(data=st.data(), advance=st.integers(0, 3))
    def transfer_fuel(self, data: st.DataObject, advance: int) -> None:
        seller = self.some_party(data)
        buyer = self.other_party(data, seller)
        volume = self.some_quantity(data, self.fuel[seller])
        command = self.dated({"type": "transfer_fuel", "from": seller, "to": buyer,
                              "volume": str(volume)}, advance)
        ok = (seller in self.registered and buyer in self.registered and seller != buyer
              and volume <= self.fuel[seller])
        self.apply(command, ok, "transfer_fuel")
        if ok:
            self.fuel[seller] -= volume
            self.fuel[buyer] += volume

    @rule(data=st.data(), advance=st.integers(0, 3))
    def separate(self, data: st.DataObject, advance: int) -> None:
        party = self.some_party(data, holding_k=1)
        quantity = self.some_quantity(data, self.total(party, 1))
        volume = self.some_quantity(data, self.fuel[party], -(-quantity * 2 // 5))
        command = self.dated({"type": "separate", "party": party, "reason": "blending",
                              "volume": str(volume), "rins": {"d_code": 6, "vintage": 2024,
                                                              "k": 1, "quantity": quantity}},
                             advance)
        ok = (party in self.registered and self.total(party, 1) >= quantity
              and quantity <= Decimal("2.5") * volume and volume <= self.fuel[party])
        self.apply(command, ok, "separate on blending")
        if ok:  # §80.1429(c): K 1 → 2, same serials; the blended fuel is used up
            self.move(party, self.pick_fifo(party, 1, quantity), party, new_k=2)
            self.fuel[party] -= volume

    @rule(data=st.data(), advance=st.integers(0, 3))
    def retire(self, data: st.DataObject, advance: int) -> None:
        party = "3001" if data.draw(st.integers(0, 3)) else self.some_party(data, holding_k=2)
        quantity = self.some_quantity(data, self.total(party, 2))
        command = self.dated({"type": "retire", "party": party, "reason": "compliance",
                              "compliance_year": 2024, "rins": {"d_code": 6, "vintage": 2024,
                                                                "k": 2, "quantity": quantity}},
                             advance)
        ok = (party in self.registered and "obligated_party" in PARTIES[party][0]
              and self.total(party, 2) >= quantity)
        self.apply(command, ok, "retire for compliance")
        if ok:
            self.retire_in_model(party, quantity)

    def retire_in_model(self, party: str, quantity: int) -> None:
        picked = self.pick_fifo(party, 2, quantity)
        self.move(party, picked, None)
        for (company, batch, _), serials in picked:
            self.retired.setdefault((company, batch), set()).update(serials)
        self.retired_for_2024 += quantity

    @precondition(lambda self: self.total("3001", 2) > 0)
    @rule(data=st.data(), advance=st.integers(0, 3))
    def retire_held(self, data: st.DataObject, advance: int) -> None:
        """3001 retires some of the separated RINs it holds for 2024 (always applies)."""
        quantity = data.draw(st.integers(1, self.total("3001", 2)))
        command = self.dated({"type": "retire", "party": "3001", "reason": "compliance",
                              "compliance_year": 2024, "rins": {"d_code": 6, "vintage": 2024,
                                                                "k": 2, "quantity": quantity}},
                             advance)
        self.apply(command, True, "retire for compliance")
        self.retire_in_model("3001", quantity)

    @precondition(lambda self: any(self.held.values()))
    @rule(data=st.data(), advance=st.integers(0, 3))
    def split(self, data: st.DataObject, advance: int) -> None:
        party = data.draw(st.sampled_from(sorted(p for p, h in self.held.items() if h)))
        key = data.draw(st.sampled_from(sorted(self.held[party])))
        serials = sorted(self.held[party][key])
        first = data.draw(st.sampled_from(serials))
        last = first
        while last + 1 in self.held[party][key] and last - first < 5_000:
            last += 1
        last = data.draw(st.integers(first, last))
        count = last - first + 1
        head = data.draw(st.integers(1, count - 1) if count > 1 and data.draw(st.integers(0, 5))
                         else st.integers(1, count + 1))
        sizes = [head, count - head] if count - head > 0 else [head, 1]
        company, batch, k = key
        code = f"{k}2024{company}{FACILITY[company]}{batch}106{first:08d}{last:08d}"
        command = self.dated({"type": "split", "party": party, "rin": code, "sizes": sizes},
                             advance)
        # a split divides a held block into daughters summing to it; holdings do not change;
        # a block spanning daughters of an earlier split is not one batch-RIN (§80.1428(d))
        cuts = self.cuts[party].setdefault((company, batch), set())
        ok = sum(sizes) == count and not any(first < c <= last for c in cuts)
        self.apply(command, ok, "split")
        if ok:
            cuts.add(first + sizes[0])

    # ---- what must agree after every step -------------------------------------------------

    @invariant()
    def holdings_agree(self) -> None:
        for party in sorted(self.registered):
            totals: Counter[int] = Counter()
            for (_, _, k), serials in self.held[party].items():
                totals[k] += len(serials)
            expected = [{"party": party, "d_code": 6, "vintage": 2024, "k": k, "gallon_rins": n}
                        for k, n in sorted(totals.items()) if n]
            assert self.ledger.holdings(party) == expected
            held: dict[Key, set[int]] = {}
            for row in self.ledger.blocks(party):
                base, start, end = parse_code(row["rin"])
                held.setdefault((base.company, base.batch, base.k), set()).update(
                    range(start, end + 1))
            assert held == self.held[party]
            assert self.ledger.party(party).fuel.available(self.day) == self.fuel[party]

    @invariant()
    def reports_agree(self) -> None:
        """The read side's quarter-end checks and compliance positions equal the model's."""
        self.days[self.day] = (
            {p: self.total(p, 1) for p in PARTIES}, {p: self.fuel[p] for p in PARTIES}
        )
        views = Views(self.ledger)
        rows = views.quarterly(2024)
        for row in rows:  # as the model stood at the end of its last day on or before `date`
            on = date.fromisoformat(str(row["date"]))
            known = [d for d in self.days if d <= on]
            k1, fuel = self.days[max(known)] if known else ({}, {})
            expected_k1, expected_fuel = k1.get(row["party"], 0), fuel.get(row["party"], 0)
            limit = Decimal("2.5") * expected_fuel
            assert (row["assigned_rins"], Decimal(row["volume"])) == (expected_k1, expected_fuel)
            assert Decimal(row["excess"]) == max(Decimal(0), expected_k1 - limit)
            assert row["ok"] is (expected_k1 <= limit)
        listed = {(row["party"], str(row["date"])) for row in rows}
        for quarter_end in ("2024-03-31", "2024-06-30", "2024-09-30", "2024-12-31"):
            known = [d for d in self.days if d <= date.fromisoformat(quarter_end)]
            if known:
                k1, fuel = self.days[max(known)]
                for party in PARTIES:
                    if k1[party] or fuel[party]:
                        assert (party, quarter_end) in listed
        # every RIN here is a 2024 D6 RIN: it counts toward RF only (§80.1427(a)(2)(iv))
        positions = {row["category"]: row for row in views.compliance(2024, "3001")}
        for category, rvo in self.rvo.items():
            retired = self.retired_for_2024 if category == "RF" else 0
            applied = min(rvo, retired)  # never more than the RVO (§80.1427(a)(1))
            deficit = rvo - applied
            assert positions[category] == {
                "party": "3001", "year": 2024, "category": category, "rvo": rvo,
                "deficit_carried_in": 0, "current_year_rins": retired, "prior_year_rins": 0,
                "prior_year_applied": 0, "applied": applied, "deficit": deficit,
                "status": "compliant" if deficit == 0 else "deficit_carried",
            }

    @invariant()
    def conservation(self) -> None:
        """Held by everyone plus retired is exactly each generated range, with no overlap."""
        seen: dict[tuple[str, str], list[int]] = {}
        retired: dict[tuple[str, str], set[int]] = {}
        for party in sorted(self.registered):
            for row in self.ledger.blocks(party):
                base, start, end = parse_code(row["rin"])
                seen.setdefault((base.company, base.batch), []).extend(range(start, end + 1))
            for event in self.ledger.app.events.get(Party.create_id(party)):
                if isinstance(event, Party.Retired):
                    for block in event.rins:
                        batch = (block.key.company, block.key.batch)
                        seen.setdefault(batch, []).extend(range(block.start, block.end + 1))
                        retired.setdefault(batch, set()).update(range(block.start, block.end + 1))
        assert retired == self.retired
        assert sorted(seen) == sorted(self.generated)
        for batch, serials in seen.items():
            assert sorted(serials) == list(range(1, self.generated[batch][0] + 1)), batch


LedgerVersusModel.TestCase.settings = settings(
    max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None
)
TestLedgerVersusModel = LedgerVersusModel.TestCase


def test_zz_report_counts() -> None:
    """Prints how many commands of each kind the state machine applied or saw rejected."""
    print(f"\nstate machine: {EXAMPLES} examples × up to {STEPS} steps;",
          dict(sorted(COUNTS.items())), "total", sum(COUNTS.values()))
