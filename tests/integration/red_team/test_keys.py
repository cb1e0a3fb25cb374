"""Issue 9, item 2 (attack 2): the chain has no key.

Anyone who can write the store can append a consistent TransferredOut/TransferredIn pair with
recomputed per-aggregate links (a theft). Here the attacker does it the easiest way there is:
runs the ledger itself on a copy of the store (so every link, the head row and head.json are
what the ledger would write) and copies the new rows back. With a key configured, the heads
are signed: `verify --public-key` finds the theft, because no head the attacker can write is
signed by the key. A signed store also refuses writes from a ledger without the key.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ledger.application.ledger import Ledger
from ledger.cli.main import app
from ledger.infrastructure.signing import KeyRequired, keygen, load_public, signature_holds
from red_team.attacker import build, files, make_key, rin, verify
from red_team.rewrite import rewrite_history

THEFT = {"type": "transfer", "date": "2024-03-07", "from": "2001", "to": "3001",
         "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 20_000}}


@pytest.fixture
def signed(tmp_path: Path) -> tuple[Path, Path]:
    key = make_key(tmp_path)
    data = tmp_path / "data"
    build(data, key)
    return data, key


def forge_with_the_ledger(data: Path, scratch: Path) -> None:
    """Apply THEFT on a copy with the signatures stripped, then copy the new rows back."""
    shutil.copytree(data, scratch)
    with files(scratch) as db:
        db.execute("UPDATE rin_heads SET key = NULL, signature = NULL")
        last = db.execute("SELECT MAX(rowid) FROM stored_events").fetchone()[0]
    with Ledger(scratch) as ledger:
        assert ledger.apply(THEFT).status == "applied"
    with files(scratch) as db:
        events = db.execute("SELECT * FROM stored_events WHERE rowid > ?", (last,)).fetchall()
        heads = db.execute("SELECT * FROM rin_heads WHERE notification_id > ?",
                           (last,)).fetchall()
    assert len(events) == 2 and len(heads) == 1  # TransferredOut, TransferredIn; one head
    with files(data) as db:
        db.executemany("INSERT INTO stored_events VALUES (?, ?, ?, ?)", events)
        db.executemany("INSERT INTO rin_heads VALUES (?, ?, ?, ?)", heads)
    shutil.copy(scratch / "head.json", data / "head.json")


def test_keygen_writes_a_private_key_only_its_owner_reads(tmp_path: Path) -> None:
    result = rin(tmp_path, "keygen", str(tmp_path / "k"))
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(os.stat(tmp_path / "k").st_mode) == 0o600
    assert (tmp_path / "k.pub").read_text().startswith("-----BEGIN PUBLIC KEY-----")
    assert rin(tmp_path, "keygen", str(tmp_path / "k")).exit_code == 2  # never overwritten


def test_a_consistent_forged_transfer_fails_verify_with_the_public_key(
        signed: tuple[Path, Path], tmp_path: Path) -> None:
    data, key = signed
    forge_with_the_ledger(data, tmp_path / "scratch")
    with Ledger(data) as ledger:
        assert ledger.holdings("3001")[0]["gallon_rins"] == 12_100 + 20_000  # the theft is in
    out = verify(data, "--public-key", f"{key}.pub")
    assert out.exit_code == 1, out.output
    assert "not signed, after signing began" in out.output
    assert "are covered by no signed head: added without the key" in out.output


def test_without_the_public_key_the_same_forgery_verifies(signed: tuple[Path, Path],
                                                           tmp_path: Path) -> None:
    """The limit the README states: without a key, every check can be recomputed."""
    data, _ = signed
    forge_with_the_ledger(data, tmp_path / "scratch")
    assert verify(data).exit_code == 0


def test_an_edit_with_every_head_recomputed_breaks_the_signatures(
        signed: tuple[Path, Path], tmp_path: Path) -> None:
    """The attacker renames the producer (no snapshot holds its name) in its registration,
    recomputes every per-aggregate link after it, every head row and head.json (the old
    signatures stay): without the key nothing but the signatures gives it away."""
    data, key = signed
    rewrite_history(data, rename_producer)
    assert verify(data).exit_code == 0  # the limit without a key
    out = verify(data, "--public-key", f"{key}.pub")
    assert out.exit_code == 1
    assert "signature does not hold under ed25519:" in out.output


def rename_producer(state: bytes) -> bytes | None:
    return state.replace(b'"name":"Producer"', b'"name":"Producer Two"') if (
        b'"name":"Producer"' in state) else None


def test_stripping_every_signature_is_found(signed: tuple[Path, Path]) -> None:
    data, key = signed
    with files(data) as db:
        db.execute("UPDATE rin_heads SET key = NULL, signature = NULL")
    out = verify(data, "--public-key", f"{key}.pub")
    assert out.exit_code == 1
    assert "no head signed by ed25519:" in out.output


def test_head_is_signed_and_against_proves_the_past(signed: tuple[Path, Path],
                                                    tmp_path: Path) -> None:
    data, key = signed
    printed = rin(data, "verify", "--head", key=key)
    assert printed.exit_code == 0
    head = json.loads(printed.stdout)
    assert signature_holds(load_public(f"{key}.pub"), head)
    exported = tmp_path / "head.json"
    exported.write_text(printed.stdout)
    assert verify(data, "--against", str(exported), "--public-key", f"{key}.pub").exit_code == 0
    with files(data) as db:  # an edit before the exported head, chains and heads untouched
        db.execute("UPDATE rin_heads SET hash = 'x' WHERE notification_id = "
                   "(SELECT MAX(notification_id) FROM rin_heads)")
    out = verify(data, "--against", str(exported))
    assert out.exit_code == 1 and "history up to it changed, or the head row was edited" in \
        out.output


def test_a_signed_store_refuses_writes_without_its_key(signed: tuple[Path, Path],
                                                       tmp_path: Path) -> None:
    data, _ = signed
    with Ledger(data) as ledger, pytest.raises(KeyRequired) as refused:
        ledger.apply(THEFT)
    other, _ = keygen(tmp_path / "other.key")
    with Ledger(data, key=other) as ledger, pytest.raises(KeyRequired):
        ledger.apply(THEFT)
    lines = tmp_path / "theft.jsonl"
    lines.write_text(json.dumps(THEFT) + "\n")
    run = subprocess.run(
        [sys.executable, "-c", "from ledger.cli.main import main; main()", "--data", str(data),
         "apply", "-q", str(lines)], capture_output=True, text=True, cwd=Path(__file__).parents[3],
        env={**os.environ, "RIN_KEY": ""}, check=False)
    assert run.returncode == 2, run.stderr
    assert refused.value.fingerprint in run.stderr.replace("\n", "")
    assert "Traceback" not in run.stderr
    with Ledger(data) as ledger:
        assert ledger.holdings("3001")[0]["gallon_rins"] == 12_100  # nothing written


def test_rin_key_in_the_environment_signs_and_a_bad_public_key_is_an_argument_error(
        signed: tuple[Path, Path], tmp_path: Path) -> None:
    data, key = signed
    lines = tmp_path / "more.jsonl"
    lines.write_text(json.dumps({**THEFT, "id": "by-env"}) + "\n")
    applied = CliRunner().invoke(app, ["--data", str(data), "apply", "-q", str(lines)],
                                 env={"RIN_KEY": str(key)})
    assert applied.exit_code == 0, applied.output
    assert verify(data, "--public-key", f"{key}.pub").exit_code == 0
    (tmp_path / "bad.pub").write_text("not a key")
    out = verify(data, "--public-key", str(tmp_path / "bad.pub"))
    assert out.exit_code == 2
    assert "bad.pub: not a readable Ed25519 public key" in " ".join(out.output.split())
