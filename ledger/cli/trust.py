"""The `rin` commands of trust: `keygen` and `verify` (chains, heads, signatures, snapshots,
command records, the read side). Exit codes of verify: 0 all holds, 1 something is broken
(each listed with where it is), 2 bad arguments, 3 the store cannot be read."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from ledger.application.ledger import Ledger
from ledger.cli.failures import store_failures_exit
from ledger.cli.options import Options, err, open_ledger, options
from ledger.cli.stdout import write_out
from ledger.infrastructure.heads import Head
from ledger.infrastructure.signing import KeyProblem, load_public
from projections import Views
from projections.pg_views import is_url

app = typer.Typer()


@app.command()
def keygen(ctx: typer.Context,
           path: Annotated[Path, typer.Argument(help="private key file to write (0600)")]
           ) -> None:
    """Write an Ed25519 key pair: FILE (private, mode 0600) and FILE.pub (public)."""
    from ledger.infrastructure.signing import fingerprint, load_private
    from ledger.infrastructure.signing import keygen as write_pair

    try:
        private, public = write_pair(path)
    except OSError as exc:
        err.print(f"cannot write {exc.filename or path}: {exc.strerror}")  # which of the two
        raise typer.Exit(2) from None
    if not options(ctx).quiet:
        err.print(f"wrote {private} (private) and {public}: "
                  f"{fingerprint(load_private(private).public_key())}")


def read_head_argument(against: Path) -> dict[str, Any]:
    """An exported head (`rin verify --head`), or exit 2 naming what is wrong with it."""
    try:
        head = json.loads(against.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        err.print(f"--against {against}: not a head printed by `rin verify --head` ({exc})")
        raise typer.Exit(2) from None
    if not (isinstance(head, dict) and type(head.get("notification_id")) is int
            and 0 <= head["notification_id"] < 2**63 and isinstance(head.get("hash"), str)):
        err.print(f"--against {against}: needs notification_id (a whole number from 0 to "
                  "2^63 − 1, as an event store holds) and hash (string)")
        raise typer.Exit(2)
    return head


def current_head(ledger: Ledger) -> dict[str, Any]:
    """The head over the whole log; signed by the configured key, else carrying the signature
    of the stored head row at the same point, if that row is signed and agrees."""
    head = ledger.head()
    if ledger.signer is not None:
        return Head(head["notification_id"], head["hash"], ledger.signer.fingerprint,
                    ledger.signer.sign(head["notification_id"], head["hash"])).to_dict()
    for stored in ledger.stored_heads():
        if stored.notification_id == head["notification_id"] and stored.hash == head["hash"]:
            return stored.to_dict()
    return head


@app.command()
def verify(
    ctx: typer.Context,
    head: Annotated[bool, typer.Option(
        "--head", help="print the ledger-wide chain head as JSON, for an auditor to keep")] = False,
    against: Annotated[Path | None, typer.Option(
        "--against", help="a head printed earlier by --head: prove history up to it unchanged",
    )] = None,
    public_key: Annotated[Path | None, typer.Option(
        "--public-key", help="FILE.pub of `rin keygen`: check every head's signature")] = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help='one JSON object: {"ok": true|false, "problems": [...]}')] = False,
) -> None:
    """Check every stored fact and the invariants; exit 0 only if all hold (1 broken, 2 bad
    arguments, 3 the store cannot be read)."""
    exported = read_head_argument(against) if against else None
    chosen = options(ctx)
    if chosen.views is not None and is_url(chosen.views) and not head:
        err.print(f"--views {chosen.views}: rin verify compares the read models with their "
                  "rebuild in a SQLite views file; run it without --views (the read models "
                  "in the data folder), or rebuild the PostgreSQL ones with `rin project "
                  "--rebuild`")
        raise typer.Exit(2)
    try:
        public = load_public(public_key) if public_key else None
    except KeyProblem as exc:
        err.print(f"--public-key: {exc}")
        raise typer.Exit(2) from None
    with store_failures_exit(err):
        problems = run_verify(chosen, head, exported, public)
    if problems is None:
        return
    if as_json:
        write_out(json.dumps({"ok": not problems, "problems": problems}, ensure_ascii=False)
                  + "\n")
    else:
        write_out("".join(f"{problem}\n" for problem in problems))
    quiet = options(ctx).quiet
    if problems:
        if not quiet:
            err.print(f"{len(problems):,} problem(s) found")
        raise typer.Exit(1)
    if not quiet:
        err.print("all stored facts and invariants hold")


def run_verify(chosen: Options, head: bool, exported: dict[str, Any] | None,
               public: Any) -> list[str] | None:
    """The problems found (None after printing the head for --head)."""
    with open_ledger(chosen) as ledger:
        if head:
            write_out(json.dumps(current_head(ledger)) + "\n")
            return None
        # --quiet, or stderr not a terminal (FORCE_COLOR=1 makes rich think it one): no spinner
        spinner = Console(stderr=True, quiet=chosen.quiet or not sys.stderr.isatty())
        with spinner.status("checking chains, heads, command records and snapshots, "
                            "replaying every event and rebuilding the views to compare"):
            # one walk of the log; only history that holds is replayed (tampered bytes may
            # not decode), and a state that links and parses but does not decode is a
            # problem found, not a crash (projections/verify_pass.py)
            return Views(ledger, chosen.views_location()).verify_all(public, exported)
