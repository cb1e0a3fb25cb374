"""The demo writes a market of its own: only into an empty ledger or one it started itself
(re-running it there applies nothing new), never into a ledger of real or other data, where
its lines would be refused by the hundred or, worse, applied."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from ledger.application.ledger import Ledger
from ledger.cli.failures import print_failure
from ledger.cli.options import BAD_ARGUMENT, err
from ledger.infrastructure.sqlite_files import write_new

#: in the data folder: which market the demo started this ledger with
MARKER = "demo.json"


def claim_for_demo(ledger: Ledger, data: Path, market: dict[str, Any]) -> None:
    """Mark an empty ledger as the demo's `market`; exit 2, naming the folder, if the ledger
    holds events and the demo did not start it with this same market."""
    marker = data / MARKER
    if ledger.position() == 0:
        data.mkdir(parents=True, exist_ok=True)
        marker.unlink(missing_ok=True)  # a link planted there is not written through
        write_new(marker, (json.dumps(market) + "\n").encode())
        return
    try:
        started = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        started = None
    if started == market:
        return
    why = (f"the demo started it with another market ({started})" if started is not None
           else "the demo did not start it")
    print_failure(err, f"{data} already holds a ledger ({ledger.position():,} notifications) and "
              f"{why}: the demo writes a market of its own; give it an empty folder, e.g. "
              "rin --data /tmp/rin-demo demo")
    raise typer.Exit(BAD_ARGUMENT)
