"""The package's shape, held: no import cycle (imports inside functions counted), and long code says why.

Modules are cut by concept, never by count: a module past about 600 lines is allowed, but its
docstring says why it is one idea (a paragraph starting "Long:"), as a function past 60 lines
does in a "# long:" comment. Complexity itself is capped by ruff (C901, PLR0912, PLR0915).
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import grimp
import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ask_mcp"
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
