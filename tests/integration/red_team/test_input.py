"""Red team, issue 9 attack 11 (input) and item 6 (strict input): each test performs one attack
and asserts it is refused, naming the field (or the limit) and storing nothing.

The attacks that reached the store in release 1: −999,999 °F minting 631,137 gallon-RINs from
1,000 gallons; duplicated keys (last wins, even for `"type"`); booleans and strings taken as
numbers (`"quantity": true` → 1, `"1_000"`); `"2024-W06-6"` taken as a date; timestamps in
`production_start`; a 40 MB line of unknown keys taking 3.6 GB; NaN and 2^76 in stored states.
"""

from __future__ import annotations

import copy
import json
import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo
from test_hostile_input import BASE, seeded, stored

from ledger.application.command_input import parse_command
from ledger.application.ledger import Ledger
from ledger.application.transaction_file import MAX_LINE_BYTES
from ledger.domain.commands import COMMAND_TYPES, ByAttributes, ByCode
from ledger.domain.errors import InputError
from ledger.rules.s1426.generation import Component, Feedstock

ROOT = Path(__file__).resolve().parents[3]
MEASURED = {**BASE["generate"], "volume": None, "measured_volume": "1000", "temperature_f": "60"}
del MEASURED["volume"]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ledger]:
    ledger = seeded(tmp_path_factory.mktemp("red-input"))
    yield ledger
    ledger.close()


def refused(ledger: Ledger, command: Any, field: str | None, words: str = "") -> str:
    """Apply `command`; assert it is refused naming `field` (and `words`), storing nothing."""
    before = stored(ledger)
    result = ledger.apply(command, line=9)
    assert result.status == "rejected", (command, result)
    assert result.error is not None and words in result.error, result.error
    if field is not None:
        assert result.field is not None and result.field.split(".")[0] == field.split(".")[0], (
            field, result)
    assert stored(ledger) == before
    return result.error


def with_field(command: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(command)
    *parents, leaf = path.split(".")
    target = out
    for part in parents:
        target = target[part]
    target[leaf] = value
    return out


# ---- physical bounds -----------------------------------------------------------------------

@pytest.mark.parametrize("temperature", ["-999999", -999_999, "-59", "303", 1e6])
def test_attack_temperature_out_of_the_correlations_range_is_refused(
    world: Ledger, temperature: Any
) -> None:
    """Issue 9 item 11 / item 6: −999,999 °F turned 1,000 gallons of ethanol into 631,137
    gallon-RINs (1,000 × (0.0006301 × 999,999 + 1.0378)); §80.1426(f)(8) bounds it."""
    error = refused(world, {**MEASURED, "temperature_f": temperature}, "temperature_f",
                    "-58 °F to 302 °F")
    assert error.startswith("§80.1426(f)(8)")


def test_temperature_at_the_ranges_end_still_generates(tmp_path: Path) -> None:
    """The bound refuses nothing inside the range: 1,000 gal at 302 °F standardize to
    1,000 × (−0.0006301 × 302 + 1.0378) = 847.5098 gallons → 848 D6 gallon-RINs (EV 1.0)."""
    with seeded(tmp_path) as ledger:
        result = ledger.apply({**MEASURED, "temperature_f": 302})
    assert result.status == "applied", result
    assert result.rin is not None and result.rin[-16:] == "00000001" "00000848"


@pytest.mark.parametrize(("path", "value"), [
    ("volume", "0"), ("volume", "-1"), ("volume", 10**16), ("volume", "1" + "0" * 40),
    ("renewable_fraction", "1.5"), ("renewable_fraction", "-0.1"),
    ("equivalence_value", "0"), ("equivalence_value", "-1.0"),
])
def test_attack_generation_quantity_out_of_bounds_is_refused(
    world: Ledger, path: str, value: Any
) -> None:
    """Item 6: volumes positive and bounded, fractions within [0, 1], EVs positive."""
    refused(world, with_field(BASE["generate"], path, value), path)


@pytest.mark.parametrize(("kind", "path", "value"), [
    ("transfer", "price", "-0.01"), ("separate", "blend_percent", "100.5"),
    ("transfer_fuel", "volume", "0"), ("report_obligation", "gasoline_volume", "-1"),
    ("report_obligation", "bbd_2010_reduction", 2**76),
    ("split", "sizes", [2**76, 1]),
])
def test_attack_other_quantities_out_of_bounds_are_refused(
    world: Ledger, kind: str, path: str, value: Any
) -> None:
    """Item 6: prices non-negative, percentages at most 100, and no integer beyond 64 bits
    (issue 9 item 11: a 2^76 integer in a stored state crashed `verify --head`)."""
    refused(world, with_field(BASE[kind], path, value), path)


@pytest.mark.parametrize("nan", [Decimal("NaN"), Decimal("sNaN"), float("nan"), Decimal("Inf")])
@pytest.mark.parametrize(("kind", "path"), [
    ("transfer_fuel", "volume"), ("generate", "volume"), ("transfer", "volume"),
    ("report_obligation", "diesel_volume"),
])
def test_attack_nan_from_a_library_caller_is_refused(
    world: Ledger, kind: str, path: str, nan: Any
) -> None:
    """Issue 9 item 11: NaN reached a stored state (hashing like null, then crashing `verify`
    and `rin quarterly`); a Python caller's NaN or infinity is refused like JSON's."""
    refused(world, with_field(BASE[kind], path, nan), path)


# ---- duplicated keys -----------------------------------------------------------------------

@pytest.mark.parametrize(("text", "key"), [
    ('{"type": "register_party", "type": "generate", "party": "4001", "name": "T",'
     ' "roles": ["rin_owner"]}', "type"),
    ('{"type": "register_party", "party": "4001", "party": "4002", "name": "T",'
     ' "roles": ["rin_owner"]}', "party"),
    ('{"type": "transfer", "date": "2024-02-10", "from": "2001", "to": "3001", "volume": "1000",'
     ' "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 2500, "quantity": 40000}}',
     "quantity"),
    ('{"type": "generate", "date": "2024-03-31", "party": "1001", "facility": "20001",'
     ' "batch": "00002", "fuel": "ethanol", "d_code": 6, "volume": "1000", "feedstocks":'
     ' [{"type": "starch", "mass_lb": 1, "mass_lb": 1, "moisture": 0, "converted_fraction": 1}]}',
     "mass_lb"),
    ('{"type": "register_party", "party": "4001", "name": "T", "roles": ["rin_owner"],'
     ' "x": {"a": {"b": 1, "b": 1}}}', "b"),
])
def test_attack_duplicated_key_at_any_depth_is_refused_naming_it(
    world: Ledger, text: str, key: str
) -> None:
    """Issue 9 item 11: a repeated key was accepted, the last one winning, even for `"type"`;
    now refused at any depth, even when both values agree."""
    refused(world, text.encode(), key, f"duplicated key '{key}'")


def test_attack_duplicated_key_hidden_by_an_escaped_colon_is_refused(world: Ledger) -> None:
    """The fast parse trusts orjson only when no key can have been dropped; an escaped colon
    (`\\u003a`) must not make up for a duplicate's missing one."""
    text = ('{"type": "register_party", "party": "4001", "party": "4002", "name": "\\u003a",'
            ' "roles": ["rin_owner"]}')
    refused(world, text.encode(), "party", "duplicated key 'party'")


@pytest.mark.parametrize(("number", "status"), [
    ("100.00000000000000001", "rejected"),  # 17 places: a binary float would make it 100.0
    ("1e2", "applied"), ("100.5", "applied"), ("100", "applied"),
])
def test_json_numbers_are_read_exactly(world: Ledger, number: str, status: str) -> None:
    """A JSON number is read as written: 100.00000000000000001 gallons has more than the six
    decimal places a volume may have, and is not rounded to 100 to pass."""
    text = json.dumps({**BASE["transfer_fuel"], "ptd": "PTD: 7"}).replace('"100"', number)
    assert world.apply(text.encode()).status == status


# ---- no coercion: every field of every command, found from the models -----------------------

def command_models() -> list[type[BaseModel]]:
    """Every model a line may hold: the nine commands and the models nested in them."""
    from ledger.domain import commands

    tops = [model for model in vars(commands).values()
            if isinstance(model, type) and issubclass(model, commands.CommandBase)
            and "type" in model.model_fields]
    assert {model.model_fields["type"].default for model in tops} == set(COMMAND_TYPES)
    return [*tops, ByAttributes, ByCode, Component, Feedstock]


def kinds(schema: dict[str, Any], container: str = "") -> set[tuple[str, str]]:
    """(container, kind) pairs a field's JSON schema admits; kind is integer, decimal, string,
    date or boolean; nested models (`$ref`) and null are left to their own rows."""
    if "anyOf" in schema:
        if {"number", "string"} <= {part.get("type") for part in schema["anyOf"]}:
            return {(container, "decimal")}
        return set().union(*(kinds(part, container) for part in schema["anyOf"]))
    kind = schema.get("type")
    if kind == "array" and "$ref" not in schema.get("items", {}):
        return kinds(schema["items"], "list")
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return kinds(schema["additionalProperties"], "dict")
    if kind == "string":
        return {(container, "date" if schema.get("format") == "date" else "string")}
    return {(container, kind)} if kind in ("integer", "boolean") else set()


HOSTILE: list[Any] = [
    True, False, 1, 0, "12", "1_000", " 12", "12 ", "+12", 12.0, Decimal("12.0"), 12.5, 1001,
    Decimal("1001"), "1e3", "NaN", "Infinity", "-Infinity", float("nan"), float("inf"),
    Decimal("NaN"), "0x1F", "١٢", "１２", "", "true", "false", "2024-W06-6", "20240210",
    "2024-02-10T00:00:00", "2024-02-10 ", 1707523200, datetime(2024, 2, 10), b"12", [], {},
]


def legit(kind: str, value: Any) -> bool:
    """Whether `value` is a proper JSON value of `kind` (design.md "Refusals are strict")."""
    if kind == "integer":
        return type(value) is int
    if kind == "boolean":
        return type(value) is bool
    if kind == "string":
        return type(value) is str
    if kind == "date":
        return type(value) is str and len(value) == 10 and value[4] == value[7] == "-" \
            and (value[:4] + value[5:7] + value[8:]).isascii() \
            and (value[:4] + value[5:7] + value[8:]).isdigit()
    if type(value) in (int, float, Decimal):  # decimal: a finite number ...
        return Decimal(value).is_finite()
    if type(value) is not str:  # ... or a plain decimal string
        return False
    body = value.lstrip("+-")
    digits = body.replace(".", "", 1)
    return len(value) - len(body) <= 1 and digits.isascii() and digits.isdigit()


def field_adapter(info: FieldInfo) -> TypeAdapter[Any]:
    """A validator of one model field alone: its type with its constraints and validators."""
    if not info.metadata:
        return TypeAdapter(info.annotation)
    return TypeAdapter(Annotated[(info.annotation, *info.metadata)])  # type: ignore[valid-type]


def coercion_cases() -> list[tuple[str, str, Any]]:
    cases = []
    for model in command_models():
        for name, info in model.model_fields.items():
            found = kinds(field_adapter(info).json_schema())
            for value in HOSTILE:
                for container in {c for c, _ in found}:
                    if not any(legit(k, value) for c, k in found if c == container):
                        cases.append((f"{model.__name__}.{name}", container, value))
    return cases


CASES = coercion_cases()


def test_the_coercion_grid_covers_every_kind_of_field() -> None:
    """The grid below is only as good as its reading of the models: it must find fields of
    every kind, in every command (a model it could not read would be silently skipped)."""
    fields = {case[0] for case in CASES}
    for model in command_models():
        assert any(f.startswith(model.__name__ + ".") for f in fields), model
    for example in ("ByAttributes.quantity", "ByAttributes.d_code", "Generate.volume",
                    "Generate.temperature_f", "Generate.production_start", "Generate.ghg_exempt",
                    "Split.sizes", "Transfer.from_", "Generate.batches", "Feedstock.moisture",
                    "ReportObligation.rvo", "Retire.reason", "Invalidate.rin"):
        assert example in fields, example


@pytest.mark.parametrize(("field", "container", "value"), CASES, ids=repr)
def test_attack_a_value_of_the_wrong_kind_is_refused_in_every_field(
    field: str, container: str, value: Any
) -> None:
    """Issue 9 item 11 / item 6: no boolean or string taken as a number, no number as a string,
    no fraction as an integer, no week date or timestamp as a date, in any field."""
    model_name, name = field.split(".")
    model = next(m for m in command_models() if m.__name__ == model_name)
    info = model.model_fields[name]
    wrapped = [value] if container == "list" else {"6": value} if container == "dict" else value
    with pytest.raises(ValidationError):
        field_adapter(info).validate_python(wrapped)


@pytest.mark.parametrize(("kind", "path", "value"), [
    ("transfer", "rins.quantity", True), ("transfer", "rins.quantity", "2500"),
    ("transfer", "rins.quantity", "2_500"), ("transfer", "rins.quantity", 2500.0),
    ("transfer", "rins.d_code", "6"), ("transfer", "rins.d_code", 6.0),
    ("transfer", "rins.k", True), ("transfer", "rins.vintage", "2024"),
    ("transfer", "from", 2001), ("transfer", "to", 3001), ("register_party", "party", 4001),
    ("generate", "facility", 20001), ("generate", "d_code", "6"), ("generate", "volume", True),
    ("generate", "volume", "1_000"), ("generate", "volume", "1e3"),
    ("generate", "volume", " 1000"), ("generate", "volume", "NaN"),
    ("generate", "volume", "Infinity"), ("generate", "ghg_exempt", "false"),
    ("generate", "generate_rins", 1), ("retire", "compliance_year", "2024"),
    ("retire", "compliance_year", 2024.0), ("split", "sizes", ["4000", "6000"]),
    ("split", "sizes", [4000.0, 6000.0]), ("split", "sizes", [True, 9999]),
    ("report_obligation", "year", "2024"), ("report_obligation", "gasoline_volume", True),
    ("transfer", "date", "2024-W06-6"), ("transfer", "date", "20240210"),
    ("transfer", "date", "2024-02-10T00:00:00"), ("transfer", "date", 20240210),
    ("generate", "production_start", "2024-03-01T00:00:00"),
    ("generate", "production_start", 1709251200), ("generate", "production_end", "2024-W13-7"),
])
@pytest.mark.parametrize("as_text", [True, False], ids=["json", "dict"])
def test_attack_coercible_value_in_a_whole_command_is_refused(
    world: Ledger, kind: str, path: str, value: Any, as_text: bool
) -> None:
    """Issue 9 item 11: each value here would make a valid command if coerced (`true` → 1,
    `"2500"` → 2500, `2500.0` → 2500, `"2024-W06-6"` → 2024-02-10): refused, as text or dict."""
    command = with_field(BASE[kind], path, value)
    refused(world, json.dumps(command).encode() if as_text else command, path)


@pytest.mark.parametrize("volume", ["1000", "1000.0", "+1000", "1000.", 1000, "0001000"])
def test_plain_decimal_strings_and_numbers_are_amounts(world: Ledger, volume: Any) -> None:
    """Design.md: an amount is a JSON number or a plain decimal string (digits, one optional
    point, optional sign); each of these is 1,000 gallons and moves."""
    command = {**BASE["transfer_fuel"], "volume": volume}
    assert world.apply(json.dumps(command)).status == "applied"


def test_a_json_number_with_an_exponent_is_an_amount(world: Ledger) -> None:
    """A JSON number may have an exponent (RFC 8259); only the string form must be plain."""
    text = json.dumps(BASE["transfer_fuel"]).replace('"100"', "1e2")
    assert "1e2" in text and world.apply(text).status == "applied"


# ---- one line's memory, BOM, UTF-8 --------------------------------------------------------

def rin_apply(data: Path, *files: Path, **env: str) -> tuple[subprocess.CompletedProcess[str],
                                                             int]:
    """Run this worktree's `rin apply` in a subprocess; return it and its peak RSS in MB (the
    kernel's VmHWM of its own image: `ru_maxrss` would count the forked test process too)."""
    script = ("import atexit, re, sys\n"
              "atexit.register(lambda: print('PEAK', re.search(r'VmHWM:\\s+(\\d+)', open("
              "'/proc/self/status').read())[1], file=sys.stderr))\n"
              "from ledger.cli.main import main\nmain()\n")
    done = subprocess.run(
        [sys.executable, "-c", script, "--data", str(data), "apply", *map(str, files)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, **env},
    )
    peak = next(int(line.split()[1]) for line in done.stderr.splitlines()
                if line.startswith("PEAK"))
    return done, peak // 1024


@pytest.mark.parametrize("megabytes", [40, 150])
def test_attack_a_huge_line_is_refused_early_in_bounded_memory(
    tmp_path: Path, megabytes: int
) -> None:
    """Issue 9 item 11: one 40 MB line of unknown keys took 3.6 GB, a 150 MB one crashed.
    Now the line is refused naming the limit, the next line applies, memory stays small."""
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as out:
        out.write(b'{"type":"register_party"')
        block = b"".join(b',"k%d":0' % i for i in range(100_000))  # 1 MB of unknown keys
        for _ in range(megabytes):
            out.write(block)
        out.write(b"}\n")
        size = out.tell() - 1
        out.write(json.dumps(BASE["register_party"]).encode() + b"\n")
    assert size > megabytes * 1_000_000
    done, peak_mb = rin_apply(tmp_path / "data", path)
    assert done.returncode == 1, done.stderr
    assert done.stdout == (f"line 1: format: line of {size:,} bytes is over the limit of "
                           f"{MAX_LINE_BYTES:,} bytes\n"), done.stdout
    assert "1 applied, 0 duplicate, 1 rejected" in done.stderr
    assert "Traceback" not in done.stderr
    assert peak_mb < 120, f"peak RSS {peak_mb} MB"  # 67 MB measured; 3.6 GB before


def test_attack_many_unknown_keys_within_the_line_limit_are_refused_cheaply(
    world: Ledger
) -> None:
    """Item 6: unknown keys are refused; 90,000 of them in a 1 MB line are refused by count
    before any model sees them (validating them all took 87 MB and 1.5 s)."""
    line = b'{"type":"register_party",' + b",".join(b'"k%d":0' % i for i in range(90_000)) + b"}"
    assert len(line) < MAX_LINE_BYTES
    refused(world, line, None, "an object of 90,001 keys is over the limit of 100")
    refused(world, {**BASE["register_party"], "colour": "red"}, "colour", "Extra inputs")


def test_attack_deep_nesting_is_refused(world: Ledger) -> None:
    """Item 6: half a million nested arrays (within the line limit) are refused, no crash."""
    refused(world, b"[" * 500_000 + b"]" * 500_000, None, "nested too deeply")


def test_bom_at_the_start_of_each_file_is_skipped_elsewhere_named(tmp_path: Path) -> None:
    """Item 6: a UTF-8 BOM (as Windows tools write) starting a file is skipped; one inside a
    file is refused by name; a byte that is not UTF-8 is named with its position."""
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    party = json.dumps(BASE["register_party"]).encode()
    first.write_bytes(b"\xef\xbb\xbf" + party + b"\n\xef\xbb\xbf" + party + b"\n")
    second.write_bytes(b"\xef\xbb\xbf" + party.replace(b"4001", b"4002") + b"\n"
                       + b'{"type": "x\xff"}\n')
    done, _ = rin_apply(tmp_path / "data", first, second)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        "line 2: format: a UTF-8 byte-order mark is allowed only at the start of a file",
        "line 4: format: not UTF-8: invalid byte 0xff at byte 12",
    ]
    assert "2 applied, 0 duplicate, 2 rejected" in done.stderr
    with Ledger(tmp_path / "data") as ledger:
        assert {p["party"] for p in ledger.holdings("4001")} == set()  # registered, holds none
        assert ledger.party("4002").name == BASE["register_party"]["name"]


def test_input_error_is_a_ledger_error_naming_the_format() -> None:
    """Every refusal above is an `InputError` (citation `format`) or a rule's violation."""
    with pytest.raises(InputError) as exc:
        parse_command(b'{"type": "split", "type": "split"}')
    assert exc.value.citation == "format" and exc.value.field == "type"
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 0
