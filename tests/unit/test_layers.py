"""The layers hold (issue 11): the domain and the rules import nothing from persistence, the
application, the command line or the read side; the application imports neither the command
line nor the read side, which only the command line imports; the read side takes from `ledger`
only the domain, its rules and the ports (`READ_SIDE_MAY_USE`); unit tests open no store; every
test file lives in a layer; every entry of the `slow` list names a test that exists."""

from __future__ import annotations

import ast
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlite_utils
from eventsourcing.application import Application
from layout import ALL, LAYERS, SLOW, TESTS, is_slow

from ledger import Ledger
from ledger.infrastructure.event_store import LedgerApp

ROOT = TESTS.parent
INNER = ("ledger/domain", "ledger/rules")
#: what the inner layers must not import (a module or anything under it)
FORBIDDEN = (
    "ledger.application", "ledger.infrastructure", "ledger.cli", "projections",
    "eventsourcing.persistence", "eventsourcing.application", "eventsourcing.sqlite",
    "eventsourcing.postgres", "sqlite3", "sqlite_utils", "psycopg", "psycopg_pool",
)
#: what the read side may import from `ledger`: the domain and its rules, the read port, the
#: façade, the settings, and the adapter that holds every private eventsourcing hook (its
#: tracking recorder's connection and transaction steps), and the file lock with a timeout that
#: the writers' turn and the views file's set-up share (ledger/infrastructure/writer_turn.py)
READ_SIDE_MAY_USE = (
    "ledger.domain", "ledger.rules", "ledger.application.event_log", "ledger.application.ledger",
    "ledger.infrastructure.settings", "ledger.infrastructure.eventsourcing_adapter",
    "ledger.application.follow", "ledger.application.rows",  # the topics followed; typed rows
    "ledger.infrastructure.writer_turn",
    "ledger.infrastructure.sqlite_files",  # the files beside a SQLite file: never links
)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(source: str, module: str, package: bool = False) -> set[str]:
    """Every module that the text of `module` imports, anywhere in it (in functions and
    TYPE_CHECKING blocks too), relative imports resolved; `from ledger import X` counts as
    `ledger.X`, since the top package's `__init__` exports the application's `Ledger`."""
    parent = module.split(".") if package else module.split(".")[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            anchor = parent[: len(parent) - node.level + 1] if node.level else []
            base = ".".join([*anchor, *([node.module] if node.module else [])])
            names.update({f"ledger.{a.name}" for a in node.names} if base == "ledger"
                         else {base})
    return names


def crossings(names: set[str]) -> set[str]:
    """The imported modules that belong to an outer layer."""
    return {name for name in names
            if any(name == f or name.startswith(f"{f}.") for f in FORBIDDEN)
            or (name.startswith("ledger.") and name.split(".")[1] not in ("domain", "rules"))}


def test_the_domain_and_the_rules_import_no_outer_layer() -> None:
    paths = sorted(p for folder in INNER for p in (ROOT / folder).rglob("*.py"))
    assert paths
    found = {(module_name(path), name) for path in paths
             for name in crossings(imported(path.read_text(encoding="utf-8"), module_name(path),
                                            path.name == "__init__.py"))}
    assert found == set()


def imports_of(folder: str) -> set[tuple[str, str]]:
    """(module, module it imports) for every module under `folder` of the checkout."""
    return {(module_name(path), name) for path in sorted((ROOT / folder).rglob("*.py"))
            for name in imported(path.read_text(encoding="utf-8"), module_name(path),
                                 path.name == "__init__.py")}


def under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == prefix or name.startswith(f"{prefix}.") for prefix in prefixes)


def read_side_crossings(names: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The read side's imports of `ledger` outside what it may use (`from ledger import Ledger`
    is the façade)."""
    return {(module, name) for module, name in names
            if under(name, ("ledger",)) and name != "ledger.Ledger"
            and not under(name, READ_SIDE_MAY_USE)}


def test_the_application_imports_neither_the_command_line_nor_the_read_side() -> None:
    found = imports_of("ledger/application")
    assert found and {(m, n) for m, n in found if under(n, ("ledger.cli", "projections"))} == set()


def test_the_infrastructure_imports_neither_the_application_nor_what_is_above_it() -> None:
    """Storage serves the application (which opens it in the `Ledger` façade), never the
    other way round: the layers are domain and rules ← infrastructure ← application ← cli."""
    found = imports_of("ledger/infrastructure")
    above = ("ledger.application", "ledger.cli", "ledger.simulation", "projections")
    assert found and {(m, n) for m, n in found if under(n, above)} == set()


def test_only_the_command_line_imports_the_read_side() -> None:
    outside = {(m, n) for folder in ("ledger/domain", "ledger/rules", "ledger/application",
                                     "ledger/infrastructure", "ledger/simulation")
               for m, n in imports_of(folder) if under(n, ("projections",))}
    assert outside == set()


def test_the_read_side_imports_from_ledger_only_the_domain_and_its_ports() -> None:
    found = imports_of("projections")
    assert {n for _, n in found if under(n, ("ledger",))} >= {"ledger.application.ledger"}
    assert read_side_crossings(found) == set()


@pytest.mark.parametrize("name", [
    "ledger.infrastructure.event_store", "ledger.infrastructure.chain", "ledger.application",
    "ledger.application.unit_of_work", "ledger.cli.output", "ledger.Party",
])
def test_the_read_side_check_sees_a_crossing(name: str) -> None:
    assert read_side_crossings({("projections.views", name)}) == {("projections.views", name)}


@pytest.mark.parametrize("source, crossing", [
    ("import sqlite3", "sqlite3"),
    ("import sqlite_utils.db as db", "sqlite_utils.db"),
    ("from eventsourcing.persistence import Mapper", "eventsourcing.persistence"),
    ("from ledger.infrastructure import chain", "ledger.infrastructure"),
    ("from ..application.ledger import Ledger", "ledger.application.ledger"),
    ("from .. import cli", "ledger.cli"),
    ("from ledger import Ledger", "ledger.Ledger"),
    ("def f():\n    import projections.views", "projections.views"),
    ("if TYPE_CHECKING:\n    from psycopg import Connection", "psycopg"),
])
def test_the_import_check_sees_each_way_of_crossing(source: str, crossing: str) -> None:
    assert crossings(imported(source, "ledger.domain.example")) == {crossing}


def test_the_domain_may_use_itself_the_rules_and_eventsourcing_domain() -> None:
    source = ("from eventsourcing.domain import Aggregate\nfrom .rin import RinBlock\n"
              "from ..rules import catalogue\nfrom ledger.rules.catalogue import rule\n"
              "from ledger import domain\nimport decimal\n")
    names = imported(source, "ledger.domain.example")
    assert names == {"eventsourcing.domain", "ledger.domain.rin", "ledger.rules",
                     "ledger.rules.catalogue", "ledger.domain", "decimal"}
    assert crossings(names) == set()


OPENERS: dict[str, Callable[[Path], object]] = {
    "Ledger": lambda folder: Ledger(folder),
    "LedgerApp": lambda folder: LedgerApp(env={"SQLITE_DBNAME": str(folder / "e.sqlite")}),
    "Application": lambda folder: Application(),
    "sqlite3": lambda folder: sqlite3.connect(folder / "x.sqlite"),
    "sqlite_utils": lambda folder: sqlite_utils.Database(folder / "x.sqlite"),
}


@pytest.mark.parametrize("opener", OPENERS, ids=str)
def test_a_unit_test_that_opens_a_store_fails(opener: str, tmp_path: Path) -> None:
    with pytest.raises(pytest.fail.Exception, match="a unit test opened a store"):
        OPENERS[opener](tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_unit_test_cannot_connect_to_postgresql() -> None:
    psycopg = pytest.importorskip("psycopg")
    url = "postgresql://rin:rin@127.0.0.1:1/rin"
    with pytest.raises(pytest.fail.Exception, match="a unit test opened a store"):
        psycopg.connect(url)
    with pytest.raises(pytest.fail.Exception, match="a unit test opened a store"):
        psycopg.Connection.connect(url)  # what eventsourcing's connection pool calls


def test_every_test_file_lives_in_a_layer() -> None:
    outside = [p.relative_to(TESTS).as_posix() for p in TESTS.rglob("test_*.py")
               if p.relative_to(TESTS).parts[0] not in LAYERS]
    assert outside == []


def test_every_slow_entry_names_a_test_that_exists() -> None:
    missing = []
    for path, names in SLOW.items():
        file = TESTS / path
        if not file.is_file():
            missing.append(path)
            continue
        defined = {node.name for node in ast.walk(ast.parse(file.read_text(encoding="utf-8")))
                   if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
        missing += [f"{path}::{name}" for name in names if name not in defined]
    assert missing == []


def test_slow_matches_every_parametrization_and_only_the_tests_named() -> None:
    assert SLOW["system/test_crash_safety.py"] == ALL
    assert is_slow("system/test_crash_safety.py", "test_anything")
    assert is_slow("integration/red_team/test_failures.py",
                   "test_attack_malformed_database_file_exits_3[command3]")
    assert not is_slow("integration/red_team/test_failures.py",
                       "test_attack_bad_argument_exits_2_naming_it[x]")
    assert not is_slow("unit/test_layers.py", "test_slow_matches_every_parametrization")
