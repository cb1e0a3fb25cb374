"""`rin demo`: the small market applies cleanly and its reports give the hand-computed figures;
`rin demo --size` and `rin serve` run from an installed wheel, outside any checkout."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from itertools import islice
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from ledger import Ledger
from ledger.cli.main import app
from ledger.simulation import small_market
from projections import Views

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample.jsonl"


def test_rin_demo_runs_end_to_end_and_is_idempotent(tmp_path: Path) -> None:
    runner = CliRunner()
    first = runner.invoke(app, ["--data", str(tmp_path), "demo"])
    assert first.exit_code == 0, first.output
    assert "245 lines applied, 0 already applied, 0 rejected" in first.output
    assert "all invariants hold" in first.output
    again = runner.invoke(app, ["--data", str(tmp_path), "demo"])
    assert again.exit_code == 0, again.output
    assert "0 lines applied, 245 already applied, 0 rejected" in again.output


def test_demo_quiet_prints_nothing(tmp_path: Path) -> None:
    """`-q` before or after the command: no counts, no reports, no verify line (issue 14)."""
    runner = CliRunner()
    for args in (["demo", "-q"], ["-q", "demo"], ["demo", "--quiet"]):
        result = runner.invoke(app, ["--data", str(tmp_path), *args])
        assert (result.exit_code, result.stdout, result.stderr) == (0, "", ""), args


def store_position(data: Path) -> int:
    with Ledger(data) as ledger:
        return ledger.position()


def test_demo_refuses_a_ledger_it_did_not_start_and_changes_nothing(tmp_path: Path) -> None:
    """The README's own sequence applied the sample, then ran the demo into the same folder:
    18 refusals, exit 1, and the demo's other lines mixed into the sample's ledger. Now the
    demo refuses (exit 2) naming the folder, and the ledger is as it was."""
    runner = CliRunner()
    applied = runner.invoke(app, ["--data", str(tmp_path), "apply", str(SAMPLE)])
    assert applied.exit_code == 0, applied.output
    before = store_position(tmp_path)
    for args in (["demo"], ["demo", "--size", "60"]):
        refused = runner.invoke(app, ["--data", str(tmp_path), *args])
        assert refused.exit_code == 2, refused.output
        assert f"{tmp_path} already holds a ledger" in refused.stderr
        assert "the demo did not start it" in refused.stderr
        assert refused.stdout == ""
    assert store_position(tmp_path) == before


def test_demo_refuses_a_ledger_it_started_with_another_market(tmp_path: Path) -> None:
    """`demo --size` into the small demo's folder would collide with it (the README's Scale
    section did: 19,948 refusals); the same sized demo again applies nothing new."""
    runner = CliRunner()
    assert runner.invoke(app, ["--data", str(tmp_path / "small"), "demo", "-q"]).exit_code == 0
    other = runner.invoke(app, ["--data", str(tmp_path / "small"), "demo", "--size", "60"])
    assert other.exit_code == 2, other.output
    assert "the demo started it with another market" in other.stderr
    sized = ["--data", str(tmp_path / "sized"), "demo", "--size", "60"]
    first, again = runner.invoke(app, sized), runner.invoke(app, sized)
    assert first.exit_code == 0, first.output
    assert "simulated market: 60 lines applied, 0 already applied, 0 rejected" in first.stderr
    assert again.exit_code == 0, again.output
    assert "simulated market: 0 lines applied, 60 already applied, 0 rejected" in again.stderr
    reseeded = runner.invoke(app, [*sized, "--seed", "2"])
    assert reseeded.exit_code == 2, reseeded.output


def test_demo_figures(tmp_path: Path) -> None:
    CliRunner().invoke(app, ["--data", str(tmp_path), "demo", "--quiet"])
    with Ledger(tmp_path) as ledger:
        views = Views(ledger)
        cb = {(r["party"], r["category"]): r for r in views.compliance(2024)}
        # 3001: (28,000,000 + 8,000,000) × 0.59 % = 212,400 CB; 12 × 10,000 D3 retired
        assert (cb["3001", "CB"]["rvo"], cb["3001", "CB"]["applied"]) == (212_400, 120_000)
        assert (cb["3001", "CB"]["deficit"], cb["3001", "CB"]["status"]) == (
            92_400, "deficit_carried")
        # RF: 12.50 % × 36,000,000 = 4,500,000 ≤ 120,000 D3 + 1,440,000 D4 + 2,940,000 D6
        assert cb["3001", "RF"]["applied"] == 4_500_000
        assert cb["3001", "RF"]["status"] == "compliant"
        # 1002 keeps 30,000 assigned D4 RINs after selling their 20,000 gal without them
        sep30 = [r for r in views.quarterly(2024, "1002") if str(r["date"]) == "2024-09-30"]
        assert sep30[0]["assigned_rins"] == 30_000 and sep30[0]["excess"] == 30_000
        assert sep30[0]["ok"] is False
        # 3002: 12 × 197,477 D6 received − 1,600,000 retired − 5,000 spilled = 764,724
        assert ledger.holdings("3002") == [
            {"party": "3002", "d_code": 6, "vintage": 2024, "k": 2, "gallon_rins": 764_724}
        ]


def test_the_small_market_is_the_one_the_demo_applied_before_it_moved() -> None:
    """sha256 of its first 239 lines (orjson, one a line) as ledger/application/demo.py gave
    them at commit d1b7dca, before they moved into ledger/simulation/small_market.py; the
    EMTS postings of 2025 follow them."""
    lines = b"".join(orjson.dumps(line) + b"\n" for line in islice(small_market(), 239))
    assert hashlib.sha256(lines).hexdigest() == (
        "b2486288774c1f913975ceb6bcf550ebdd7e7d80c06b5690ecd1810f98e6cc07")


def test_demo_shows_a_two_sided_trade_a_denial_and_an_expiry(tmp_path: Path) -> None:
    """3001's 2025 postings (§80.1452): the buy answering the sell completes it and moves the
    100,000 RINs; 3002's denial closes the second with EMTS 050; the third, posted Tuesday
    20 May 2025, has waited 11 business days on 5 June (Memorial Day and two weekends not
    counted), more than the window of 10, and expires. The demo prints them."""
    shown = CliRunner().invoke(app, ["--data", str(tmp_path), "demo"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "EMTS postings (§80.1452)" in shown.output
    for status in ("completed", "denied", "expired"):
        assert status in shown.output
    with Ledger(tmp_path) as ledger:
        rows = {row["id"]: row for row in Views(ledger).trades()}
        assert {i: (r["status"], r["closed_on"], r["closing_reason"]) for i, r in rows.items()} == {
            "sell-0401": ("completed", "2025-04-01", None),
            "buy-0401": ("completed", "2025-04-01", None),
            "sell-0402": ("denied", "2025-04-03", "050"),
            "sell-0520": ("expired", "2025-06-05", None),
        }
        # 3001 kept 12 × 300,000 − 2,940,000 = 660,000 D6 and sold 100,000 of them
        assert ledger.holdings("3001") == [
            {"party": "3001", "d_code": 6, "vintage": 2024, "k": 2, "gallon_rins": 560_000}]
        assert list(ledger.party("3001").trades.reservations()) == []


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """A command with no PYTHONPATH or RIN_* settings from this session."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("RIN_")}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_rin_demo_and_version_run_from_an_installed_wheel(tmp_path: Path) -> None:
    """The wheel carries the market generator and its licence: `rin --version`, `rin demo` and
    `rin demo --size` need no source tree (issue 14: --size loaded scripts/ by path)."""
    source = tmp_path / "source"  # a copy: building in the checkout would leave build/ there
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", ".hypothesis", ".benchmarks", "build", "dist", "*.egg-info", "tests",
        "__pycache__", ".*_cache", "rin-data", "*.jsonl", "*.sqlite"))
    built = run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps",
                 "--no-build-isolation", "-w", str(tmp_path / "wheels")], tmp_path)
    assert built.returncode == 0, built.stderr
    [wheel] = (tmp_path / "wheels").glob("rin_ledger-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        [metadata] = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
        fields = archive.read(metadata).decode().split("\n\n")[0].splitlines()
        licences = [name for name in archive.namelist() if "/licenses/" in name]
    assert "License-Expression: MIT" in fields  # PEP 639, not the deprecated License table
    assert "License-File: LICENSE" in fields and licences == [
        metadata.replace("METADATA", "licenses/LICENSE")]
    venv = tmp_path / "venv"
    assert run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
               tmp_path).returncode == 0
    # --force-reinstall: the environment this test runs in may have the project installed
    installed = run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-deps",
                     "--force-reinstall", "--quiet", str(wheel)], tmp_path)
    assert installed.returncode == 0, installed.stderr
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    where = run([str(venv / "bin" / "python"), "-c", "import ledger; print(ledger.__file__)"],
                outside)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout  # the wheel's code
    rin = str(venv / "bin" / "rin")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert run([rin, "--version"], outside).stdout == f"rin-ledger {project['version']}\n"
    demo = run([rin, "demo"], outside)
    assert demo.returncode == 0, demo.stderr
    assert "demo market: 245 lines applied, 0 already applied, 0 rejected" in demo.stderr
    sized = run([rin, "--data", "sized", "demo", "--size", "200"], outside)
    assert sized.returncode == 0, sized.stderr
    assert "simulated market: 200 lines applied, 0 already applied, 0 rejected" in sized.stderr
    held = run([rin, "holdings", "--json", "--data", "sized"], outside)
    assert held.returncode == 0 and orjson.loads(held.stdout), held.stderr
    assert (outside / "rin-data").is_dir() and (outside / "sized").is_dir()
    # rin serve's metadata and plugins ship inside the wheel: Datasette answers a saved query
    served = run([str(venv / "bin" / "rin"), "serve", "--get",
                  "/views/separations_by_reason.json?_shape=array"], outside)
    assert served.returncode == 0, served.stderr
    assert orjson.loads(served.stdout) and "Traceback" not in served.stderr
    exported = run([str(venv / "bin" / "python"), "-c", "from projections.emts_xml import "
                    "SCHEMA_FILE; print(SCHEMA_FILE.is_file(), SCHEMA_FILE)"], outside)
    assert exported.stdout.startswith("True"), exported.stdout  # the XSD of rin export
