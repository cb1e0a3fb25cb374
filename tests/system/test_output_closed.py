"""Stdout that fails (docs/cli.md "Output that cannot be written"): closed by its reader (`rin …
| head`) exit 141, not writable (a full disk, a closed descriptor) exit 2 saying so; never a
traceback, a "store failed" (exit 3) or a silent exit 0 over output cut short. `rin apply`
stops reading lines and says exactly which are committed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from ledger.cli.stdout import OUTPUT_CLOSED, OUTPUT_UNWRITABLE
from ledger.simulation import generate_market

ROOT = Path(__file__).resolve().parents[2]
RIN = [sys.executable, "-c", "from ledger.cli.main import main; main()"]
LINES = 3_000  # reports of 170 kB and more: more than a pipe holds (64 kB)
FULL = Path("/dev/full")  # every write: ENOSPC, no space left on device
COMMITTED = (r" at line (\d+)'s result; every line up to line (\d+) has its "
             r"result committed \(([\d,]+) applied, ([\d,]+) duplicate, ([\d,]+) rejected\), "
             r"no later line was read")
CLOSED = re.compile(r"output closed by its reader" + COMMITTED)
UNWRITABLE = re.compile(r"cannot write the output: No space left on device" + COMMITTED)


def rin(*arguments: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*RIN, *arguments], cwd=ROOT, capture_output=True, check=False)


def read_then_close(arguments: list[str], keep: int) -> tuple[int, bytes, str]:
    """Run rin, read `keep` bytes of its stdout, close the pipe: (exit code, what was read,
    stderr)."""
    process = subprocess.Popen([*RIN, *arguments], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    seen = process.stdout.read(keep)
    process.stdout.close()
    errors = process.stderr.read().decode()
    return process.wait(timeout=600), seen, errors


@pytest.fixture(scope="module")
def market(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("closed")
    path = folder / "market.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n"
                              for line in generate_market(LINES, 11)))
    return path


@pytest.fixture(scope="module")
def projected(market: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("projected") / "data"
    assert rin("--data", str(data), "apply", str(market), "-q").returncode == 0
    assert rin("--data", str(data), "project", "-q").returncode == 0
    return data


def test_apply_into_a_closed_pipe_names_what_is_committed_and_reads_no_later_line(
        market: Path, tmp_path: Path) -> None:
    """Was: "store failed: [Errno 32] Broken pipe; last line committed: line 115", exit 3,
    though the whole first batch of 200 lines was committed, and later ones applied unseen."""
    data = str(tmp_path / "data")
    code, seen, errors = read_then_close(["--data", data, "apply", str(market), "--json"], 300)
    assert code == OUTPUT_CLOSED, errors
    assert seen.startswith(b'{"'), seen
    assert "Traceback" not in errors and "store failed" not in errors
    assert "Exception ignored" not in errors
    found = CLOSED.search(errors)
    assert found is not None, errors
    at, up_to, applied, duplicate, rejected = (int(g.replace(",", "")) for g in found.groups())
    assert 1 <= at <= up_to < LINES
    assert applied + duplicate + rejected == up_to  # every line numbered has its result
    # the store holds exactly those lines: applied again, they come back duplicate, and every
    # later line is applied now (none was applied unseen after the pipe closed)
    again = rin("--data", data, "apply", str(market), "--json")
    statuses = [orjson.loads(line)["status"] for line in again.stdout.splitlines()]
    assert statuses.count("duplicate") == applied + duplicate
    assert statuses[up_to:].count("duplicate") == 0


@pytest.mark.parametrize("report", [
    ["trades", "--nl"], ["trades", "--json"], ["trades", "--csv"], ["trades"], ["ptd", "--json"],
])
def test_a_report_larger_than_the_pipe_into_a_closed_pipe_exits_141_quietly(
        projected: Path, report: list[str]) -> None:
    """Was: exit 0 with the report cut off at 64 kB (the stream's short write dropped the
    rest without an error), or "store failed: Broken pipe" (exit 3) once buffered."""
    whole = rin("--data", str(projected), *report)
    assert whole.returncode == 0 and len(whole.stdout) > 2 ** 17, len(whole.stdout)
    code, seen, errors = read_then_close(["--data", str(projected), *report], 100)
    assert (code, errors) == (OUTPUT_CLOSED, "")
    assert seen == whole.stdout[:100]


def test_the_whole_report_reaches_a_reader_that_reads_it_all(projected: Path) -> None:
    """Piped and read to its end, every trade the report has is there, one line each."""
    as_json = orjson.loads(rin("--data", str(projected), "trades", "--json").stdout)
    as_nl = rin("--data", str(projected), "trades", "--nl").stdout.splitlines()
    assert len(as_nl) == len(as_json) > 0
    assert [orjson.loads(line) for line in as_nl] == as_json


def closed_stdout() -> None:
    os.close(1)


@pytest.mark.parametrize("report", [["trades", "--json"], ["holdings"], ["verify", "--json"]])
def test_a_report_to_a_full_disk_or_a_closed_stdout_exits_2_saying_so(
        projected: Path, report: list[str]) -> None:
    """Was: a traceback ending `OSError: [Errno 28] No space left on device`, or
    `AttributeError: 'NoneType' object has no attribute 'write'` with stdout closed."""
    command = [*RIN, "--data", str(projected), *report]
    with FULL.open("wb") as full:
        to_full = subprocess.run(command, cwd=ROOT, stdout=full, stderr=subprocess.PIPE,
                                 check=False)
    closed = subprocess.run(command, cwd=ROOT, stderr=subprocess.PIPE, check=False,
                            preexec_fn=closed_stdout)
    assert (to_full.returncode, to_full.stderr.decode()) == (
        OUTPUT_UNWRITABLE, "cannot write the output: No space left on device\n")
    assert (closed.returncode, closed.stderr.decode()) == (
        OUTPUT_UNWRITABLE, "cannot write the output: stdout is closed\n")


def test_apply_to_a_full_disk_names_what_is_committed(market: Path, tmp_path: Path) -> None:
    """Was: "store failed: the disk is full (…); last line committed: line 1", exit 3: the
    store's disk was not full, and 200 lines were committed."""
    data = str(tmp_path / "data")
    with FULL.open("wb") as full:
        done = subprocess.run([*RIN, "--data", data, "apply", str(market), "--json"], cwd=ROOT,
                              stdout=full, stderr=subprocess.PIPE, check=False)
    errors = done.stderr.decode()
    found = UNWRITABLE.search(errors)
    assert done.returncode == OUTPUT_UNWRITABLE and found is not None, errors
    at, up_to, applied, duplicate, rejected = (int(g.replace(",", "")) for g in found.groups())
    assert at == 1 and applied + duplicate + rejected == up_to < LINES
    again = rin("--data", data, "apply", str(market), "--json")
    statuses = [orjson.loads(line)["status"] for line in again.stdout.splitlines()]
    assert statuses[:up_to].count("duplicate") == applied + duplicate
    assert statuses[up_to:].count("duplicate") == 0


def closed_stderr() -> None:
    os.close(2)


@pytest.mark.parametrize("stderr", ["full", "closed"])
def test_messages_that_stderr_cannot_take_change_no_exit_code(
        market: Path, tmp_path: Path, stderr: str) -> None:
    """Messages are best effort: with stderr on a full disk, `apply` of a good file exited 1
    (a traceback of rich's write, unseen) and a bad argument 1, not 0 and 2."""
    data = str(tmp_path / "data")
    with FULL.open("wb") as full:

        def run(*arguments: str) -> int:
            command = [*RIN, "--data", data, *arguments]
            if stderr == "full":
                return subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=full,
                                      check=False).returncode
            return subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, check=False,
                                  preexec_fn=closed_stderr).returncode

        applied, bad = run("apply", str(market)), run("holdings", "--party", "99999")
    assert (applied, bad) == (0, 2)
    again = rin("--data", data, "apply", str(market), "--json")
    statuses = {orjson.loads(line)["status"] for line in again.stdout.splitlines()}
    assert statuses == {"duplicate"}  # every line of the file was applied the first time


def closed_stdin() -> None:
    os.close(0)


def test_apply_from_a_closed_stdin_is_unreadable_input_and_creates_nothing(
        market: Path, tmp_path: Path) -> None:
    """Was: `AttributeError: 'NoneType' object has no attribute 'buffer'`, a traceback, exit 1.
    Every input is opened before any line is applied, so the file before `-` is not applied
    either (design.md: exit 2, unreadable input)."""
    data = tmp_path / "data"
    done = subprocess.run([*RIN, "--data", str(data), "apply", str(market), "-"], cwd=ROOT,
                          capture_output=True, check=False, preexec_fn=closed_stdin)
    assert (done.returncode, done.stderr.decode()) == (
        2, "unreadable input: -: stdin is closed\n")
    assert not data.exists()


@pytest.mark.parametrize("asked", [["--help"], ["holdings", "--help"], ["apply", "--help"],
                                   ["--version"]])
def test_help_and_version_to_a_pipe_and_to_a_file_print_whole_and_exit_0(
        asked: list[str], tmp_path: Path) -> None:
    """Click ends `--help` with a write of bytes, which it makes once `write(b"")` is taken:
    on 745f18f that write was a TypeError traceback (exit 1) to every pipe and file, after the
    help itself had been printed (the tests above only wrote to a full disk or closed stdout)."""
    piped = subprocess.run([*RIN, *asked], cwd=ROOT, capture_output=True, check=False)
    with (tmp_path / "out.txt").open("wb") as file:
        filed = subprocess.run([*RIN, *asked], cwd=ROOT, stdout=file, stderr=subprocess.PIPE,
                               check=False)
    text = (tmp_path / "out.txt").read_bytes()
    assert (piped.returncode, piped.stderr, filed.returncode, filed.stderr) == (0, b"", 0, b"")
    assert piped.stdout == text
    if asked == ["--version"]:
        assert text.startswith(b"rin-ledger ") and text.endswith(b"\n")
    else:
        assert b" Usage: " in text and text.rstrip().endswith("\u256f".encode())  # its last box


def assert_unwritable_stdout_exits_2(arguments: list[str]) -> None:
    """rin ARGUMENTS to a full disk and to a closed stdout: exit 2, saying which."""
    with FULL.open("wb") as full:
        to_full = subprocess.run([*RIN, *arguments], cwd=ROOT, stdout=full,
                                 stderr=subprocess.PIPE, check=False)
    closed = subprocess.run([*RIN, *arguments], cwd=ROOT, stderr=subprocess.PIPE, check=False,
                            preexec_fn=closed_stdout)
    assert (to_full.returncode, to_full.stderr.decode()) == (
        OUTPUT_UNWRITABLE, "cannot write the output: No space left on device\n")
    assert (closed.returncode, closed.stderr.decode()) == (
        OUTPUT_UNWRITABLE, "cannot write the output: stdout is closed\n")


@pytest.mark.parametrize("asked", [["--version"], ["--help"], ["holdings", "--help"]])
def test_help_and_version_to_an_unwritable_stdout_exit_2_saying_so(asked: list[str]) -> None:
    """Click and rich print these themselves: to a full disk they were a traceback (exit 1),
    to a closed stdout nothing at all (exit 0)."""
    assert_unwritable_stdout_exits_2(asked)


def test_a_command_that_prints_nothing_needs_no_stdout(projected: Path) -> None:
    """A verify that finds nothing prints nothing on stdout: with stdout closed it exited 2
    "cannot write the output" (and 0 into a full disk); nothing to write fails nowhere."""
    closed = subprocess.run([*RIN, "--data", str(projected), "verify"], cwd=ROOT,
                            stderr=subprocess.PIPE, check=False, preexec_fn=closed_stdout)
    assert (closed.returncode, closed.stderr.decode()) == (
        0, "all stored facts and invariants hold\n")


def in_env(env: dict[str, str], *arguments: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*RIN, *arguments], cwd=ROOT, capture_output=True, check=False,
                          env={**os.environ, **env})


ASCII = {"PYTHONIOENCODING": "ascii"}  # as a non-UTF-8 locale (LC_ALL=C, PYTHONUTF8=0) gives
NO_SECTION_SIGN = ("cannot write the output: stdout's encoding (ascii) has no '\\xa7' "
                   "(U+00A7): set PYTHONIOENCODING=utf-8, or use --json")


def test_a_table_to_an_ascii_stdout_is_drawn_in_ascii(projected: Path) -> None:
    """A table was a UnicodeEncodeError traceback (exit 1) at its box's first line: rich drew
    it for UTF-8 whatever stdout's encoding. Now its box is ASCII and every row is there."""
    utf8 = rin("--data", str(projected), "holdings", "--csv")
    done = in_env(ASCII, "--data", str(projected), "holdings")
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.isascii() and b"+---" in done.stdout
    rows = utf8.stdout.decode().splitlines()[1:]
    assert len(rows) > 10 and all(f"| {row.split(',')[0]} " in done.stdout.decode()
                                  for row in rows)


@pytest.mark.parametrize("asked", [["ptd", "--csv"], ["--help"]])
def test_text_an_ascii_stdout_cannot_take_exits_2_naming_the_character(
        projected: Path, asked: list[str]) -> None:
    """`§` in a CSV cell or in the help: was a traceback, exit 1; now exit 2 saying which
    character, and what to do."""
    done = in_env(ASCII, "--data", str(projected), *asked)
    assert (done.returncode, done.stderr.decode()) == (OUTPUT_UNWRITABLE,
                                                       NO_SECTION_SIGN + "\n")


def test_apply_to_an_ascii_stdout_says_exactly_what_is_committed(tmp_path: Path) -> None:
    """A refused line's message names its paragraph (`§`): the apply was a traceback, exit 1,
    with no word of the 79 lines committed. Now exit 2, and the lines committed are named;
    applied again with --json (which is bytes, any encoding) they come back duplicate."""
    data, every_rule = str(tmp_path / "data"), str(ROOT / "examples" / "every_rule.jsonl")
    done = in_env(ASCII, "--data", data, "apply", every_rule)
    errors = done.stderr.decode()
    assert done.returncode == OUTPUT_UNWRITABLE and "Traceback" not in errors
    found = re.search(re.escape(NO_SECTION_SIGN) + COMMITTED, errors)
    assert found is not None, errors
    at, up_to, applied, duplicate, rejected = (int(g.replace(",", "")) for g in found.groups())
    assert 1 <= at <= up_to and applied > 0 and applied + duplicate + rejected == up_to
    again = in_env(ASCII, "--data", data, "apply", every_rule, "--json")
    statuses = [orjson.loads(line)["status"] for line in again.stdout.splitlines()]
    assert statuses[:up_to].count("duplicate") == applied


def test_force_color_does_not_make_a_file_a_terminal(projected: Path, tmp_path: Path) -> None:
    """FORCE_COLOR=1 (set by many CI systems) made rich take a file for an 80-column terminal:
    a report's cells cut to `…`, escape codes in the file, progress bars in a log. Now a file
    gets what a pipe gets, and a log no bar."""
    piped = rin("--data", str(projected), "trades")
    with (tmp_path / "trades.txt").open("wb") as file:
        forced = subprocess.run([*RIN, "--data", str(projected), "trades"], cwd=ROOT,
                                stdout=file, stderr=subprocess.PIPE, check=False,
                                env={**os.environ, "FORCE_COLOR": "1"})
    assert (forced.returncode, forced.stderr) == (0, b"")
    assert (tmp_path / "trades.txt").read_bytes() == piped.stdout
    assert b"\xe2\x80\xa6" not in piped.stdout  # no cell cut short ("…")
    views = tmp_path / "views.sqlite"
    log = in_env({"FORCE_COLOR": "1"}, "--data", str(projected), "--views", str(views),
                 "project")
    assert log.returncode == 0 and "━".encode() not in log.stderr  # colour asked for: kept
    assert log.stderr.replace(b"\x1b[1;36m", b"").replace(b"\x1b[0m", b"").startswith(
        b"views at notification ")


def test_serve_get_answers_through_the_same_output(projected: Path) -> None:
    """`rin serve --get` handed its process to Datasette (`execv`), whose answer to a full disk
    or a closed stdout was a traceback and exit 1, and into a closed pipe exit 1; now its answer
    is written as every command's output is."""
    views = ["--data", str(projected), "serve", "--get", "/views.json"]
    whole = rin(*views)
    assert whole.returncode == 0 and orjson.loads(whole.stdout)["database"] == "views"
    assert_unwritable_stdout_exits_2(views)
    code, _, errors = read_then_close(views, 0)
    assert (code, errors) == (OUTPUT_CLOSED, "")
