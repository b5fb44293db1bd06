"""The layers of docs/architecture.md hold at import time: every import of the package (at the top
of a module or inside a function) goes down the layer order or stays in its package, no two
packages import each other, and an import is inside a function only to defer a heavy dependency
(said in a comment) or an optional one (in a ``try``)."""

import ast
import functools
import re
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "gravfm"
DOC = PACKAGE.parent / "docs" / "architecture.md"


def layer_order():
    """``{package or base module: level}`` from the "Import layers" list of docs/architecture.md."""
    text = DOC.read_text()
    section = text[text.index("## Import layers"):]
    rows = re.findall(r"^\s*(\d+)\.\s+(.+)$", section, re.M)
    assert rows, "docs/architecture.md has no numbered import layers"
    levels = {}
    for number, names in rows:
        for name in re.findall(r"`(gravfm/[\w./]+)`", names):
            levels[name.removeprefix("gravfm/").removesuffix(".py").removesuffix("/")] = int(number)
    return levels


def unit_of(module):
    """The unit a module belongs to: its package under gravfm, a base module, or the front door."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in ("__init__", "__main__"):
        return "__init__"
    return parts[1]


def module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def imports(path):
    """``(node, target module, inside a function, inside a try)`` for every import of gravfm."""
    module, is_package = module_name(path), path.name == "__init__.py"
    found = []

    def visit(node, in_function, in_try):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, True, in_try)
            elif isinstance(child, ast.Try):
                visit(child, in_function, True)
            elif isinstance(child, ast.Import):
                found.extend((child, alias.name, in_function, in_try) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = module.split(".") if is_package else module.split(".")[:-1]
                    base = base[:len(base) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module
                # `from package import submodule` imports the submodule
                names = [f"{target}.{alias.name}" for alias in child.names]
                found.extend((child, name if _is_module(name) else target, in_function, in_try) for name in names)
            else:
                visit(child, in_function, in_try)
    visit(ast.parse(path.read_text()), False, False)
    return [(node, target, f, t) for node, target, f, t in found if target.split(".")[0] == "gravfm"] + \
        [(node, target, f, t) for node, target, f, t in found if target.split(".")[0] != "gravfm" and f]


def _is_module(name):
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


FILES = sorted(p for p in PACKAGE.rglob("*.py"))


def arrows(files=FILES):
    """``{(from unit, to unit): [where, ...]}`` over every gravfm import of ``files``."""
    found = {}
    for path in files:
        source = unit_of(module_name(path))
        for node, target, _, _ in imports(path):
            if target.split(".")[0] != "gravfm":
                continue
            destination = unit_of(target)
            if destination != source:
                found.setdefault((source, destination), []).append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    return found


def test_every_unit_has_a_layer():
    levels = layer_order()
    units = {unit_of(module_name(path)) for path in FILES}
    assert not units - set(levels), f"not in docs/architecture.md's import layers: {sorted(units - set(levels))}"


def upward(files=FILES):
    """The imports of ``files`` against the layer order, one line each."""
    levels = layer_order()
    return [f"{a} (layer {levels[a]}) -> {b} (layer {levels[b]}): {', '.join(where[:3])}"
            for (a, b), where in sorted(arrows(files).items()) if levels[a] < levels[b]]


def test_imports_go_down_the_layers():
    found = upward()
    assert not found, "imports against the layer order:\n" + "\n".join(found)


def test_no_cycle_between_packages():
    edges = {}
    for a, b in arrows():
        edges.setdefault(a, set()).add(b)

    def reaches(start, goal):
        seen, stack = set(), [start]
        while stack:
            unit = stack.pop()
            if unit == goal:
                return True
            if unit not in seen:
                seen.add(unit)
                stack.extend(edges.get(unit, ()))
        return False
    cycles = sorted(f"{a} <-> {b}" for a in edges for b in edges[a] if reaches(b, a))
    assert not cycles, "packages that import each other: " + ", ".join(cycles)


def test_function_level_imports_say_why():
    # Only a heavy or optional dependency is imported inside a function: deferred with a comment
    # saying so, or in a try (optional); everything else is imported at the top.
    unexplained = []
    for path in FILES:
        lines = path.read_text().splitlines()
        for node, target, in_function, in_try in imports(path):
            if not in_function or in_try:
                continue
            here = " ".join(lines[node.lineno - 2:node.end_lineno])
            if "# deferred" not in here:
                unexplained.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {ast.unparse(node)}")
    assert not unexplained, "function-level imports without a reason:\n" + "\n".join(sorted(set(unexplained)))


def test_the_test_sees_an_upward_arrow(tmp_path, monkeypatch):
    # A model module importing the gateware, even inside a function, is what the test must catch.
    bad = tmp_path / "gravfm" / "model" / "bad.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("def f():\n    from ..hw.fpga import FpgaTop  # deferred: Amaranth\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path / "gravfm")
    assert [line.split(":")[0] for line in upward([bad])] == ["model (layer 6) -> hw (layer 7)"]
