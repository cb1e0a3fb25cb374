"""Each party's EMTS submissions (§80.1452(b)-(c)), the rows `rin export --format emts-xml`
writes as EMTS 3.0 blocks (reference.md §8): generations, separations, retirements, sells and
buys. A fast-path `transfer` is a sell by the seller and a buy by the buyer, and a reversed trade
a remedial sell and buy back (`REMEDIAL`); a posted sell or buy
is exported only once completed (trade_closings). Blocks carry no serials: each names the
batches its RINs came from (the "unique" form, §80.1453(a)(11)(i)(B)).

`fields` holds the block's values by EMTS element name as JSON; the element order is the
schema's, applied when the XML is written (projections/emts_xml.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
from sqlite_utils import Database

from ledger.domain.rin import RinBlock
from projections.batch import Batch
from projections.facts import Fact
from projections.schema import Table

#: QAPServiceTypeCode of RINs no QAP provider verified (reference.md §8)
UNVERIFIED = "30"
SUBMISSIONS = Table(
    "emts_submissions",
    "Every EMTS submission (§80.1452(b)-(c)) per party, as EMTS 3.0 blocks: the block name "
    "and its fields as JSON (reference.md §8).",
    {
        "notification_id": (int, "position of the event in the notification log"),
        "seq": (int, "index of the block within the event"),
        "party": (str, "the submitting party"),
        "date": (str, "effective date (ISO)"),
        "block": (str, "GenerateTransactionDetail, SeparateTransactionDetail, …"),
        "posting": (str, "a posted sell's or buy's id: exported once completed"),
        "partner": (str, "the trading partner of a sell or buy"),
        "fields": (str, "the block's EMTS fields, JSON"),
    },
    pk=("notification_id", "seq"),
    indexes=(("party", "date"),),
    index_late=True,  # no query during a rebuild reads it: indexed once at its end
)
TABLES = (SUBMISSIONS,)
KINDS = frozenset({"generated", "separated", "retired", "trade_posted", "transferred_out",
                   "transferred_in", "trade_reversed_out", "trade_reversed_in"})
#: a reversed trade (§80.1452(d)) is an EMTS remedial trade: a sell back by the party that got
#: the RINs and a buy back by the one that gave them, with its remedial code (030, 080). An
#: unretire has no block in the schema's subset (projections/emts.xsd), so it is not exported.
REMEDIAL = frozenset({"trade_reversed_out", "trade_reversed_in"})


def text(value: Any) -> str | None:
    return None if value is None else str(value)


def sources(blocks: Sequence[RinBlock]) -> list[list[str]]:
    """The distinct batches (company, facility, batch number) the blocks came from, in order."""
    seen: dict[tuple[str, str, str], None] = {}
    for block in blocks:
        key = block.key
        seen.setdefault((key.company, key.facility, key.batch), None)
    return [list(batch) for batch in seen]


def groups(blocks: Sequence[RinBlock]) -> dict[tuple[int, int, int], list[RinBlock]]:
    """Blocks by (vintage, D code, K): EMTS names RINs by these attributes."""
    out: dict[tuple[int, int, int], list[RinBlock]] = {}
    for block in blocks:
        out.setdefault((block.key.vintage, block.key.d_code, block.key.k), []).append(block)
    return out


def generate(fact: Fact) -> dict[str, Any]:
    event = fact.event
    key = event.rin.key
    feedstocks = [[f.get("type"), f.get("renewable", True), text(f.get("mass_lb"))]
                  for f in event.details.get("feedstocks", ())]
    return {
        "RINQuantity": event.rin.gallon_rins, "BatchVolume": text(event.standardized_volume),
        "FuelCode": event.d_code, "FuelCategoryCode": str(event.fuel),
        "ProductionDate": (event.production_date or event.effective_date).isoformat(),
        "ProcessCode": event.paragraph, "QAPServiceTypeCode": UNVERIFIED,
        "EquivalenceValue": text(event.equivalence_value),
        "sources": [[key.company, key.facility, key.batch]], "feedstocks": feedstocks,
    }


def attributes(vintage: int, d_code: int, blocks: Sequence[RinBlock]) -> dict[str, Any]:
    return {"RINQuantity": sum(b.gallon_rins for b in blocks), "FuelCode": d_code,
            "RINYear": vintage, "QAPServiceTypeCode": UNVERIFIED, "sources": sources(blocks)}


def project(fact: Fact, batch: Batch) -> None:
    event, kind = fact.event, fact.kind
    rows: list[tuple[str, str | None, str | None, dict[str, Any]]] = []
    if kind == "generated":
        rows.append(("GenerateTransactionDetail", None, None, generate(fact)))
    elif kind == "trade_posted":
        side = "Sell" if str(event.side) == "sell" else "Buy"
        fields = {
            "RINQuantity": event.quantity, "BatchVolume": text(event.volume),
            "FuelCode": event.d_code, "AssignmentCode": event.k, "RINYear": event.vintage,
            "QAPServiceTypeCode": UNVERIFIED, f"{side}ReasonCode": f"{event.reason_code:03d}",
            "RINPriceAmount": text(event.price), "GallonPriceAmount": text(event.gallon_price),
            "TransferDate": fact.effective_date, "PTDNumber": event.ptd,
            "sources": sources(event.rins) if event.rins else (
                [[event.company, event.facility, event.batch]] if event.batch else []),
        }
        rows.append((f"{side}TransactionDetail", event.client_id, event.partner, fields))
    elif kind in REMEDIAL or (kind.startswith("transferred_") and not event.postings):
        # the fast path, or a remedial trade: the sell at the party the RINs leave
        side = "Sell" if kind.endswith("_out") else "Buy"
        grouped = groups(event.rins)
        single = len(grouped) == 1
        code = event.reason_code if kind in REMEDIAL else event.trade_reason_code
        for (vintage, d_code, k), blocks in grouped.items():
            rows.append((f"{side}TransactionDetail", None, fact.counterparty, {
                **attributes(vintage, d_code, blocks), "AssignmentCode": k,
                "BatchVolume": text(event.volume) if single else None,
                f"{side}ReasonCode": f"{code:03d}",
                "RINPriceAmount": text(getattr(event, "price", None)),
                "TransferDate": fact.effective_date, "PTDNumber": getattr(event, "ptd", None),
                "MatchingTransactionIdentifier": event.client_id,
            }))
    elif kind in ("separated", "retired"):
        grouped = groups(event.rins)
        single = len(grouped) == 1
        for (vintage, d_code, k), blocks in grouped.items():
            fields = {**attributes(vintage, d_code, blocks),
                      "TransactionDate": fact.effective_date}
            if kind == "separated":
                fields.update(SeparateReasonCode=text(event.reason_code) or str(event.reason),
                              BatchVolume=text(event.volume) if single else None)
                rows.append(("SeparateTransactionDetail", None, None, fields))
            else:
                fields.update(AssignmentCode=k, RetireReasonCode=str(event.reason_code),
                              ComplianceYear=event.compliance_year)
                rows.append(("RetireTransactionDetail", None, None, fields))
    for seq, (block, posting, partner, fields) in enumerate(rows):
        batch.add(SUBMISSIONS, (fact.notification_id, seq, fact.party, fact.effective_date,
                                block, posting, partner, orjson.dumps(fields).decode()))


def submissions(db: Database, party: str, start: str, end: str, known_at: int | None = None
                ) -> list[dict[str, Any]]:
    """The party's blocks dated `start`…`end` (ISO, inclusive), in log order, as known at
    `known_at`: a posted sell or buy only once completed, with its counterpart's id as the
    matching transaction; each with its partner's registered name."""
    known = known_at if known_at is not None else 2**62
    rows = db.query(
        "SELECT s.block, s.date, s.partner, s.fields, c.counterpart, p.name AS partner_name "
        "FROM emts_submissions s LEFT JOIN trade_closings c ON c.id = s.posting "
        "AND c.status = 'completed' AND c.notification_id <= ? "
        "LEFT JOIN parties p ON p.party = s.partner "
        "WHERE s.party = ? AND s.date >= ? AND s.date <= ? AND s.notification_id <= ? "
        "AND (s.posting IS NULL OR c.id IS NOT NULL) ORDER BY s.notification_id, s.seq",
        [known, party, start, end, known],
    )
    out = []
    for row in rows:
        fields = orjson.loads(row["fields"])
        if row["partner"] is not None:
            fields["TransactionPartnerOrganizationIdentifier"] = row["partner"]
            fields["TransactionPartnerOrganizationName"] = row["partner_name"]
        if row["counterpart"] is not None:
            fields["MatchingTransactionIdentifier"] = row["counterpart"]
        out.append({"block": row["block"], "date": row["date"], "fields": fields})
    return out
