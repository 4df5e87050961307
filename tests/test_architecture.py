"""The package's shape, held: no import cycle (imports inside functions counted), long code says why, tests mirror the tree.

Modules are cut by concept, never by count: a module past about 600 lines is allowed, but its
docstring says why it is one idea (a paragraph starting "Long:"), as a function past 60 lines
does in a "# long:" comment. Complexity itself is capped by ruff (C901, PLR0912, PLR0915).

tests/ mirrors the tree: every module of the engine and the wire (and the /mcp endpoint) has an
in-process test module at the mirrored path, and most product modules of any size have a
test module named for them, so a newcomer finds a module's tests by its name.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ask_mcp"
TESTS = ROOT / "tests"
PRODUCT = (PACKAGE, ROOT / "askserver")
"""The product's packages, whose modules the tests are named for."""
MIRRORED = (PACKAGE / "server", PACKAGE / "protocol", PACKAGE / "transports" / "http.py")
"""The engine, the wire and the /mcp endpoint: each module has its test module at the mirrored path."""
NAMED_SHARE = 0.70
"""The share of product modules over NAMED_MIN_LINES lines with a test module named for them."""
NAMED_MIN_LINES = 40
"""Modules this short (a constant, a thin command) may be tested through the modules that use them."""
MODULE_BUDGET = 600
"""Lines past which a module's docstring must say why it stays one module."""
MODULE_REASON = "Long:"
"""How a long module's docstring starts the paragraph that says why."""
MAX_FUNCTION_LINES = 60
LONG_REASON = "# long:"
"""A function past MAX_FUNCTION_LINES says why in a comment starting so, within its first lines."""


def test_the_package_has_no_import_cycle_counting_imports_inside_functions() -> None:
    # grimp reads every import statement, those inside functions and under TYPE_CHECKING too;
    # the standard library's topological sort names a cycle if one exists.
    graph = grimp.build_graph("ask_mcp", exclude_type_checking_imports=False)
    imports = {
        module: {
            imported
            for imported in graph.find_modules_directly_imported_by(module)
            if imported.startswith("ask_mcp")
        }
        for module in graph.modules
        if module.startswith("ask_mcp")
    }
    try:
        graphlib.TopologicalSorter(imports).prepare()
    except graphlib.CycleError as exc:
        pytest.fail(f"import cycle: {' -> '.join(exc.args[1])}")


def test_a_module_over_about_600_lines_says_why_in_its_docstring() -> None:
    unexplained = []
    for path in PACKAGE.rglob("*.py"):
        if "migrations" in path.parts:
            continue
        source = path.read_text()
        if len(source.splitlines()) <= MODULE_BUDGET:
            continue
        docstring = ast.get_docstring(ast.parse(source)) or ""
        if not any(line.startswith(MODULE_REASON) for line in docstring.splitlines()):
            unexplained.append(str(path.relative_to(PACKAGE)))
    assert unexplained == []


def test_a_function_over_60_lines_says_why() -> None:
    unexplained = []
    for path in PACKAGE.rglob("*.py"):
        if "migrations" in path.parts:
            continue
        source = path.read_text()
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            assert node.end_lineno is not None
            length = node.end_lineno - node.lineno + 1
            head = lines[node.lineno - 1 : node.lineno + 12]
            if length > MAX_FUNCTION_LINES and not any(LONG_REASON in line for line in head):
                unexplained.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}")
    assert unexplained == []


def test_no_module_under_tests_imports_a_test_module() -> None:
    # What suites share lives in tests/support/ (plain modules) and conftest.py (fixtures): a test
    # module used as a library breaks its users when it is renamed or skipped, and pytest would
    # collect its tests twice over if it were ever imported under another name. Every import
    # counts, those inside functions and under TYPE_CHECKING too.
    tests = Path(__file__).resolve().parent
    offending = []
    for path in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                # `from tests.team import test_auth` imports a module too.
                targets = [module, *(f"{module}.{alias.name}" for alias in node.names)]
            else:
                continue
            offending += [
                f"{path.relative_to(tests)}:{node.lineno} {target.lstrip('.')}"
                for target in targets
                if target.rsplit(".", 1)[-1].startswith("test_")
            ]
    assert offending == [], "move what they share into tests/support/"


def _reexports_only(source: str) -> bool:
    """A package's __init__ that holds no code of its own: a docstring, imports and __all__."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if all(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                continue
        return False
    return True


def _tested_modules(root: Path) -> dict[Path, str]:
    """Each module with code under root, with the name its test module carries (a package's is its folder's)."""
    paths = [root] if root.is_file() else sorted(root.rglob("*.py"))
    modules = {}
    for path in paths:
        if "migrations" in path.parts:
            continue
        if path.name == "__init__.py":
            if _reexports_only(path.read_text()):
                continue
            modules[path] = f"test_{path.parent.name}.py"
        else:
            modules[path] = f"test_{path.stem}.py"
    return modules


def test_every_engine_wire_and_endpoint_module_has_a_test_module_at_the_mirrored_path() -> None:
    # ask_mcp/server/asking/parked.py -> tests/server/asking/test_parked.py; a package's own code
    # (ask_mcp/server/catalog/__init__.py) -> tests/server/catalog/test_catalog.py.
    missing = []
    for root in MIRRORED:
        for path, test_name in _tested_modules(root).items():
            folder = TESTS / path.parent.relative_to(PACKAGE)
            if not (folder / test_name).is_file():
                missing.append(str((folder / test_name).relative_to(ROOT)))
    assert missing == [], f"add these test modules: {missing}"


def test_most_product_modules_over_40_lines_have_a_test_module_named_for_them() -> None:
    named = {path.name for path in TESTS.rglob("test_*.py")}
    modules = {
        path: test_name
        for root in PRODUCT
        for path, test_name in _tested_modules(root).items()
        if len(path.read_text().splitlines()) > NAMED_MIN_LINES
    }
    missing = sorted(str(p.relative_to(ROOT)) for p, name in modules.items() if name not in named)
    share = 1 - len(missing) / len(modules)
    assert share >= NAMED_SHARE, (
        f"{share:.0%} of {len(modules)} modules have a test_<module>.py, under {NAMED_SHARE:.0%}; "
        f"without one: {missing}"
    )
