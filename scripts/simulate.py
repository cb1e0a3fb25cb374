"""A deterministic (seeded) RIN market, streamed as transaction-file lines (JSON Lines).

The command line of `ledger.simulation.market`, writing to stdout (`rin demo --size N` applies
the same lines).

    python scripts/simulate.py --lines N --seed S [--bad F] [--postings F] > market.jsonl
"""

from __future__ import annotations

import argparse
import sys

import orjson

from ledger.simulation.market import POSTINGS, generate_market


def main(argv: list[str] | None = None) -> None:
    """`python scripts/simulate.py --lines N --seed S [--bad F] [--postings F] > market.jsonl`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, required=True, help="how many lines to write")
    parser.add_argument("--seed", type=int, default=1, help="the same seed gives the same file")
    parser.add_argument("--bad", type=float, default=0.0, help="share of invalid lines, 0-1")
    parser.add_argument("--postings", type=float, default=POSTINGS,
                        help="share of trades posted as an EMTS sell and buy, 0-1 (0: every "
                             "trade a fast-path transfer)")
    args = parser.parse_args(argv)
    out = sys.stdout.buffer
    for line in generate_market(args.lines, args.seed, args.bad, args.postings):
        out.write(orjson.dumps(line) + b"\n")


if __name__ == "__main__":
    main()
