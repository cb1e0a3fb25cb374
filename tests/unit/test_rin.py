"""RIN identity (§80.1425): the 38-character code parsed and formatted both ways, field by field."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.domain.errors import RuleViolation
from ledger.domain.rin import BlockKey, RinBlock, format_code, parse_code
from ledger.rules.s1425_rin import D_CODES, MAX_SERIAL

SERIALS = ("RIN-SERIALS", "§80.1425(h)-(i)")
Fields = tuple[int, int, str, str, str, int, int, int, int]
# K=1, 2024, company 1001, facility 20001, batch 00001, RR 10, D6, serials 1-248,738
SAMPLE = "12024100120001000011060000000100248738"


def with_field(start: int, value: str) -> str:
    """SAMPLE with the characters from `start` replaced by `value`."""
    return SAMPLE[:start] + value + SAMPLE[start + len(value):]


def test_parse_reads_every_field() -> None:
    key, start, end = parse_code(SAMPLE)
    assert (key.k, key.vintage, key.company, key.facility, key.batch, key.rr, key.d_code) == (
        1, 2024, "1001", "20001", "00001", 10, 6,
    )
    assert (start, end) == (1, 248_738)


def test_format_writes_every_field_in_order() -> None:
    code = format_code(2, 2023, "0042", "00007", "DRN01", 15, 4, 1_000, 1_999)
    # K YYYY CCCC FFFFF BBBBB RR D SSSSSSSS EEEEEEEE
    assert code == "2" "2023" "0042" "00007" "DRN01" "15" "4" "00001000" "00001999"
    assert len(code) == 38


def test_block_code_round_trips_through_parse() -> None:
    key, start, end = parse_code(SAMPLE)
    assert RinBlock(key, start, end).code == SAMPLE


def test_gallon_rin_count_is_e_minus_s_plus_one() -> None:
    key, _, _ = parse_code(SAMPLE)
    assert RinBlock(key, 1, 248_738).gallon_rins == 248_738  # 248,738 − 1 + 1
    assert RinBlock(key, 100_001, 248_738).gallon_rins == 148_738  # 248,738 − 100,001 + 1
    assert RinBlock(key, 7, 7).gallon_rins == 1  # 7 − 7 + 1


@pytest.mark.parametrize(
    ("code", "rule_id", "citation", "field", "words"),
    [
        (SAMPLE[:37], "RIN-FORMAT", "§80.1425", "rin", "got 37"),
        (SAMPLE + "0", "RIN-FORMAT", "§80.1425", "rin", "got 39"),
        (with_field(0, "3"), "RIN-K", "§80.1425(a)", "rin.K", "'3'"),
        (with_field(0, "0"), "RIN-K", "§80.1425(a)", "rin.K", "'0'"),
        (with_field(1, "2007"), "RIN-YEAR", "§80.1425(b)", "rin.YYYY", "'2007'"),
        (with_field(1, "20X4"), "RIN-YEAR", "§80.1425(b)", "rin.YYYY", "'20X4'"),
        (with_field(5, "10A1"), "RIN-COMPANY", "§80.1425(c)", "rin.CCCC", "'10A1'"),
        (with_field(9, "2000X"), "RIN-FACILITY", "§80.1425(d)", "rin.FFFFF", "'2000X'"),
        (with_field(14, "ab001"), "RIN-BATCH", "§80.1425(e)", "rin.BBBBB", "'ab001'"),
        (with_field(14, "00-01"), "RIN-BATCH", "§80.1425(e)", "rin.BBBBB", "'00-01'"),
        (with_field(19, "00"), "RIN-RR", "§80.1425(f)", "rin.RR", "'00'"),
        (with_field(19, "1X"), "RIN-RR", "§80.1425(f)", "rin.RR", "'1X'"),
        (with_field(21, "2"), "RIN-D", "§80.1425(g)", "rin.D", "'2'"),
        (with_field(21, "8"), "RIN-D", "§80.1425(g)", "rin.D", "'8'"),
        (with_field(22, "0000000A"), *SERIALS, "rin.SSSSSSSS", "'0000000A'"),
        (with_field(30, "0024873Z"), *SERIALS, "rin.EEEEEEEE", "'0024873Z'"),
        (with_field(22, "00000000"), *SERIALS, "rin.SSSSSSSS", "00000001"),
        # E = 5 before S = 248,738: the message gives both numbers
        (with_field(22, "0024873800000005"), *SERIALS, "rin.EEEEEEEE",
         "EEEEEEEE 5 is before SSSSSSSS 248,738"),
    ],
)
def test_each_wrong_field_cites_its_rule(
    code: str, rule_id: str, citation: str, field: str, words: str
) -> None:
    with pytest.raises(RuleViolation) as exc:
        parse_code(code)
    assert exc.value.rule_id == rule_id
    assert exc.value.citation == citation
    assert exc.value.field == field
    assert words in exc.value.message
    assert str(exc.value).startswith(f"{citation}: ")


def test_parse_names_the_callers_field() -> None:
    with pytest.raises(RuleViolation) as exc:
        parse_code(with_field(0, "9"), "rins.code")
    assert exc.value.rule_id == "RIN-K"
    assert exc.value.field == "rins.code.K"


def test_parse_refuses_a_non_string() -> None:
    with pytest.raises(RuleViolation) as exc:
        parse_code(12024, "rin")  # type: ignore[arg-type]
    assert exc.value.rule_id == "RIN-FORMAT"
    assert "got int" in exc.value.message


def test_format_refuses_what_parse_refuses() -> None:
    with pytest.raises(RuleViolation) as exc:
        format_code(1, 2024, "1001", "20001", "00001", 10, 2, 1, 10)
    assert exc.value.rule_id == "RIN-D"


def test_format_refuses_end_before_start() -> None:
    with pytest.raises(RuleViolation) as exc:
        format_code(1, 2024, "1001", "20001", "00001", 10, 6, 10, 9)
    assert exc.value.rule_id == "RIN-SERIALS"
    assert exc.value.message == "EEEEEEEE 9 is before SSSSSSSS 10"


def test_the_highest_serial_fits_eight_digits() -> None:
    code = format_code(2, 2099, "9999", "99999", "ZZZZZ", 99, 7, MAX_SERIAL, MAX_SERIAL)
    assert code.endswith("9999999999999999")
    assert parse_code(code)[1:] == (99_999_999, 99_999_999)


digits = st.text("0123456789", min_size=1, max_size=1)
batch_chars = st.sampled_from("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")


@st.composite
def rin_fields(draw: st.DrawFn) -> Fields:
    start = draw(st.integers(1, MAX_SERIAL))
    return (
        draw(st.sampled_from((1, 2))),
        draw(st.integers(2008, 2099)),
        "".join(draw(st.lists(digits, min_size=4, max_size=4))),
        "".join(draw(st.lists(digits, min_size=5, max_size=5))),
        "".join(draw(st.lists(batch_chars, min_size=5, max_size=5))),
        draw(st.integers(1, 99)),
        draw(st.sampled_from(D_CODES)),
        start,
        draw(st.integers(start, MAX_SERIAL)),
    )


@given(rin_fields())
def test_format_then_parse_round_trips(fields: Fields) -> None:
    k, vintage, company, facility, batch, rr, d_code, start, end = fields
    code = format_code(k, vintage, company, facility, batch, rr, d_code, start, end)
    assert len(code) == 38
    key, s, e = parse_code(code)
    assert (key.k, key.vintage, key.company, key.facility, key.batch, key.rr, key.d_code) == (
        k, vintage, company, facility, batch, rr, d_code,
    )
    assert (s, e) == (start, end)
    assert RinBlock(key, s, e).gallon_rins == end - start + 1
    assert RinBlock(key, s, e).code == code


@given(rin_fields())
def test_block_key_prefix_is_the_first_22_characters(
    fields: Fields,
) -> None:
    k, vintage, company, facility, batch, rr, d_code, start, end = fields
    key = BlockKey(k, vintage, company, facility, batch, rr, d_code, date(2024, 1, 1), "ethanol")
    assert key.block(start, end).code[:22] == key.prefix
    assert key.with_k(2).prefix[0] == "2"
