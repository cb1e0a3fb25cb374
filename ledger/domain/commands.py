"""Commands: the intents a transaction-file line or a library call expresses (design.md).

Each model's JSON is one transaction-file line; `validate_command` turns a dict into the right
model and reports a bad field by name (JSON text is parsed first by the application,
ledger/application/command_input.py). Commands may name RINs by attributes; the
ledger resolves them to exact ranges, which only the events record.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from ledger.domain.emts import TradeReason
from ledger.domain.errors import InputError
from ledger.domain.strict_types import AmountText, Flag, Integer, IntegerKey, IsoDate, Text
from ledger.rules.s1426.generation import GenerationInput
from ledger.rules.s1431_invalid import Cause

PartyId = Annotated[Text, Field(pattern=r"^[0-9]{4}$", description="4-digit company id")]
FacilityId = Annotated[Text, Field(pattern=r"^[0-9]{5}$", description="5-digit facility id")]
BatchNumber = Annotated[Text, Field(pattern=r"^[0-9A-Z]{5}$", description="5-character batch")]
Gallons = Annotated[Decimal, Field(gt=0, max_digits=18, decimal_places=6), AmountText]
Volume = Annotated[Decimal, Field(ge=0, max_digits=18), AmountText]
Count = Annotated[Integer, Field(gt=0, le=99_999_999_999)]
CommandId = Annotated[Text, Field(min_length=1, max_length=200)]
Reason = Annotated[Text, Field(max_length=100)] | Annotated[Integer, Field(ge=0, le=99_999)]
Year = Annotated[Integer, Field(ge=2008, le=2099)]
Code = Annotated[Text, Field(min_length=38, max_length=38)]
#: a selector's QAP status (§80.1471(e)): Q-, A-, B-RINs, or RINs no auditor verified
QapStatus = Literal["Q", "A", "B", "unverified"]


class Model(BaseModel):
    """Strict base: unknown fields are errors, instances are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ByCode(Model):
    """Exactly the block with this 38-character code, held in full."""

    code: Code
    qap: QapStatus | None = None


class ByAttributes(Model):
    """`quantity` gallon-RINs of a D code, vintage and K, picked first-in-first-out."""

    d_code: Annotated[Integer, Field(ge=3, le=7)]  # D codes 3-7 (§80.1425(g))
    vintage: Year
    k: Annotated[Integer, Field(ge=1, le=2)]  # K 1 or 2 (§80.1425(a))
    quantity: Count
    company: PartyId | None = None
    facility: FacilityId | None = None
    batch: BatchNumber | None = None
    qap: QapStatus | None = None


def _selector_kind(value: Any) -> str:
    """Which selector a `rins` value is: one naming a `code`, else one by attributes."""
    named = value if isinstance(value, dict) else vars(value) if isinstance(value, Model) else {}
    return "by_code" if "code" in named else "by_attributes"


SELECTOR_TAGS = ("by_code", "by_attributes", "batch_code", "batch_identity")
RinSelector = Annotated[
    Annotated[ByCode, Tag("by_code")] | Annotated[ByAttributes, Tag("by_attributes")],
    Discriminator(_selector_kind),
]


class CommandBase(Model):
    """What every line carries: its type and an optional idempotency id."""

    id: CommandId | None = None


class Dated(CommandBase):
    date: IsoDate


class RegisterParty(CommandBase):
    type: Literal["register_party"] = "register_party"
    party: PartyId
    name: Annotated[Text, Field(min_length=1, max_length=200)]
    roles: Annotated[list[Text], Field(min_length=1, max_length=20)]
    facilities: list[FacilityId] = []


class Generate(Dated, GenerationInput):
    type: Literal["generate"] = "generate"
    party: PartyId
    facility: FacilityId
    batch: BatchNumber
    batches: dict[IntegerKey, BatchNumber] | None = Field(
        default=None, description="batch number per D code when one batch yields several"
    )
    generate_rins: Flag = Field(
        default=True, description="false: record production without RINs, §80.1426(c)(2)-(3)"
    )
    new_facility_year: Annotated[Integer, Field(ge=1, le=100)] | None = Field(
        default=None, description="1-3: calendar year of a new facility's production"
    )
    pathway_effective_date: IsoDate | None = None


class Transfer(Dated):
    type: Literal["transfer"] = "transfer"
    from_: PartyId = Field(alias="from")
    to: PartyId
    rins: RinSelector
    volume: Gallons | None = None
    ptd: Annotated[Text, Field(max_length=200)] | None = None
    price: Annotated[Decimal, Field(ge=0, max_digits=18), AmountText] | None = None
    reason: TradeReason = Field(default=TradeReason.STANDARD, description="EMTS buy/sell reason")


class TransferFuel(Dated):
    type: Literal["transfer_fuel"] = "transfer_fuel"
    from_: PartyId = Field(alias="from")
    to: PartyId
    volume: Gallons
    ptd: Annotated[Text, Field(max_length=200)] | None = None


class Separate(Dated):
    type: Literal["separate"] = "separate"
    party: PartyId
    reason: Reason
    rins: RinSelector
    volume: Gallons | None = None
    blend_percent: Annotated[Decimal, Field(gt=0, le=100, max_digits=18), AmountText] | None = (
        None)


class Retire(Dated):
    type: Literal["retire"] = "retire"
    party: PartyId
    reason: Reason
    rins: RinSelector
    compliance_year: Year | None = None
    category: Literal["CB", "BBD"] | None = None
    #: the basis of a compliance retirement, and the facility for a facility-by-facility one
    #: (§80.1451(a)(1)(iii)-(iv))
    compliance_level: Literal["facility", "aggregate"] | None = None
    compliance_facility: FacilityId | None = None


class Split(Dated):
    type: Literal["split"] = "split"
    party: PartyId
    rin: Code
    sizes: Annotated[list[Count], Field(min_length=2, max_length=1000)]


Price = Annotated[Decimal, Field(ge=0, max_digits=18), AmountText]


class TradePosting(Dated):
    """What a sell and a buy share (design.md "Release 2"): the posting's id (its identity,
    required), the RINs, the fuel volume (K=1), price per gallon-RIN or per gallon of fuel,
    PTD, broker or agent (§80.1454(a)(3)(ii)), EMTS reason and the partner posting it answers."""

    id: CommandId
    volume: Gallons | None = None
    price: Price | None = None
    gallon_price: Price | None = None
    ptd: Annotated[Text, Field(max_length=200)] | None = None
    broker: PartyId | None = None
    reason: TradeReason = Field(default=TradeReason.STANDARD, description="EMTS buy/sell reason")
    match: CommandId | None = None

    @model_validator(mode="after")
    def _one_price(self) -> TradePosting:
        if self.price is not None and self.gallon_price is not None:
            raise ValueError("give price (per gallon-RIN) or gallon_price (per gallon), not both")
        return self


class Sell(TradePosting):
    """The seller's posting: the exact ranges `rins` names are reserved on `date`."""

    type: Literal["sell"] = "sell"
    party: PartyId
    to: PartyId
    rins: RinSelector


class Buy(TradePosting):
    """The buyer's posting: RINs by attributes (`company`/`facility`/`batch` narrow it)."""

    type: Literal["buy"] = "buy"
    party: PartyId
    from_: PartyId = Field(alias="from")
    rins: ByAttributes


class CancelTrade(Dated):
    """The poster withdraws its own pending posting (EMTS 060)."""

    type: Literal["cancel_trade"] = "cancel_trade"
    party: PartyId
    trade: CommandId


class DenyTrade(Dated):
    """The partner a pending posting names refuses it (EMTS 050)."""

    type: Literal["deny_trade"] = "deny_trade"
    party: PartyId
    trade: CommandId


class ExpireTrades(Dated):
    """Every posting pending longer than the window of business days by `date` expires."""

    type: Literal["expire_trades"] = "expire_trades"


#: a reversal's EMTS reason, a code or word always as a JSON string ("030", "remedial_partner"),
#: like the other code fields (design.md "Refusals are strict"; §80.1452(c)(13))
ReversalReason = Annotated[Text, Field(max_length=100)]


class Reverse(Dated):
    """A remedial, compensating fact (EMTS unretire or remedial trade): the party that retired
    or gave the RINs names the `command` (an applied `retire`, `transfer`, or the `sell` of a
    completed trade) whose exact ranges go back; `reason` an EMTS code or word."""

    type: Literal["reverse"] = "reverse"
    party: PartyId
    command: CommandId
    reason: ReversalReason


class ReportObligation(CommandBase):
    type: Literal["report_obligation"] = "report_obligation"
    party: PartyId
    year: Annotated[Integer, Field(ge=2010, le=2099)]
    date: IsoDate | None = None
    rvo: dict[Text, Annotated[Integer, Field(ge=0, le=10**12)]] | None = None
    gasoline_volume: Volume | None = None
    diesel_volume: Volume | None = None
    approach: Annotated[Text, Field(max_length=100)] | None = None
    bbd_2010_reduction: Annotated[Integer, Field(ge=0, le=10**12)] = 0
    basis: Annotated[
        list[Literal["refining", "importing", "blendstocks", "s80_1408"]],
        Field(min_length=1, max_length=4,
              description="what the non-export RVO arises from (§80.1429(b)(9))"),
    ] | None = None

    @model_validator(mode="after")
    def _rvo_or_volumes(self) -> ReportObligation:
        has_volumes = self.gasoline_volume is not None or self.diesel_volume is not None
        if (self.rvo is None) == (not has_volumes):
            raise ValueError("give either rvo or gasoline_volume + diesel_volume")
        return self


class Invalidate(Dated):
    """A regulator's finding that a batch, or serials S..E of it, are invalid (§80.1431(a)); `rin`
    names the batch and serials (its K, RR and D are not what identifies the batch)."""

    type: Literal["invalidate"] = "invalidate"
    rin: Code
    reason: Cause
    note: Annotated[Text, Field(max_length=2000)] | None = None


class BatchIdentity(Model):
    """A batch by its identity (§80.1425(e)): generator, facility, batch number and year."""

    company: PartyId
    facility: FacilityId
    batch: BatchNumber
    vintage: Year


#: a batch named by a 38-character RIN code (its K, RR, D and serials ignored) or its identity
BatchName = Annotated[
    Annotated[Code, Tag("batch_code")] | Annotated[BatchIdentity, Tag("batch_identity")],
    Discriminator(lambda value: "batch_code" if isinstance(value, str) else "batch_identity"),
]
LockReason = Annotated[Text, Field(max_length=200)]


class Lock(Dated):
    """Lock a batch (§80.1474(b)(1)): the regulator (no `party`) or a qap_auditor that
    verified it; its RINs, wherever held, neither move nor count until unlocked."""

    type: Literal["lock"] = "lock"
    batch: BatchName
    reason: LockReason | None = None
    party: PartyId | None = None


class Unlock(Dated):
    """Lift a lock: the regulator's unlock lifts every lock, an auditor's only its own."""

    type: Literal["unlock"] = "unlock"
    batch: BatchName
    reason: LockReason | None = None
    party: PartyId | None = None


class BlockGenerator(Dated):
    """Put a generator (company id) on the party's EMTS blocked list (§80.1452(d))."""

    type: Literal["block_generator"] = "block_generator"
    party: PartyId
    generator: PartyId


class UnblockGenerator(Dated):
    """Take a generator off the party's blocked list."""

    type: Literal["unblock_generator"] = "unblock_generator"
    party: PartyId
    generator: PartyId


class VerifyBatch(Dated):
    """A qap_auditor's verification of a batch under a QAP (§80.1469-§80.1471): Q, A or B;
    a re-verification replaces the status."""

    type: Literal["verify_batch"] = "verify_batch"
    party: PartyId
    batch: BatchName
    qap: Literal["Q", "A", "B"]


Command = Annotated[
    RegisterParty | Generate | Transfer | TransferFuel | Separate | Retire | Split
    | ReportObligation | Invalidate | Sell | Buy | CancelTrade | DenyTrade | ExpireTrades
    | Reverse | Lock | Unlock | BlockGenerator | UnblockGenerator | VerifyBatch,
    Field(discriminator="type"),
]
_ADAPTER: TypeAdapter[Command] = TypeAdapter(Command)
COMMAND_TYPES = (
    "register_party", "generate", "transfer", "transfer_fuel", "separate", "retire", "split",
    "report_obligation", "invalidate", "sell", "buy", "cancel_trade", "deny_trade",
    "expire_trades", "reverse", "lock", "unlock", "block_generator", "unblock_generator",
    "verify_batch",
)


def validate_command(data: dict[str, Any] | BaseModel) -> Command:
    """Validate one command from a dict (or pass a model through); `InputError` names the bad
    field. Strict field types (`strict_types`) apply to every source alike."""
    if isinstance(data, BaseModel):
        return data  # type: ignore[return-value]
    try:
        command: Command = _ADAPTER.validate_python(data)
    except ValidationError as exc:
        raise input_error(exc) from None
    return command


def input_error(exc: ValidationError) -> InputError:
    """The first validation problem, as an error naming the field."""
    first = exc.errors()[0]
    loc = [str(part) for part in first["loc"] if part not in SELECTOR_TAGS]
    if loc and loc[0] in COMMAND_TYPES:
        loc = loc[1:]
    field = ".".join(loc) or "line"
    if first["type"] == "union_tag_invalid":
        return InputError(f"unknown type; expected one of {', '.join(COMMAND_TYPES)}", "type")
    if first["type"] == "union_tag_not_found":
        return InputError("missing; every line needs a type", "type")
    if first["type"] == "json_invalid":
        return InputError(f"not valid JSON ({first['ctx'].get('error', '')})", None)
    return InputError(first["msg"], field)
