"""Issue 14, "How it is judged": the README is followed from a wheel in a folder outside the
checkout. Its tour begins with `rin examples` (the example files, shipped in the package, into
./examples) and `rin --data /tmp/tour apply examples/sample.jsonl --json`; from an installed
wheel in an empty folder that file must be reachable as the README says, or the tour's apply
fails (exit 2) and every later report runs on an empty ledger."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("RIN_")}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_the_readme_tour_runs_from_an_installed_wheel(tmp_path: Path) -> None:
    source = tmp_path / "source"  # a copy: building in the checkout would leave build/ there
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", ".hypothesis", ".benchmarks", "build", "dist", "*.egg-info", "tests",
        "__pycache__", ".*_cache", "rin-data", "*.sqlite"))
    built = run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps",
                 "--no-build-isolation", "-w", str(tmp_path / "wheels")], tmp_path)
    assert built.returncode == 0, built.stderr
    [wheel] = (tmp_path / "wheels").glob("rin_ledger-*.whl")
    venv = tmp_path / "venv"
    assert run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
               tmp_path).returncode == 0
    installed = run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-deps",
                     "--force-reinstall", "--quiet", str(wheel)], tmp_path)
    assert installed.returncode == 0, installed.stderr
    outside = tmp_path / "empty"
    outside.mkdir()
    rin = str(venv / "bin" / "rin")
    tour = str(tmp_path / "tour")
    examples = run([rin, "examples"], outside)  # the tour's first line
    assert examples.returncode == 0 and (outside / "examples" / "sample.jsonl").is_file()
    first = run([rin, "--data", tour, "apply", "examples/sample.jsonl", "--json"], outside)
    assert first.returncode == 0, first.stderr  # was: exit 2, "No such file or directory"
    assert len(first.stdout.splitlines()) == 16
    again = run([rin, "--data", tour, "apply", "examples/sample.jsonl"], outside)
    assert (again.returncode, again.stderr) == (0, "0 applied, 16 duplicate, 0 rejected\n")
