"""The rule catalogue: docs/rules.md is current, every rule is tested, every raise is declared,
and every rule is in the registry, in the module of the section its citation names."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from ledger.rules import registry
from ledger.rules.catalogue import Rule
from ledger.rules.registry import RULES, SECTION_MODULES, all_rules, enforced_in

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


def rule_assignments(tree: ast.Module) -> list[str]:
    """The names bound at module level to `Rule(...)`."""
    return [
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "Rule"
        for target in node.targets
        if isinstance(target, ast.Name)
    ]


def test_every_rule_object_under_ledger_is_the_registered_one() -> None:
    """A `Rule` any module of the package holds is in the registry, under its own id."""
    found = 0
    for name, _tree in ledger_modules():
        for value in vars(importlib.import_module(name)).values():
            if isinstance(value, Rule):
                found += 1
                assert RULES.get(value.id) is value, f"{name} holds {value.id}, not registered"
    assert found >= len(RULES)


def test_every_declared_rule_is_in_its_modules_rules() -> None:
    """`X = Rule(...)` in a module puts X in that module's `RULES`, and the module is a section
    module of the registry; nothing else declares rules."""
    declaring = set()
    for name, tree in ledger_modules():
        names = rule_assignments(tree)
        if names:
            module = importlib.import_module(name)
            declaring.add(module)
            listed = {id(r) for r in module.RULES}
            assert [n for n in names if id(getattr(module, n)) not in listed] == [], name
    assert declaring == set(SECTION_MODULES)


def section_of(module: str) -> str:
    """`ledger.rules.s1428_rins` or `ledger.rules.s1426.delayed` → `80.1428` / `80.1426`."""
    found = re.fullmatch(r"ledger\.rules\.s(\d{4})(?:_[a-z0-9_]+)?(?:\.[a-z0-9_]+)?", module)
    assert found, f"{module} is not named for a section"
    return f"80.{found.group(1)}"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.id)
def test_a_rule_is_enforced_in_the_module_of_its_section(rule: Rule) -> None:
    assert rule.section == section_of(enforced_in(rule)), (
        f"{rule.id} cites {rule.citation} but is declared in {enforced_in(rule)}"
    )


def test_section_of_reads_modules_and_packages() -> None:
    assert section_of("ledger.rules.s1428_rins") == "80.1428"
    assert section_of("ledger.rules.s1426.delayed") == "80.1426"
    assert Rule("X", "§80.1425(h)-(i)", "").section == "80.1425"
    with pytest.raises(AssertionError):
        section_of("ledger.domain.rin")


def test_the_registry_refuses_two_rules_with_one_id(monkeypatch: pytest.MonkeyPatch) -> None:
    from ledger.rules import s1428_rins

    monkeypatch.setattr(registry, "SECTION_MODULES", (s1428_rins, s1428_rins))
    with pytest.raises(ValueError, match=r"RINS-NOT-HELD declared in ledger\.rules\.s1428_rins"):
        registry._gather()
    assert len({r.id for r in all_rules()}) == len(all_rules()) == len(RULES)


def rule_raisers(tree: ast.Module) -> list[ast.FunctionDef]:
    """Module-level functions that call `.check(...)` or `.violation(...)` of a rule constant
    (`SPLIT_SUM`) or of a parameter annotated `Rule`."""
    def raises(node: ast.FunctionDef) -> bool:
        params = {a.arg for a in node.args.args + node.args.kwonlyargs
                  if a.annotation is not None and ast.unparse(a.annotation) == "Rule"}
        return any(
            isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr in ("check", "violation", "require")
            and isinstance(call.func.value, ast.Name)
            and (call.func.value.id.isupper() or call.func.value.id in params)
            for call in ast.walk(node)
        )

    return [node for node in tree.body if isinstance(node, ast.FunctionDef) and raises(node)]


def test_every_rule_check_function_cites_its_paragraph() -> None:
    """`grep -rn "§80.1428(a)(4)" ledger/rules` lands on the function that enforces it."""
    uncited, seen = [], 0
    for name, tree in ledger_modules():
        if not name.startswith("ledger.rules.s"):
            continue
        for function in rule_raisers(tree):
            seen += 1
            if "§80." not in (ast.get_docstring(function) or ""):
                uncited.append(f"{name}.{function.name}")
    assert uncited == []
    assert seen >= 30


def test_each_rule_citation_lands_on_a_function_of_its_module() -> None:
    """For every rule, some function of the module declaring it names the rule's citation in its
    docstring (a paragraph or its section), so a grep for the citation finds the check."""
    trees = dict(ledger_modules())
    missing = []
    for rule in all_rules():
        docs = " ".join(
            ast.get_docstring(f) or "" for f in rule_raisers(trees[enforced_in(rule)])
        )
        if rule.citation.split("-")[0] not in docs and rule.citation not in docs:
            missing.append((rule.id, rule.citation, enforced_in(rule)))
    assert missing == []


def test_rules_and_violations_are_made_only_where_declared() -> None:
    """A `RuleViolation` built but by `Rule.violation`, or a `Rule` built but as a section
    module's constant, would escape the catalogue."""
    offenders = [
        (name, node.lineno)
        for name, tree in ledger_modules()
        if name != "ledger.rules.catalogue"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("Rule", "RuleViolation")
        and not any(node is n.value for n in tree.body if isinstance(n, ast.Assign))
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
                and child.func.attr in ("violation", "check", "require")
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
    """`check_volume_named(violated, ...)`: the rules passed as arguments are declared."""
    from ledger.rules import s1429_separation as sep

    passed = [*sep.PER_GALLON.values(), *sep.VOLUME_RULES.values()]
    assert passed and all(RULES[r.id] is r for r in passed)
