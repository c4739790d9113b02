"""Python code blocks and their fingerprints: what a verifier executed, at the grain of a
function (decision record 0116, after pytest-testmon's method).

A module's blocks are its functions and methods — each outermost ``def`` with everything
nested in it, named by its qualified name (``Class.method``) — and the module block
(`MODULE`): everything run when the module is imported — imports, globals, class bodies,
decorators, default values, every method's signature, and each module-level function that
something could be looking up by name (`_skeleton`) — with every function body left out. A
block's fingerprint is a hash of its syntax tree (formatting and comments do not count; a
docstring does).

So an edit inside one function changes that function's fingerprint and no other; adding a
plain function nothing refers to changes nothing else; an edit of anything run at import (a
new import, a global, a decorator, a function that shadows a name) changes the module block,
which every run that imported the module executed. Pure: source text in, names and
fingerprints out.
"""

from __future__ import annotations

import ast
import bisect
import hashlib
from collections.abc import Iterable, Iterator, Mapping
from typing import NamedTuple

MODULE = "<module>"

_Function = ast.FunctionDef | ast.AsyncFunctionDef


class Block(NamedTuple):
    name: str
    first: int  # the first line of its body (lines before it run when the module does)
    last: int
    fingerprint: str


def _digest(node: ast.AST) -> str:
    text = ast.dump(node, annotate_fields=False, include_attributes=False)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()


_NESTED = ("body", "orelse", "finalbody")


def _functions(body: Iterable[ast.stmt], prefix: str) -> Iterator[tuple[str, _Function]]:
    """The outermost functions of ``body``: methods of classes (at any depth of classes)
    included, functions nested in functions not (they are part of theirs)."""
    for node in body:
        if isinstance(node, _Function):
            yield f"{prefix}{node.name}", node
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node.body, f"{prefix}{node.name}.")
        elif isinstance(node, _Compound):
            # (a function defined under `if TYPE_CHECKING:` or `try:` is the module's too)
            for inner in _inner_bodies(node):
                yield from _functions(inner, prefix)


_Compound = ast.If | ast.Try | ast.With | ast.For | ast.While | ast.AsyncFor | ast.AsyncWith


def _inner_bodies(node: ast.stmt) -> Iterator[list[ast.stmt]]:
    for field in _NESTED:
        inner = getattr(node, field, None)
        if isinstance(inner, list):
            yield inner
    for handler in getattr(node, "handlers", None) or []:
        yield handler.body


def _referenced(tree: ast.Module) -> set[str]:
    """Names the module's code could resolve to one of its functions: every name it uses or
    binds (a new function of such a name shadows or replaces something), the builtins, and
    every string that could name one (`__all__`, `getattr(module, "f")`)."""
    import builtins

    found = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.add(node.value)
        elif isinstance(node, ast.alias):
            found.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.Global | ast.Nonlocal):
            found.update(node.names)
    return found


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _skeleton(body: list[ast.stmt], in_class: bool, referenced: set[str]) -> list[ast.stmt]:
    """``body`` as the module block sees it: every function's body left out; a module-level
    function that nothing could be looking up — not decorated, no default values, not a
    `__name__` the interpreter calls, its name used nowhere in the module (`_referenced`) —
    left out whole, so adding one to a shared
    module touches no run that did not execute it. Methods always stay (a new method can
    override an inherited one that some run executed)."""
    kept: list[ast.stmt] = []
    for node in body:
        if isinstance(node, _Function):
            args = node.args
            looked_up = (
                in_class
                or _dunder(node.name)  # (Python looks these up itself: `__getattr__`, `__dir__`)
                or node.decorator_list
                or args.defaults
                or any(d is not None for d in args.kw_defaults)
                or node.name in referenced
            )
            if looked_up:
                node.body = []
                kept.append(node)
            continue
        if isinstance(node, ast.ClassDef):
            node.body = _skeleton(node.body, True, referenced)
        elif isinstance(node, _Compound):
            for field in _NESTED:
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    setattr(node, field, _skeleton(inner, in_class, referenced))
            for handler in getattr(node, "handlers", None) or []:
                handler.body = _skeleton(handler.body, in_class, referenced)
        kept.append(node)
    return kept


def blocks(source: str) -> list[Block] | None:
    """Every block of ``source``, the module block first; None when it does not parse (every
    run that executed it counts as touched by any change)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    found: list[Block] = []
    seen: dict[str, int] = {}
    for name, node in _functions(tree.body, ""):
        count = seen.get(name, 0)
        seen[name] = count + 1
        unique = name if not count else f"{name}#{count + 1}"  # (redefined: each its own)
        first = node.body[0].lineno if node.body else node.lineno
        found.append(Block(unique, first, node.end_lineno or node.lineno, _digest(node)))
    referenced = _referenced(tree) | {n for n, c in seen.items() if c > 1}
    tree.body = _skeleton(tree.body, False, referenced)
    return [Block(MODULE, 1, 1, _digest(tree)), *found]


def fingerprints(source: str) -> dict[str, str] | None:
    """Each block's fingerprint by name; None when ``source`` does not parse."""
    found = blocks(source)
    return None if found is None else {b.name: b.fingerprint for b in found}


def executed(source: str, lines: Iterable[int]) -> dict[str, str] | None:
    """The blocks the executed ``lines`` of ``source`` belong to, with their fingerprints:
    a line inside a function's body is that function's, any other line the module's. None
    when ``source`` does not parse."""
    found = blocks(source)
    if found is None:
        return None
    module, functions = found[0], sorted(found[1:], key=lambda b: b.first)
    # (a module whose code ran was imported: its module block ran, whatever lines say)
    hit: dict[str, str] = {module.name: module.fingerprint}
    starts = [b.first for b in functions]
    for line in lines:
        at = bisect.bisect_right(starts, line) - 1
        # (functions do not overlap: the outermost ones of a module follow each other)
        block = functions[at] if at >= 0 and functions[at].last >= line else module
        hit[block.name] = block.fingerprint
    return hit


def unchanged(ran: Mapping[str, str], now: Mapping[str, str] | None) -> bool:
    """Whether every block a run executed (``ran``: name → fingerprint then) is the same in
    the file now (``now``; None: it does not parse, or is gone)."""
    return now is not None and all(now.get(name) == print_ for name, print_ in ran.items())
