"""No function in the package runs over 100 lines (the house style: small components, an
``elaborate`` short enough to read at once): a longer one wants its stages as components or
helpers. Nested functions count in their own right and in the function around them."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "gravfm"
MOST_LINES = 100


def long_functions(package=PACKAGE, most=MOST_LINES):
    """``[(lines, "path:line name")]`` of the functions (methods and nested ones too) longer than ``most``."""
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > most:
                    found.append((lines, f"{path.relative_to(package.parent)}:{node.lineno} {node.name}"))
    return found


def test_no_function_is_over_100_lines():
    assert long_functions() == []


def test_the_check_sees_a_long_function(tmp_path):
    body = "\n".join(f"        x{k} = {k}" for k in range(MOST_LINES))   # inner: 101 lines, outer: 102
    (tmp_path / "long.py").write_text(f"def outer():\n    def inner():\n{body}\n")
    at_most = "\n".join(f"    x{k} = {k}" for k in range(MOST_LINES - 1))   # 100 lines: allowed
    (tmp_path / "short.py").write_text(f"def short():\n{at_most}\n")
    found = long_functions(tmp_path)
    assert found == [(102, f"{tmp_path.name}/long.py:1 outer"), (101, f"{tmp_path.name}/long.py:2 inner")]
