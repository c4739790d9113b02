"""Which skips and expected failures a person wrote (issue 35 item 4; decision record 0097).

A verifier's report that lists a skipped or xfailed test is no pass — unless the test's own
source says so: a `skip`, `skipif` or `xfail` mark on the test function, on a class around it,
or in its module's `pytestmark`. Such a mark is the person's choice (the test files are the
person's: rule 14, and the assembled tree, decision record 0086), so it counts as written. A
skip the code under test causes at run time (`pytest.skip()` called from the package, an
import that fails) has no mark in the test's source, and stays no pass.

Pure: source text in, answer out.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

MARKS = frozenset({"skip", "skipif", "xfail"})
_PARAMETERS = re.compile(r"\[.*\]$", re.DOTALL)


def _names_a_mark(node: ast.AST) -> bool:
    """Whether ``node`` (a decorator, a `pytestmark` value) holds `….mark.skip|skipif|xfail`."""
    for inner in ast.walk(node):
        if (
            isinstance(inner, ast.Attribute)
            and inner.attr in MARKS
            and isinstance(inner.value, ast.Attribute | ast.Name)
            and (getattr(inner.value, "attr", None) or getattr(inner.value, "id", None)) == "mark"
        ):
            return True
    return False


def _module_marked(body: Iterable[ast.stmt]) -> bool:
    for statement in body:
        targets: list[ast.expr] = []
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets, value = [statement.target], statement.value
        named = any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets)
        if named and _names_a_mark(value):
            return True
    return False


def declares(source: str, test: str, classes: tuple[str, ...] = ()) -> bool:
    """Whether ``source`` (a test module) marks ``test`` (its name as the report gives it,
    parameters and all) skipped or expected to fail, in the class chain ``classes``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    if _module_marked(tree.body):
        return True
    name = _PARAMETERS.sub("", test)
    body: list[ast.stmt] = tree.body
    for cls in classes:
        found = next(
            (s for s in body if isinstance(s, ast.ClassDef) and s.name == cls),
            None,
        )
        if found is None:
            return False
        if any(_names_a_mark(d) for d in found.decorator_list) or _module_marked(found.body):
            return True
        body = found.body
    for statement in body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef) and statement.name == name:
            return any(_names_a_mark(d) for d in statement.decorator_list)
    return False


def class_chain(file: str, classname: str) -> tuple[str, ...]:
    """The classes a test sits in, from its report's `file` and `classname` (pytest's:
    the module's dotted path, then the classes)."""
    module = file[:-3] if file.endswith(".py") else file
    dotted = module.replace("/", ".")
    if classname == dotted or not classname.startswith(dotted + "."):
        return ()
    return tuple(classname[len(dotted) + 1 :].split("."))


def pytest_plugins(entry_points: str) -> list[str]:
    """The names in the `[pytest11]` section of an `entry_points.txt` (the packaging
    format: ini-like sections of `name = object reference` lines)."""
    names: list[str] = []
    section = ""
    for raw in entry_points.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == "pytest11" and "=" in line:
            name = line.split("=", 1)[0].strip()
            if name and name not in names:
                names.append(name)
    return names
