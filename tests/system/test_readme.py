"""README.md's code blocks, executed (issue 11): every command of its ```bash/```sh/```console
blocks and every ```python block, in order, in one shell, in a copy of the repository in a fresh
folder, each exiting as the README says: 0, or the status a trailing comment names (`# exit 1`,
`# exits 1`). Unmarked blocks are output shown, not run.

What the run changes, and why (nothing is left out unannounced):
- `rin` and `python` on PATH run this checkout's code (a shim running
  `python -c "from ledger.cli.main import main; main()"` with the copy on PYTHONPATH; the `rin`
  installed on the machine may be another checkout's);
- `/tmp/` in a command is the test's own scratch folder, so runs never share state;
- the set-up commands are recognised, not run: `pip install -e ".[extra]"` (this environment
  is the installed one; the extra must exist in pyproject.toml) and `python -m pytest` alone
  (the whole suite, the run this test is part of; `.ci/run` must run the same command); a
  `python -m pytest` with arguments (files, `-m`) is collected (`--collect-only`), not run again;
- `--lines`, `--events` and `--size` above 2,000 run at 2,000, unless RIN_LONG=1 (the long
  profile runs them as written);
- a server command (`datasette …`) answers one request (`--get /`) and exits;
- commands needing PostgreSQL (`.ci/postgres.sh`, a private server under its own RIN_PG_DIR,
  stopped afterwards) or Datasette run when the tool is installed; otherwise they are reported
  as not run: a skip naming them, and a failure when CI=true.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from long_profile import LONG

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
RUN = {"bash", "sh", "shell", "console", "python"}
SHOWN = {"", "text", "json"}
FENCE = re.compile(r"^```(\S*)\n(.*?)^```", re.M | re.S)
EXPECTED_EXIT = re.compile(r"#[^#]*\bexits? (\d+)\b[^#]*$")
INSTALL = re.compile(r"""^pip install -e (['"]?)\.\[([\w,-]+)\]\1 && """)
PYTEST = re.compile(r"^((?:\w+=\S+ )*)python -m pytest(?: (.*))?$")
SIZE = re.compile(r"(--(?:lines|events|size)) (\d+)")
SMALL = 2000
TOOLS = {  # a tool a command needs: what names it, and whether this machine has it
    "PostgreSQL": (re.compile(r"\.ci/postgres\.sh|RIN_TEST_POSTGRES_URL"),
                   lambda: bool(list(Path("/usr/lib/postgresql").glob("*/bin/initdb")))
                   and os.geteuid() == 0),
    "Datasette": (re.compile(r"^datasette\b|^rin .*\bserve\b"),
                  lambda: shutil.which("datasette") is not None),
}


@dataclass
class Command:
    """One command of the README: where it is, what runs, and what it must exit with."""

    line: int  # in README.md
    text: str  # as written
    run: str | None  # what the shell runs; None when it is recognised and not run
    expected: int
    needs: str | None = None  # a tool of TOOLS
    status: int | None = None
    output: str = ""
    seconds: float = 0.0


def blocks(text: str) -> Iterator[tuple[str, int, str]]:
    """(language, line of the block's first line, body) of each fenced block."""
    for match in FENCE.finditer(text):
        yield match.group(1), text.count("\n", 0, match.start(2)) + 1, match.group(2)


def shell_lines(language: str, first: int, body: str) -> Iterator[tuple[int, str]]:
    """The commands of a shell block with their README line (a `console` block's are the
    lines after `$ `); blank lines and whole-line comments are not commands."""
    for n, raw in enumerate(body.splitlines()):
        line = raw.strip()
        if language == "console":
            if not line.startswith("$ "):
                continue
            line = line[2:]
        if line and not line.startswith("#"):
            yield first + n, line


def command(line: int, text: str, scratch: Path) -> Command:
    """What the run does with one README command (see the module docstring)."""
    expected = int(m.group(1)) if (m := EXPECTED_EXIT.search(text)) else 0
    run = INSTALL.sub("", text)
    if (m := PYTEST.match(run)) is not None:
        arguments = (m.group(2) or "").split("#")[0].strip()
        run = f"{m.group(1)}python -m pytest {arguments} --collect-only -p no:cacheprovider" \
            if arguments else None
    elif run.startswith("pip install"):
        run = None
    if run is not None:
        run = run.replace("/tmp/", f"{scratch}/")
        if not LONG:
            run = SIZE.sub(lambda s: f"{s.group(1)} {min(int(s.group(2)), SMALL)}", run)
        if run.startswith("datasette "):
            run = f"{run.split('#')[0].rstrip()} --get /"
    needs = next((tool for tool, (named, _) in TOOLS.items() if named.search(run or "")), None)
    return Command(line, text, run, expected, needs)


def readme_commands(scratch: Path) -> list[Command]:
    commands: list[Command] = []
    for language, first, body in blocks(README.read_text(encoding="utf-8")):
        if language == "python":
            script = scratch / f"readme_line_{first}.py"
            script.write_text(body, encoding="utf-8")
            commands.append(Command(first, body, f"python {script}", 0))
        elif language in RUN:
            commands += [command(n, line, scratch)
                         for n, line in shell_lines(language, first, body)]
    return commands


def shell_script(commands: list[Command], out: Path) -> str:
    """One bash script running the commands in order, each one's status and output kept, so
    what one sets (`eval "$(.ci/postgres.sh)"`) holds for the next."""
    lines = []
    for n, c in enumerate(commands):
        if c.run is not None and (c.needs is None or TOOLS[c.needs][1]()):
            lines.append(f"start=$EPOCHREALTIME; {{ {c.run}\n}} >{out}/{n}.out 2>&1 </dev/null; "
                         f'echo "$? $start $EPOCHREALTIME" >{out}/{n}.rc')
    return "\n".join(lines) + "\n"


def repository_copy(into: Path) -> Path:
    copy = into / "repo"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(
        ".git", "__pycache__", ".*_cache", ".hypothesis", "*.egg-info", "rin-data", "build",
        "dist"))
    return copy


def shims(into: Path) -> Path:
    """A bin folder whose `python` is this interpreter and whose `rin` runs the copy's CLI."""
    bin_dir = into / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    rin = bin_dir / "rin"
    rin.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -c '
                   f'"from ledger.cli.main import main; main()" "$@"\n', encoding="utf-8")
    rin.chmod(0o755)
    return bin_dir


@dataclass
class Run:
    """The README's commands as run, and the files they left in the repository's copy."""

    commands: list[Command]
    left: set[str]


def files_in(repo: Path) -> set[str]:
    return {path.relative_to(repo).as_posix() for path in repo.rglob("*") if path.is_file()}


@pytest.fixture(scope="module")
def readme_copy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    base = tmp_path_factory.mktemp("readme")
    scratch, out = base / "tmp", base / "out"
    scratch.mkdir()
    out.mkdir()
    repo = repository_copy(base)
    before = files_in(repo)
    pg_dir = Path(tempfile.mkdtemp(prefix="rin-readme-pg-"))  # the postgres user must reach it
    env = {k: v for k, v in os.environ.items() if not k.startswith("RIN_")}
    env.update(PATH=f"{shims(base)}{os.pathsep}{env['PATH']}", PYTHONPATH=str(repo),
               RIN_PG_DIR=str(pg_dir))
    commands = readme_commands(scratch)
    try:
        subprocess.run(["bash", "-c", shell_script(commands, out)], cwd=repo, env=env,
                       stdin=subprocess.DEVNULL, timeout=1800, check=False)
    finally:
        if (pg_dir / "data" / "postmaster.pid").exists():
            subprocess.run([str(repo / ".ci" / "postgres.sh"), "stop"], env=env, check=False,
                           capture_output=True)
        shutil.rmtree(pg_dir, ignore_errors=True)
    for n, c in enumerate(commands):
        if (out / f"{n}.rc").exists():
            status, start, end = (out / f"{n}.rc").read_text().split()
            c.status, c.seconds = int(status), float(end) - float(start)
            c.output = (out / f"{n}.out").read_text(errors="replace")
    yield Run(commands, files_in(repo) - before)


@pytest.fixture(scope="module")
def readme_run(readme_copy: Run) -> list[Command]:
    return readme_copy.commands


def test_every_block_is_run_or_is_output_shown() -> None:
    languages = {language for language, _, _ in blocks(README.read_text(encoding="utf-8"))}
    assert languages - RUN - SHOWN == set()
    assert languages & RUN, "README.md has no block to run"


def test_every_command_exits_as_the_readme_says(readme_run: list[Command]) -> None:
    ran = [c for c in readme_run if c.status is not None]
    assert ran
    wrong = [f"README.md line {c.line}: {c.text!r} exited {c.status}, not {c.expected} "
             f"({c.seconds:.1f} s):\n"
             f"{c.output[-1500:]}" for c in ran if c.status != c.expected]
    assert wrong == [], "\n".join(wrong)
    unexplained = [c.text for c in readme_run
                   if c.status is None and c.run is not None and c.needs is None]
    assert unexplained == []


def ignored(name: str, patterns: list[str]) -> bool:
    """Whether .gitignore's `patterns` (names, globs, folders ending in /) ignore `name`."""
    parts = name.split("/")
    return any(fnmatch.fnmatch(part, pattern.rstrip("/"))
               for pattern in patterns if pattern and not pattern.startswith("#")
               for part in (parts[:-1] if pattern.endswith("/") else parts))


def test_the_readme_leaves_nothing_untracked_in_the_checkout(readme_copy: Run) -> None:
    """Issue 14: the tour left head.json and market.jsonl in the checkout (ignored, but there).
    What the README's commands write goes under /tmp/ or the data folder, which .gitignore
    ignores (`rin-data/`), besides the tools' caches."""
    patterns = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert "rin-data/" in patterns
    assert {name for name in readme_copy.left if not ignored(name, patterns)} == set()
    assert {name for name in readme_copy.left if not name.startswith("rin-data/")
            and name.endswith((".json", ".jsonl", ".sqlite"))} == set()


def test_the_set_up_commands_are_recognised_and_not_run_again(tmp_path: Path) -> None:
    first = next(blocks(README.read_text(encoding="utf-8")))
    assert first[2].splitlines()[:2] == [
        'pip install -e ".[dev]" && rin demo          # set up, then run a small market on the '
        "embedded SQLite store",
        'pip install -e ".[dev]" && python -m pytest   # set up, then run the whole test suite',
    ]
    demo, suite = (command(n, line, tmp_path) for n, line in list(shell_lines(*first))[:2])
    assert demo.run == "rin demo          # set up, then run a small market on the embedded " \
        "SQLite store"
    assert suite.run is None
    ci_commands = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert "python -m pytest" in ci_commands, "CI no longer runs the suite the README names"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["optional-dependencies"]
    named = {extra for _, first_line, body in blocks(README.read_text(encoding="utf-8"))
             for line in body.splitlines() if (m := INSTALL.match(line))
             for extra in m.group(2).split(",")}
    assert named and named <= set(extras)


def test_a_pytest_command_with_files_is_collected_and_sizes_shrink(tmp_path: Path) -> None:
    long = command(1, "RIN_LONG=1 python -m pytest tests/a.py   # many minutes", tmp_path)
    assert long.run == "RIN_LONG=1 python -m pytest tests/a.py --collect-only -p no:cacheprovider"
    big = command(1, "rin --data /tmp/big demo --size 20000   # exits 1", tmp_path)
    assert big.expected == 1
    assert big.run == (f"rin --data {tmp_path}/big demo --size {20000 if LONG else SMALL}"
                       "   # exits 1")
    assert command(1, "rin verify  # 86 refusals, exit 1", tmp_path).expected == 1
    assert command(1, "rin apply f.jsonl --json   # one result per line", tmp_path).expected == 0


def test_commands_needing_a_missing_tool_are_named(readme_run: list[Command]) -> None:
    """Outside CI a command whose tool is not installed is a skip naming it; in CI a failure."""
    missing = [f"README.md line {c.line} needs {c.needs}: {c.text}" for c in readme_run
               if c.needs is not None and c.status is None]
    if missing and os.environ.get("CI") != "true":
        pytest.skip("not run here: " + "; ".join(missing))
    assert missing == []
