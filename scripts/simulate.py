"""A deterministic (seeded) RIN market, streamed as transaction-file lines (JSON Lines).

The command line of `ledger.simulation.market`, writing to stdout (`rin demo --size N` applies
the same lines). `--lines N` alone sizes the party list from N (`PartyMix.for_lines`);
`--national` is the fifteen-year national market of about 2,400 parties (reference.md §7), and
`--years` / `--parties` choose another span or party list (then `--lines` only caps the file).

    python scripts/simulate.py --lines N --seed S [--bad F] [--postings F] > market.jsonl
    python scripts/simulate.py --national [--years N] [--parties N] [--seed S] > national.jsonl
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from itertools import islice
from typing import Any

import orjson
from script_arguments import positive_int, share

from ledger.simulation.market import (
    NATIONAL_PARTIES,
    NATIONAL_YEARS,
    POSTINGS,
    generate_market,
    national_market,
)


def market(args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """The lines the options ask for: sized by `--lines`, or by span and party list."""
    if not (args.national or args.years or args.parties):
        return generate_market(args.lines, args.seed, args.bad, args.postings)
    lines = national_market(
        args.seed, years=args.years or NATIONAL_YEARS, parties=args.parties or NATIONAL_PARTIES,
        bad_lines=args.bad, postings=args.postings,
    )
    return lines if args.lines is None else islice(lines, args.lines)


def main(argv: list[str] | None = None) -> None:
    """`python scripts/simulate.py --lines N --seed S [--bad F] [--postings F] > market.jsonl`,
    or `--national [--years N] [--parties N]` in place of (or besides) `--lines`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=None,
                        help="how many lines to write (with --national/--years/--parties: at "
                             "most this many)")
    parser.add_argument("--national", action="store_true",
                        help=f"the national market: {NATIONAL_YEARS} years, about "
                             f"{NATIONAL_PARTIES:,} parties (reference.md §7)")
    parser.add_argument("--years", type=positive_int, default=None,
                        help=f"how many years from January 2014 (national default "
                             f"{NATIONAL_YEARS})")
    parser.add_argument("--parties", type=positive_int, default=None,
                        help=f"about how many parties (national default {NATIONAL_PARTIES:,})")
    parser.add_argument("--seed", type=int, default=1, help="the same seed gives the same file")
    parser.add_argument("--bad", type=share, default=0.0, help="share of invalid lines, 0-1")
    parser.add_argument("--postings", type=share, default=POSTINGS,
                        help="share of trades posted as an EMTS sell and buy, 0-1 (0: every "
                             "trade a fast-path transfer)")
    args = parser.parse_args(argv)
    if args.lines is None and not (args.national or args.years or args.parties):
        parser.error("give --lines N, or --national (or --years N / --parties N)")
    out = sys.stdout.buffer
    for line in market(args):
        out.write(orjson.dumps(line) + b"\n")


if __name__ == "__main__":
    main()
