"""Market generators: transaction-file lines (the public command format) of whole markets, for
`rin demo`, the tests and the benchmark. `small_market` is the demo's year of nine parties, every
figure chosen by hand; `generate_market` is a seeded national market of any size."""

from ledger.simulation.market import generate_market
from ledger.simulation.small_market import small_market

__all__ = ["generate_market", "small_market"]
