"""Model-based testing: random command sequences against the Ledger and a tiny reference model.

The reference model is plain dicts: per party, per (company, batch, K), each gallon-RIN serial
held and the date it was acquired, plus every dated move and fuel change. Commands are dated
forward or back-dated before moves already applied. The model predicts whether each command is
applied or rejected — a party moves on date D only gallon-RINs it holds on every date from D on
(design.md: "a party cannot move RINs on a date before it held them"), and only fuel that leaves
no later date negative — and what every party holds now and on any date (FIFO: earliest
generation, then company, facility, batch, then lowest serial); the test compares after every
step, and replays the moves in date order to prove no holding is negative on any date.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import Phase, seed, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from long_profile import LONG, sized, tally
from sqlite_utils import Database
from store_access import app_of

from ledger.application.ledger import Ledger, Result
from ledger.domain.fuel_book import FuelBook
from ledger.domain.holdings import Holdings
from ledger.domain.party import Party
from ledger.domain.rin import parse_code
from projections import Views, compliance, holdings, quarterly

EXAMPLES, STEPS = sized(50, 70), sized(30, 300)
LEAST_STEPS = sized(500, 10_000)  # what a whole run of the state machine must reach
SNAPSHOT_EVERY = 7
COUNTS = tally("state machine commands")
REFUSALS = tally("state machine refusals by rule")
RUN = tally("state machine run")
PARTIES = {  # party → (roles, facilities)
    "1001": (["producer"], ["20001"]),
    "1002": (["producer"], ["20002"]),
    "2001": (["blender"], []),
    "3001": (["obligated_party"], []),
    "4001": (["rin_owner"], []),
}
FACILITY = {"1001": "20001", "1002": "20002"}
FIRST, LAST = date(2024, 1, 1), date(2024, 12, 31)
QUARTER_ENDS = [date(2024, 3, 31), date(2024, 6, 30), date(2024, 9, 30), LAST]
Key = tuple[str, str, int]  # (company, batch, K) — every batch here is D6 ethanol of 2024
Held = dict[Key, dict[int, date]]  # serial → the date its holder acquired it
Place = tuple[str, Key]  # (party, key)
Move = tuple[date, Place | None, Place | None, frozenset[int]]  # from None: generated; to: retired
party_ids = st.sampled_from(sorted(PARTIES))
quantities = st.integers(1, 3_000)
gallons = st.integers(1, 3_000)
# days after the latest date so far, or (negative) before it: a back-dated command; now and
# then a longer step, so that sequences cross quarter ends
when = st.integers(0, 3) | st.integers(4, 40) | st.integers(-5, -1) | st.integers(-90, -6)


class LedgerVersusModel(RuleBasedStateMachine):
    """Drive the Ledger and the model with the same commands; they must always agree."""

    def __init__(self) -> None:
        super().__init__()
        self.folder = tempfile.mkdtemp(prefix="rin-model-")
        self.ledger = Ledger(self.folder)
        # snapshots (every 200 events in use) every few events, so that aggregates are often
        # loaded from one after a refusal: holdings and fuel by date must survive it
        app_of(self.ledger).snapshotting_intervals = {Party: SNAPSHOT_EVERY}  # type: ignore[misc]
        self.latest = self.day = FIRST  # the latest date any command named; this command's
        self.registered: set[str] = set()
        self.held: dict[str, Held] = {p: {} for p in PARTIES}
        self.moves: list[Move] = []
        self.fuel_log: list[tuple[date, str, Decimal]] = []  # (date, party, signed gallons)
        self.retired: dict[tuple[str, str], set[int]] = {}
        # per party, per batch (company, batch): the first serials of daughters it knows
        # (§80.1428(d)): from its own splits, and from daughters it received together
        self.cuts: dict[str, dict[tuple[str, str], set[int]]] = {p: {} for p in PARTIES}
        self.generated: dict[tuple[str, str], tuple[int, date]] = {}  # batch → (count, date)
        self.rvo: dict[str, int] = {}  # 3001's 2024 RVOs, as last reported
        self.retired_for_2024 = 0  # D6 gallon-RINs 3001 retired for 2024 compliance
        self.started = False  # True once the market is set up: each later rule is one step
        RUN["examples"] += 1

    def teardown(self) -> None:
        self.ledger.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    # ---- the model ---------------------------------------------------------------------

    def total(self, party: str, k: int) -> int:
        return sum(len(s) for (_, _, kk), s in self.held[party].items() if kk == k)

    def movable(self, party: str, k: int, on: date) -> int:
        """Gallon-RINs of K=`k` the party holds now and has held since `on` or earlier."""
        return sum(acquired <= on for (_, _, kk), serials in self.held[party].items() if kk == k
                   for acquired in serials.values())

    def fuel_on(self, party: str, on: date) -> Decimal:
        return sum((v for d, p, v in self.fuel_log if p == party and d <= on), Decimal(0))

    def fuel_movable(self, party: str, on: date) -> Decimal:
        """The most gallons that may leave on `on`: the lowest balance on `on` or any later date
        a change of the party's is dated (the balance only changes on those dates)."""
        later = {d for d, p, _ in self.fuel_log if p == party and d > on}
        return min(self.fuel_on(party, d) for d in {on, *later})

    def pick_fifo(self, party: str, k: int, quantity: int, on: date) -> list[tuple[Key, set[int]]]:
        """The model's FIFO: earliest generation, then company, facility, batch; lowest serial;
        among the serials acquired on or before `on`."""
        def order(key: Key) -> tuple[date, str, str, str]:
            company, batch, _ = key
            return (self.generated[(company, batch)][1], company, FACILITY[company], batch)

        picked, need = [], quantity
        for key in sorted((key for key in self.held[party] if key[2] == k), key=order):
            free = sorted(s for s, acquired in self.held[party][key].items() if acquired <= on)
            take = set(free[:need])
            if take:
                picked.append((key, take))
                need -= len(take)
        return picked

    def move(self, party: str, picked: list[tuple[Key, set[int]]], to: str | None,
             new_k: int | None = None) -> None:
        for (company, batch, k), serials in picked:
            mine = self.held[party][(company, batch, k)]
            for serial in serials:
                del mine[serial]
            if not mine:
                del self.held[party][(company, batch, k)]
            target = None
            if to is not None:
                target = (to, (company, batch, new_k or k))
                self.held[to].setdefault(target[1], {}).update(dict.fromkeys(serials, self.day))
                # the seller moves daughters as separate blocks: the buyer learns each cut
                # with serials on both sides of it in what it received
                known = self.cuts[party].get((company, batch), set())
                learned = {c for c in known if c in serials and c - 1 in serials}
                self.cuts[to].setdefault((company, batch), set()).update(learned)
            self.moves.append((self.day, (party, (company, batch, k)), target, frozenset(serials)))

    def move_fuel(self, seller: str | None, buyer: str | None, volume: Decimal) -> None:
        for party, sign in ((seller, -1), (buyer, 1)):
            if party is not None:
                self.fuel_log.append((self.day, party, sign * volume))

    def replay(self, checkpoints: list[date]) -> dict[date, Counter[tuple[str, int]]]:
        """Apply every move in date order (same-date moves in the order applied), asserting
        that each takes only serials its holder held on that date; return gallon-RINs held per
        (party, K) at the end of each checkpoint date. The final state is today's holdings."""
        state: dict[str, dict[Key, set[int]]] = {p: {} for p in PARTIES}
        at: dict[date, Counter[tuple[str, int]]] = {}
        pending = sorted(set(checkpoints))

        def count() -> Counter[tuple[str, int]]:
            return Counter({(p, k): n for p in state for k in (1, 2)
                            if (n := sum(len(s) for (_, _, kk), s in state[p].items()
                                         if kk == k))})

        for on, source, target, serials in sorted(self.moves, key=lambda m: m[0]):
            while pending and pending[0] < on:
                at[pending.pop(0)] = count()
            if source is not None:
                holder, key = source
                assert serials <= state[holder].get(key, set()), (
                    f"{holder} would hold a negative amount of {key} on {on}")
                state[holder][key] -= serials
            if target is not None:
                state[target[0]].setdefault(target[1], set()).update(serials)
        for on in pending:
            at[on] = count()
        now = {p: {key: s for key, s in held.items() if s} for p, held in state.items()}
        assert now == {p: {key: set(s) for key, s in held.items()}
                       for p, held in self.held.items()}
        return at

    # ---- driving both --------------------------------------------------------------------

    def apply(self, command: dict[str, Any], expect: bool, what: str) -> Result:
        result = self.ledger.apply(command)
        back = " (back-dated)" if "date" in command and self.day < self.latest else ""
        COUNTS[f"{what}{back}: {result.status}"] += 1
        if result.status == "rejected":
            REFUSALS[f"{what}{back}: {result.rule or result.field}"] += 1
        RUN["steps (one command each)" if self.started else "start-up commands"] += 1
        assert (result.status == "applied") == expect, (command, result, expect, self.latest)
        return result

    def on(self, days: int) -> str:
        """The date of the next command: `days` after the latest date so far, or before it."""
        self.day = min(max(self.latest + timedelta(days=days), FIRST), LAST)
        return self.day.isoformat()

    def done(self) -> None:
        self.latest = max(self.latest, self.day)

    @initialize(volume=gallons, rvo=st.integers(0, 6_000))
    def start_market(self, volume: int, rvo: int) -> None:
        for party in ("1001", "2001", "3001"):  # 1002 and 4001 wait for the register rule
            self.register(party)
        self.report_obligation(rvo, rvo // 3)
        self.generate("1001", volume, reuse=1, days=0)
        self.started = True

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
                        if (self.total(p, holding_k) if holding_k else self.fuel_on(p, LAST)))
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

    def rins_to_ask(self, data: st.DataObject, party: str, k: int) -> int:
        """Mostly at most what `party` may move on the command's date; now and then up to all
        it holds now (RINs acquired after that date: an over-spend when back-dated)."""
        most = self.movable(party, k, self.day) if data.draw(st.integers(0, 2)) else None
        return self.some_quantity(data, self.total(party, k) if most is None else most)

    def fuel_to_ask(self, data: st.DataObject, party: str, least: int = 1) -> int:
        """Mostly at most the gallons `party` may deliver on the command's date; now and then
        up to its balance on that date (more than a later date leaves, when back-dated)."""
        most = self.fuel_movable(party, self.day) if data.draw(st.integers(0, 2)) else None
        return self.some_quantity(data, self.fuel_on(party, self.day) if most is None else most,
                                  least)

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
          reuse=st.integers(0, 9), days=when)
    def generate(self, producer: str, volume: int, reuse: int, days: int) -> None:
        used = sorted(batch for company, batch in self.generated if company == producer)
        batch = used[0] if reuse == 0 and used else f"{len(used) + 1:05d}"
        command = {"type": "generate", "date": self.on(days), "party": producer,
                   "facility": FACILITY[producer], "batch": batch, "fuel": "ethanol",
                   "d_code": 6, "volume": str(volume)}
        ok = producer in self.registered and (producer, batch) not in self.generated
        self.apply(command, ok, "generate")
        if ok:  # ethanol, EV 1.0: `volume` standardized gallons × 1.0 = `volume` gallon-RINs
            self.generated[(producer, batch)] = (volume, self.day)
            key = (producer, batch, 1)
            self.held[producer][key] = dict.fromkeys(range(1, volume + 1), self.day)
            self.moves.append((self.day, None, (producer, key), frozenset(range(1, volume + 1))))
            self.move_fuel(None, producer, Decimal(volume))
        self.done()

    @rule(data=st.data(), days=when)
    def transfer_assigned(self, data: st.DataObject, days: int) -> None:
        seller = self.some_party(data, holding_k=1)
        buyer = self.other_party(data, seller)
        on = self.on(days)
        quantity = self.rins_to_ask(data, seller, 1)
        volume = self.fuel_to_ask(data, seller, -(-quantity * 2 // 5))
        command = {"type": "transfer", "date": on, "from": seller, "to": buyer,
                   "volume": str(volume), "rins": {"d_code": 6, "vintage": 2024, "k": 1,
                                                   "quantity": quantity}}
        ok = (seller in self.registered and buyer in self.registered and seller != buyer
              and self.movable(seller, 1, self.day) >= quantity
              and quantity <= Decimal("2.5") * volume
              and volume <= self.fuel_movable(seller, self.day))
        self.apply(command, ok, "transfer K=1 with fuel")
        if ok:
            self.move(seller, self.pick_fifo(seller, 1, quantity, self.day), buyer)
            self.move_fuel(seller, buyer, Decimal(volume))
        self.done()

    @rule(data=st.data(), days=when)
    def transfer_separated(self, data: st.DataObject, days: int) -> None:
        seller = self.some_party(data, holding_k=2)
        buyer = "3001" if data.draw(st.booleans()) else self.other_party(data, seller)
        on = self.on(days)
        quantity = self.rins_to_ask(data, seller, 2)
        command = {"type": "transfer", "date": on, "from": seller, "to": buyer,
                   "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": quantity}}
        ok = (seller in self.registered and buyer in self.registered and seller != buyer
              and self.movable(seller, 2, self.day) >= quantity)
        self.apply(command, ok, "transfer K=2")
        if ok:
            self.move(seller, self.pick_fifo(seller, 2, quantity, self.day), buyer)
        self.done()

    @rule(data=st.data(), days=when)
    def transfer_fuel(self, data: st.DataObject, days: int) -> None:
        seller = self.some_party(data)
        buyer = self.other_party(data, seller)
        on = self.on(days)
        volume = self.fuel_to_ask(data, seller)
        command = {"type": "transfer_fuel", "date": on, "from": seller, "to": buyer,
                   "volume": str(volume)}
        ok = (seller in self.registered and buyer in self.registered and seller != buyer
              and volume <= self.fuel_movable(seller, self.day))
        self.apply(command, ok, "transfer_fuel")
        if ok:
            self.move_fuel(seller, buyer, Decimal(volume))
        self.done()

    @rule(data=st.data(), days=when)
    def separate(self, data: st.DataObject, days: int) -> None:
        party = self.some_party(data, holding_k=1)
        on = self.on(days)
        quantity = self.rins_to_ask(data, party, 1)
        volume = self.fuel_to_ask(data, party, -(-quantity * 2 // 5))
        command = {"type": "separate", "date": on, "party": party, "reason": "blending",
                   "volume": str(volume), "rins": {"d_code": 6, "vintage": 2024, "k": 1,
                                                   "quantity": quantity}}
        ok = (party in self.registered and self.movable(party, 1, self.day) >= quantity
              and quantity <= Decimal("2.5") * volume
              and volume <= self.fuel_movable(party, self.day))
        self.apply(command, ok, "separate on blending")
        if ok:  # §80.1429(c): K 1 → 2, same serials; the blended fuel is used up
            self.move(party, self.pick_fifo(party, 1, quantity, self.day), party, new_k=2)
            self.move_fuel(party, None, Decimal(volume))
        self.done()

    @rule(data=st.data(), days=when)
    def retire(self, data: st.DataObject, days: int) -> None:
        party = "3001" if data.draw(st.integers(0, 3)) else self.some_party(data, holding_k=2)
        on = self.on(days)
        quantity = self.rins_to_ask(data, party, 2)
        command = {"type": "retire", "date": on, "party": party, "reason": "compliance",
                   "compliance_year": 2024, "rins": {"d_code": 6, "vintage": 2024, "k": 2,
                                                     "quantity": quantity}}
        ok = (party in self.registered and "obligated_party" in PARTIES[party][0]
              and self.movable(party, 2, self.day) >= quantity)
        self.apply(command, ok, "retire for compliance")
        if ok:
            self.retire_in_model(party, quantity)
        self.done()

    def retire_in_model(self, party: str, quantity: int) -> None:
        picked = self.pick_fifo(party, 2, quantity, self.day)
        self.move(party, picked, None)
        for (company, batch, _), serials in picked:
            self.retired.setdefault((company, batch), set()).update(serials)
        self.retired_for_2024 += quantity

    @precondition(lambda self: self.total("3001", 2) > 0)
    @rule(data=st.data(), days=when)
    def retire_held(self, data: st.DataObject, days: int) -> None:
        """3001 retires some of the separated RINs it holds for 2024: applied if it has held
        that many since the retirement's date."""
        on = self.on(days)
        quantity = data.draw(st.integers(1, self.total("3001", 2)))
        command = {"type": "retire", "date": on, "party": "3001", "reason": "compliance",
                   "compliance_year": 2024, "rins": {"d_code": 6, "vintage": 2024, "k": 2,
                                                     "quantity": quantity}}
        ok = self.movable("3001", 2, self.day) >= quantity
        self.apply(command, ok, "retire for compliance")
        if ok:
            self.retire_in_model("3001", quantity)
        self.done()

    @precondition(lambda self: any(self.held.values()))
    @rule(data=st.data(), days=when)
    def split(self, data: st.DataObject, days: int) -> None:
        party = data.draw(st.sampled_from(sorted(p for p, h in self.held.items() if h)))
        key = data.draw(st.sampled_from(sorted(self.held[party])))
        held = self.held[party][key]
        first = data.draw(st.sampled_from(sorted(held)))
        last = first
        while last + 1 in held and last - first < 5_000:
            last += 1
        last = data.draw(st.integers(first, last))
        count = last - first + 1
        head = data.draw(st.integers(1, count - 1) if count > 1 and data.draw(st.integers(0, 5))
                         else st.integers(1, count + 1))
        sizes = [head, count - head] if count - head > 0 else [head, 1]
        company, batch, k = key
        code = f"{k}2024{company}{FACILITY[company]}{batch}106{first:08d}{last:08d}"
        command = {"type": "split", "date": self.on(days), "party": party, "rin": code,
                   "sizes": sizes}
        # a split divides a block held since its date into daughters summing to it; holdings
        # do not change; a block spanning daughters of an earlier split is not one batch-RIN
        # (§80.1428(d))
        since = all(held[s] <= self.day for s in range(first, last + 1))
        cuts = self.cuts[party].setdefault((company, batch), set())
        ok = sum(sizes) == count and since and not any(first < c <= last for c in cuts)
        self.apply(command, ok, "split")
        if ok:
            cuts.add(first + sizes[0])
        self.done()

    # ---- what must agree after every step -------------------------------------------------

    @invariant()
    def holdings_agree(self) -> None:
        RUN["invariant checks"] += 1
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
            assert held == {key: set(s) for key, s in self.held[party].items()}

    @invariant()
    def fuel_agrees_on_every_date(self) -> None:
        """No fuel balance is negative on any date, and the ledger's equals the model's."""
        for party in sorted(self.registered):
            book = self.ledger.party(party).fuel
            for on in sorted({d for d, p, _ in self.fuel_log if p == party} | {self.day}):
                assert self.fuel_on(party, on) >= 0, (party, on)
                assert book.balance(on) == self.fuel_on(party, on), (party, on)

    @invariant()
    def reports_agree(self) -> None:
        """The read side's positions on this command's date and the day before, its quarter-end
        checks and compliance positions equal the model's replayed in date order."""
        dates = [self.day - timedelta(days=1), self.day, *QUARTER_ENDS]
        at = self.replay(dates)
        views = Views(self.ledger)
        views.project()  # once: the queries below read the same views
        db = Database(views.path)
        for on in dates[:2]:
            expected = [{"party": p, "d_code": 6, "vintage": 2024, "k": k, "gallon_rins": n}
                        for (p, k), n in sorted(at[on].items())]
            assert holdings.holdings(db, as_of=on) == expected, on
        rows = quarterly.quarterly(db, 2024)
        for row in rows:
            on = date.fromisoformat(str(row["date"]))
            expected_k1, expected_fuel = at[on][(row["party"], 1)], self.fuel_on(row["party"], on)
            limit = Decimal("2.5") * expected_fuel
            assert (row["assigned_rins"], Decimal(row["volume"])) == (expected_k1, expected_fuel)
            assert Decimal(row["excess"]) == max(Decimal(0), expected_k1 - limit)
            assert row["ok"] is (expected_k1 <= limit)
        # a party is listed on a quarter end once it has owned assigned RINs or fuel by then
        listed = {(row["party"], date.fromisoformat(str(row["date"]))) for row in rows}
        owners = {(place[0], on) for on, *places, _ in self.moves for place in places
                  if place is not None and place[1][2] == 1}
        owners |= {(p, on) for on, p, _ in self.fuel_log}
        assert listed == {(p, end) for p, on in owners for end in QUARTER_ENDS if on <= end}
        # every RIN here is a 2024 D6 RIN: it counts toward RF only (§80.1427(a)(2)(iv))
        positions = {row["category"]: row for row in compliance.compliance(db, 2024, "3001")}
        db.close()
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
            for event in self.ledger.log.history(Party.create_id(party)):
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


def test_the_state_machine_ran_its_steps() -> None:
    """The run just made reached its profile's steps (10,000 under RIN_LONG=1): hypothesis
    draws each example's length, so the count is checked, not assumed."""
    if not RUN["examples"]:
        pytest.skip("the state machine was not selected in this session")
    assert RUN["steps (one command each)"] >= LEAST_STEPS, (dict(RUN), "long" if LONG else "")


# ---- the model catches a ledger that breaks "no holding negative on any date" -------------

BROKEN = settings(max_examples=300, stateful_step_count=30, deadline=None, database=None,
                  derandomize=True,
                  phases=[Phase.generate])


@seed(1)  # overrides derandomize, for this subclass only (the machine itself stays random)
class BrokenRun(LedgerVersusModel):
    """The same machine, seeded for the runs against ledgers broken on purpose: seed 1 catches
    the back-dated moves in 6 examples and the fuel taken twice in 12, and those examples pass
    on the unbroken ledger; derandomized they took 36 and 12 (19 s and 9 s of CPU)."""


@pytest.fixture
def untallied() -> Iterator[None]:
    """Runs against a deliberately broken ledger do not count in the session's tallies."""
    saved = [Counter(t) for t in (COUNTS, REFUSALS, RUN)]
    yield
    for tally_, counts in zip((COUNTS, REFUSALS, RUN), saved, strict=True):
        tally_.clear()
        tally_.update(counts)


def test_model_refuses_what_a_ledger_moving_rins_before_it_held_them_accepts(
    monkeypatch: pytest.MonkeyPatch, untallied: None
) -> None:
    """Break the rule on purpose: let a party move gallon-RINs on a date before it acquired
    them. The back-dated moves must then disagree with the model."""
    def any_date(self: Holdings, key: Any, on: date) -> Any:
        return unbroken_available(self, key, date.max)

    def remove_any_date(self: Holdings, block: Any, on: date) -> None:
        unbroken_remove(self, block, date.max)

    unbroken_available, unbroken_remove = Holdings.available, Holdings.remove
    monkeypatch.setattr(Holdings, "available", any_date)
    monkeypatch.setattr(Holdings, "remove", remove_any_date)
    with pytest.raises(AssertionError):  # the same machine passes on the unbroken ledger
        run_state_machine_as_test(  # type: ignore[no-untyped-call]
            BrokenRun, settings=BROKEN)


def test_model_refuses_what_a_ledger_ignoring_later_fuel_dates_accepts(
    monkeypatch: pytest.MonkeyPatch, untallied: None
) -> None:
    """Break the rule on purpose: let a back-dated delivery take fuel a later delivery already
    took (the balance on its own date only). The model must refuse what this ledger applies."""
    monkeypatch.setattr(FuelBook, "available", FuelBook.balance)
    with pytest.raises(AssertionError):  # the same machine passes on the unbroken ledger
        run_state_machine_as_test(  # type: ignore[no-untyped-call]
            BrokenRun, settings=BROKEN)
