"""`rin examples [DIR]` writes the example files that ship inside the package, so the README's
commands (`apply examples/sample.jsonl`, the every-rule file) run from an installed wheel; in a
folder that has them already it writes nothing, and it never overwrites a file with other
content (exit 2)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from ledger.cli.main import app

CHECKOUT = Path(__file__).resolve().parents[2] / "examples"


def test_the_examples_written_are_the_checkouts_and_rewriting_them_changes_nothing(
        tmp_path: Path) -> None:
    runner = CliRunner()
    target = tmp_path / "examples"
    first = runner.invoke(app, ["examples", str(target)])
    assert first.exit_code == 0, first.output
    shipped = {p.name: p.read_bytes() for p in CHECKOUT.iterdir() if p.is_file()}
    assert {"sample.jsonl", "every_rule.jsonl", "every_rule.expected"} <= set(shipped)
    assert {p.name: p.read_bytes() for p in target.iterdir()} == shipped
    again = runner.invoke(app, ["examples", str(target)])
    assert again.exit_code == 0 and "0 example file(s) written" in " ".join(again.output.split())


def test_a_file_with_other_content_is_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "sample.jsonl").write_text("mine\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["examples", str(tmp_path)])
    assert result.exit_code == 2 and "other content" in result.output
    assert (tmp_path / "sample.jsonl").read_text(encoding="utf-8") == "mine\n"
    assert not (tmp_path / "every_rule.jsonl").exists()  # nothing written at all
