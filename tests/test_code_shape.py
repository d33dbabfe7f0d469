"""The code's shape rules (issue 13): every function in calc/ and hooks/ fits on one screen.

A function longer than :data:`SCREEN` lines must say why in its docstring, with a sentence
beginning "Longer than a screen:"; none does today.
"""

from __future__ import annotations

import ast

import pytest

from tests.support import ROOT

SCREEN = 60
SOURCES = sorted([*ROOT.glob("calc/**/*.py"), *ROOT.glob("hooks/**/*.py")])


def long_functions(source: str) -> list[tuple[str, int]]:
    """(name, lines) of each function longer than SCREEN lines whose docstring does not say why."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1
            if lines > SCREEN and "Longer than a screen:" not in (ast.get_docstring(node) or ""):
                found.append((node.name, lines))
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_function_fits_on_one_screen(path):
    assert long_functions(path.read_text(encoding="utf-8")) == []


def test_a_long_function_is_found_unless_its_docstring_says_why():
    body = "".join(f"    x{i} = {i}\n" for i in range(SCREEN))
    assert long_functions(f"def f():\n{body}") == [("f", SCREEN + 1)]
    assert long_functions(f'def f():\n    """Longer than a screen: one table."""\n{body}') == []
    assert long_functions(f"def f():\n{body[:-len('    x59 = 59')-1]}") == []
