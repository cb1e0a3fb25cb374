"""A careless operator's RIN_TRADE_WINDOW (found by the trades red team): the command line names
the setting and exits 2, the library refuses it naming the variable; neither is a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ledger import Ledger
from ledger.cli.main import app


@pytest.mark.parametrize("window", ["abc", "-1", "1.5", "٣"])
def test_a_bad_window_setting_is_a_clear_error_not_a_traceback(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: str) -> None:
    monkeypatch.setenv("RIN_TRADE_WINDOW", window)
    result = CliRunner().invoke(app, ["--data", str(tmp_path), "trades"])
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert "RIN_TRADE_WINDOW" in result.output
    assert "Traceback" not in result.output
    with pytest.raises(ValueError, match="RIN_TRADE_WINDOW"):
        Ledger(tmp_path / "lib")


def test_a_good_window_setting_is_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RIN_TRADE_WINDOW", "3")
    Ledger(tmp_path).close()  # an empty ledger: a report on a folder with none exits 2
    result = CliRunner().invoke(app, ["--data", str(tmp_path), "trades", "--json"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "[]"
