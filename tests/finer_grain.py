"""Ceilings of grains finer than a block (issue 37, draft decision record 0123): which
features a selector *could* leave out of a change if it knew, besides the blocks each run
executed, the lines it executed — measured by the same `sys.monitoring` recorder
(`edge/blocksets.BOOT`), kept here per feature and file — or the names its executed code
reads. Pure: source texts and executed lines in, a yes/no per feature out. The bench
(`bench/readset.py --blocks`, `tests/seeding.py`) compares each with the truth.

- `statements`: the run executed a *statement* the change touched. A changed line belongs
  to the innermost statement whose lines hold it — a compound statement by its header
  (decorators and `def`/`if`/`for` lines up to its body), a simple one by all its lines (a
  constant folded over lines reports only its first: any line of it counts). A statement
  that compiles to nothing (a docstring, `global`, `pass`, a bare annotation) and an
  inserted one count as executed when the body holding them was entered; an insertion
  between two bodies counts for both. A change of a code object's shape (`shape`: a new
  local, `global`, `yield` — decided by all its lines at once) falls back to the block.
- `names`: for a change that only rebinds names at module or class level (every other
  statement the same), the run executed code — outside the changed module's own body —
  whose bytecode loads one of the rebound names (a global, an attribute: `co_names`), or
  the changed module's body used one outside a plain assignment (then as for blocks).
  Names assigned from a rebound name at module level are rebound too, and so is an
  `import … as` alias of one. Any other change: the block ceiling.
- `names_safe`: `names` with what it needs to be sound against a deliberate break: the
  new value must be a literal (evaluating anything else at import can raise), no rebound
  name is a `__dunder__` (Python reads those itself), and a run that executed code spelling
  a rebound name as a string (`getattr(m, "NAME")`, `__all__`) or using a dynamic lookup
  (`globals`, `vars`, `getattr`, `__dict__`, …) counts as reading it. (`from m import *`
  needs no rule: the names it copies are read under their own names.) Code outside the
  checkout reading a name by reflection (pytest, `dataclasses`, `pickle`) stays unseen.
"""

from __future__ import annotations

import ast
import difflib
import dis
import inspect
import types
from collections.abc import Iterator, Mapping

Lines = Mapping[str, frozenset[int]]  # repository path → lines executed there

_Header = (
    ast.FunctionDef
    | ast.AsyncFunctionDef
    | ast.ClassDef
    | ast.If
    | ast.For
    | ast.AsyncFor
    | ast.While
    | ast.With
    | ast.AsyncWith
    | ast.Try
    | ast.TryStar
    | ast.Match
)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _silent(node: ast.stmt) -> bool:
    """A statement that compiles to no instruction of its own line: no LINE event."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return True  # (a docstring, `...`)
    if isinstance(node, ast.AnnAssign) and node.value is None:
        return True
    return isinstance(node, ast.Global | ast.Nonlocal | ast.Pass)


def _start(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", None) or []
    return min([node.lineno, *(d.lineno for d in decorators)])


def _bodies(node: ast.stmt) -> Iterator[list[ast.stmt]]:
    for field in ("body", "orelse", "finalbody"):
        inner = getattr(node, field, None)
        if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
            yield inner
    for handler in getattr(node, "handlers", None) or []:
        yield handler.body
    for case in getattr(node, "cases", None) or []:
        yield case.body


def _header_end(node: ast.stmt) -> int:
    firsts = [_start(b[0]) for b in _bodies(node)]
    first = min(firsts) if firsts else node.lineno + 1
    return max(node.lineno, first - 1)


class _Body:
    """A list of statements and what holds it (None: the module)."""

    def __init__(self, statements: list[ast.stmt], owner: ast.stmt | None) -> None:
        self.statements = statements
        self.owner = owner

    def span(self) -> tuple[int, int]:
        return _start(self.statements[0]), self.statements[-1].end_lineno or 0


def _locate(body: _Body, line: int) -> tuple[str, object] | None:
    """What holds ``line`` in ``body``: ("stmt", a simple statement), ("header", a compound
    statement), ("body", a body: the line is between its statements), or None (outside)."""
    first, last = body.span()
    if not first <= line <= last:
        return None
    for node in body.statements:
        if not _start(node) <= line <= (node.end_lineno or node.lineno):
            continue
        if not isinstance(node, _Header):
            return ("stmt", node)
        if line <= _header_end(node):
            return ("header", node)
        for inner in _bodies(node):
            found = _locate(_Body(inner, node), line)
            if found is not None:
                return found
        return ("body", _Body(next(_bodies(node)), node))  # (an `else:` line, a comment)
    return ("body", body)


def _hit(first: int, last: int, lines: frozenset[int]) -> bool:
    return any(first <= n <= last for n in lines)


def _entered(body: _Body, lines: frozenset[int], imported: bool) -> bool:
    """Whether the run entered ``body`` (``imported``: it ran the module at all)."""
    if body.owner is None:
        return imported
    first, last = body.span()
    if _hit(first, last, lines):
        return True
    if all(_silent(s) for s in body.statements):
        return _ran(("header", body.owner), lines, imported)
    return False


def _ran(where: tuple[str, object], lines: frozenset[int], imported: bool) -> bool:
    kind, what = where
    if kind == "body":
        assert isinstance(what, _Body)
        return _entered(what, lines, imported)
    assert isinstance(what, ast.stmt)
    if kind == "stmt":
        if _silent(what):
            return imported  # (its body: conservatively, the module ran)
        return _hit(_start(what), what.end_lineno or what.lineno, lines)
    if _hit(_start(what), _header_end(what), lines):
        return True
    if isinstance(what, _DEFS):  # (a signature, a decorator: its calls read it too)
        return _hit(_header_end(what) + 1, what.end_lineno or what.lineno, lines)
    return False


def _neighbour(module: _Body, line: int, step: int, total: int) -> tuple[str, object]:
    """The body an insertion next to ``line`` lands in, judged from that side: the nearest
    line holding code (comments and blank lines skipped); the statement's own body, or the
    body opened by a header ending there."""
    while 1 <= line <= total:
        found = _locate(module, line)
        if found is not None and found[0] != "body":
            kind, what = found
            assert isinstance(what, ast.stmt)
            if kind == "header" and step < 0 and line == _header_end(what):
                return ("body", _Body(next(_bodies(what)), what))
            return ("body", _enclosing(module, what))
        line += step
    return ("body", module)


def _enclosing(body: _Body, target: ast.stmt) -> _Body:
    for node in body.statements:
        if node is target:
            return body
        for inner in _bodies(node):
            found = _enclosing(_Body(inner, node), target)
            if found is not None:
                return found
    return None  # type: ignore[return-value]


def statement_places(old: str, new: str) -> list[tuple[str, object]] | None:
    """Where ``old`` → ``new`` changes code (see `statements`), or None when either does not
    parse."""
    try:
        tree = ast.parse(old)
        ast.parse(new)
    except (SyntaxError, ValueError):
        return None
    olds, news = old.splitlines(), new.splitlines()
    module = _Body(tree.body, None) if tree.body else None
    if module is None:
        return [("body", _Body([], None))]
    places: list[tuple[str, object]] = []
    matcher = difflib.SequenceMatcher(None, olds, news, autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag == "equal":
            continue
        held = [_locate(module, n) for n in range(i1 + 1, i2 + 1)]
        code = [h for h in held if h is not None and h[0] != "body"]
        if code:
            places += code
            continue
        # (an insertion, or only blank lines and comments replaced: between lines i1, i1+1)
        before = _neighbour(module, i1, -1, len(olds))
        after = _neighbour(module, i2 + 1, 1, len(olds))
        same = _locate(module, i1) if i1 else None
        if same is not None and same[0] == "stmt" and same == _locate(module, i2 + 1):
            places.append(same)  # (inside one multi-line statement)
        else:
            places += [before, after]
    return places


def statements(old: str, new: str, lines: frozenset[int] | None, read: bool) -> bool | None:
    """Whether a run that executed ``lines`` of ``old`` (None: its lines are not known; ``read``:
    it read the file at all) executed a statement ``old`` → ``new`` changed; None when the
    change alters a code object's shape (`shape`): a line not executed changed what the
    executed ones do, so the grain cannot judge it (the block ceiling then)."""
    if not read:
        return False
    places = statement_places(old, new)
    if places is None or lines is None:
        return True
    if shape(old) != shape(new):
        return None
    imported = bool(lines)
    return any(_ran(place, lines, imported) for place in places)


# what compiling a function decides from all its lines at once: a generator or coroutine,
# its arguments, which names are its locals, cells and free variables (a new local, a
# `global`, a `yield` on a line never executed changes the lines that are)
_FLAGS = (
    inspect.CO_GENERATOR
    | inspect.CO_COROUTINE
    | inspect.CO_ITERABLE_COROUTINE
    | inspect.CO_ASYNC_GENERATOR
    | inspect.CO_VARARGS
    | inspect.CO_VARKEYWORDS
    | inspect.CO_NESTED
)


def shape(source: str) -> list[tuple[object, ...]] | None:
    """Each code object of ``source`` by qualified name, with what compiling decides from all
    its lines at once (`_FLAGS`, argument counts and names, locals, cells, free variables);
    None when it does not compile."""
    try:
        module = compile(source, "<shape>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    found = []
    for code in _codes(module):
        found.append(
            (
                getattr(code, "co_qualname", code.co_name),
                code.co_flags & _FLAGS,
                code.co_argcount,
                code.co_posonlyargcount,
                code.co_kwonlyargcount,
                tuple(sorted(code.co_varnames)),
                tuple(sorted(code.co_cellvars)),
                tuple(sorted(code.co_freevars)),
            )
        )
    return sorted(found, key=repr)


# -- names ------------------------------------------------------------------------------------


_DYNAMIC = frozenset(
    {"globals", "vars", "getattr", "hasattr", "setattr", "__dict__", "dir", "eval", "exec"}
)


class Rebinding:
    """A change that only rebinds names at module or class level: the rebound names (with
    every name computed from them at module level), whether each new value is a literal, and
    whether the module's body uses one other than to assign it (then it is no rebinding)."""

    def __init__(self, names: frozenset[str], literal: bool) -> None:
        self.names = names
        self.literal = literal


def _assigned(node: ast.stmt) -> list[str] | None:
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets = [node.target]
    else:
        return None
    names: list[str] = []
    for target in targets:
        if not isinstance(target, ast.Name):
            return None
        names.append(target.id)
    return names


def _literal(value: ast.expr) -> bool:
    try:
        ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _pairs(
    old: list[ast.stmt], new: list[ast.stmt], found: list[tuple[ast.stmt, ast.stmt]]
) -> bool:
    if len(old) != len(new):
        return False
    for a, b in zip(old, new, strict=True):
        if ast.dump(a) == ast.dump(b):
            continue
        if isinstance(a, ast.ClassDef) and isinstance(b, ast.ClassDef):
            a_head = ast.ClassDef(a.name, a.bases, a.keywords, [], a.decorator_list)
            b_head = ast.ClassDef(b.name, b.bases, b.keywords, [], b.decorator_list)
            if ast.dump(a_head) != ast.dump(b_head) or not _pairs(a.body, b.body, found):
                return False
            continue
        names_a, names_b = _assigned(a), _assigned(b)
        if names_a is None or names_a != names_b:
            return False
        found.append((a, b))
    return True


def _loads(node: ast.AST) -> set[str]:
    found = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load):
            found.add(inner.id)
        elif isinstance(inner, ast.Attribute):
            found.add(inner.attr)
    return found


def rebinding(old: str, new: str) -> Rebinding | None:
    """The names ``old`` → ``new`` rebinds, or None when the change is anything else."""
    try:
        before, after = ast.parse(old), ast.parse(new)
    except (SyntaxError, ValueError):
        return None
    pairs: list[tuple[ast.stmt, ast.stmt]] = []
    if not _pairs(before.body, after.body, pairs) or not pairs:
        return None
    names = {n for a, _ in pairs for n in _assigned(a) or []}
    literal = all(_literal(b.value) for _, b in pairs if b.value is not None)  # type: ignore[attr-defined]
    changed = {id(a) for a, _ in pairs}
    # (the module's own body, run by every importer: a plain assignment from a rebound name
    # rebinds its target; any other use of one there is a change of what the import does)
    rest = [s for s in _top_level(before.body) if id(s) not in changed]
    grew = True
    while grew:
        grew = False
        for node in rest:
            if isinstance(node, _DEFS[:2]):
                used = _loads(ast.Module([*node.decorator_list], [])) | _loads(node.args)
            elif isinstance(node, ast.ClassDef):
                used = set().union(*(_loads(e) for e in [*node.bases, *node.decorator_list]))
            else:
                used = _loads(node)
            if not used & names:
                continue
            targets = _assigned(node)
            if targets is None:
                return None
            if not set(targets) <= names:
                names |= set(targets)
                grew = True
    return Rebinding(frozenset(names), literal)


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements run at import: the module's and its classes' bodies (functions' not)."""
    for node in body:
        if isinstance(node, ast.ClassDef):
            yield node
            yield from _top_level(node.body)
        elif isinstance(node, _DEFS[:2]):
            yield node
        elif isinstance(node, _Header):
            yield node
            for inner in _bodies(node):
                yield from _top_level(inner)
        else:
            yield node


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, tuple | frozenset):
        for item in value:
            yield from _strings(item)


# (what reads a global or an attribute by name; not a constant, not a function's own local)
_READS = frozenset(
    {
        "LOAD_GLOBAL",
        "LOAD_NAME",
        "LOAD_ATTR",
        "LOAD_METHOD",
        "LOAD_SUPER_ATTR",
        "LOAD_FROM_DICT_OR_GLOBALS",
        "LOAD_FROM_DICT_OR_DEREF",
        "LOAD_DEREF",
        "LOAD_CLASSDEREF",
        "DELETE_GLOBAL",
        "DELETE_NAME",
        "DELETE_ATTR",
    }
)


class CodeReads:
    """Per code object of a file: its lines, the names its bytecode loads (globals,
    attributes, methods; not the names it imports `from`), the strings it holds, and
    whether it imports `*`."""

    def __init__(self, source: str, path: str) -> None:
        self.rows: list[tuple[frozenset[int], frozenset[str], frozenset[str], bool, bool]] = []
        self.aliases: dict[str, str] = {}  # `from m import a as b`: a → b
        try:
            module = compile(source, path, "exec")
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.asname and alias.asname != alias.name:
                        self.aliases[alias.name] = alias.asname
        for code in _codes(module):
            own = {n for _, _, n in code.co_lines() if n is not None}
            if code is not module and len(own) > 1:
                own.discard(code.co_firstlineno)  # (the `def` line runs in the parent)
            loads: set[str] = set()
            star = False
            for ins in dis.get_instructions(code):
                if (
                    ins.opname == "CALL_INTRINSIC_1" and "IMPORT_STAR" in ins.argrepr
                ) or ins.opname == "IMPORT_STAR":
                    star = True
                elif ins.opname in _READS and isinstance(ins.argval, str):
                    loads.add(ins.argval)
            strings = {s for c in code.co_consts for s in _strings(c)}
            # (a module's or a class's body runs at import: not optimized)
            at_import = not code.co_flags & inspect.CO_OPTIMIZED
            self.rows.append(
                (frozenset(own), frozenset(loads), frozenset(strings), star, at_import)
            )


def names(
    rebound: Rebinding | None,
    changed_path: str,
    reads: Mapping[str, CodeReads],
    lines: Lines,
    safe: bool,
) -> bool | None:
    """Whether a run that executed ``lines`` (per file; ``reads``: each file's code objects)
    read a rebound name (see the module's docstring); None when the grain cannot judge the
    change (not a rebinding, or, ``safe``, one it cannot prove safe): the block ceiling then."""
    if rebound is None:
        return None
    if safe and (not rebound.literal or any(_dunder(n) for n in rebound.names)):
        return None
    wanted = set(rebound.names)
    for alias in reads.values():  # (an alias of a rebound name is one too)
        wanted |= {b for a, b in alias.aliases.items() if a in wanted}
    for path, hit in lines.items():
        found = reads.get(path)
        if found is None:
            if path.endswith(".py"):
                return True  # (code it ran that we could not read: it could)
            continue
        for own, loads, strings, _star, is_module in found.rows:
            if not own & hit:
                continue
            if is_module and path == changed_path:
                continue  # (the module's and its classes' bodies: judged by `rebinding`)
            if loads & wanted:
                return True
            # (`from m import *` copies a rebound name under its own name: its readers load
            # that name, so it needs no rule of its own — a namespace read by a computed name
            # afterwards is `_DYNAMIC`'s)
            if safe and (strings & wanted or loads & _DYNAMIC):
                return True
    return False


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")
