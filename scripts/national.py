"""The national-scale run: fifteen years of the US RIN market made, ingested, rebuilt and
verified on this machine; prints ONE JSON object.

    python scripts/national.py [--years N] [--scale F] [--seed S] [--file market.jsonl]
                               [--data DIR] [--keep]

Each phase runs in a process of its own, so that its CPU seconds and peak resident memory are
its own (`os.wait4`): `make` writes the market (`ledger.simulation.market.national_market`:
about 2,400 × F parties over N years, reference.md §7) as a transaction file, unless `--file`
names one; `ingest` applies the file with `Ledger.apply_many` on a fresh SQLite store, every
rule checked, 200 lines a transaction; `rebuild` projects every read model from the log;
`verify` is `rin verify` as a user runs it. docs/performance.md "National scale" has figures.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import orjson
from child_process import measured, rin
from script_arguments import positive_float, positive_int

PROGRESS = 100_000  # lines between progress notes on stderr
BATCH = 200  # lines a transaction, as bench.py ingests


def make(file: Path, years: int, parties: int, seed: int) -> dict[str, Any]:
    """Write the seeded market to `file`, one JSON line each."""
    from ledger.simulation.market import national_market

    lines = 0
    with file.open("wb") as out:
        for line in national_market(seed, years=years, parties=parties):
            out.write(orjson.dumps(line) + b"\n")
            lines += 1
    return {"lines": lines, "file_bytes": file.stat().st_size}


def read_lines(file: Path, seen: Counter[str]) -> Iterator[Any]:
    """The file's lines as commands, counting what they are as they go by; a line that is not
    JSON goes to the ledger as it is, which rejects it naming the line."""
    with file.open("rb") as lines:
        for text in lines:
            seen["lines"] += 1
            try:
                line = orjson.loads(text)
            except orjson.JSONDecodeError:
                yield text
                continue
            with suppress(AttributeError, KeyError, TypeError, ValueError):
                tally(line, seen)  # a malformed command is the ledger's to refuse
            yield line


def tally(line: dict[str, Any], seen: Counter[str]) -> None:
    """Count what `line` is: EMTS transactions, a party, the year of a generation."""
    from ledger.simulation.market import emts_transactions

    seen["emts_transactions"] += emts_transactions(line)
    seen["parties"] += line["type"] == "register_party"
    if line["type"] == "generate":  # the years of production, not the last season
        year = int(line["date"][:4])
        seen["first_year"] = min(seen["first_year"] or year, year)
        seen["last_year"] = max(seen["last_year"], year)


def ingest(file: Path, data: Path) -> dict[str, Any]:
    """Apply every line of `file` to a fresh store in `data`; count what was stored."""
    from bench import command_records, record_events

    from ledger import Ledger

    seen: Counter[str] = Counter()
    rejected: list[str] = []
    started = time.perf_counter()
    ledger = Ledger(data)
    for result in ledger.apply_many(read_lines(file, seen), batch_size=BATCH):
        if result.status == "rejected":
            rejected.append(f"line {result.line}: {result.error}")
        if result.line % PROGRESS == 0:
            sys.stderr.write(f"ingest: {result.line:,} lines, {ledger.position():,} events, "
                             f"{time.perf_counter() - started:,.0f} s\n")
    position = ledger.position()
    ledger.close()
    sys.stderr.writelines(f"rejected {text}\n" for text in rejected[:5])
    records, in_log = command_records(data, None), record_events(data, None)
    return {**seen, "rejected": len(rejected), "events": position,
            "domain_events": position - in_log, "command_records": records,
            "command_records_in_log": in_log}


def rebuild(data: Path) -> dict[str, Any]:
    """Project every read model from the whole log, as `rin` keeps them."""
    import projections
    from ledger import Ledger

    with Ledger(data) as ledger:
        position = projections.rebuild(ledger, projections.views_path(ledger))
    return {"rebuilt_position": position}


PHASES = {"make", "ingest", "rebuild"}


def phase(argv: list[str], label: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run one phase in a child process: (what it printed as JSON, its wall and CPU seconds,
    peak resident MB and exit code)."""
    sys.stderr.write(f"{label}: started\n")
    out, _, run = measured(argv, keep_stderr=False)
    figures = {key: round(value, 1) if key != "exit" else value for key, value in run.items()}
    sys.stderr.write(f"{label}: {figures}\n")
    if label != "verify" and figures["exit"]:
        raise SystemExit(f"national.py: the {label} phase failed (exit {figures['exit']})")
    return (orjson.loads(out) if label in PHASES else {}), figures


def own_phase(name: str, *args: str) -> list[str]:
    """The command line running this script's phase `name` in a child."""
    return [sys.executable, str(Path(__file__).resolve()), "--phase", name, *args]


def size(folder: Path, name: str | None = None) -> int:
    """Bytes on disk of the folder's files (or of the files whose names start with `name`)."""
    return sum(f.stat().st_size for f in folder.iterdir()
               if f.is_file() and (name is None or f.name.startswith(name)))


def years_of(ingested: dict[str, Any]) -> int:
    """How many years the file's generations span (0: it has none)."""
    first, last = ingested.pop("first_year", 0), ingested.pop("last_year", 0)
    return last - first + 1 if first else 0


def unusable(args: argparse.Namespace) -> str | None:
    """What is wrong with `--file` or `--data` before anything runs, if anything."""
    if args.file and not Path(args.file).is_file():
        return f"argument --file: {args.file} is not a file"
    data = Path(args.data) if args.data else None
    if data is not None and data.exists() and not data.is_dir():
        return f"argument --data: {data} is not a folder"
    if data is not None and data.exists() and any(data.iterdir()):
        return f"argument --data: {data} is not empty: the run needs a fresh store"
    return None


def run(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """Every phase in turn; the one JSON object."""
    from ledger.infrastructure.settings import EVENTS_FILE, VIEWS_FILE
    from ledger.simulation.market import NATIONAL_PARTIES

    parties = max(1, round(NATIONAL_PARTIES * args.scale))
    data = Path(args.data) if args.data else folder / "store"
    file = Path(args.file) if args.file else folder / "national.jsonl"
    phases: dict[str, Any] = {}
    made: dict[str, Any] = {}
    if not args.file:
        made, phases["make"] = phase(own_phase(
            "make", "--out", str(file), "--years", str(args.years), "--parties", str(parties),
            "--seed", str(args.seed)), "make")
    ingested, phases["ingest"] = phase(own_phase("ingest", "--file", str(file), "--data",
                                                 str(data)), "ingest")
    rebuilt, phases["rebuild"] = phase(own_phase("rebuild", "--data", str(data)), "rebuild")
    _, phases["verify"] = phase(rin("--data", str(data), "verify"), "verify")
    return {
        "seed": args.seed, "scale": args.scale, "file": str(file) if args.file else None,
        "years": years_of(ingested), **ingested,
        **rebuilt, "file_bytes": made.get("file_bytes", file.stat().st_size),
        "store_bytes": size(data, EVENTS_FILE), "views_bytes": size(data, VIEWS_FILE),
        "data_bytes": size(data), "verify_exit": phases["verify"]["exit"],
        "wall_s": round(sum(p["wall_s"] for p in phases.values()), 1),
        "cpu_s": round(sum(p["cpu_s"] for p in phases.values()), 1),
        "phases": phases, "load_average": [round(n, 2) for n in os.getloadavg()],
    }


def run_phase(args: argparse.Namespace) -> None:
    """One phase in this (child) process, its figures as JSON on stdout; the store failing
    (disk full, locked, unreadable) is said in one line and exit 3, as `rin` says it, not a
    traceback (design.md "Exit codes")."""
    from ledger import LibraryError

    try:
        if args.phase == "make":
            figures = make(Path(args.out), args.years, args.parties, args.seed)
        elif args.phase == "ingest":
            figures = ingest(Path(args.file), Path(args.data))
        else:
            figures = rebuild(Path(args.data))
    except LibraryError as error:
        sys.stderr.write(f"national.py: the {args.phase} phase: {error}\n")
        raise SystemExit(3) from None
    print(orjson.dumps(figures).decode())


def main(argv: list[str] | None = None) -> None:
    from ledger.simulation.market import NATIONAL_YEARS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--years", type=positive_int, default=NATIONAL_YEARS,
                        help="years of the market from January 2014")
    parser.add_argument("--scale", type=positive_float, default=1.0,
                        help="the fraction of the national party list (0.05: about 120)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--file", default=None, help="ingest this transaction file instead")
    parser.add_argument("--data", default=None, help="the store's folder (fresh; default temp)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the temporary folder (market file and store)")
    parser.add_argument("--phase", choices=sorted(PHASES), help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--parties", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.phase is None and (problem := unusable(args)):
        parser.error(problem)
    if args.phase is not None:
        run_phase(args)
    else:
        folder = Path(tempfile.mkdtemp(prefix="rin-national-"))
        try:
            print(orjson.dumps(run(args, folder)).decode())
        finally:
            if args.keep:
                sys.stderr.write(f"kept {folder}\n")
            else:
                shutil.rmtree(folder)


if __name__ == "__main__":
    main()
