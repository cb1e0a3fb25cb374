"""Hostile input: malformed, out-of-range and junk commands are refused cleanly, storing nothing.

Every case must end in a `LedgerError` (library) or a `rejected` result naming the field (and
the line, in `rin apply`), exit code 1 for rejected lines and 2 for unreadable files
(design.md), and an unchanged event store (the maximum notification id). The grid cases and the
hypothesis examples are counted in `CASES` and printed at the end of the session
(`pytest -s`); each hypothesis test runs `max_examples` examples.
"""

from __future__ import annotations

import copy
import json
import math
import random
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from long_profile import sized, tally
from markets import three_party_market
from typer.testing import CliRunner

from ledger.application.command_input import parse_command
from ledger.application.ledger import Ledger
from ledger.cli.main import app
from ledger.domain.errors import LedgerError, RuleViolation
from ledger.domain.rin import parse_code
from projections import Views

CASES: Counter[str] = Counter()
EXAMPLES = 300
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

# The world every base command is valid in: 100,000 D6 gallon-RINs generated (100,000 gallons
# of ethanol × EV 1.0), 40,000 sold with 16,000 gallons to the blender, 20,000 of those
# separated on blending 8,000 gallons, 10,000 of those (serials 1-10,000) sold to the refiner.
SETUP: list[dict[str, Any]] = three_party_market(separated=20_000)
# K=2 2024 company 1001 facility 20001 batch 00001 RR 10 D6 serials 1-10,000: the refiner's block
REFINER_BLOCK = "2" "2024" "1001" "20001" "00001" "10" "6" "00000001" "00010000"
BASE: dict[str, dict[str, Any]] = {
    "register_party": {"type": "register_party", "party": "4001", "name": "Trader",
                       "roles": ["rin_owner"], "facilities": []},
    "generate": {"type": "generate", "date": "2024-03-31", "party": "1001", "facility": "20001",
                 "batch": "00002", "fuel": "ethanol", "d_code": 6, "volume": "1000"},
    "transfer": {"type": "transfer", "date": "2024-02-10", "from": "2001", "to": "3001",
                 "volume": "1000", "rins": {"d_code": 6, "vintage": 2024, "k": 1,
                                            "quantity": 2500}},
    "transfer_fuel": {"type": "transfer_fuel", "date": "2024-02-10", "from": "1001",
                      "to": "2001", "volume": "100"},
    "separate": {"type": "separate", "date": "2024-02-10", "party": "2001", "reason": "blending",
                 "volume": "1000", "rins": {"d_code": 6, "vintage": 2024, "k": 1,
                                            "quantity": 2500}},
    "retire": {"type": "retire", "date": "2024-02-10", "party": "3001", "reason": "compliance",
               "compliance_year": 2024, "rins": {"d_code": 6, "vintage": 2024, "k": 2,
                                                 "quantity": 1000}},
    "split": {"type": "split", "date": "2024-02-10", "party": "3001", "rin": REFINER_BLOCK,
              "sizes": [4000, 6000]},
    "report_obligation": {"type": "report_obligation", "party": "3001", "year": 2024,
                          "gasoline_volume": "1000000", "diesel_volume": "0"},
}

NAN, INF = float("nan"), float("inf")
HUGE = 10**30
JUNK_TYPES: list[Any] = [None, [], {}, [1, 2]]
DATES = ["2024-02-30", "2024-13-01", "0001-01-01", "9999-12-31", "1999-12-31", "2100-01-01",
         "2024-1-1", "2024-02-10T00:00:00", "20240210", 20240210, "", "٢٠٢٤-٠٢-١٠", "2024-W06-6",
         " 2024-02-10", *JUNK_TYPES]
PARTY_IDS = ["9999", "123", "12345", "abcd", "١٢٣٤", "１２３４", "10 1", "1001\n", 1001,
             "", *JUNK_TYPES]
FACILITIES = ["99999", "2000", "200001", "٢٠٠٠١", "２０００１", 20001, "", *JUNK_TYPES]
BATCHES = ["0001", "000002", "abcde", "ÀBCDE", "０００02", "", 2, *JUNK_TYPES]
VOLUMES = [0, -1, "-0.5", NAN, INF, -INF, "NaN", "Infinity", "-Infinity", "1e999", HUGE,
           "1e-30", "abc", "", True, "1e3", "1_000", " 1000", "1000 ", "0x3E8", *JUNK_TYPES[1:]]
QUANTITIES = [0, -1, -HUGE, HUGE, 2.5, "2500.5", NAN, INF, "ten", "", True, "2500", "2_500",
              2500.0, *JUNK_TYPES]
D_CODES = [0, 1, 2, 8, -6, 66, HUGE, "D6", NAN, "6", 6.0, True, *JUNK_TYPES]
VINTAGES = [0, -2024, 2007, 2100, HUGE, "２０２４", NAN, "2024", 2024.0, *JUNK_TYPES]
KS = [0, 3, -1, HUGE, "K1", True, "1", 1.0, *JUNK_TYPES]
YEARS = [0, -1, 2007, 2100, HUGE, 2024.5, "twenty", NAN, INF, "2024", 2024.0, True]
CODES = ["", "1" * 37, "1" * 39, "x" * 38, "2202410012000100001106000000010001000²",
         "2202410012000100001106000000010001000٠", "3" + REFINER_BLOCK[1:],
         REFINER_BLOCK[:30] + "00000000", REFINER_BLOCK[:22] + "00000000" + REFINER_BLOCK[30:],
         REFINER_BLOCK.replace("1001", "١٠٠١"), 12345, *JUNK_TYPES]
SIZES = [[], [10000], [0, 10000], [-1, 10001], [HUGE, 1], [5000, 4000], [5000, 6000],
         [4000.0, 6000.0], ["4000", "6000"], [True, 9999],
         [2.5, 9997.5], ["a", "b"], [1] * 1001, None, "4000,6000"]
REASONS = ["", "because", "x" * 10_000, -1, HUGE, 99999, NAN, *JUNK_TYPES]
MUTATIONS: dict[str, list[Any]] = {
    "date": DATES, "party": PARTY_IDS, "from": PARTY_IDS, "to": PARTY_IDS,
    "facility": FACILITIES, "batch": BATCHES, "volume": VOLUMES, "rins.quantity": QUANTITIES,
    "rins.d_code": D_CODES, "rins.vintage": VINTAGES, "rins.k": KS, "rins.code": CODES,
    "rin": CODES, "sizes": SIZES, "year": YEARS, "compliance_year": YEARS,
    "gasoline_volume": [-1, NAN, INF, "1e999", HUGE, "abc"], "reason": REASONS,
    "d_code": D_CODES, "fuel": ["", "whisky", "ETHANOL", 1, *JUNK_TYPES],
    "name": ["", "x" * 201, *JUNK_TYPES], "roles": [[], "producer", ["wizard"], [1], None],
    "facilities": ["20001", [1], ["2001"], ["٢٠٠٠١"], None],
    "id": ["", "x" * 201, 5, [], {}], "type": ["", "generate2", "TRANSFER", None, 7],
}
# an unknown party may register; a generation may leave the D code to the fuel (§80.1426(f))
VALID_THERE = {("register_party", "party", repr("9999")), ("generate", "d_code", repr(None))}
MAX_MESSAGE = 300


@pytest.fixture(scope="session", autouse=True)
def report_counts() -> Iterator[None]:
    yield
    if CASES:
        print("\nhostile-input cases run:", dict(CASES), "total", sum(CASES.values()))


def seeded(folder: Path) -> Ledger:
    ledger = Ledger(folder)
    for command in SETUP:
        assert ledger.apply(command).status == "applied", command
    return ledger


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ledger]:
    ledger = seeded(tmp_path_factory.mktemp("hostile"))
    yield ledger
    ledger.close()


def stored(ledger: Ledger) -> int:
    return ledger.position() or 0


def mutated(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    command = copy.deepcopy(base)
    *parents, leaf = path.split(".")
    target = command
    for part in parents:
        target = target[part]
    if leaf == "code":  # `rins.code` replaces the attribute selector with a code selector
        target.clear()
    target[leaf] = value
    return command


def grid() -> list[tuple[str, str, Any]]:
    """Every (command type, field, hostile value) whose field the command has."""
    cases = []
    for kind, base in BASE.items():
        for path, values in MUTATIONS.items():
            head, _, leaf = path.partition(".")
            present = head in base and (not leaf or isinstance(base[head], dict))
            if present or (path == "rins.code" and "rins" in base):
                cases.extend((kind, path, value) for value in values
                             if (kind, path, repr(value)) not in VALID_THERE)
    return cases


def assert_rejected_cleanly(ledger: Ledger, command: Any, field: str) -> None:
    before = stored(ledger)
    result = ledger.apply(command, line=7)
    assert result.status == "rejected", (field, command, result)
    assert result.error and len(result.error) <= MAX_MESSAGE, result.error
    top = field.split(".")[0]
    assert result.field is not None and result.field.split(".")[0] in (top, "type"), (
        field, result)
    assert stored(ledger) == before


def test_every_base_command_is_valid(tmp_path: Path) -> None:
    """The grid mutates valid commands: each base, unmutated, applies in the seeded world."""
    for kind, command in BASE.items():
        with seeded(tmp_path / kind) as ledger:
            assert ledger.apply(command).status == "applied", kind


@pytest.mark.parametrize(("kind", "path", "value"), grid(), ids=lambda v: repr(v)[:24])
def test_hostile_field_is_rejected_naming_it(
    world: Ledger, kind: str, path: str, value: Any
) -> None:
    CASES["grid: one hostile field per command"] += 1
    assert_rejected_cleanly(world, mutated(BASE[kind], path, value), path)


def json_values() -> st.SearchStrategy[Any]:
    scalars = (st.none() | st.booleans() | st.integers() | st.floats()
               | st.text(max_size=50) | st.decimals().map(str))
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(st.text(max_size=12), inner, max_size=4),
                        max_leaves=12)


@FUZZ
@given(kind=st.sampled_from(sorted(BASE)), data=st.data())
def test_random_field_values_never_crash_and_store_nothing_when_rejected(
    world: Ledger, kind: str, data: st.DataObject
) -> None:
    CASES["fuzz: random value in a random field"] += 1
    base = BASE[kind]
    fields = sorted(base) + [f"rins.{k}" for k in base.get("rins", {})] + ["unexpected"]
    path = data.draw(st.sampled_from(fields))
    command = mutated(base, path, data.draw(json_values()))
    before = stored(world)
    result = world.apply(command)
    if result.status == "rejected":
        assert result.error and len(result.error) <= MAX_MESSAGE
        assert stored(world) == before


@FUZZ
@given(st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_parser_turns_any_bytes_into_a_command_or_an_input_error(raw: bytes) -> None:
    CASES["fuzz: parse_command on arbitrary bytes"] += 1
    try:
        parse_command(raw)
    except LedgerError as error:
        assert error.citation == "format" and len(str(error)) <= MAX_MESSAGE


@FUZZ
@given(kind=st.sampled_from(sorted(BASE)), cut=st.floats(0, 1, exclude_max=True))
def test_truncated_line_is_an_input_error(kind: str, cut: float) -> None:
    CASES["fuzz: truncated JSON line"] += 1
    text = json.dumps(BASE[kind]).encode()
    with pytest.raises(LedgerError, match="not valid JSON"):
        parse_command(text[: math.floor(cut * len(text))])


@pytest.mark.parametrize("raw", [
    b'{"type":"transfer_fuel","date":"2024-02-10","from":"1001","to":"2001","volume":NaN}',
    b'{"type":"transfer_fuel","date":"2024-02-10","from":"1001","to":"2001","volume":Infinity}',
    b'{"type":"transfer_fuel","date":"2024-02-10","from":"1001","to":"2001","volume":1e999}',
    b'{"type":"transfer_fuel","date":"2024-02-10","from":"1001","to":"2001","volume":1'
    + b"0" * 5000 + b"}",
    b"[" * 100_000 + b"]" * 100_000,
    b'{"type":"register_party","party":"4001","name":"' + b"x" * 10_000_000 + b'","roles":[]}',
    b'{"type":"split","date":"' + b"2" * 10_000_000 + b'"}',
    b"\xff\xfe\x00junk", b"", b"null", b"[]", b'"text"', b"42",
])
def test_nasty_json_is_an_input_error(world: Ledger, raw: bytes) -> None:
    CASES["nasty JSON lines"] += 1
    before = stored(world)
    result = world.apply(raw)
    assert result.status == "rejected" and result.citation == "format"
    assert result.error is not None and len(result.error) <= MAX_MESSAGE
    assert stored(world) == before


@FUZZ
@given(st.text(min_size=30, max_size=46) | st.text(alphabet="0123456789ABZ²٠１ -",
                                                  min_size=38, max_size=38))
def test_rin_parser_returns_a_block_or_names_the_field(code: str) -> None:
    CASES["fuzz: parse_code"] += 1
    try:
        key, start, end = parse_code(code, "rin")
    except RuleViolation as error:
        assert error.rule_id.startswith("RIN-") and error.citation.startswith("§80.1425")
        assert error.field is not None and error.field.startswith("rin")
        return
    assert code.isascii() and 1 <= start <= end
    assert key.block(start, end).code == code


@pytest.mark.parametrize("code", [c for c in CODES if isinstance(c, str)] + [None, 38, b"x"])
def test_rin_parser_names_the_wrong_field(code: Any) -> None:
    CASES["grid: parse_code"] += 1
    if code in ("3" + REFINER_BLOCK[1:], REFINER_BLOCK[:22] + "00000000" + REFINER_BLOCK[30:]):
        expected = {"3": "rin.K"}.get(code[0], "rin.SSSSSSSS")
    else:
        expected = "rin"
    with pytest.raises(RuleViolation) as exc:
        parse_code(code, "rin")
    assert exc.value.field is not None and exc.value.field.startswith(expected)


# ---- the command line: rin apply ----------------------------------------------------------

def run_apply(data: Path, *files: str) -> Any:
    return CliRunner().invoke(app, ["--data", str(data), "apply", *files])


def store_size(data: Path) -> int:
    with Ledger(data) as ledger:
        return stored(ledger)


def test_cli_reports_each_bad_line_by_number_and_applies_the_rest(tmp_path: Path) -> None:
    good = json.dumps(BASE["register_party"])
    lines = [
        good,                                                           # 1 applied
        '{"type": "register_party", "party": "١٢٣٤", "name": "X", "roles": ["rin_owner"]}',
        '{"type": "transfer_fuel", "date": "2024-02-30"}',              # 3 bad date
        "\x00\x01binary junk",                                          # 4
        "",                                                             # 5 blank: skipped
        '{"type": "register_party", "party": "4002", "name": "' + "y" * 10_000_000 + '"}',
        '{"type": "register_party", "party": "4003", "name": "Z", "rol',  # 7 truncated
    ]
    path = tmp_path / "hostile.jsonl"
    path.write_bytes("\n".join(lines).encode() + b"\n\xff\xfe\xfd\n")  # 8: not UTF-8
    result = run_apply(tmp_path / "data", str(path))
    CASES["cli: hostile lines"] += 7
    assert result.exit_code == 1, result.output
    out = result.stdout.splitlines()
    assert [line.split(":")[0] for line in out] == [
        "line 2", "line 3", "line 4", "line 6", "line 7", "line 8"]
    assert "party" in out[0] and "date" in out[1] and "limit of 1,048,576 bytes" in out[3]
    assert all(len(line) <= MAX_MESSAGE + 20 for line in out)
    assert store_size(tmp_path / "data") == 1  # only line 1's Registered event


@FUZZ
@given(junk=st.binary(max_size=2000))
def test_cli_on_binary_junk_exits_1_or_0_and_stores_nothing(
    tmp_path: Path, junk: bytes
) -> None:
    CASES["fuzz: rin apply on binary junk"] += 1
    path = tmp_path / "junk.jsonl"
    path.write_bytes(junk)
    result = run_apply(tmp_path / "data", str(path))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    has_content = any(line.strip() for line in junk.removeprefix(b"\xef\xbb\xbf").splitlines())
    assert result.exit_code == (1 if has_content else 0), result.output
    assert store_size(tmp_path / "data") == 0


@pytest.mark.parametrize("unreadable", ["missing.jsonl", "a-directory"])
def test_cli_unreadable_file_exits_2_and_applies_nothing(tmp_path: Path, unreadable: str) -> None:
    CASES["cli: unreadable files"] += 1
    (tmp_path / "a-directory").mkdir()
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(BASE["register_party"]) + "\n")
    result = run_apply(tmp_path / "data", str(good), str(tmp_path / unreadable))
    assert result.exit_code == 2, result.output
    assert unreadable in result.stderr
    assert store_size(tmp_path / "data") == 0


# ---- the hostile stream: one seeded ledger, line after line (RIN_LONG=1: 100,000 lines) ----

STREAM, VERIFY_EVERY = sized(500, 100_000), sized(250, 5_000)
STREAMED = tally("hostile stream lines by category and outcome")
STREAM_RUN = tally("hostile stream run")
FIRST_GENERATION = "2024-01-31"  # the world's only batch; nothing is held before it
UNKNOWN_PARTIES = [f"{n}" for n in range(8000, 8100)]  # well formed, never registered
OUT_OF_RANGE: dict[str, list[Any]] = {  # numbers of the right type, outside what is possible
    "volume": [0, -1, "-0.5", HUGE], "rins.quantity": [0, -1, -HUGE, HUGE],
    "rins.vintage": [0, -2024, 2007, 2100, HUGE], "rins.d_code": [0, 1, 2, 8, -6, 66, HUGE],
    "rins.k": [0, 3, -1, HUGE], "year": [0, -1, 2007, 2100, HUGE],
    "compliance_year": [0, -1, 2007, 2100, HUGE],
}
Line = tuple[str, Any, str]  # (category, the line, expected: rejected|applied|duplicate|any)


class HostileStream:
    """Seeded hostile lines against one ledger, each with the outcome it must have.

    `any` marks lines a stricter parser will refuse (trust contract: duplicated keys, coerced
    types, unbounded temperatures): whatever they do, a refusal must store nothing.
    """

    def __init__(self, ledger: Ledger, seed: int) -> None:
        self.ledger, self.rng = ledger, random.Random(seed)
        self.grid = grid()
        self.applied: dict[str, dict[str, Any]] = {}  # id → the command applied with it
        self.makers = [
            self.hostile_field, self.hostile_field, self.random_value, self.malformed_json,
            self.duplicated_key, self.wrong_type, self.out_of_range, self.unknown_party,
            self.unknown_code, self.over_spend, self.before_holdings, self.idempotency,
        ]

    def next(self) -> Line:
        return self.rng.choice(self.makers)()

    def base(self, *paths: str) -> tuple[str, dict[str, Any]]:
        """A valid command of a random type, among those with one of `paths` if given."""
        kind = self.rng.choice([k for k in sorted(BASE) if not paths
                                or any(p.split(".")[0] in BASE[k] for p in paths)])
        return kind, copy.deepcopy(BASE[kind])

    def hostile_field(self) -> Line:
        kind, path, value = self.rng.choice(self.grid)
        return "one hostile field", mutated(BASE[kind], path, value), "rejected"

    def json_value(self, depth: int = 0) -> Any:
        """A random JSON value: a scalar of any type, or (not too deep) a list or an object."""
        makers: list[Callable[[], Any]] = [
            lambda: None, lambda: self.rng.random() < 0.5,
            lambda: self.rng.randint(-10**20, 10**20), lambda: self.rng.uniform(-1e9, 1e9),
            lambda: "".join(self.rng.choices("0123456789-.eE x٢", k=6)),
            lambda: self.rng.choice(["", "NaN", "1e999", "2024-02-10", "１０", "true"]),
            lambda: str(self.rng.randint(-10**6, 10**6)),
        ]
        if depth < 2:
            makers += [
                lambda: [self.json_value(depth + 1) for _ in range(self.rng.randrange(3))],
                lambda: {str(i): self.json_value(depth + 1) for i in range(self.rng.randrange(3))},
            ]
        return self.rng.choice(makers)()

    def random_value(self) -> Line:
        _, base = self.base()
        fields = sorted(base) + [f"rins.{k}" for k in base.get("rins", {})] + ["unexpected"]
        return "random value, random field", mutated(
            base, self.rng.choice(fields), self.json_value()), "any"

    def malformed_json(self) -> Line:
        _, base = self.base()
        text = json.dumps(base).encode()
        choice = self.rng.randrange(6)
        if choice == 0:
            raw = text[: self.rng.randrange(len(text))]
        elif choice == 1:
            raw = self.rng.randbytes(self.rng.randrange(1, 200))
        elif choice == 2:  # a bare NaN, Infinity or overflowing number for a value
            raw = text.replace(b'"2024-', b"NaN, \"x\": \"2024-", 1) if b"2024-" in text else b"["
            raw = raw.replace(b"NaN", self.rng.choice([b"NaN", b"Infinity", b"-Infinity"]))
        elif choice == 3:
            raw = b"[" * self.rng.randrange(1, 50_000)
        elif choice == 4:
            raw = self.rng.choice([b"null", b"[]", b'"text"', b"42", b"true", b" ", b"{}"])
        else:
            raw = text[:-1] + b"," + b"}"
        return "malformed JSON", raw, "rejected"

    def duplicated_key(self) -> Line:
        kind, base = self.base()
        other = self.rng.choice([k for k in sorted(BASE) if k != kind])
        raw = json.dumps(base).encode()[:-1] + b', "type": ' + json.dumps(other).encode() + b"}"
        return "duplicated key", raw, "rejected"

    def wrong_type(self) -> Line:
        typed = ("volume", "rins.quantity", "rins.d_code", "rins.k", "year", "party", "from",
                 "sizes", "d_code")
        _, base = self.base(*typed)
        path = self.rng.choice([p for p in typed if p.split(".")[0] in base])
        leaf = base[path.split(".")[0]] if "." not in path else base["rins"].get(path[5:])
        choices: list[Any] = [[leaf], {"value": leaf}, True]
        if path in ("rins.quantity", "rins.d_code", "rins.k", "year", "d_code"):
            choices += [str(leaf), 1.5]  # integers: no digit string, no fraction
        if path in ("party", "from"):
            choices += [int(leaf)]  # ids: no number for a string
        value = self.rng.choice(choices)
        return "wrong type", mutated(base, path, value), "rejected"

    def out_of_range(self) -> Line:
        if self.rng.random() < 0.2:  # GEN-TEMPERATURE, §80.1426(f)(8)
            command = {**BASE["generate"], "batch": "00003", "measured_volume": "1000",
                       "temperature_f": str(self.rng.choice([-999_999, 10**6, -460]))}
            del command["volume"]
            return "out-of-range temperature", command, "rejected"
        _, base = self.base(*OUT_OF_RANGE)
        path = self.rng.choice([p for p in OUT_OF_RANGE if p.split(".")[0] in base])
        value = self.rng.choice(OUT_OF_RANGE[path])
        return "out-of-range value", mutated(base, path, value), "rejected"

    def unknown_party(self) -> Line:
        kind, base = self.base()
        fields = [f for f in ("party", "from", "to") if f in base and kind != "register_party"]
        if not fields:
            kind, base = "transfer", copy.deepcopy(BASE["transfer"])
            fields = ["from", "to"]
        return "unknown party", mutated(base, self.rng.choice(fields),
                                        self.rng.choice(UNKNOWN_PARTIES)), "rejected"

    def unknown_code(self) -> Line:
        company = self.rng.choice(UNKNOWN_PARTIES)
        start = self.rng.randint(1, 1_000)
        code = f"2{2024}{company}20001000011060{start:07d}{start + 99:08d}"
        kind = self.rng.choice(["split", "transfer", "retire", "invalidate"])
        if kind == "split":
            command = {**BASE["split"], "rin": code, "sizes": [50, 50]}
        elif kind == "invalidate":
            command = {"type": "invalidate", "date": "2024-02-10", "rin": code,
                       "reason": "improperly_generated"}
        else:
            command = {**BASE[kind], "rins": {"code": code}}
        return "unknown RIN code", command, "rejected"

    def over_spend(self) -> Line:
        held = {(row["party"], row["k"]): row["gallon_rins"] for party in ("2001", "3001")
                for row in self.ledger.holdings(party)}
        more = self.rng.choice([1, 2, 1_000, 10**8])
        kind = self.rng.choice(["transfer", "separate", "retire", "transfer_fuel"])
        command = copy.deepcopy(BASE[kind])
        if kind == "transfer_fuel":
            owned = self.ledger.party("1001").fuel.available(date(2024, 2, 10))
            command["volume"] = str(owned + more)
            return "over-spend", command, "rejected"
        party = command.get("party", command.get("from"))
        command["rins"]["quantity"] = held.get((party, command["rins"]["k"]), 0) + more
        command["volume"] = str(10**9) if "volume" in command else None
        return "over-spend", {k: v for k, v in command.items() if v is not None}, "rejected"

    def before_holdings(self) -> Line:
        kind = self.rng.choice(["transfer", "separate", "retire", "split", "transfer_fuel"])
        day = date(2024, 1, 1) + timedelta(days=self.rng.randrange(30))  # before 31 January
        command = {**BASE[kind], "date": day.isoformat()}
        if "rins" in command:
            command["rins"] = {**command["rins"], "quantity": self.rng.randint(1, 100)}
        if kind == "transfer_fuel":
            command["volume"] = "1"
        return "move before holdings existed", command, "rejected"

    def idempotency(self) -> Line:
        if not self.applied or self.rng.random() < 0.3:
            line_id = f"obligation-{len(self.applied) + 1}"
            command = {**BASE["report_obligation"], "id": line_id,
                       "gasoline_volume": str(self.rng.randint(1, 10**7))}
            self.applied[line_id] = command
            return "a new id", command, "applied"
        line_id = self.rng.choice(sorted(self.applied))
        if self.rng.random() < 0.5:
            return "the same id again", self.applied[line_id], "duplicate"
        other = {**self.applied[line_id], "diesel_volume": str(self.rng.randint(1, 10**6))}
        return "an id reused for another command", other, "rejected"


def test_hostile_stream_stores_nothing_for_what_it_refuses(tmp_path: Path) -> None:
    """Line after line of hostile input against one ledger: each refused line stores nothing
    (the notification position is unchanged), the lines that must be refused are, a new id
    stores and a repeated one does not; every `VERIFY_EVERY` lines the invariants hold."""
    started = time.perf_counter()
    with seeded(tmp_path / "stream") as ledger:
        views, stream = Views(ledger), HostileStream(ledger, seed=9)
        for number in range(1, STREAM + 1):
            category, line, expected = stream.next()
            before = stored(ledger)
            result = ledger.apply(line, line=number)
            where = (number, category, line if not isinstance(line, bytes) else line[:200])
            assert expected in ("any", result.status), (where, result)
            after = stored(ledger)
            assert (after > before) is (result.status == "applied"), (where, result)
            if result.status == "rejected":
                assert result.error and len(result.error) <= MAX_MESSAGE, (where, result)
            STREAMED[f"{category}: {result.status}"] += 1
            if number % VERIFY_EVERY == 0 or number == STREAM:
                assert views.verify() == [], number
                STREAM_RUN["verify runs, all invariants held"] += 1
            STREAM_RUN["lines"] += 1
    STREAM_RUN["seconds"] += round(time.perf_counter() - started)
