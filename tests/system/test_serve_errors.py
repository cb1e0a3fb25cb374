"""`rin serve` answers a bad request with Datasette's error page or JSON and no traceback:
Datasette's default handler printed a rich traceback with every local variable to standard
error for each one, a 404 included (projections/datasette_plugins/rin_ledger_errors.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[2]
RIN = [sys.executable, "-c", "from ledger.cli.main import main; main()"]


def rin(*arguments: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*RIN, *arguments], cwd=ROOT, capture_output=True, check=False)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("serve") / "data"
    assert rin("--data", str(folder), "apply", "tests/data/sample.jsonl", "-q").returncode == 0
    return folder


@pytest.mark.parametrize("path, status, error", [
    ("/nosuch.json", 404, "Database not found"),
    ("/views/nosuch.json", 404, "Table not found"),
    ("/views/holdings.json?_sort=nosuch", 500, "Cannot sort table by nosuch"),
    ("/views/holdings.json?_where=1=((", 400, 'near "limit": syntax error'),
    ("/views/holdings.json?_size=abc", 400, "_size must be a positive integer"),
])
def test_a_bad_request_gets_its_error_and_no_traceback(data: Path, path: str, status: int,
                                                       error: str) -> None:
    answered = rin("--data", str(data), "serve", "--get", path)
    assert answered.returncode == 1  # Datasette's --get: the answer was an error
    assert orjson.loads(answered.stdout) | {"title": None} == {
        "ok": False, "error": error, "status": status, "title": None}
    assert b"Traceback" not in answered.stderr and "│".encode() not in answered.stderr


def test_a_missing_page_is_datasettes_404_page_without_a_traceback(data: Path) -> None:
    answered = rin("--data", str(data), "serve", "--get", "/nosuch")
    assert b"<h1>Error 404</h1>" in answered.stdout
    assert answered.stderr == b""
