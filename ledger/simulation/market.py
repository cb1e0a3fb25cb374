"""A deterministic (seeded) RIN market, streamed as transaction-file lines (JSON Lines).

Producers and importers generate a batch a month by D code in proportions calibrated to EPA's
published figures (reference.md §7: D6 about two-thirds, D4 about a quarter, D3 about 3 %, D5
about 2 %, D7 a trace); they sell the assigned RINs with their fuel (≤ 2.5 RINs a gallon,
§80.1428(a)(4)) to blenders and exporters, who separate them on blending (biodiesel at B20,
§80.1429(b)(2), (b)(6)) or export (§80.1429(b)(3)) and sell the separated RINs to obligated
parties; those report RVOs from the standards table (§80.1407) and retire for compliance
(§80.1427) each March. Some spills and invalid-RIN retirements, splits and fuel-only moves.

Most trades are EMTS postings (§80.1452): a `sell` and the `buy` that answers it (now and then
the buy first, answered by the sell); a few are cancelled by the seller or denied by the buyer
(then made by the fast path, `transfer`) and a few separated sells go unanswered until an
`expire_trades` line expires them; the rest are fast-path transfers. `postings` sets the share
of trades made as postings (0: release 1's market, every trade a `transfer`).

Every line is valid under the ledger's rules unless `bad_lines` asks for invalid ones (each with
an id starting ``bad-``). Memory stays flat: only gallon-RIN counts per (D code, vintage, K)
and fuel gallons per party are kept, which is enough because lines are in date order and the
ledger resolves attribute selectors first-in-first-out among what is held.

Two ways to size one. `generate_market(lines, seed)` picks the party list from `lines`
(`PartyMix.for_lines`) and stops there. `national_market(seed)` is the national
market of reference.md §7: about 2,400 parties (`PartyMix.for_parties`: 1,469 producers, 2,401
parties) over fifteen years from January 2014, closed by the last year's compliance season.
Its proportions: RINs by D code from `KINDS` (§7's shares); 1.1 M gallon-RINs a producer-month,
19.4 B a year nationally (§7: 18.3-21.3 B in 2019-2022); about 190,000 EMTS transactions a
year (§7: 195,000 in 2022), counted a submission each (`EMTS_SUBMISSIONS`: a sell and a buy
are two; a fast-path `transfer` is a sell and a buy, as in design.md's transactions report),
about 2.9 million in fifteen years. §7 gives only the total of parties, not their kinds: the
mix (a blender per three producers, an obligated party per four, an exporter per twenty) and
the share of trades posted (`POSTINGS`) are this simulator's assumptions; D7 is a fixed
80,000 gallon-RINs a year (2014: 59,305), not §7's later "few million". How each figure was
worked out and checked: tests/integration/test_national_market.py, docs/performance.md
"National scale".

`rin demo --size N --seed S` applies one; `python scripts/simulate.py --lines N --seed S` (or
`--national`) writes one as a transaction file.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from random import Random
from typing import Any

from ledger.domain.business_days import business_days_after
from ledger.domain.standards import load_standards

FIRST_YEAR = 2014
MONTHS = 120  # with the next: the party list for `lines` (PartyMix.for_lines)
#: kept at what it was measured as when every trade was a transfer, since it sets the party list
#: of `--lines` markets, whose pinned hashes and bench figures it made; the simulator now makes
#: 6.8 (6.75-6.84) with every trade a transfer and 10.0 (9.98-10.13) with `POSTINGS` (20 and 60
#: producers over 120 months, seed 1, registrations included)
LINES_PER_PRODUCER_MONTH = 6.6
GALLON_RINS_PER_PRODUCER_MONTH = 1_100_000  # 1.6 billion a month over about 1,450 producers
POSTINGS = 0.8  # the share of trades posted to EMTS as a sell and a buy (§80.1452)
#: how a posting ends, by share: most complete; a few are cancelled (EMTS 060), denied (050),
#: or, for separated RINs sold to an obligated party, left to expire
ENDINGS = (("buy_first", 0.15), ("cancelled", 0.04), ("denied", 0.03), ("expired", 0.03))
WINDOW = 10  # business days a posting waits (the ledger's default, RIN_TRADE_WINDOW)


@dataclass(frozen=True)
class Kind:
    """A kind of generator: fuel, D code, equivalence value, share of RINs and of producers."""

    fuel: str
    d_code: int
    ev: Decimal
    rin_share: float
    party_share: float
    role: str = "producer"


# RIN shares from reference.md §7 (2014: D6 83 %, D4 16 %; 2019-2022: D6 ≈ 2/3, D4 ≈ 1/4).
KINDS = (
    Kind("ethanol", 6, Decimal("1.0"), 0.667, 0.52),
    Kind("biodiesel", 4, Decimal("1.5"), 0.20, 0.22),
    Kind("renewable_diesel", 4, Decimal("1.7"), 0.083, 0.08),
    Kind("biogas", 3, Decimal("1.0"), 0.03, 0.08),
    Kind("ethanol", 5, Decimal("1.0"), 0.02, 0.10, role="importer"),  # sugarcane ethanol
)
D7 = Kind("renewable_diesel", 7, Decimal("1.7"), 0.0, 0.0)  # cellulosic diesel, a few batches


@dataclass(frozen=True)
class PartyMix:
    """The party list of a market with `producers` generators: how many of each kind register.
    The generators by `KINDS` share, one D7 producer and the foreign producer importers buy
    from; a blender for every three producers, an exporter for every twenty, an obligated party
    for every four."""

    producers: int

    @property
    def generators(self) -> list[tuple[Kind, int]]:
        return [(kind, max(1, round(self.producers * kind.party_share))) for kind in KINDS]

    @property
    def blenders(self) -> int:
        return max(2, self.producers // 3)

    @property
    def exporters(self) -> int:
        return max(1, self.producers // 20)

    @property
    def obligated(self) -> int:
        return max(2, self.producers // 4)

    @property
    def parties(self) -> int:
        """Every party registered: generators, the D7 producer, downstream, the foreign one."""
        generators = sum(n for _, n in self.generators) + 1
        return generators + self.blenders + self.exporters + self.obligated + 1

    @classmethod
    def for_lines(cls, lines: int) -> PartyMix:
        """The party list for `lines` lines: `MONTHS` months of `LINES_PER_PRODUCER_MONTH`,
        measured when every trade was a transfer; with postings a producer-month makes about
        10 lines, so `lines` span about two-thirds of that."""
        return cls(max(6, min(2000, round(lines / (MONTHS * LINES_PER_PRODUCER_MONTH)))))

    @classmethod
    def for_parties(cls, parties: int) -> PartyMix:
        """The party list registering the nearest to `parties` parties (at least six
        producers)."""
        mixes = (cls(producers) for producers in range(6, max(7, parties + 1)))
        return min(mixes, key=lambda mix: (abs(mix.parties - parties), mix.producers))


@dataclass
class Holder:
    """What the simulator remembers of a party: gallon-RINs per (D, vintage, K) and fuel."""

    party: str
    roles: list[str]
    facilities: list[str] = field(default_factory=list)
    rins: dict[tuple[int, int, int], int] = field(default_factory=lambda: defaultdict(int))
    fuel: int = 0
    kind: Kind | None = None
    monthly: int = 0
    day: int = 1
    weight: float = 1.0

    def take(self, d_code: int, vintage: int, k: int, quantity: int) -> dict[str, int]:
        """Remove `quantity` from the counts and return the ledger's selector for them."""
        held = self.rins[(d_code, vintage, k)]
        assert 0 < quantity <= held, (self.party, d_code, vintage, k, quantity, held)
        if held == quantity:
            del self.rins[(d_code, vintage, k)]  # none left: the counts stay as few as held
        else:
            self.rins[(d_code, vintage, k)] = held - quantity
        return {"d_code": d_code, "vintage": vintage, "k": k, "quantity": quantity}

    def held(self, k: int) -> list[tuple[int, int, int]]:
        """(D code, vintage, count) held with this K, oldest vintage first."""
        return sorted((d, v, n) for (d, v, kk), n in self.rins.items() if kk == k and n > 0)


def selected(rins: dict[str, int]) -> tuple[int, int, int]:
    """The (D code, vintage, K) an attribute selector names."""
    return rins["d_code"], rins["vintage"], rins["k"]


def gallon_rins(ev: Decimal, volume: int) -> int:
    """EV × Vs to the nearest whole gallon-RIN, halves up (§80.1426(f)(3)(ii))."""
    return int((ev * volume).to_integral_value(rounding=ROUND_HALF_UP))


class Market:
    """The simulated market's parties and the lines they produce, month by month."""

    def __init__(self, mix: PartyMix, seed: int, bad_lines: float, postings: float = POSTINGS,
                 years: int | None = None) -> None:
        self.rng = Random(seed)
        self.bad_lines = bad_lines
        self.postings = postings
        self.years = years  # how many years the market runs (None: until the reader stops)
        #: unanswered sells: (date, seller, buyer, its selector's (D code, vintage, K), quantity)
        self.waiting: list[tuple[date, Holder, Holder, tuple[int, int, int], int]] = []
        self.seq = 0
        self.budget = mix.producers * GALLON_RINS_PER_PRODUCER_MONTH
        self.parties: list[Holder] = []
        self.generators: list[Holder] = []
        for kind, count in mix.generators:
            for _ in range(count):
                self.generators.append(self.new(kind.role, kind))
        self.generators.append(self.new("producer", D7))
        self.blenders = [self.new("blender") for _ in range(mix.blenders)]
        self.exporters = [self.new("exporter") for _ in range(mix.exporters)]
        self.obligated = [self.new("obligated_party") for _ in range(mix.obligated)]
        for holder in self.obligated:
            holder.weight = self.rng.paretovariate(1.5)
        # the registered foreign producer importers buy from (§80.1426(a)(2), (c)(4))
        self.foreign = Holder(f"{1001 + len(self.parties):04d}", ["foreign_producer"], [], day=1)
        self.parties.append(self.foreign)
        self.size_generators()

    def new(self, role: str, kind: Kind | None = None) -> Holder:
        party = f"{1001 + len(self.parties):04d}"
        roles = [role, "refiner"] if role == "obligated_party" else [role]
        facilities = [f"{party}1"] if kind else []
        holder = Holder(party, roles, facilities, kind=kind, day=self.rng.randint(1, 27))
        self.parties.append(holder)
        return holder

    def size_generators(self) -> None:
        """Each generator's monthly gallon-RINs, so that each kind gets its share of the budget."""
        by_kind: dict[Kind, list[Holder]] = defaultdict(list)
        for holder in self.generators:
            assert holder.kind is not None
            by_kind[holder.kind].append(holder)
        for kind, holders in by_kind.items():
            weights = [self.rng.uniform(0.5, 1.5) for _ in holders]
            for holder, weight in zip(holders, weights, strict=True):
                share = self.budget * kind.rin_share * weight / sum(weights)
                holder.monthly = max(1_000, int(share))
        by_kind[D7][0].monthly = 20_000

    def line(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        self.seq += 1
        return {"type": kind, "id": f"{kind[:3]}-{self.seq}", **body}

    def registrations(self) -> Iterator[dict[str, Any]]:
        for holder in self.parties:
            name = f"{holder.roles[0].replace('_', ' ').title()} {holder.party}"
            yield self.line("register_party", {
                "party": holder.party, "name": name, "roles": holder.roles,
                "facilities": holder.facilities,
            })

    def months(self) -> Iterator[dict[str, Any]]:
        year, month = FIRST_YEAR, 1
        for _ in itertools.count() if self.years is None else range(12 * self.years):
            yield from self.month(year, month)
            year, month = (year + 1, 1) if month == 12 else (year, month + 1)
        # a span of years ends with its last year's compliance season, in the March after it
        yield from self.compliance(year - 1, date(year, 3, 28))

    def month(self, year: int, month: int) -> Iterator[dict[str, Any]]:
        for holder in sorted(self.generators, key=lambda h: h.day):
            if holder.kind is D7 and month % 3:
                continue  # cellulosic diesel: one small batch a quarter
            yield from self.batch_chain(holder, date(year, month, holder.day), month)
        end = date(year, month, 28)
        yield from self.expiries(end)
        yield from self.incidents(end)
        if month == 3:
            yield from self.compliance(year - 1, end)

    def batch_chain(self, producer: Holder, on: date, month: int) -> Iterator[dict[str, Any]]:
        """Generate a batch; sell it with its fuel; separate downstream; sell the separated RINs."""
        kind = producer.kind
        assert kind is not None
        volume = max(100, int(producer.monthly * self.rng.uniform(0.8, 1.2) / float(kind.ev)))
        count = gallon_rins(kind.ev, volume)
        batch = f"{on.year % 100:02d}{month:02d}1"  # one batch a month: unique in the year
        body: dict[str, Any] = {
            "date": on.isoformat(), "party": producer.party, "facility": producer.facilities[0],
            "batch": batch, "fuel": kind.fuel, "d_code": kind.d_code,
            "production_start": on.replace(day=1).isoformat(), "production_end": on.isoformat(),
        }
        body.update({"btu": volume * 77_000} if kind.fuel == "biogas" else {"volume": volume})
        if "importer" in producer.roles:
            body["foreign_producer"] = self.foreign.party
        yield self.line("generate", body)
        producer.rins[(kind.d_code, on.year, 1)] += count
        producer.fuel += volume
        if self.rng.random() < 0.05 and count >= 4:
            yield self.split(producer, on, kind, batch, count)
        buyers = [self.rng.choice(self.blenders)]
        if self.rng.random() < 0.3:
            buyers.append(self.rng.choice(self.exporters))
        if self.rng.random() < 0.3:
            buyers.append(self.rng.choice(self.blenders))
        for i, buyer in enumerate(buyers):
            last = i == len(buyers) - 1
            part_rins = count if last else count // len(buyers)
            part_fuel = volume if last else volume // len(buyers)
            count, volume = count - part_rins, volume - part_fuel
            yield from self.assigned_sale(producer, buyer, on, kind, part_rins, part_fuel)

    def split(
        self, producer: Holder, on: date, kind: Kind, batch: str, count: int
    ) -> dict[str, Any]:
        """§80.1428(d): divide the fresh batch-RIN in two."""
        rr = int(kind.ev * 10)
        code = (
            f"1{on.year:04d}{producer.party}{producer.facilities[0]}{batch}{rr:02d}"
            f"{kind.d_code}{1:08d}{count:08d}"
        )
        first = count // 2
        return self.line("split", {
            "date": on.isoformat(), "party": producer.party, "rin": code,
            "sizes": [first, count - first],
        })

    def assigned_sale(
        self, seller: Holder, buyer: Holder, on: date, kind: Kind, rins: int, fuel: int
    ) -> Iterator[dict[str, Any]]:
        d, vintage = kind.d_code, on.year
        yield from self.trade(seller, buyer, on, seller.take(d, vintage, 1, rins), {
            "volume": fuel, "ptd": f"PTD-{self.seq:08d}"})
        seller.fuel -= fuel
        buyer.rins[(d, vintage, 1)] += rins
        buyer.fuel += fuel
        if buyer in self.exporters:
            yield from self.separation(buyer, on, d, vintage, "export", rins, fuel)
            return
        if self.rng.random() < 0.01 and rins > 10:  # a spill before blending
            spilled = rins // 10
            yield self.line("retire", {
                "date": on.isoformat(), "party": buyer.party, "reason": "spill",
                "rins": buyer.take(d, vintage, 1, spilled),
            })
            rins -= spilled
        if self.rng.random() < 0.03 and fuel > 10:  # some fuel resold without its RINs
            spare = min(fuel // 10, fuel - -(-rins * 2 // 5))
            other = self.rng.choice([b for b in self.blenders if b is not buyer])
            if spare > 0:
                yield self.line("transfer_fuel", {
                    "date": on.isoformat(), "from": buyer.party, "to": other.party,
                    "volume": spare,
                })
                buyer.fuel -= spare
                other.fuel += spare
                fuel -= spare
        yield from self.separation(buyer, on, d, vintage, "blending", rins, fuel)

    def separation(
        self, holder: Holder, on: date, d: int, vintage: int, reason: str, rins: int, fuel: int
    ) -> Iterator[dict[str, Any]]:
        """Separate on blending or export (§80.1429(b)(2)-(3)), then sell the K=2 RINs."""
        body = {
            "date": on.isoformat(), "party": holder.party, "reason": reason,
            "rins": holder.take(d, vintage, 1, rins), "volume": fuel,
        }
        if reason == "blending" and d == 4:
            body["blend_percent"] = 20  # B20: §80.1429(b)(6) allows ≤ 80 %
        yield self.line("separate", body)
        holder.fuel -= fuel
        holder.rins[(d, vintage, 2)] += rins
        pieces = 1 if rins < 1000 or self.rng.random() < 0.6 else 2
        for i in range(pieces):
            quantity = rins if i == pieces - 1 else rins // 2
            rins -= quantity
            buyer = self.rng.choices(self.obligated, [o.weight for o in self.obligated])[0]
            price = f"{self.rng.uniform(0.3, 1.9):.2f}"
            if (yield from self.trade(holder, buyer, on, holder.take(d, vintage, 2, quantity),
                                      {"price": price}, may_expire=True)):
                buyer.rins[(d, vintage, 2)] += quantity

    def trade(self, seller: Holder, buyer: Holder, on: date, rins: dict[str, int],
              terms: dict[str, Any], *, may_expire: bool = False
              ) -> Generator[dict[str, Any], None, bool]:
        """One trade: a fast-path `transfer`, or (a `postings` share) an EMTS sell and the buy
        answering it, or one cancelled or denied, then made by the fast path; with
        `may_expire`, one left unanswered to expire. Returns whether the RINs moved."""
        day = on.isoformat()
        if not (self.postings and self.rng.random() < self.postings):
            yield self.line("transfer", {"date": day, "from": seller.party, "to": buyer.party,
                                         "rins": rins, **terms})
            return True
        ending, draw = "completed", self.rng.random()
        for name, share in ENDINGS:
            if draw < share:
                ending = name
                break
            draw -= share
        sell = {"date": day, "party": seller.party, "to": buyer.party, "rins": rins, **terms}
        buy = {"date": day, "party": buyer.party, "from": seller.party, "rins": rins, **terms}
        buy.pop("ptd", None)
        if ending == "buy_first" and (on, seller, buyer, selected(rins), rins["quantity"]) in (
                self.waiting):
            ending = "completed"  # a lone buy would complete the unanswered sell it agrees with
        if ending == "buy_first":
            posted = self.line("buy", buy)
            yield posted
            yield self.line("sell", {**sell, "match": posted["id"]})
            return True
        posted = self.line("sell", sell)
        yield posted
        if ending == "completed":
            yield self.line("buy", {**buy, "match": posted["id"]})
            return True
        if ending == "expired" and may_expire:
            self.waiting.append((on, seller, buyer, selected(rins), rins["quantity"]))
            return False
        if ending == "denied":
            yield self.line("deny_trade", {"date": day, "party": buyer.party,
                                           "trade": posted["id"]})
        else:
            yield self.line("cancel_trade", {"date": day, "party": seller.party,
                                             "trade": posted["id"]})
        yield self.line("transfer", {"date": day, "from": seller.party, "to": buyer.party,
                                     "rins": rins, **terms})
        return True

    def expiries(self, on: date) -> Iterator[dict[str, Any]]:
        """`expire_trades` once a posting has waited more than the window (§80.1452): its
        seller holds its RINs again."""
        stale = [w for w in self.waiting if business_days_after(w[0], on) > WINDOW]
        if not stale:
            return
        yield self.line("expire_trades", {"date": on.isoformat()})
        for waited in stale:
            self.waiting.remove(waited)
            _, seller, _, slot, quantity = waited
            seller.rins[slot] += quantity

    def incidents(self, on: date) -> Iterator[dict[str, Any]]:
        """Now and then a trade between obligated parties or an invalid-RIN retirement."""
        for holder in self.obligated:
            held = holder.held(2)
            if not held or self.rng.random() > 0.05:
                continue
            d, vintage, count = self.rng.choice(held)
            if self.rng.random() < 0.2:
                yield self.line("retire", {
                    "date": on.isoformat(), "party": holder.party, "reason": "invalid_rin",
                    "rins": holder.take(d, vintage, 2, max(1, count // 100)),
                })
                continue
            other = self.rng.choice([o for o in self.obligated if o is not holder])
            quantity = max(1, count // 5)
            yield self.line("transfer", {
                "date": on.isoformat(), "from": holder.party, "to": other.party,
                "rins": holder.take(d, vintage, 2, quantity),
                "price": f"{self.rng.uniform(0.3, 1.9):.2f}",
            })
            other.rins[(d, vintage, 2)] += quantity

    def compliance(self, year: int, on: date) -> Iterator[dict[str, Any]]:
        """Each obligated party reports year's RVOs (§80.1407) and retires for them (§80.1427)."""
        if year < FIRST_YEAR:
            return
        standards = load_standards()
        std = standards.get(year) or standards[max(standards)]
        rf = std["RF"]
        assert rf is not None, "every year of the table has a total renewable fuel standard"
        annual = self.budget * 12
        total_weight = sum(o.weight for o in self.obligated)
        for holder in self.obligated:
            rf_target = annual * 0.97 * holder.weight / total_weight
            pool = Decimal(int(rf_target / float(rf) * 100))
            gasoline = (pool * 3 / 4).to_integral_value()
            report: dict[str, Any] = {"party": holder.party, "year": year, "date": on.isoformat()}
            if year in standards:
                report |= {"gasoline_volume": int(gasoline), "diesel_volume": int(pool - gasoline)}
            else:
                rvo = {c: int(pool * (p or 0) / 100) for c, p in std.items()}
                report["rvo"] = rvo
            yield self.line("report_obligation", report)
            yield from self.retirements(holder, year, on, pool, std)

    def retirements(
        self, holder: Holder, year: int, on: date, pool: Decimal, std: Any
    ) -> Iterator[dict[str, Any]]:
        rvo = {c: int(pool * (p or 0) / 100) for c, p in std.items()}
        need = {
            3: rvo["CB"], 4: rvo["BBD"], 7: rvo["CB"],
            5: max(0, rvo["AB"] - rvo["CB"] - rvo["BBD"]), 6: max(0, rvo["RF"] - rvo["AB"]),
        }
        for d, vintage, count in holder.held(2):
            if vintage not in (year - 1, year):
                continue
            quantity = count if vintage < year else min(count, need[d])
            need[d] = max(0, need[d] - quantity)
            if quantity <= 0:
                continue
            body = {
                "date": on.isoformat(), "party": holder.party, "reason": "compliance",
                "compliance_year": year, "rins": holder.take(d, vintage, 2, quantity),
            }
            if d == 7:
                body["category"] = "CB"
            yield self.line("retire", body)

    def bad_line(self, on: str) -> dict[str, Any]:
        """A line the ledger must refuse, whatever the state of the market."""
        blender = self.rng.choice(self.blenders)
        obligated = self.rng.choice(self.obligated)
        choices: list[tuple[str, dict[str, Any]]] = [
            ("transfer", {"date": on, "from": obligated.party, "to": blender.party,
                          "rins": {"d_code": 6, "vintage": 2014, "k": 2,
                                   "quantity": 99_999_999_999}}),
            ("generate", {"date": on, "party": blender.party, "facility": "99999",
                          "batch": "BAD01", "fuel": "ethanol", "d_code": 6, "volume": 1000}),
            ("retire", {"date": on, "party": blender.party, "reason": "compliance",
                        "compliance_year": 2014,
                        "rins": {"d_code": 6, "vintage": 2014, "k": 2, "quantity": 1}}),
            ("separate", {"date": on, "party": blender.party, "reason": "blending",
                          "rins": {"d_code": 6, "vintage": 2014, "k": 2, "quantity": 1},
                          "volume": 1}),
            ("transfer", {"date": "2014-13-01", "from": obligated.party, "to": blender.party,
                          "rins": {"d_code": 6, "vintage": 2014, "k": 2, "quantity": 1}}),
            ("register_party", {"party": blender.party, "name": "again", "roles": ["blender"]}),
        ]
        kind, body = self.rng.choice(choices)
        self.seq += 1
        return {"type": kind, "id": f"bad-{self.seq}", **body}

    def stream(self) -> Iterator[dict[str, Any]]:
        yield from self.registrations()
        last = f"{FIRST_YEAR}-01-01"
        for line in self.months():
            if self.bad_lines and self.rng.random() < self.bad_lines:
                yield self.bad_line(last)
            last = line.get("date", last)
            yield line


def generate_market(lines: int, seed: int, bad_lines: float = 0.0,
                    postings: float = POSTINGS) -> Iterator[dict[str, Any]]:
    """Exactly `lines` transaction-file commands of a seeded market (`bad_lines`: share invalid;
    `postings`: share of trades posted to EMTS as a sell and a buy)."""
    market = Market(PartyMix.for_lines(lines), seed, bad_lines, postings)
    for number, line in enumerate(market.stream(), start=1):
        if number > lines:
            return
        yield line



#: reference.md §7: about 2,400 registered parties and 195,000 EMTS transactions a year (2022)
NATIONAL_PARTIES = 2_400
NATIONAL_TRANSACTIONS_PER_YEAR = 195_000
NATIONAL_YEARS = 15
#: what each line counts as in EMTS: a submission each (reference.md §5: generate, separate,
#: sell, buy, retire; cancel and deny are a sell or buy with reason 060 or 050); a fast-path
#: `transfer` is a sell and a buy (design.md, the transactions report). Registration, RVO
#: reports, fuel-only moves, splits (EMTS holds quantities, not codes) and expiry (EMTS's own
#: status change) are not EMTS transactions.
EMTS_SUBMISSIONS = {
    "generate": 1, "separate": 1, "retire": 1, "sell": 1, "buy": 1, "cancel_trade": 1,
    "deny_trade": 1, "transfer": 2,
}


def emts_transactions(line: dict[str, Any]) -> int:
    """How many EMTS transactions a transaction-file line stands for (`EMTS_SUBMISSIONS`)."""
    return EMTS_SUBMISSIONS.get(line["type"], 0)


def national_market(seed: int, *, years: int = NATIONAL_YEARS, parties: int = NATIONAL_PARTIES,
                    bad_lines: float = 0.0, postings: float = POSTINGS
                    ) -> Iterator[dict[str, Any]]:
    """Every line of a seeded market of about `parties` parties over `years` years from
    January 2014: the national one by default (reference.md §7; docs/performance.md
    "National scale" says how its proportions were set and checked)."""
    market = Market(PartyMix.for_parties(parties), seed, bad_lines, postings, years=years)
    return market.stream()
