"""A new user's bad arguments to scripts/national.py and scripts/simulate.py (issue 15): each is
a usage error (exit 2) naming the option, before anything runs. Before: `--years 0` ran every
phase and ended in a traceback (`KeyError: 'last_year'`), `--scale -1` and `--scale 0` ran a
14-party market, `--file` naming no file failed in the ingest child with a traceback,
simulate.py's `--years 0` and `--parties 0` wrote the fifteen-year national market; a line of
`--file` that is not JSON stopped the ingest with a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[3]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def script(name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / name), *args], cwd=cwd,
                          capture_output=True, text=True, env=ENV, timeout=600, check=False)


@pytest.mark.parametrize(("args", "error"), [
    (["--years", "0"], "argument --years: 0 is not 1 or more"),
    (["--years", "-2"], "argument --years: -2 is not 1 or more"),
    (["--scale", "-1"], "argument --scale: -1 is not a number above 0"),
    (["--scale", "0"], "argument --scale: 0 is not a number above 0"),
    (["--scale", "nan"], "argument --scale: nan is not a number above 0"),
    (["--file", "missing.jsonl"], "argument --file: missing.jsonl is not a file"),
    (["--file", "."], "argument --file: . is not a file"),
    (["--data", "full"], "argument --data: full is not empty: the run needs a fresh store"),
    (["--data", "full/a"], "argument --data: full/a is not a folder"),
])
def test_national_refuses_bad_arguments_before_running(tmp_path: Path, args: list[str],
                                                       error: str) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "a").write_text("")
    done = script("national.py", *args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().endswith(f"national.py: error: {error}")
    assert "Traceback" not in done.stderr and done.stdout == ""


@pytest.mark.parametrize(("args", "error"), [
    (["--national", "--years", "0"], "argument --years: 0 is not 1 or more"),
    (["--national", "--parties", "0"], "argument --parties: 0 is not 1 or more"),
    (["--lines", "3", "--bad", "2"], "argument --bad: 2 is not from 0 to 1"),
    (["--national", "--postings", "-1"], "argument --postings: -1 is not from 0 to 1"),
])
def test_simulate_refuses_bad_arguments(tmp_path: Path, args: list[str], error: str) -> None:
    done = script("simulate.py", *args, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().endswith(f"simulate.py: error: {error}")


def test_national_reports_lines_of_its_file_that_are_not_commands(tmp_path: Path) -> None:
    """Two registrations, then a line that is not JSON, a generate without its fields and a
    JSON list: 2 applied, 3 rejected (named on stderr), the run completes and verifies."""
    lines = [orjson.dumps({"type": "register_party", "party": p, "name": p,
                           "roles": ["blender"]}).decode() for p in ("2001", "2002")]
    (tmp_path / "f.jsonl").write_text("\n".join(
        [*lines, "{not json", '{"type": "generate", "date": 5}', "[1, 2]"]) + "\n")
    done = script("national.py", "--file", "f.jsonl", "--data", "store", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2_000:]
    figures = orjson.loads(done.stdout)
    assert (figures["lines"], figures["rejected"], figures["parties"], figures["years"]) == (
        5, 3, 2, 0)
    assert figures["verify_exit"] == 0
    assert "rejected line 3: format: not valid JSON" in done.stderr
    assert "Traceback" not in done.stderr
