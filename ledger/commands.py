"""Commands: the intents a transaction-file line or a library call expresses (design.md).

Each model's JSON is one transaction-file line; `parse_command` turns a dict or JSON text into
the right model and reports a bad field by name. Commands may name RINs by attributes; the
ledger resolves them to exact ranges, which only the events record.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    SerializerFunctionWrapHandler,
    Tag,
    TypeAdapter,
    ValidationError,
    model_serializer,
    model_validator,
)

from ledger.errors import InputError
from ledger.rules.s1426_generation import GenerationInput
from ledger.rules.s1431_invalid import Cause

FIRST_YEAR, LAST_YEAR = 2008, 2099


def _iso_date(value: object) -> object:
    """Accept a `date` or an ISO `YYYY-MM-DD` string only (no timestamps, no datetimes),
    in the years a RIN code can name (YYYY, §80.1425(b))."""
    if isinstance(value, str) and len(value) == 10:
        try:
            value = date.fromisoformat(value)
        except ValueError as exc:
            raise ValueError(f"not a calendar date: {value!r}") from exc
    if isinstance(value, date) and not hasattr(value, "hour"):
        if not FIRST_YEAR <= value.year <= LAST_YEAR:
            raise ValueError(f"year {value.year} is outside {FIRST_YEAR}-{LAST_YEAR}")
        return value
    raise ValueError(f"expected an ISO date YYYY-MM-DD, got {repr(value)[:40]}")


IsoDate = Annotated[date, BeforeValidator(_iso_date)]
PartyId = Annotated[str, Field(pattern=r"^[0-9]{4}$", description="4-digit company id")]
FacilityId = Annotated[str, Field(pattern=r"^[0-9]{5}$", description="5-digit facility id")]
BatchNumber = Annotated[str, Field(pattern=r"^[0-9A-Z]{5}$", description="5-character batch")]
Gallons = Annotated[Decimal, Field(gt=0, max_digits=18, decimal_places=6, allow_inf_nan=False)]
Volume = Annotated[Decimal, Field(ge=0, allow_inf_nan=False, max_digits=18)]
Count = Annotated[int, Field(gt=0, le=99_999_999_999)]
CommandId = Annotated[str, Field(min_length=1, max_length=200)]
Reason = Annotated[str, Field(max_length=100)] | int


class Model(BaseModel):
    """Strict base: unknown fields are errors, instances are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ByCode(Model):
    """Exactly the block with this 38-character code, held in full."""

    code: Annotated[str, Field(min_length=38, max_length=38)]


class ByAttributes(Model):
    """`quantity` gallon-RINs of a D code, vintage and K, picked first-in-first-out."""

    d_code: Literal[3, 4, 5, 6, 7]
    vintage: Annotated[int, Field(ge=2008, le=2099)]
    k: Literal[1, 2]
    quantity: Count
    company: PartyId | None = None
    facility: FacilityId | None = None
    batch: BatchNumber | None = None


def _selector_kind(value: Any) -> str:
    """Which selector a `rins` value is: one naming a `code`, else one by attributes."""
    named = value if isinstance(value, dict) else vars(value) if isinstance(value, Model) else {}
    return "by_code" if "code" in named else "by_attributes"


SELECTOR_TAGS = ("by_code", "by_attributes")
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
    name: Annotated[str, Field(min_length=1, max_length=200)]
    roles: Annotated[list[str], Field(min_length=1)]
    facilities: list[FacilityId] = []


class Generate(Dated, GenerationInput):
    type: Literal["generate"] = "generate"
    party: PartyId
    facility: FacilityId
    batch: BatchNumber
    batches: dict[int, BatchNumber] | None = Field(
        default=None, description="batch number per D code when one batch yields several"
    )
    generate_rins: bool = Field(
        default=True, description="false: record production without RINs, §80.1426(c)(2)-(3)"
    )
    new_facility_year: Annotated[int, Field(ge=1, le=99)] | None = Field(
        default=None, description="1-3: calendar year of a new facility's production"
    )
    pathway_effective_date: IsoDate | None = None


class Transfer(Dated):
    type: Literal["transfer"] = "transfer"
    from_: PartyId = Field(alias="from")
    to: PartyId
    rins: RinSelector
    volume: Gallons | None = None
    ptd: Annotated[str, Field(max_length=200)] | None = None
    price: Annotated[Decimal, Field(ge=0, allow_inf_nan=False, max_digits=18)] | None = None
    reason: Literal[
        "standard", "remedial_partner", "remedial_duplicate", "tolling", "intra_company"
    ] = Field(default="standard", description="EMTS buy/sell reason")


class TransferFuel(Dated):
    type: Literal["transfer_fuel"] = "transfer_fuel"
    from_: PartyId = Field(alias="from")
    to: PartyId
    volume: Gallons
    ptd: Annotated[str, Field(max_length=200)] | None = None


class Separate(Dated):
    type: Literal["separate"] = "separate"
    party: PartyId
    reason: Reason
    rins: RinSelector
    volume: Gallons | None = None
    blend_percent: Annotated[Decimal, Field(gt=0, le=100, allow_inf_nan=False)] | None = None


class Retire(Dated):
    type: Literal["retire"] = "retire"
    party: PartyId
    reason: Reason
    rins: RinSelector
    compliance_year: Annotated[int, Field(ge=2008, le=2099)] | None = None
    category: Literal["CB", "BBD"] | None = None


class Split(Dated):
    type: Literal["split"] = "split"
    party: PartyId
    rin: Annotated[str, Field(min_length=38, max_length=38)]
    sizes: Annotated[list[Count], Field(min_length=2, max_length=1000)]


class ReportObligation(CommandBase):
    type: Literal["report_obligation"] = "report_obligation"
    party: PartyId
    year: Annotated[int, Field(ge=2010, le=2099)]
    date: IsoDate | None = None
    rvo: dict[str, Annotated[int, Field(ge=0, le=10**12)]] | None = None
    gasoline_volume: Volume | None = None
    diesel_volume: Volume | None = None
    approach: str | None = None
    bbd_2010_reduction: Annotated[int, Field(ge=0)] = 0
    basis: Annotated[
        list[Literal["refining", "importing", "blendstocks", "s80_1408"]],
        Field(min_length=1, max_length=4,
              description="what the non-export RVO arises from (§80.1429(b)(9))"),
    ] | None = None

    @model_serializer(mode="wrap")
    def _basis_only_if_stated(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Leave out an unstated `basis`, so that a report made before the field existed keeps
        its content digest and is still recognised as the same command when sent again."""
        data: dict[str, Any] = handler(self)
        if data.get("basis") is None:
            data.pop("basis", None)
        return data

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
    rin: Annotated[str, Field(min_length=38, max_length=38)]
    reason: Cause
    note: Annotated[str, Field(max_length=2000)] | None = None


Command = Annotated[
    RegisterParty | Generate | Transfer | TransferFuel | Separate | Retire | Split
    | ReportObligation | Invalidate,
    Field(discriminator="type"),
]
_ADAPTER: TypeAdapter[Any] = TypeAdapter(Command)
COMMAND_TYPES = (
    "register_party", "generate", "transfer", "transfer_fuel", "separate", "retire", "split",
    "report_obligation", "invalidate",
)


def parse_command(data: str | bytes | dict[str, Any] | BaseModel) -> Any:
    """Validate one command from JSON text, a dict or a model; `InputError` names the bad field."""
    if isinstance(data, BaseModel):
        return data
    try:
        if isinstance(data, str | bytes):
            return _ADAPTER.validate_json(data)
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        raise input_error(exc) from None


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
