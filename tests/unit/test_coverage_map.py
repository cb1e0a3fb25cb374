"""The coverage map (docs/coverage.md, issue 10) cannot drift from the regulation, the rule
catalogue, the code or the tests: every paragraph has an entry, every rule id and function and
test it names exists, and every function named cites its paragraph."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType

import pytest

from ledger.rules.registry import all_rules

ROOT = Path(__file__).resolve().parents[2]


def load_script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


MAP = load_script("coverage_map")
REG = load_script("regulation_paragraphs")
ENTRIES = MAP.load()
PARAGRAPHS = REG.paragraphs()
NAMED = [e for e in ENTRIES if e.functions]


def resolve(name: str) -> object:
    """The object `module:qualname` names."""
    module_name, _, qualname = name.partition(":")
    target: object = importlib.import_module(module_name)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def source_of(target: object) -> str:
    if isinstance(target, property):
        assert target.fget is not None
        target = target.fget
    return inspect.getsource(target)  # type: ignore[arg-type]


def test_docs_coverage_md_is_the_scripts_output() -> None:
    actual = (ROOT / "docs" / "coverage.md").read_text(encoding="utf-8")
    assert actual == MAP.render(), (
        "docs/coverage.md is out of date; regenerate it with "
        "`python scripts/coverage_map.py --write`"
    )


def test_every_entry_is_well_formed() -> None:
    assert [problem for entry in ENTRIES for problem in entry.problems()] == []


def test_every_entry_names_a_real_paragraph_once() -> None:
    ids = [e.id for e in ENTRIES]
    real = {p.id for p in PARAGRAPHS}
    assert [i for i in ids if i not in real] == []
    assert len(ids) == len(set(ids))


def test_every_paragraph_of_the_five_sections_has_an_entry() -> None:
    owned = MAP.owners(ENTRIES, PARAGRAPHS)
    assert [p.id for p in PARAGRAPHS if p.id not in owned] == []


def test_every_catalogued_rule_is_in_the_map_and_every_mapped_rule_is_catalogued() -> None:
    catalogued = {r.id for r in all_rules()}
    mapped = {rule_id for e in ENTRIES for rule_id in e.rules}
    assert sorted(catalogued - mapped) == [], "rules the map does not place"
    assert sorted(mapped - catalogued) == [], "rule ids the catalogue does not have"


@pytest.mark.parametrize("entry", NAMED, ids=lambda e: e.id)
def test_every_function_named_exists_and_cites_its_paragraph(entry: object) -> None:
    for name in entry.functions:  # type: ignore[attr-defined]
        source = source_of(resolve(name))
        assert entry.id in source, f"{name} does not cite {entry.id}"  # type: ignore[attr-defined]


def test_every_test_named_exists() -> None:
    """Each `tests/…/file.py::name` is a file of the checkout at that path and a test function
    of that module, found by importing it (the tests folder is on sys.path, as pytest puts it
    there; a subfolder is a package)."""
    missing = []
    for entry in ENTRIES:
        for name in entry.tests:
            path, _, function = name.partition("::")
            assert path.startswith("tests/") and path.endswith(".py"), name
            if not (ROOT / path).is_file():  # a module of that name elsewhere would import
                missing.append(name)
                continue
            module = importlib.import_module(
                ".".join(Path(path).relative_to("tests").with_suffix("").parts))
            if not (function.startswith("test_") and callable(getattr(module, function, None))):
                missing.append(name)
    assert missing == []


# --- the paragraph parser, on hand-made text -------------------------------------------------

def ids(text: str) -> list[str]:
    return [p.id for p in REG.parse("80.9999", text)]


def test_parser_reads_nested_and_run_together_labels() -> None:
    text = "(a) A.\n(1) One.\n(i) Roman.\n(A) Capital.\n(ii) Two.\n(b)(1) Both.\n(2) Two.\n"
    assert ids(text) == [
        "§80.9999(a)", "§80.9999(a)(1)", "§80.9999(a)(1)(i)", "§80.9999(a)(1)(i)(A)",
        "§80.9999(a)(1)(ii)", "§80.9999(b)", "§80.9999(b)(1)", "§80.9999(b)(2)",
    ]


def test_parser_infers_labels_the_excerpt_lost() -> None:
    # "(a)" then "(i)": (a)(1) was lost; "(iii)" after "(i)": (ii) was lost.
    paragraphs = REG.parse("80.9999", "(a)\n(i) One.\n(iii) Three.\n")
    assert [(p.id, p.inferred) for p in paragraphs] == [
        ("§80.9999(a)", False), ("§80.9999(a)(1)", True), ("§80.9999(a)(1)(i)", False),
        ("§80.9999(a)(1)(ii)", True), ("§80.9999(a)(1)(iii)", False),
    ]


def test_parser_tells_letter_i_from_roman_i() -> None:
    assert ids("(a) A.\n(h) H.\n(i) I.\n")[-1] == "§80.9999(i)"
    assert ids("(a) A.\n(1) One.\n(i) Roman.\n")[-1] == "§80.9999(a)(1)(i)"


def test_parser_reads_bare_parentheses_as_italic_numbers() -> None:
    assert ids("(a) A.\n(1) One.\n(i) R.\n(A) C.\n(\n(\n(B) D.\n")[-3:] == [
        "§80.9999(a)(1)(i)(A)(1)", "§80.9999(a)(1)(i)(A)(2)", "§80.9999(a)(1)(i)(B)",
    ]


def test_the_seed_sections_hold_the_paragraphs_the_code_cites() -> None:
    real = {p.id for p in PARAGRAPHS}
    for cited in ("§80.1425(i)", "§80.1426(f)(5)(i)(B)", "§80.1426(g)(5)(iv)(B)",
                  "§80.1427(a)(7)(iii)", "§80.1428(a)(5)(ii)", "§80.1429(b)(5)(i)(B)"):
        assert cited in real
    assert "§80.1426(h)" not in real and "§80.1429(f)" not in real


# --- the map's own checks, on hand-made entries ----------------------------------------------

def test_a_whole_entry_covers_its_subparagraphs_unless_they_have_their_own() -> None:
    found = [REG.Paragraph(i, "") for i in ("§80.9(a)", "§80.9(a)(1)", "§80.9(a)(2)", "§80.9(b)")]
    whole = MAP.Entry("§80.9(a)", "A", "missing", reason="none", whole=True)
    own = MAP.Entry("§80.9(a)(2)", "A2", "not a ledger rule", reason="a definition")
    owned = MAP.owners([whole, own], found)
    assert {pid: e.id for pid, e in owned.items()} == {
        "§80.9(a)": "§80.9(a)", "§80.9(a)(1)": "§80.9(a)", "§80.9(a)(2)": "§80.9(a)(2)",
    }  # §80.9(b) has none: the completeness test would name it
    assert MAP.counts([whole, own], found) == {"missing": 2, "not a ledger rule": 1}
    assert not MAP.is_within("§80.9(a)(10)", "§80.9(a)(1)")


def test_an_entry_that_names_no_code_or_no_reason_is_malformed() -> None:
    assert MAP.Entry("§80.9(a)", "A", "enforced", tests=["t"]).problems() == [
        "§80.9(a): enforced paragraphs name their functions and tests"
    ]
    assert MAP.Entry("§80.9(a)", "A", "missing").problems() == [
        "§80.9(a): missing paragraphs say why"
    ]
    assert MAP.Entry("§80.9(a)", "A", "done", reason="x").problems()[0].startswith(
        "§80.9(a): status 'done'"
    )
