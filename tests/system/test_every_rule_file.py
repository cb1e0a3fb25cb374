"""The every-rule transaction file `examples/every_rule.jsonl`: a small 2024 market with one line
breaking each rule a transaction-file line can reach. `rin apply` must print exactly
`examples/every_rule.expected` (hand-checked line by line in `examples/every_rule.md`), refuse each
`break-<RULE-ID>` line under that rule and apply every other line; the ledger then verifies."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import Result
from typer.testing import CliRunner

from ledger.cli.main import app
from ledger.rules.registry import all_rules

EXAMPLES = Path(__file__).parents[2] / "examples"
FILE = EXAMPLES / "every_rule.jsonl"
EXPECTED = EXAMPLES / "every_rule.expected"

#: Broken by a line of the file, in file order (RIN-RR twice: by an EV of 10.0 and by RR "00";
#: SEP-BLEND-PER-GALLON twice: without the volume and over 2.5 per gallon).
COVERED = {
    "REG-DUPLICATE", "REG-ROLES", "GEN-DELAYED-WINDOW", "GEN-DELAYED-DEADLINE", "REG-GENERATOR",
    "RIN-BATCH-UNIQUE", "GEN-EV", "GEN-EV-OTHER", "RIN-RR", "GEN-STANDARDIZE", "GEN-BATCH-MAX",
    "GEN-BATCH-EMPTY", "GEN-BATCH-MONTH", "GEN-BIOINTERMEDIATE", "GEN-OTHER-PARTY-FUEL",
    "GEN-IMPORT-ASSIGNED", "GEN-YARD-CELLULOSIC", "GEN-MSW", "GEN-EXEMPT-D6", "GEN-FEEDSTOCK-E",
    "GEN-SMALL-PRODUCER", "GEN-NEW-PRODUCER", "SPLIT-SUM", "SPLIT-HELD", "TRANSFER-SELF",
    "REG-UNREGISTERED", "ASSIGNED-WITH-FUEL", "ASSIGNED-PER-GALLON", "FUEL-NOT-OWNED",
    "EMTS-SEPARATION-REASON", "SEP-OBLIGATED", "SEP-SMALL-REFINER", "SEP-REPLACEMENT",
    "SEP-BLEND-PER-GALLON", "SEP-BIODIESEL-80", "SEP-ASSIGNED-ONLY",
    "SEP-EXPORT-PER-GALLON", "SEP-BIOGAS", "OBL-STANDARD-YEAR", "OBL-RVO-CATEGORY",
    "SEP-OBLIGATED-CAP", "SEP-IMPORTER-CAP", "RINS-NOT-HELD", "RIN-FORMAT", "RIN-K", "RIN-YEAR",
    "RIN-COMPANY", "RIN-FACILITY", "RIN-BATCH", "RIN-D", "RIN-SERIALS", "EMTS-RETIREMENT-REASON",
    "RETIRE-YEAR", "RETIRE-OBLIGATED", "CMP-K2", "CMP-VINTAGE", "CMP-D7-DESIGNATION",
    "REPLACE-NEEDED", "INVALID-ONCE", "INVALID-GENERATED", "REPLACE-D-CODE", "INVALID-USE",
    "INVALID-TRANSFER", "SEP-OBLIGATED-PER-GALLON", "SEP-NEAT-PER-GALLON",
    "SEP-SMALL-REFINER-PER-GALLON", "CMP-BBD-2010-REDUCTION", "GEN-TEMPERATURE",
    "DELAYED-RETIRE-K2", "DELAYED-RETIRE-LIMIT",
    "DELAYED-RETIRE-YEAR", "DELAYED-EQUALS-RETIRED", "DELAYED-ONE-DATE", "DELAYED-RETIRE-D6",
    "DELAYED-RETIRE-FIRST", "GEN-HEATING-OIL-AFFIDAVIT", "GEN-FOOD-NONCELLULOSIC",
    "GEN-R-METHOD-C", "SPLIT-PARENT", "GEN-IMPORT-FOREIGN", "GEN-SEPARATED-OIL",
    "GEN-SEPARATED-SUGAR", "GEN-NEW-FACILITY-YEAR", "SEP-REPLACEMENT-ONLY", "TRADE-RESERVED",
    "TRADE-MATCH", "TRADE-MATCH-PENDING", "TRADE-CANCEL", "TRADE-DENY",
    "REVERSE-ORIGINAL", "REVERSE-PARTY", "REVERSE-DATE", "REVERSE-REASON", "REVERSE-ONCE",
    "QAP-INDEPENDENT", "QAP-NO-RINS", "QAP-AUDITOR", "LOCK-BATCH", "QAP-STATUS", "LOCK-HELD",
    "LOCK-STATE", "LOCK-WHO", "BLOCKED-GENERATOR", "BLOCKED-LIST", "RETIRE-LEVEL",
}
#: No line can break these: the command model's typed fields (`rvo` values `int >= 0`,
#: `gasoline_volume`/`diesel_volume` finite `Decimal >= 0`) refuse the line as a format error first.
UNREACHABLE = {"OBL-RVO-VALUE", "OBL-VOLUME"}


def rin(*args: str) -> Result:
    """Run the `rin` command line in-process."""
    return CliRunner().invoke(app, list(args))


def test_apply_prints_the_expected_rejections_and_the_ledger_verifies(tmp_path: Path) -> None:
    applied = rin("--data", str(tmp_path), "apply", str(FILE))
    assert applied.exit_code == 1, applied.output
    assert applied.stdout == EXPECTED.read_text(encoding="utf-8")
    verified = rin("--data", str(tmp_path), "verify")
    assert verified.exit_code == 0, verified.output


def test_each_break_line_is_refused_by_its_rule_and_every_other_line_applies(
    tmp_path: Path,
) -> None:
    result = rin("--data", str(tmp_path), "apply", "--json", "--quiet", str(FILE))
    assert result.exit_code == 1
    outcomes = {row["line"]: row for row in map(json.loads, result.stdout.splitlines())}
    ids = [json.loads(line).get("id", "") for line in FILE.read_text(encoding="utf-8").splitlines()]
    assert sorted(outcomes) == list(range(1, len(ids) + 1))
    broken: set[str] = set()
    for number, command_id in enumerate(ids, start=1):
        outcome = outcomes[number]
        if command_id.startswith("break-"):
            rule_id = outcome.get("rule")
            assert outcome["status"] == "rejected" and rule_id, (number, command_id, outcome)
            assert command_id in (
                f"break-{rule_id}", f"break-{rule_id}-from-EV", f"break-{rule_id}-without-volume"
            ), outcome
            broken.add(rule_id)
        else:
            assert outcome["status"] == "applied", (number, command_id, outcome)
    assert broken == COVERED


def test_the_file_covers_every_catalogued_rule_but_the_unreachable() -> None:
    catalogue = {declared.id for declared in all_rules()}
    assert catalogue == COVERED | UNREACHABLE
    assert not COVERED & UNREACHABLE
