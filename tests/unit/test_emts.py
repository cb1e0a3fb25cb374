"""EMTS separation and retirement reason codes (reference.md §5) and their lookup."""

from __future__ import annotations

import json

import orjson
import pytest

from ledger.domain.emts import (
    RETIREMENT_REASONS,
    SEPARATION_REASONS,
    TRADE_REASONS,
    RetirementWord,
    SeparationWord,
    TradeReason,
)
from ledger.domain.errors import RuleViolation
from ledger.rules.s1429_separation import separation_reason
from ledger.rules.s1434_retirement import retirement_reason

SEPARATION_CODES = {
    "obligated_party": (10, "§80.1429(b)(1)"),
    "blending": (20, "§80.1429(b)(2)"),
    "neat_use": (30, "§80.1429(b)(4)"),
    "upstream_delegation": (40, "§80.1429(b)(2)"),
    "export": (50, "§80.1429(b)(3)"),
    "heating_oil_jet": (60, "§80.1429(b)(2)"),
    "nonroad": (70, "§80.1429(b)(2)"),
    "designated_heating_oil_jet": (80, "§80.1429(b)(4)"),
    "delayed": (90, "§80.1426(g)"),
    "biogas_electricity": (30, "§80.1429(b)(5)"),
    "small_refiner": (None, "§80.1429(b)(8)"),
    "replacement": (None, "§80.1429(b)(10)"),
}
RETIREMENT_CODES = {
    "spill": 10,
    "contaminated": 20,
    "import_correction": 30,
    "ocean_vessel": 40,
    "invalid_rin": 50,
    "volume_error": 60,
    "enforcement": 70,
    "compliance": 80,
    "non_qualifying_use": 90,
    "delayed_rin": 100,
    "remedial_invalid": 110,
    "remedial_compliance": 120,
}


def test_every_separation_word_has_its_code_and_paragraph() -> None:
    assert {r.word: (r.code, r.paragraph) for r in SEPARATION_REASONS} == SEPARATION_CODES


def test_every_retirement_word_has_its_code() -> None:
    assert {r.word: r.code for r in RETIREMENT_REASONS} == RETIREMENT_CODES


@pytest.mark.parametrize("word", ["obligated_party", "blending", "neat_use", "export", "delayed"])
def test_separation_reason_by_word_code_and_code_text(word: str) -> None:
    code = SEPARATION_CODES[word][0]
    assert separation_reason(word).word == word
    assert code is not None
    assert separation_reason(code).word == word
    assert separation_reason(str(code)).word == word
    assert separation_reason(f"{code:03d}").word == word  # EMTS writes codes as 010, 020 …


def test_code_30_names_neat_use_and_biogas_is_found_by_its_word() -> None:
    assert separation_reason(30).word == "neat_use"
    biogas = separation_reason("biogas_electricity")
    assert (biogas.code, biogas.paragraph) == (30, "§80.1429(b)(5)")


def test_reasons_without_an_emts_code_are_found_by_word() -> None:
    assert separation_reason("small_refiner").code is None
    assert separation_reason("replacement").paragraph == "§80.1429(b)(10)"


@pytest.mark.parametrize(("word", "code"), sorted(RETIREMENT_CODES.items()))
def test_retirement_reason_by_word_code_and_code_text(word: str, code: int) -> None:
    assert retirement_reason(word).code == code
    assert retirement_reason(code).word == word
    assert retirement_reason(str(code)).word == word


def test_retirement_reason_paragraphs() -> None:
    assert retirement_reason("compliance").paragraph == "§80.1427(a)(1)"
    assert retirement_reason(100).paragraph == "§80.1426(g)(5)"
    assert retirement_reason(110).paragraph == "§80.1431(c)"
    assert retirement_reason("spill").paragraph is None


@pytest.mark.parametrize("value", ["melting", 15, "15", 100, "", "-10", "Blending"])
def test_EMTS_SEPARATION_REASON_breaks_on_an_unknown_reason(value: str | int) -> None:
    with pytest.raises(RuleViolation) as exc:
        separation_reason(value)
    assert exc.value.rule_id == "EMTS-SEPARATION-REASON"
    assert exc.value.citation == "§80.1429(b)"
    assert exc.value.field == "reason"


def test_EMTS_SEPARATION_REASON_passes_a_known_reason() -> None:
    assert separation_reason("export").code == 50


@pytest.mark.parametrize("value", ["burned", 130, "130", 0, True])
def test_EMTS_RETIREMENT_REASON_breaks_on_an_unknown_reason(value: str | int) -> None:
    with pytest.raises(RuleViolation) as exc:
        retirement_reason(value)
    assert exc.value.rule_id == "EMTS-RETIREMENT-REASON"
    assert exc.value.citation == "§80.1434(a)"
    assert exc.value.field == "reason"


def test_EMTS_RETIREMENT_REASON_passes_a_known_reason() -> None:
    assert retirement_reason("compliance").code == 80


def test_reason_words_are_the_stored_strings() -> None:
    """The enums' values are the words commands name and events store, unchanged."""
    assert sorted(r.word.value for r in SEPARATION_REASONS) == sorted(SEPARATION_CODES)
    assert [r.word.value for r in RETIREMENT_REASONS] == list(RETIREMENT_CODES)
    assert {reason.value: code for reason, code in TRADE_REASONS.items()} == {
        "standard": 10, "remedial_partner": 30, "remedial_duplicate": 80, "tolling": 110,
        "intra_company": 120,
    }  # reference.md §5: EMTS buy/sell reason codes
    assert orjson.dumps([RetirementWord.COMPLIANCE, TradeReason.TOLLING]) == (
        b'["compliance","tolling"]'
    )
    assert json.dumps(SeparationWord.BLENDING) == '"blending"'
