"""The cost of the reference-transaction hook, in a scaffold with 5,000 features.

Two clones of one project with shiftkit's commit hooks (the pre-commit framework's), one with
the reference-transaction shim beside them and one without, measured side by side
(interleaved rounds in shuffled order, medians; only the operation itself is timed):

  commit, notes    a commit adding a small file (nothing the rules protect)
  commit, flip     a commit flipping one claimed feature whose verifier is cached
  checkout         `git checkout` of another branch (200 files differ) and back

Run: python bench/reference_transaction.py [--rounds N]
Bars (issue "Trust"): commit with / without <= 1.15; checkout with / without <= 1.10.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from _common import (
    HOOK_TYPES,
    NO_HOOKS,
    Row,
    bench_env,
    make_features,
    ms,
    print_rows,
    scratch,
    sh,
    write_flip,
)

BARS = {"commit, notes": 1.15, "commit, flip": 1.15, "checkout": 1.10}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--features", type=int, default=5000)
    args = parser.parse_args()
    print_rows(
        f"reference-transaction hook, {args.features} features, {args.rounds} interleaved rounds",
        figures(args.rounds, args.features),
    )


def figures(rounds: int, n_features: int = 5000) -> list[Row]:
    return [
        Row(
            f"reference-transaction: {name}, with / without",
            with_hook / without,
            f"{ms(with_hook)} / {ms(without)}",
            BARS[name],
        )
        for name, (without, with_hook) in measure(rounds, n_features).items()
    ]


def measure(rounds: int, n_features: int) -> dict[str, tuple[float, float]]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from shiftkit.core.resources import hooks_dir

    home = scratch()
    env = bench_env(home)
    origin = home / "origin"
    sh(["shiftkit", "new", str(origin), "--defaults"], home, env)
    (origin / "features.json").write_text(make_features(n_features, verify="true"))
    for index in range(200):
        (origin / "src" / f"m{index}.py").parent.mkdir(exist_ok=True)
        (origin / "src" / f"m{index}.py").write_text(f"VALUE = {index}\n")
    sh(["git", "add", "-A"], origin, env)
    # A synthetic list with half its features passing cannot pass the rules: set it up past them.
    sh(
        ["git", *NO_HOOKS, "commit", "-q", "--no-verify", "-m", "Bench: a 5,000-feature list"],
        origin,
        env,
    )
    sh(["git", "branch", "other"], origin, env)
    sh(["git", "checkout", "-q", "other"], origin, env)
    for index in range(200):
        (origin / "src" / f"m{index}.py").write_text(f"VALUE = {index + 1}\n")
    sh(["git", "add", "-A"], origin, env)
    sh(["git", *NO_HOOKS, "commit", "-q", "-m", "Bench: another branch"], origin, env)
    sh(["git", "checkout", "-q", "main"], origin, env)

    target = f"F{n_features // 2:04d}"
    clones = {}
    for name in ("without", "with"):
        clone = home / name
        sh(["git", "clone", "-q", str(origin), str(clone)], home, env)
        sh(["git", "branch", "-q", "other", "origin/other"], clone, env)
        sh(["shiftkit", "install-hooks", "--force"], clone, env)
        for hook in ("pre-commit", "commit-msg"):  # the framework's hooks, as the scaffold has
            (clone / ".git" / "hooks" / hook).unlink()
        sh([sys.executable, "-m", "pre_commit", "install", *HOOK_TYPES], clone, env)
        (clone / ".git" / "hooks" / "pre-push").unlink()
        if name == "without":
            (clone / ".git" / "hooks" / "reference-transaction").unlink()
        else:
            shutil.copyfile(
                hooks_dir() / "reference-transaction",
                clone / ".git" / "hooks" / "reference-transaction",
            )
        claimed = sh(["shiftkit", "claim", target], clone, env)
        assert f"claimed {target}" in claimed, claimed
        clones[name] = clone

    def stage_notes(clone: Path) -> None:
        (clone / "notes.txt").write_text("a change that is not the feature list\n")
        sh(["git", "add", "notes.txt"], clone, env)

    def stage_flip(clone: Path) -> None:
        write_flip(clone, target)
        sh(["git", "add", "-A"], clone, env)

    def undo(clone: Path) -> None:
        sh(["git", *NO_HOOKS, "reset", "-q", "--hard", "HEAD^"], clone, env)
        sh(["git", "clean", "-fdq"], clone, env)

    def commit(clone: Path, message: str) -> float:
        start = time.perf_counter()
        proc = subprocess.run(
            ["git", "commit", "-q", "-m", message],
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
        )
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"commit in {clone.name} failed:\n{proc.stdout}{proc.stderr}")
        return elapsed

    def checkout(clone: Path) -> float:
        start = time.perf_counter()
        sh(["git", "checkout", "-q", "other"], clone, env)
        sh(["git", "checkout", "-q", "main"], clone, env)
        return time.perf_counter() - start

    operations: dict[str, Callable[[Path], float]] = {
        "commit, notes": lambda c: _with_undo(c, stage_notes, lambda: commit(c, "Add notes"), undo),
        "commit, flip": lambda c: _with_undo(
            c, stage_flip, lambda: commit(c, f"{target}: the bench feature"), undo
        ),
        "checkout": checkout,
    }
    shuffler = random.Random(1729)
    samples: dict[tuple[str, str], list[float]] = {}
    cases = [(op, name) for op in operations for name in clones]
    for op, name in cases:  # warm caches; the flip's verifier pass is cached by the first run
        operations[op](clones[name])
    for _ in range(rounds):
        shuffler.shuffle(cases)
        for op, name in cases:
            samples.setdefault((op, name), []).append(operations[op](clones[name]))
    return {
        op: (statistics.median(samples[(op, "without")]), statistics.median(samples[(op, "with")]))
        for op in operations
    }


def _with_undo(
    clone: Path,
    prepare: Callable[[Path], None],
    timed: Callable[[], float],
    undo: Callable[[Path], None],
) -> float:
    prepare(clone)
    elapsed = timed()
    undo(clone)
    return elapsed


if __name__ == "__main__":
    main()
