"""The regression gate's selection at scale (issue 37, item 4): which of 5,000 passing features
one change can break, from their stored read sets with block sets (decision records 0053, 0116).

The project (a `shiftkit new` scaffold): 50 modules of 100 functions each (``pkg/m00.py`` ...
``pkg/m49.py``) and one test file per feature. Every feature passes and has a stored read set
(written by `readsets.record`, so the stored form is the real one), measured at the tree
before the change: its test file, ``tests/conftest.py``, ``pkg/__init__.py``, the shared
``pkg/m00.py`` and 2-4 other modules, each Python file with the blocks the run executed there
(its module block and 1-3 functions); the root's other entries looked at (as pytest stats
them), the folders listed, a few paths looked up that the tree lacks. The change: one function
of ``pkg/m00.py`` edited and committed — every feature read that file; those that ran the
function (about 2 in 100) are affected.

Timed in this process, side by side (interleaved rounds, shuffled, medians), at 5,000 and at
50 passing features:

  load      `readsets.load`: every feature's stored set
  change    `readsets.change` between the two trees (git diff-tree, sizes, the changed file's
            block fingerprints)
  touches   `affected.touches` of each set against the change
  total     `readsets.affected_at`, as the finish gate calls it (`gate.others_to_verify`):
            the three above, with the trees each set was measured at and the bookkeeping files
  gate      `gate.others_to_verify` itself (reported): the jobs from the list, the selection,
            and a look in the verifier cache for each affected feature

With ``--trees K`` the sets were measured at K trees (feature i's at the (i mod K)th, each
commit between them changing a file no set read): `readsets.affected_at` computes the change
from each (git processes per tree), as after a project's history of finishes.

Run: python bench/selection.py [--rounds N] [--features N] [--trees K]
Bar (issue 37): the selection (total) <= 50 ms at 5,000 features (printed as total / 50 ms,
which must stay <= 1). Each part's 5,000 / 50 ratio is reported.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import (
    NO_HOOKS,
    Row,
    bench_env,
    make_features,
    ms,
    print_rows,
    scratch,
    sh,
    side_by_side,
)

from shiftkit.core import affected, blocks, features
from shiftkit.edge import gate, gitio, readsets
from shiftkit.edge.context import bookkeeping, open_context

MODULES = 50
FUNCTIONS = 100
SHARED = "pkg/m00.py"  # every feature's run imports it
EDITED = "f050"  # the function of SHARED the change edits
BAR = 0.050
VERIFY = "python -m pytest -q tests/test_f{i}.py"


def module_source(m: int, edited: bool = False) -> str:
    lines = [f'"""Module {m} of the bench project."""', "", "import math", "", f"SCALE = {m}", ""]
    for f in range(FUNCTIONS):
        changed = edited and f"f{f:03d}" == EDITED
        lines += [
            "",
            f"def f{f:03d}(x: int) -> int:",
            f'    """Step {f} of module {m}."""',
            f"    y = x * {f} + SCALE",
            f"    if y > {f + (7 if changed else 0)}:",
            "        y = int(math.sqrt(y))",
            f"    return y - {f}",
            "",
        ]
    return "\n".join(lines)


def test_source(i: int, modules: list[int], calls: dict[int, list[str]]) -> str:
    names = ", ".join(f"m{m:02d}" for m in modules)
    lines = [f"from pkg import {names}", "", "", f"def test_f{i:04d}() -> None:"]
    for m in modules:
        for f in calls[m]:
            lines.append(f"    assert m{m:02d}.{f}({i}) >= 0")
    return "\n".join(lines) + "\n"


class Plan:
    """What each feature's run reads: the modules, and the functions it runs in each."""

    def __init__(self, n: int, seed: int = 37) -> None:
        shuffler = random.Random(seed)
        self.modules: list[list[int]] = []
        self.calls: list[dict[int, list[str]]] = []
        for _ in range(n):
            modules = [0, *sorted(shuffler.sample(range(1, MODULES), shuffler.randint(2, 4)))]
            self.modules.append(modules)
            self.calls.append(
                {
                    m: sorted(
                        f"f{f:03d}"
                        for f in shuffler.sample(range(FUNCTIONS), shuffler.randint(1, 3))
                    )
                    for m in modules
                }
            )

    def affected(self) -> list[str]:
        return [f"F{i:04d}" for i, calls in enumerate(self.calls) if EDITED in calls[0]]


def build(home: Path, n: int, env: dict[str, str], trees: int = 1) -> tuple[Path, Plan]:
    """A project of ``n`` passing features, their read sets stored at HEAD^'s tree, and the
    change committed at HEAD."""
    project = home / f"selection-{n}"
    sh(["shiftkit", "new", str(project), "--defaults"], home, env)
    (project / "features.json").write_text(make_features(n, verify=VERIFY, passing=n))
    plan = Plan(n)
    (project / "pkg").mkdir()
    (project / "pkg" / "__init__.py").write_text("")
    for m in range(MODULES):
        (project / "pkg" / f"m{m:02d}.py").write_text(module_source(m))
    tests = project / "tests"
    tests.mkdir()
    (tests / "conftest.py").write_text(
        'import pytest\n\n\n@pytest.fixture\ndef app() -> str:\n    return "app"\n'
    )
    for i in range(n):
        (tests / f"test_f{i:04d}.py").write_text(test_source(i, plan.modules[i], plan.calls[i]))
    (project / "notes").mkdir()
    (project / "notes" / "n.txt").write_text("notes 0\n")
    sh(["git", "add", "-A"], project, env)
    sh(["git", *NO_HOOKS, "commit", "-q", "--no-verify", "-m", "Bench: the project"], project, env)
    measured_at = [sh(["git", "rev-parse", "HEAD^{tree}"], project, env).strip()]
    for k in range(1, trees):  # (commits no set's reads see: the file is read by none)
        (project / "notes" / "n.txt").write_text(f"notes {k}\n")
        sh(["git", *NO_HOOKS, "commit", "-q", "--no-verify", "-am", f"Notes {k}"], project, env)
        measured_at.append(sh(["git", "rev-parse", "HEAD^{tree}"], project, env).strip())

    common = gitio.common_dir(project)
    top = [p for p in sh(["git", "ls-tree", "--name-only", "HEAD"], project, env).split("\n") if p]
    module_marks = {
        m: _marks((project / "pkg" / f"m{m:02d}.py").read_text()) for m in range(MODULES)
    }
    conftest = _marks((tests / "conftest.py").read_text())
    for i in range(n):
        test = f"tests/test_f{i:04d}.py"
        test_marks = _marks((project / test).read_text())
        ran: dict[str, dict[str, str]] = {
            test: test_marks,
            "tests/conftest.py": {blocks.MODULE: conftest[blocks.MODULE], "app": conftest["app"]},
            "pkg/__init__.py": {blocks.MODULE: _marks("")[blocks.MODULE]},
        }
        for m, functions in plan.calls[i].items():
            marks = module_marks[m]
            ran[f"pkg/m{m:02d}.py"] = {blocks.MODULE: marks[blocks.MODULE]} | {
                f: marks[f] for f in functions
            }
        files = frozenset(ran)
        stats = frozenset(p for p in top if p not in files)
        missing = frozenset(
            {"pytest.py", "tests/__pycache__", "pkg/__pycache__", "tests/__init__.py"}
        )
        readsets.record(
            common,
            f"F{i:04d}",
            affected.ReadSet(
                measured_at[i % trees],
                VERIFY.format(i=i),
                files,
                frozenset({"", "tests", "pkg"}),
                missing,
                stats,
                ran,
            ),
        )

    (project / SHARED).write_text(module_source(0, edited=True))
    sh(["git", "add", SHARED], project, env)
    sh(
        ["git", *NO_HOOKS, "commit", "-q", "--no-verify", "-m", f"Bench: edit {EDITED}"],
        project,
        env,
    )
    return project, plan


def _marks(source: str) -> dict[str, str]:
    found = blocks.fingerprints(source)
    assert found is not None
    return found


def cases(project: Path, plan: Plan) -> tuple[dict[str, Callable[[], object]], int]:
    """The timed actions for one project, and how many features the selection picks."""
    ctx = open_context(project)
    common = ctx.common_dir
    committed = features.loads_any((project / "features.json").read_text(), "features.json")
    ids = [f.id for f in committed.features]
    commands = {f.id: f.verify or "" for f in committed.features}
    old_tree = gitio.out(["rev-parse", "HEAD^^{tree}"], project).strip()
    new_tree = gitio.out(["rev-parse", "HEAD^{tree}"], project).strip()
    base = gitio.out(["rev-parse", "HEAD^"], project).strip()
    quiet = bookkeeping(ctx)
    sets = readsets.load(common, commands)
    change = readsets.change(project, old_tree, new_tree)

    def touching() -> list[str]:
        return [i for i in ids if affected.touches(sets[i], change)]

    picked = readsets.affected_at(project, common, commands, new_tree, quiet)
    # (the selection is the one the plan says: those that ran the edited function)
    assert picked == touching() == plan.affected(), (len(picked), len(plan.affected()))
    others = gate.others_to_verify(ctx, committed, "F9999", base, new_tree)
    assert [j.feature.id for j in others.passing] == picked
    return {
        "load": lambda: readsets.load(common, commands),
        "change": lambda: readsets.change(project, old_tree, new_tree),
        "touches": touching,
        "total": lambda: readsets.affected_at(project, common, commands, new_tree, quiet),
        "gate": lambda: gate.others_to_verify(ctx, committed, "F9999", base, new_tree),
    }, len(picked)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--features", type=int, default=5000)
    parser.add_argument("--trees", type=int, default=1, help="the trees the sets were measured at")
    args = parser.parse_args()
    large, small = args.features, 50
    home = scratch()
    env = bench_env(home)
    actions: dict[str, Callable[[], object]] = {}
    picked: dict[int, int] = {}
    for n in (small, large):
        project, plan = build(home, n, env, min(args.trees, n))
        found, picked[n] = cases(project, plan)
        actions |= {f"{name} {n}": action for name, action in found.items()}
    medians = side_by_side(actions, args.rounds)
    total = medians[f"total {large}"]
    rows = [Row(f"selection at {large} / 50 ms bar", total / BAR, f"{ms(total)} / {ms(BAR)}", 1.0)]
    for name in ("load", "change", "touches", "total", "gate"):
        big, little = medians[f"{name} {large}"], medians[f"{name} {small}"]
        rows.append(Row(f"{name}, {large} / {small}", big / little, f"{ms(big)} / {ms(little)}"))
    print_rows(
        f"the selection for one change ({picked[large]} of {large} and {picked[small]} of {small} "
        f"features affected; sets measured at {args.trees} tree(s)), {args.rounds} interleaved "
        "rounds",
        rows,
    )


if __name__ == "__main__":
    main()
