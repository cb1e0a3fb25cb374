"""`rin serve` in a real browser: Datasette started on a free port over a ledger of the sample
market, its pages loaded in headless Chromium (Debian's package, installed by `.ci/run`). Each
saved query shows the rows its `rin` report prints; the internal tables are not listed;
quantities carry thousands separators; the dashboard draws its charts. Screenshots are saved
under build/screenshots/ (gitignored) for a person to look at.

Without Chromium or Datasette the test is skipped naming what is missing; with CI=true that is
a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from html.parser import HTMLParser
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ledger import Ledger
from ledger.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "tests" / "data" / "sample.jsonl"
SCREENSHOTS = ROOT / "build" / "screenshots"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: the sample's ethanol batch: 248,738 gallon-RINs of D6 from 1001's facility 20001
ETHANOL = "12024100120001000011060000000100248738"


def need(what: str, present: bool) -> None:
    if present:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is missing (.ci/run installs it)")
    pytest.skip(f"{what} is not installed")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """`rin serve` over a store holding the sample market; its base URL and data folder."""
    need("chromium", CHROMIUM is not None)
    need("datasette and datasette-dashboards (pip install -e '.[dev]')",
         find_spec("datasette") is not None and find_spec("datasette_dashboards") is not None)
    data = tmp_path_factory.mktemp("served") / "data"
    with Ledger(data) as ledger:
        assert all(r.status == "applied" for r in ledger.apply_many(SAMPLE.open("rb")))
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-c", "from ledger.cli.main import main; main()", "--data", str(data),
         "serve", "--port", str(port)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{base}/-/versions.json", timeout=5):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    out = server.stdout.read().decode() if server.stdout else ""
                    pytest.fail(f"rin serve did not start: {out}")
                time.sleep(0.5)
        yield base, data
    finally:
        server.terminate()  # the process rin serve became (it execs Datasette)
        server.wait(timeout=30)


def chromium(*args: str) -> str:
    assert CHROMIUM is not None
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--virtual-time-budget=10000", *args],
        capture_output=True, text=True, timeout=120, check=True,
    )
    return done.stdout


def page(url: str) -> str:
    """The page's DOM once its scripts have run."""
    return chromium("--dump-dom", url)


def screenshot(url: str, name: str, height: int = 1000) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    target = SCREENSHOTS / f"{name}.png"
    target.unlink(missing_ok=True)
    chromium(f"--window-size=1400,{height}", f"--screenshot={target}", url)
    assert target.stat().st_size > 10_000, f"{target} is nearly empty"
    return target


class RowsTable(HTMLParser):
    """The header and the cells of Datasette's `rows-and-columns` table, as shown."""

    def __init__(self) -> None:
        super().__init__()
        self.header: list[str] = []
        self.rows: list[list[str]] = []
        self.inside = False
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and "rows-and-columns" in (dict(attrs).get("class") or ""):
            self.inside = True
        elif self.inside and tag == "tr":
            self.rows.append([])
        elif self.inside and tag in ("th", "td"):
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self.inside = False
        elif self.inside and tag in ("th", "td") and self.cell is not None:
            text = "".join(self.cell).strip()
            (self.header if tag == "th" else self.rows[-1]).append(text)
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def shown(html: str) -> tuple[list[str], list[list[str]]]:
    table = RowsTable()
    table.feed(html)
    return [h.split("\n")[0].strip() for h in table.header], [r for r in table.rows if r]


def same(value: Any) -> str:
    """A value as the browser and the CLI can both be compared: separators, units and trailing
    zeros dropped, booleans as SQLite stores them, nothing as empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(int(value))
    text = str(value).replace("\xa0", " ").strip().removesuffix(" gal").replace(",", "")
    try:
        return str(Decimal(text).normalize())
    except InvalidOperation:
        return text


def cli(data: Path, *args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(app, ["--data", str(data), *args, "--json"])
    assert result.exit_code == 0, result.output
    rows: list[dict[str, Any]] = json.loads(result.stdout)
    return rows


#: saved query (with its parameters) → the `rin` report it must equal
QUERIES = [
    ("holdings_as_of?as_of=2024-02-07&party=", ["holdings", "--as-of", "2024-02-07"]),
    ("holdings_as_of?as_of=2024-12-31&party=3001",
     ["holdings", "--as-of", "2024-12-31", "--party", "3001"]),
    ("quarter_end_checks?year=2024", ["quarterly", "--year", "2024"]),
    (f"block_trace?rin={ETHANOL}", ["trace", ETHANOL]),
    ("late_submissions?year=2024", ["late", "--year", "2024"]),
    ("separations_by_reason", ["market", "--table", "separations"]),
    ("retirements_by_reason", ["market", "--table", "retirements"]),
    ("market_available", ["market", "--table", "available"]),
    ("activity_report?party=2001&year=2024", ["activity", "--party", "2001", "--year", "2024"]),
]


@pytest.mark.parametrize(("path", "report"), QUERIES, ids=[q.split("?")[0] for q, _ in QUERIES])
def test_each_saved_query_shows_the_rows_its_report_prints(
        served: tuple[str, Path], path: str, report: list[str]) -> None:
    base, data = served
    header, rows = shown(page(f"{base}/views/{path}"))
    expected = cli(data, *report)
    assert expected, "a comparison of nothing proves nothing"
    columns = [c for c in expected[0] if c != "head"]
    assert header == columns
    assert [[same(cell) for cell in row] for row in rows] == [
        [same(row[c]) for c in columns] for row in expected]


def test_quantities_have_thousands_separators_and_units(served: tuple[str, Path]) -> None:
    base, _ = served
    header, rows = shown(page(f"{base}/views/quarter_end_checks?year=2024"))
    first = dict(zip(header, rows[0], strict=True))
    # 1001 on 31 March 2024: 128,738 assigned gallon-RINs against 128,738.3 gallons
    assert (first["party"], first["assigned_rins"]) == ("1001", "128,738")
    assert first["volume"].replace("\xa0", " ") == "128,738.3 gal"
    screenshot(f"{base}/views/quarter_end_checks?year=2024", "quarter_end_checks")


def test_a_partys_activity_report_in_the_browser(served: tuple[str, Path]) -> None:
    """2001 in 2024 Q1 (the sample): it bought 180,000 assigned RINs (t-0001: 120,000 D6 with
    120,000 gallons; t-0002: 60,000 D4 with 40,000 gallons) and separated all of them on
    9 February (s-0001, s-0002, §80.1429(b)(2)): purchased 180,000, separated 180,000, none
    assigned at the end."""
    base, _ = served
    header, rows = shown(page(f"{base}/views/activity_report?party=2001&year=2024"))
    first = dict(zip(header, rows[0], strict=True))
    assert (first["quarter"], first["assignment"]) == ("1", "assigned")
    assert (first["current_purchased"], first["current_separated"], first["current_end"]) == (
        "180,000", "180,000", "0")
    screenshot(f"{base}/views/activity_report?party=2001&year=2024", "activity_report")


def test_the_database_page_lists_reports_and_hides_internal_tables(
        served: tuple[str, Path]) -> None:
    base, _ = served
    html = page(f"{base}/views")
    for listed in ("late_submissions", "holdings_history", "market_available",
                   "Quarter-end checks", "Holdings as of a date", "A block"):
        assert listed in html
    for hidden in ('href="/views/tracking"', 'href="/views/market_states"'):
        assert hidden not in html
    screenshot(f"{base}/views", "views", height=1600)


def test_the_dashboard_draws_its_charts(served: tuple[str, Path]) -> None:
    base, _ = served
    html = page(f"{base}/-/dashboards/rin-market")
    assert "Gallon-RINs generated per month, by D code" in html
    assert html.count("<canvas") + html.count('class="marks"') >= 2  # vega-embed drew both
    # the sample's batches less its retirements: 248,738 + 60,000 − 60,000 − 90,000
    assert "158,738 gallon-RINs" in html
    shot = screenshot(f"{base}/-/dashboards/rin-market", "dashboard", height=1300)
    assert shot.exists()
