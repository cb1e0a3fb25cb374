"""The rule catalogue: docs/rules.md is current, every rule is tested, every raise is declared."""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from ledger.rules import RULE_MODULES
from ledger.rules.catalogue import RULES, Rule, all_rules

ROOT = Path(__file__).resolve().parents[2]
LEDGER = ROOT / "ledger"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "rules_catalogue", ROOT / "scripts" / "rules_catalogue.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ledger_modules() -> list[tuple[str, ast.Module]]:
    """(dotted module name, parsed source) of every module under ledger/."""
    out = []
    for path in sorted(LEDGER.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out.append((name, ast.parse(path.read_text(encoding="utf-8"))))
    return out


def test_docs_rules_md_is_the_scripts_output() -> None:
    expected = load_script().render()
    actual = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert actual == expected, (
        "docs/rules.md is out of date; regenerate it with "
        "`python scripts/rules_catalogue.py > docs/rules.md`"
    )


def test_mentions_matches_whole_ids_only() -> None:
    script = load_script()
    assert script.mentions("RIN-BATCH", '"RIN-BATCH"')
    assert not script.mentions("RIN-BATCH", '"RIN-BATCH-UNIQUE"')
    assert not script.mentions("RIN-D", '"CMP-RIN-D"')


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.id)
def test_every_rule_has_a_test_file_naming_it(rule: Rule) -> None:
    script = load_script()
    assert script.test_files(rule, script.read_tests()), (
        f"no test file mentions {rule.id} ({rule.citation}); add a test that breaks it"
    )


@pytest.mark.parametrize("name", RULE_MODULES)
def test_every_rules_module_imports(name: str) -> None:
    module = importlib.import_module(name)
    declared = [v for v in vars(module).values() if isinstance(v, Rule)]
    assert declared, f"{name} declares no rule"


def test_every_module_that_declares_a_rule_is_in_rule_modules() -> None:
    declaring = {
        name
        for name, tree in ledger_modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "rule"
    }
    assert declaring <= set(RULE_MODULES), declaring - set(RULE_MODULES)


def test_rules_and_violations_are_made_only_by_the_catalogue() -> None:
    """A `Rule` or `RuleViolation` built by hand would escape the catalogue."""
    offenders = [
        (name, node.lineno)
        for name, tree in ledger_modules()
        if name != "ledger.rules.catalogue"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("Rule", "RuleViolation")
    ]
    assert offenders == []


def receivers(tree: ast.Module) -> list[tuple[ast.expr, ast.FunctionDef | None, int]]:
    """Every `X.violation(...)` / `X.check(...)` receiver with its enclosing function."""
    found: list[tuple[ast.expr, ast.FunctionDef | None, int]] = []

    def visit(node: ast.AST, function: ast.FunctionDef | None) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child if isinstance(child, ast.FunctionDef) else function
            if (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Attribute)
                and child.func.attr in ("violation", "check")
            ):
                found.append((child.func.value, function, child.lineno))
            visit(child, inner)

    visit(tree, None)
    return found


def resolve(module: ModuleType, expr: ast.expr) -> object:
    """The module-level object an expression like `NAME` or `alias.NAME` names, else None."""
    if isinstance(expr, ast.Name):
        return vars(module).get(expr.id)
    if isinstance(expr, ast.Attribute):
        owner = resolve(module, expr.value)
        return getattr(owner, expr.attr, None) if owner is not None else None
    return None


def local_rules(module: ModuleType, function: ast.FunctionDef, name: str) -> list[object] | None:
    """The module-level objects a local `name` may be bound to, or None for an annotated
    `Rule` parameter (whose callers pass declared rules, checked where they are named)."""
    params = function.args.args + function.args.kwonlyargs
    for arg in params:
        if arg.arg == name:
            annotation = ast.unparse(arg.annotation) if arg.annotation else ""
            return None if annotation == "Rule" else []
    bound: list[object] = []
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            bound.extend(
                resolve(module, ref)
                for ref in ast.walk(node.value)
                if isinstance(ref, ast.Name | ast.Attribute)
            )
    return [obj for obj in bound if isinstance(obj, Rule)]


def raised_rules(
    module: ModuleType, expr: ast.expr, function: ast.FunctionDef | None
) -> list[object] | None:
    """The rules a `.violation`/`.check` receiver may be; None when it is no rule at all
    (a `.check` of another object, or an annotated `Rule` parameter)."""
    target = resolve(module, expr)
    if target is not None:
        return [target] if isinstance(target, Rule) else None
    if isinstance(expr, ast.Name) and function is not None:
        return local_rules(module, function, expr.id)
    return []


def test_every_raised_rule_is_declared() -> None:
    all_rules()
    declared = {id(r) for r in RULES.values()}
    undeclared, checked = [], 0
    for name, tree in ledger_modules():
        if name == "ledger.rules.catalogue":
            continue  # `Rule.check` raises `self.violation`
        module = importlib.import_module(name)
        for expr, function, line in receivers(tree):
            rules = raised_rules(module, expr, function)
            checked += rules is not None
            if rules is not None and (not rules or any(id(r) not in declared for r in rules)):
                undeclared.append((name, line, ast.unparse(expr)))
    assert undeclared == []
    assert checked >= len(RULES) // 2  # the walk found the raises, it did not pass vacuously


def test_rule_parameters_are_given_declared_rules() -> None:
    """`_lookup(..., EMTS_SEPARATION_REASON, ...)`: rules passed as arguments are declared."""
    import ledger.domain.emts as emts

    assert emts.EMTS_SEPARATION_REASON is RULES["EMTS-SEPARATION-REASON"]
    assert emts.EMTS_RETIREMENT_REASON is RULES["EMTS-RETIREMENT-REASON"]
