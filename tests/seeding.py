"""Seeded changes of a real project, generated from its source, and the selection measured
against them at both grains (decision records 0071 and 0116; issue 37).

A *seed* is one change of the project's tree. Besides the hand-written ones of each project
(`slugify_project.SEEDS`, `markupsafe_project.SEEDS`), three kinds are generated here:

- `FUNCTION_RAISES`: for every function and method of the package, its body made to raise
  first thing — a change of that function's block and of no other (checked with
  `core.blocks`: a seed that moved any other fingerprint is an error);
- `MODULE`: for every assignment of the package at module or class level whose value holds a
  literal, that literal changed (a string lengthened, a number moved, a flag flipped) — a
  change of the module block alone;
- `FILE`: every Python file of the package and of its tests made unparsable.

`measure` applies each seed in turn and records which features the read-set map selects with
file-level sets and with block-level sets (the same recorded sets, their blocks ignored or
used: `SHIFTKIT_BLOCKS` off or on at selection), which verifiers really fail on the seeded
tree, and which features *executed* a block the seed changed (the selection any selector of
executed blocks must make: the ceiling of its precision).
"""

from __future__ import annotations

import ast
import os
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import finer_grain

from shiftkit.core import blocks

FILE = "file-wide break"
FUNCTION_RAISES = "function: raises"
FUNCTION_EDIT = "function: subtle edit"
MODULE = "module level"
TEST = "test code or data"
KINDS = (FILE, FUNCTION_RAISES, FUNCTION_EDIT, MODULE, TEST)

RAISE = "raise RuntimeError('seeded')"
UNPARSABLE = "this is ( not valid\n"


class Seed(NamedTuple):
    """One seeded change of the project: ``path`` rewritten by replacing ``old`` (once, it
    must be there) with ``new``; ``old`` None: ``new`` is the whole text of a new file; ``new``
    None: the file deleted. ``kind``: what sort of change it is (`KINDS`)."""

    name: str
    path: str
    old: str | None
    new: str | None
    kind: str = FILE


# -- seeds from the source ------------------------------------------------------------------


def _offsets(source: str) -> tuple[bytes, list[int]]:
    """The source as UTF-8 and the byte offset each line starts at (ast's columns are
    UTF-8 byte offsets)."""
    data = source.encode("utf-8")
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return data, starts


def _changed(old: str, new: str) -> set[str]:
    before, after = blocks.fingerprints(old), blocks.fingerprints(new)
    if before is None or after is None:
        raise ValueError("a seed must leave the file parsable")
    return {n for n in before.keys() | after.keys() if before.get(n) != after.get(n)}


def function_seeds(path: str, source: str) -> list[Seed]:
    """For each function and method of ``source`` (the blocks of `core.blocks`), the file
    with that function's body raising first thing; every seed changes its block alone."""
    found = blocks.blocks(source)
    if found is None:
        return []
    data, starts = _offsets(source)
    first_statement: dict[int, ast.stmt] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first_statement.setdefault(node.body[0].lineno, node.body[0])
    seeds = []
    for block in found[1:]:
        statement = first_statement[block.first]
        at = starts[statement.lineno - 1] + statement.col_offset
        line_start = starts[statement.lineno - 1]
        if data[line_start:at].strip():  # (`def f(): ...`: the body on the header's line)
            inserted = f"{RAISE}; ".encode()
        else:
            inserted = f"{RAISE}\n".encode() + b" " * statement.col_offset
        new = (data[:at] + inserted + data[at:]).decode("utf-8")
        changed = _changed(source, new)
        if changed != {block.name}:
            raise ValueError(f"{path}: raising in {block.name} changed {sorted(changed)}")
        seeds.append(Seed(f"{path}: {block.name} raises", path, source, new, FUNCTION_RAISES))
    return seeds


def _literal(value: ast.expr) -> ast.Constant | None:
    """The first literal of ``value`` worth changing (not inside an f-string)."""
    pending: list[ast.AST] = [value]
    while pending:
        node = pending.pop(0)
        if isinstance(node, ast.JoinedStr):
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes | int | float):
            return node
        pending.extend(ast.iter_child_nodes(node))
    return None


def _other(value: object) -> object:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, bytes):
        return value + b"~"
    return f"{value}~"


def module_seeds(path: str, source: str) -> list[Seed]:
    """For each assignment at module or class level whose value holds a literal, the file
    with that literal changed; every seed changes the module block alone."""
    tree = ast.parse(source)
    data, starts = _offsets(source)
    assignments: list[tuple[str, ast.expr]] = []
    pending: list[tuple[str, list[ast.stmt]]] = [("", tree.body)]
    while pending:
        prefix, body = pending.pop(0)
        for node in body:
            if isinstance(node, ast.ClassDef):
                pending.append((f"{prefix}{node.name}.", node.body))
            elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = ", ".join(ast.unparse(t) for t in targets)
                assignments.append((f"{prefix}{names}", node.value))
    seeds = []
    for name, value in assignments:
        literal = _literal(value)
        if literal is None or literal.end_lineno is None or literal.end_col_offset is None:
            continue
        begin = starts[literal.lineno - 1] + literal.col_offset
        end = starts[literal.end_lineno - 1] + literal.end_col_offset
        new = (data[:begin] + repr(_other(literal.value)).encode() + data[end:]).decode()
        changed = _changed(source, new)
        if changed != {blocks.MODULE}:
            raise ValueError(f"{path}: changing {name} changed {sorted(changed)}")
        seeds.append(Seed(f"{path}: {name} changed", path, source, new, MODULE))
    return seeds


def generated(root: Path, package: Sequence[str], others: Sequence[str]) -> list[Seed]:
    """Every generated seed of the project at ``root``: function and module seeds of each
    Python file of ``package``, every file of both lists (``others``: its tests, its setup)
    made unparsable. (Paths: repository paths.)"""
    seeds: list[Seed] = []
    for path in package:
        source = (root / path).read_text(encoding="utf-8")
        seeds += function_seeds(path, source)
        seeds += module_seeds(path, source)
    # (a whole file replaced: `apply` with old None appends, so old is the whole text)
    for path in [*package, *others]:
        source = (root / path).read_text(encoding="utf-8")
        seeds.append(Seed(f"{path} unparsable", path, source, UNPARSABLE, FILE))
    return seeds


# -- applying and measuring -----------------------------------------------------------------


def apply(project: Path, seed: Seed) -> None:
    path = project / seed.path
    if seed.new is None:
        path.unlink()
        return
    if seed.old is None:
        before = path.read_text(encoding="utf-8") if path.exists() else ""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(before + seed.new, encoding="utf-8")
        return
    text = path.read_text(encoding="utf-8")
    if seed.old not in text:
        raise ValueError(f"seed {seed.name!r}: {seed.old!r} is not in {seed.path}")
    path.write_text(text.replace(seed.old, seed.new, 1), encoding="utf-8")


def git(project: Path, *args: str) -> str:
    import subprocess

    return subprocess.run(
        ["git", *args], cwd=project, capture_output=True, text=True, check=True
    ).stdout


def reset(project: Path) -> None:
    git(project, "reset", "-q", "--hard")
    git(project, "clean", "-q", "-f", "-d")  # (ignored caches kept: a user's work tree)


class Outcome(NamedTuple):
    seed: Seed
    failing: frozenset[str]  # the features whose verifiers fail on the seeded tree
    by_files: frozenset[str]  # selected with file-level sets
    by_blocks: frozenset[str]  # selected with block-level sets
    executed: frozenset[str] | None  # those that executed a block the seed changed (None:
    # not a change of blocks — a file deleted, added, unparsable, not Python)
    # finer ceilings (tests/finer_grain.py; None as for ``executed``): those that executed a
    # statement the seed changed; that read a name it rebinds (else as ``executed``); the
    # same with the fallbacks a sound selector needs
    statements: frozenset[str] | None = None
    names: frozenset[str] | None = None
    names_safe: frozenset[str] | None = None


@contextmanager
def _blocks_switch(on: bool) -> Iterable[None]:
    saved = os.environ.get("SHIFTKIT_BLOCKS")
    os.environ["SHIFTKIT_BLOCKS"] = "on" if on else "off"
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("SHIFTKIT_BLOCKS", None)
        else:
            os.environ["SHIFTKIT_BLOCKS"] = saved


def measure(
    project: Path,
    commands: Mapping[str, str],
    seeds: Iterable[Seed],
    progress: Callable[[Outcome], None] | None = None,
    exact: bool = False,
) -> list[Outcome]:
    """Each seed applied to the work tree in turn: the features the read-set map selects for
    the move from HEAD's tree to the seeded tree with file-level and with block-level sets,
    those that executed a changed block, and the truth, in a fresh temporary checkout of the
    seeded tree as shiftkit's gate runs them: every group's tests run once (its JUnit report
    says which features fail) and, ``exact``, the verifier of every feature not selected at
    both grains run on its own besides (`_truth`)."""
    from shiftkit.edge import readsets

    ids = list(commands)
    with _blocks_switch(True):
        sets = readsets.load(project / ".git", commands)
    ran = executed_lines(project, commands)
    tracked = set(git(project, "ls-files").splitlines())
    reads = {
        path: finer_grain.CodeReads(git(project, "show", f"HEAD:{path}"), path)
        for path in {p for one in ran.values() if one for p in one} & tracked
    }
    found = []
    for seed in seeds:
        apply(project, seed)
        git(project, "add", "-A")
        tree = git(project, "write-tree").strip()
        selected = {}
        for on in (False, True):
            with _blocks_switch(on):
                selected[on] = frozenset(
                    readsets.affected_at(project, project / ".git", commands, tree)
                )
        executed = _executed(project, seed, ids, sets)
        finer = _finer(project, seed, ids, sets, executed, ran, reads)
        both = selected[False] & selected[True]
        failing = _truth(project, tree, commands, both, exact)
        reset(project)
        one = Outcome(seed, failing, selected[False], selected[True], executed, *finer)
        if progress is not None:
            progress(one)
        found.append(one)
    return found


def _executed(
    project: Path, seed: Seed, ids: Sequence[str], sets: Mapping[str, object]
) -> frozenset[str] | None:
    """The features whose recorded run executed a block of ``seed.path`` the seed changed;
    one whose run read the file but has no blocks recorded for it counts as having executed
    it. None when the seed is no change of a Python file's blocks."""
    from shiftkit.core import affected

    if seed.old is None or seed.new is None or not seed.path.endswith(".py"):
        return None
    old = git(project, "show", f"HEAD:{seed.path}")
    new = old.replace(seed.old, seed.new, 1)
    if blocks.fingerprints(old) is None or blocks.fingerprints(new) is None:
        return None
    changed = _changed(old, new)
    found = set()
    for feature_id in ids:
        one = sets.get(feature_id)
        if not isinstance(one, affected.ReadSet) or seed.path not in one.files:
            if one is None:
                found.add(feature_id)  # (unknown: it could have)
            continue
        ran = one.blocks.get(seed.path) if one.blocks is not None else None
        if ran is None or changed & set(ran):
            found.add(feature_id)
    return frozenset(found)


def executed_lines(
    project: Path, commands: Mapping[str, str]
) -> dict[str, dict[str, frozenset[int]] | None]:
    """Per feature, the lines its verifier executed in each repository file, by the block
    sets' own recorder (`blocksets.prefix`) in one more run at HEAD in the project; None when
    the run fails or no process wrote lines (a Python before 3.12: `sys.monitoring` only)."""
    from shiftkit.edge import blocksets, verify

    found: dict[str, dict[str, frozenset[int]] | None] = {}
    root = str(project).rstrip("/") + "/"
    real = os.path.realpath(project).rstrip("/") + "/"
    for feature_id, command in commands.items():
        with tempfile.TemporaryDirectory(prefix="seeded-lines-") as folder:
            prefix = blocksets.prefix(Path(folder), project)
            outcome = verify.run_command(command, project, 300, prefix=prefix)
            data = Path(folder) / "data"
            files = sorted(data.glob("lines.pid*.txt"))
            if not outcome.ok or not files:
                found[feature_id] = None
                continue
            lines: dict[str, set[int]] = {}
            for one in files:
                for row in one.read_text(encoding="utf-8").splitlines():
                    path, _, numbers = row.partition("\t")
                    top = next((t for t in (root, real) if path.startswith(t)), None)
                    if top is not None:
                        lines.setdefault(path[len(top) :], set()).update(
                            int(n) for n in numbers.split()
                        )
            found[feature_id] = {p: frozenset(n) for p, n in lines.items()}
    return found


def _finer(
    project: Path,
    seed: Seed,
    ids: Sequence[str],
    sets: Mapping[str, object],
    executed: frozenset[str] | None,
    ran: Mapping[str, Mapping[str, frozenset[int]] | None],
    reads: Mapping[str, finer_grain.CodeReads],
) -> tuple[frozenset[str] | None, frozenset[str] | None, frozenset[str] | None]:
    """The finer ceilings of ``seed`` (`finer_grain`): (statements, names, names_safe)."""
    from shiftkit.core import affected

    if executed is None or seed.old is None or seed.new is None:
        return None, None, None
    if all(lines is None for lines in ran.values()):
        return None, None, None  # (no lines recorded: verifiers before 3.12, see `--python`)
    old = git(project, "show", f"HEAD:{seed.path}")
    new = old.replace(seed.old, seed.new, 1)
    rebound = finer_grain.rebinding(old, new)
    by_statements, by_names, by_safe = set(), set(), set()
    for feature_id in ids:
        one = sets.get(feature_id)
        lines = ran.get(feature_id)
        read = one is None or (isinstance(one, affected.ReadSet) and seed.path in one.files)
        if one is None or lines is None:
            if read:
                by_statements.add(feature_id)
                by_names.add(feature_id)
                by_safe.add(feature_id)
            continue
        judged = finer_grain.statements(old, new, lines.get(seed.path), read)
        if judged or (judged is None and feature_id in executed):
            by_statements.add(feature_id)
        for safe, into in ((False, by_names), (True, by_safe)):
            said = finer_grain.names(rebound, seed.path, reads, lines, safe) if read else False
            if said is None:
                said = feature_id in executed
            if said:
                into.add(feature_id)
    return frozenset(by_statements), frozenset(by_names), frozenset(by_safe)


def _truth(
    project: Path,
    tree: str,
    commands: Mapping[str, str],
    selected: frozenset[str],
    exact: bool,
) -> frozenset[str]:
    """The features whose verifiers fail on ``tree``, in a fresh temporary checkout of it as
    shiftkit's gate runs them: from one run of every group's tests (its JUnit report),
    each verifier run on its own only when that run breaks down — or, ``exact``, every
    verifier not ``selected`` run on its own besides (a test that fails alone but passes
    after the others, or the reverse, is then no miss)."""
    from shiftkit.edge import verify

    failing: set[str] = set()
    with verify.temporary_checkout(project, tree) as checkout:
        broken = suite_failures(checkout, commands)
        alone = list(commands)
        if broken is not None:
            failing |= broken if not exact else broken & selected
            alone = [i for i in commands if i not in selected] if exact else []
        for feature_id in alone:
            if not verify.run_verifier(commands[feature_id], checkout, 300).ok:
                failing.add(feature_id)
    return frozenset(failing)


_OPTIONS = " -p no:cacheprovider "


def suite_failures(checkout: Path, commands: Mapping[str, str]) -> set[str] | None:
    """The features one pytest run of every group's tests says fail (commands: ``… -m pytest
    -q -p no:cacheprovider NODE…``, the same before the nodes); None when the run breaks
    down before a usable report (each verifier must then run on its own: a test file that
    no longer imports fails only the features that collect it). A skipped test fails
    nothing, as it fails no verifier."""
    from shiftkit.edge import verify

    heads = {command.split(_OPTIONS, 1)[0] for command in commands.values()}
    if len(heads) != 1:
        return None
    nodes = {
        feature_id: command.split(_OPTIONS, 1)[1].split()
        for feature_id, command in commands.items()
    }
    every = sorted({node for group in nodes.values() for node in group})
    with tempfile.TemporaryDirectory(prefix="seeded-report-") as folder:
        report = Path(folder) / "junit.xml"
        command = f"{heads.pop()}{_OPTIONS}{' '.join(every)} --junitxml={report}"
        ran = verify.run_command(command + " -o junit_family=xunit1", checkout, 300)
        if ran.exit_code not in (0, 1) or not report.exists():
            return None
        outcome: dict[str, bool] = {}
        for case in ET.parse(report).getroot().iter("testcase"):
            node = _node_id(case.get("file") or "", case.get("classname") or "", case.get("name"))
            if node is None:
                return None
            outcome[node] = any(child.tag in ("failure", "error") for child in case)
    failing = set()
    for feature_id, group in nodes.items():
        for node in group:
            ran_here = [
                bad
                for name, bad in outcome.items()
                if name == node or name.startswith((node + "::", node + "["))
            ]
            if not ran_here or any(ran_here):
                failing.add(feature_id)
    return failing


def _node_id(file: str, classname: str, name: str | None) -> str | None:
    """pytest's node id of a JUnit test case (xunit1: ``file``, dotted ``classname``)."""
    module = file.removesuffix(".py").replace("/", ".")
    if not file.endswith(".py") or name is None or not classname.startswith(module):
        return None
    inner = classname[len(module) :].lstrip(".")
    return "::".join([file, *(inner.split(".") if inner else []), name])


# -- the figures ------------------------------------------------------------------------------


class Figures(NamedTuple):
    seeds: int
    breaks: int  # (seed, feature) pairs that fail
    files_hit: int  # breaks selected by file-level sets
    files_selected: int  # (seed, feature) pairs selected: verifier runs
    blocks_hit: int
    blocks_selected: int
    executed_hit: int | None  # breaks among the features that executed a changed block
    executed: int | None  # (seed, feature) pairs that executed a changed block
    features: int
    missed: tuple[tuple[str, str], ...]  # (seed, feature) breaks block level did not select
    # the finer ceilings (`Outcome`), each (breaks of its seeds, breaks selected, selected)
    finer: tuple[tuple[int, int, int] | None, ...] = ()


FINER = ("executed", "statements", "names", "names_safe")  # (the ceilings, in columns)


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 1.0


def _ceiling(outcomes: Sequence[Outcome], field: str) -> tuple[int, int, int] | None:
    """(breaks, breaks selected, selected) of the ceiling ``field`` over ``outcomes``; a seed
    that changes no block (a file deleted, added, unparsable) counts with the block-level
    selection, so "all seeds" compares with the block columns. None: no seed changes a block."""
    if all(getattr(one, field) is None for one in outcomes):
        return None
    chosen = [getattr(one, field) for one in outcomes]
    picked = [
        c if c is not None else one.by_blocks for one, c in zip(outcomes, chosen, strict=True)
    ]
    return (
        sum(len(one.failing) for one in outcomes),
        sum(len(one.failing & c) for one, c in zip(outcomes, picked, strict=True)),
        sum(len(c) for c in picked),
    )


def figures(outcomes: Sequence[Outcome], features: int) -> Figures:
    known = [one for one in outcomes if one.executed is not None]
    return Figures(
        len(outcomes),
        sum(len(one.failing) for one in outcomes),
        sum(len(one.failing & one.by_files) for one in outcomes),
        sum(len(one.by_files) for one in outcomes),
        sum(len(one.failing & one.by_blocks) for one in outcomes),
        sum(len(one.by_blocks) for one in outcomes),
        sum(len(one.failing & (one.executed or frozenset())) for one in known) if known else None,
        sum(len(one.executed or ()) for one in known) if known else None,
        features,
        tuple(
            (one.seed.name, feature_id)
            for one in outcomes
            for feature_id in sorted(one.failing - one.by_blocks)
        ),
        tuple(_ceiling(outcomes, field) for field in FINER),
    )


HEADER = (
    f"{'project':<15} {'seed kind':<22} {'seeds':>5} {'breaks':>6} │ "
    f"{'files: recall':>13} {'precision':>9} {'runs':>5} │ "
    f"{'blocks: recall':>14} {'precision':>9} {'runs':>5} │ "
    + " │ ".join(f"{'ceiling ' + f:>18}" for f in ("blocks", "stmts", "names", "names safe"))
)


def _pair(one: tuple[int, int, int] | None) -> str:
    """A ceiling's recall and precision (- where the kind changes no blocks)."""
    if one is None:
        return f"{'-':>18}"
    breaks, hit, chosen = one
    return f"{'r ' + format(_ratio(hit, breaks), '.2f') + ' p ' + format(_ratio(hit, chosen), '.2f') + ' n ' + str(chosen):>18}"


def row(project: str, kind: str, found: Figures) -> str:
    """One line of the table: recall and precision at both grains, the verifier runs each
    selection costs (of seeds × features), and the ceilings — recall (r), precision (p) and
    selections (n) of selecting exactly the features that executed a changed block, a changed
    statement, read a rebound name, and the same soundly (`tests/finer_grain.py`)."""
    return (
        f"{project:<15} {kind:<22} {found.seeds:>5} {found.breaks:>6} │ "
        f"{_ratio(found.files_hit, found.breaks):>13.2f} "
        f"{_ratio(found.files_hit, found.files_selected):>9.2f} {found.files_selected:>5} │ "
        f"{_ratio(found.blocks_hit, found.breaks):>14.2f} "
        f"{_ratio(found.blocks_hit, found.blocks_selected):>9.2f} {found.blocks_selected:>5} │ "
        + " │ ".join(_pair(one) for one in found.finer)
    )


def table(results: Mapping[str, tuple[Sequence[Outcome], int]]) -> list[str]:
    """The table: each project (its outcomes, its number of features) by seed kind, then all
    of its seeds."""
    lines = [HEADER, "─" * len(HEADER)]
    for project, (outcomes, features) in results.items():
        for kind in KINDS:
            of_kind = [one for one in outcomes if one.seed.kind == kind]
            if of_kind:
                lines.append(row(project, kind, figures(of_kind, features)))
        lines.append(row(project, "all seeds", figures(outcomes, features)))
    return lines
