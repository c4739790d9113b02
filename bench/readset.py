"""Read sets (decision record 0053): the cost of measuring what a verifier reads, and how well
the measured sets select the features a change breaks.

Run: python bench/readset.py [--rounds N] [--cost-only | --real-only] [--seeds]
Bars (issue 26): a real pytest verifier run under strace (recording its read set) ÷ the same
verifier untraced <= 1.3, in CPU time (the verifier's, strace's and the parse's: what the
recording costs, steady on a loaded machine); the wall-clock ratio is reported beside it.
Reported: recall (bar: 1.00, every seeded break selected) and
precision of the selection over seeded breaks of every file of a small Python project — each
tracked file in turn made unreadable as Python (and a shadowing `pytest.py` and a failing
root `conftest.py` added), every verifier run to see which really break — and of a real one
(decision record 0071): python-slugify 5.0.2's sdist (vendored in tests/data/) adopted with
shiftkit, ten features whose verifiers run groups of its own tests, passed through `finish` and
`check -j 1`, then the seeds of tests/slugify_project.py (every function and constant of
slugify/, its tests' data, test settings, deletions, shadowing additions).
Run `python bench/readset.py --real-only` for the real project's rows alone.

`--blocks` (issue 37): python-slugify and MarkupSafe 3.0.2 (tests/markupsafe_project.py)
adopted once each with block-level sets measured, then every seed — the hand-written ones and
those `tests/seeding.py` generates: each function and method of the package raising, each
literal of its module- and class-level assignments changed, each Python file unparsable —
with the features selected by the same recorded sets at file level and at block level, and
the truth from one run of every group's tests (`--exact`: each feature not selected run on
its own besides). One table: project × seed kind × grain × {recall, precision, verifier
runs}, and the ceilings: recall and precision of selecting exactly the features whose run
executed a changed block — what any selector of executed blocks must select — and of the finer
grains of draft decision record 0123 (`tests/finer_grain.py`): a changed statement executed,
a rebound module-level name read (as is, and with the fallbacks soundness needs). `--projects`
picks which. `--python PATH`: the verifiers' interpreter (with pytest; 3.12+ is measured by
`sys.monitoring`, and the verifiers keep the inherited PYTHONPATH the recorder starts through):
`python bench/readset.py --real-only --blocks --rounds 1 --seeds --python VENV312/bin/python`.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from _common import Row, bench_env, ms, print_rows, scratch, sh, side_by_side

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import markupsafe_project
import seeding
import slugify_project

from shiftkit.core import affected
from shiftkit.edge import readsets, verify

FILES = {
    "calc/__init__.py": "",
    "calc/ops.py": "from calc.util import twice\n\ndef add(a, b):\n    return a + b\n\n"
    "def mul(a, b):\n    return a * b\n\ndef dbl(a):\n    return twice(a)\n",
    "calc/util.py": "def twice(a):\n    return 2 * a\n",
    "calc/text.py": "def shout(s):\n    return s.upper()\n",
    "tests/test_add.py": "from calc.ops import add\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    "tests/test_mul.py": "from calc.ops import mul\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
    "tests/test_dbl.py": "from calc.ops import dbl\n\ndef test_dbl():\n    assert dbl(4) == 8\n",
    "tests/test_text.py": "from calc.text import shout\n\ndef test_shout():\n"
    "    assert shout('a') == 'A'\n",
    "data/words.txt": "alpha\nbeta\n",
    "scripts/words.sh": "#!/bin/sh\ngrep -q beta data/words.txt\n",
    "README.md": "A calculator.\n",
    "docs/usage.md": "Call add.\n",
}
PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider"
VERIFIERS = {
    "F1": f"{PYTEST} tests/test_add.py",
    "F2": f"{PYTEST} tests/test_mul.py",
    "F3": f"{PYTEST} tests/test_dbl.py",
    "F4": f"{PYTEST} tests/test_text.py",
    "F5": "sh scripts/words.sh",
}
ADDED = {
    "pytest.py": "raise SystemExit(3)\n",  # shadows pytest for `python -m pytest`
    "conftest.py": "raise SystemExit(4)\n",  # a root conftest that fails everything
    "calc/text_helpers.py": "x = 1\n",  # harmless: nobody imports it
}


def build(home: Path, env: dict[str, str]) -> Path:
    project = home / "readset-bench"
    project.mkdir()
    for path, text in FILES.items():
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text(text)
    (project / ".gitignore").write_text("__pycache__/\n")
    sh(["git", "init", "-q"], project, env)
    sh(["git", "add", "-A"], project, env)
    sh(["git", "commit", "-q", "-m", "A small project"], project, env)
    return project


def _tree(project: Path, env: dict[str, str]) -> str:
    return sh(["git", "rev-parse", "HEAD^{tree}"], project, env).strip()


def measure_sets(project: Path, env: dict[str, str]) -> dict[str, affected.ReadSet]:
    tree = _tree(project, env)
    sets = {}
    for feature_id, command in VERIFIERS.items():
        with readsets.measuring() as measure:
            if measure is None:
                raise SystemExit("bench: strace is missing or cannot trace here")
            outcome = verify.run_command(command, project, 120, env, measure.prefix)
            if not outcome.ok:
                raise SystemExit(f"bench: {feature_id} fails\n{outcome.output}")
            sets[feature_id] = measure.read_set(project, tree, command)
    return sets


def _failing(project: Path, env: dict[str, str]) -> set[str]:
    return {
        feature_id
        for feature_id, command in VERIFIERS.items()
        if not verify.run_command(command, project, 120, env).ok
    }


def _clean(project: Path, env: dict[str, str]) -> None:
    sh(["git", "reset", "-q"], project, env)
    sh(["git", "checkout", "-q", "--", "."], project, env)
    sh(["git", "clean", "-q", "-f", "-d"], project, env)


def _seeds() -> list[tuple[str, str, str | None]]:
    """(what, path, new text or None to delete): every file rewritten as text no verifier can
    read as it did (no longer Python, no `beta`), every file deleted, and three additions."""
    seeds: list[tuple[str, str, str | None]] = [
        ("rewrite", path, "this is ( not valid\n") for path in FILES
    ]
    seeds += [("delete", path, None) for path in FILES]
    seeds += [("add", path, text) for path, text in ADDED.items()]
    return seeds


def accuracy(project: Path, env: dict[str, str]) -> tuple[int, int, int, int]:
    """(breaks selected, breaks, selected, seeded changes) over every seeded change: the
    selection is `affected` over the change between the trees, the truth every verifier run
    on the seeded work tree."""
    sets: dict[str, affected.ReadSet | None] = dict(measure_sets(project, env))
    base = _tree(project, env)
    ids = list(VERIFIERS)
    hit = breaks = selected = 0
    seeds = _seeds()
    for _, path, text in seeds:
        if text is None:
            (project / path).unlink()
        else:
            (project / path).write_text(text)
        sh(["git", "add", "-A"], project, env)
        change = readsets.change(project, base, sh(["git", "write-tree"], project, env).strip())
        predicted = set(affected.affected(ids, sets, change.paths, change.added, change.resized))
        broken = _failing(project, env)
        _clean(project, env)
        hit += len(predicted & broken)
        breaks += len(broken)
        selected += len(predicted)
    return hit, breaks, selected, len(seeds)


def real_project(show: bool = False, blocks: bool = False) -> list[Row]:
    """Recall and precision on python-slugify adopted (tests/slugify_project.py); ``show``:
    each seed's failing and selected features on stderr; ``blocks``: with block-level sets
    (`SHIFTKIT_BLOCKS=on`, decision record 0116) measured and used."""
    home = scratch()
    saved = dict(os.environ)
    try:
        slugify_project.use_environment(home)
        os.environ["SHIFTKIT_BLOCKS"] = "on" if blocks else "off"
        project, site = slugify_project.unpack(home)
        env = dict(os.environ)
        commands = slugify_project.adopt(project, site, lambda argv: sh(argv, project, env))
        outcomes = slugify_project.measure(project, commands, site=site)
        found = slugify_project.figures(outcomes)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(home, ignore_errors=True)
    for one in outcomes if show else ():
        print(
            f"{one.seed.name}: fail {' '.join(sorted(one.failing)) or '-'}; "
            f"selected {' '.join(sorted(one.selected)) or '-'}",
            file=sys.stderr,
        )
    missed = "; ".join(f"{seed}: {feature}" for seed, feature in found.missed[:3])
    if len(found.missed) > 3:
        missed += f"; {len(found.missed) - 3} more"
    grain = "blocks" if blocks else "files"
    return [
        Row(
            f"python-slugify ({grain}): misses ÷ seeded breaks (1 - recall)",
            1 - found.recall,
            f"recall {found.hit}/{found.breaks}, {found.seeds} seeds, {len(commands)} features"
            + (f"; missed {missed}" if missed else ""),
            0.0,
        ),
        Row(
            f"python-slugify ({grain}): precision of the selection",
            found.precision,
            f"{found.hit} of {found.selected} selected really broke",
            None,
        ),
    ]


def _verifiers_python(home: Path, python: Path | None) -> None:
    """``python`` (an interpreter with pytest) made the verifiers' `python` and `python3`
    in ``os.environ`` (shims first on PATH), as bench/block_sets.py `--python` does."""
    if python is None:
        return
    shims = home / "verifiers-bin"
    shims.mkdir()
    for name in ("python", "python3"):  # (python3: an installing init's overlay uses it)
        (shims / name).write_text(f'#!/bin/sh\nexec {python.absolute()} "$@"\n')
        (shims / name).chmod(0o755)
    os.environ["PATH"] = f"{shims}{os.pathsep}{os.environ['PATH']}"


def _seeded(
    label: str,
    setup: Callable[[Path], tuple[Path, dict[str, str]]],
    show: bool,
    exact: bool,
    python: Path | None = None,
) -> tuple[list[seeding.Outcome], int]:
    """One real project adopted with block-level sets measured (`SHIFTKIT_BLOCKS=on`, or the
    default with ``python`` — the verifiers' interpreter — 3.12+) and every seed of it
    measured at both grains (`seeding.measure`): (outcomes, features)."""
    home = scratch()
    saved = dict(os.environ)
    try:
        slugify_project.use_environment(home)
        _verifiers_python(home, python)
        os.environ["SHIFTKIT_BLOCKS"] = "auto" if python is not None else "on"
        project, commands = setup(home)
        seeds = setup_seeds[label](project)

        def progress(one: seeding.Outcome) -> None:
            if show:
                print(
                    f"{label} | {one.seed.kind} | {one.seed.name}: fail "
                    f"{' '.join(sorted(one.failing)) or '-'}; files "
                    f"{' '.join(sorted(one.by_files)) or '-'}; blocks "
                    f"{' '.join(sorted(one.by_blocks)) or '-'}; executed "
                    f"{'n/a' if one.executed is None else ' '.join(sorted(one.executed)) or '-'}; "
                    f"statements {_ids(one.statements)}; names {_ids(one.names)}; "
                    f"names safe {_ids(one.names_safe)}",
                    file=sys.stderr,
                    flush=True,
                )

        outcomes = seeding.measure(project, commands, seeds, progress, exact)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(home, ignore_errors=True)
    return outcomes, len(commands)


def _ids(chosen: frozenset[str] | None) -> str:
    return "n/a" if chosen is None else " ".join(sorted(chosen)) or "-"


def _slugify(home: Path) -> tuple[Path, dict[str, str]]:
    project, site = slugify_project.unpack(home)
    env = dict(os.environ)
    return project, slugify_project.adopt(project, site, lambda argv: sh(argv, project, env))


def _markupsafe(home: Path) -> tuple[Path, dict[str, str]]:
    project = markupsafe_project.unpack(home)
    env = dict(os.environ)
    return project, markupsafe_project.adopt(lambda argv: sh(argv, project, env))


REAL = {"python-slugify": _slugify, "markupsafe": _markupsafe}
setup_seeds = {
    "python-slugify": slugify_project.every_seed,
    "markupsafe": markupsafe_project.every_seed,
}


def seeded_table(
    projects: Sequence[str], show: bool = False, exact: bool = False, python: Path | None = None
) -> list[str]:
    """The table of issue 37: each real project × seed kind × {file level, block level} ×
    {recall, precision, verifier runs}, with the missed breaks at block level listed."""
    results = {name: _seeded(name, REAL[name], show, exact, python) for name in projects}
    lines = seeding.table(results)
    for name, (outcomes, features) in results.items():
        found = seeding.figures(outcomes, features)
        lines.append(
            f"{name}: {found.seeds} seeds × {features} features = "
            f"{found.seeds * features} verifier runs without selection"
        )
        for seed, feature in found.missed:
            lines.append(f"{name}: MISSED at block level: {seed}: {feature}")
        for one in outcomes:
            for feature in sorted(one.failing - one.by_files):
                lines.append(f"{name}: missed at file level: {one.seed.name}: {feature}")
    return lines


def figures(
    rounds: int = 5, seeded: bool = True, ours: bool = True, show: bool = False
) -> list[Row]:
    if readsets.tracer() is None:
        return [Row("read sets: strace is missing (not measured)", 0.0, "-", None)]
    if not ours:
        return real_project(show)
    home = scratch()
    env = bench_env(home)
    project = build(home, env)
    command = VERIFIERS["F1"]
    tree = _tree(project, env)

    cpu: dict[str, list[float]] = {"plain": [], "traced": []}

    def children_cpu() -> float:
        total = 0.0
        for who in (resource.RUSAGE_CHILDREN, resource.RUSAGE_SELF):  # (SELF: the parse)
            usage = resource.getrusage(who)
            total += usage.ru_utime + usage.ru_stime
        return total

    def plain() -> None:
        before = children_cpu()
        if not verify.run_command(command, project, 120).ok:
            raise SystemExit("bench: the verifier fails")
        cpu["plain"].append(children_cpu() - before)

    def traced() -> None:
        before = children_cpu()
        outcome = readsets.run_measured(
            project / ".git",
            "F1",
            command,
            project,
            tree,
            lambda prefix: verify.run_command(command, project, 120, prefix=prefix),
        )
        if not outcome.ok:
            raise SystemExit("bench: the verifier fails traced")
        cpu["traced"].append(children_cpu() - before)  # (strace's own time included)

    timed = side_by_side({"plain": plain, "traced": traced}, rounds)
    used = {name: statistics.median(values) for name, values in cpu.items()}
    hit, breaks, selected, seeds = accuracy(project, env) if seeded else (0, 0, 0, 0)
    shutil.rmtree(home, ignore_errors=True)
    recall = hit / breaks if breaks else 1.0
    precision = hit / selected if selected else 1.0
    rows = [
        Row(
            "pytest verifier recording its read set ÷ untraced (CPU)",
            used["traced"] / used["plain"],
            f"{ms(used['traced'])} vs {ms(used['plain'])} CPU",
            1.3,
        ),
        Row(
            "the same, wall clock",
            timed["traced"] / timed["plain"],
            f"{ms(timed['traced'])} vs {ms(timed['plain'])}",
            None,
        ),
    ]
    if not seeded:
        return rows
    return [
        *rows,
        Row(
            "read sets, small project: misses ÷ seeded breaks (1 - recall)",
            1 - recall,
            f"recall {hit}/{breaks}, {seeds} seeded changes",
            0.0,
        ),
        Row(
            "read sets, small project: precision of the selection",
            precision,
            f"{hit} of {selected} selected really broke",
            None,
        ),
        *real_project(show),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cost-only", action="store_true", help="skip the seeded breaks")
    parser.add_argument("--real-only", action="store_true", help="python-slugify's rows alone")
    parser.add_argument("--seeds", action="store_true", help="python-slugify's seeds on stderr")
    parser.add_argument(
        "--blocks",
        action="store_true",
        help="the real projects' table by seed kind, block-level sets beside file level",
    )
    parser.add_argument(
        "--projects",
        default=",".join(REAL),
        help=f"with --blocks: which real projects (of {', '.join(REAL)})",
    )
    parser.add_argument(
        "--exact",
        action="store_true",
        help="with --blocks: every verifier not selected also run on its own (slow)",
    )
    parser.add_argument(
        "--python",
        type=Path,
        help="with --blocks: the verifiers' interpreter (with pytest; 3.12+: sys.monitoring)",
    )
    args = parser.parse_args()
    if args.blocks:
        if not args.real_only:
            print_rows("read sets", figures(args.rounds, not args.cost_only, True, False))
        print(
            "\n".join(seeded_table(args.projects.split(","), args.seeds, args.exact, args.python))
        )
        return
    rows = figures(args.rounds, not args.cost_only, not args.real_only, args.seeds)
    print_rows("read sets", rows)


if __name__ == "__main__":
    main()
