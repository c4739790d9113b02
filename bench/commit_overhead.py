"""The cost of shiftkit's hooks on a real `git commit`, in a scaffold with 5,000 features.

The scaffold installs the reference-transaction hook too, so "shiftkit" here means every
check a commit meets. Four commits, measured side by side (interleaved rounds in shuffled
order, medians), each undone with `git reset --soft HEAD^` so every round commits the same
staged change:

  no-op, notes     the pre-commit framework running one no-op hook at each of the same two
                   stages; the commit adds a small file
  shiftkit, notes  shiftkit's hooks, the same commit (it does not touch the feature list)
  no-op, flip      no-op hooks, a commit flipping one feature (the list and the log staged)
  shiftkit, flip   shiftkit's hooks, the same flip, of a claimed feature whose verifier is cached

Run: python bench/commit_overhead.py [--rounds N]
Bars (issue "Enforcement"): shiftkit notes / no-op notes <= 1.25; shiftkit flip / no-op <= 1.5.
The flip is reported against both no-op commits: the framework itself spends more on a commit
that stages a 1 MB list, whatever its hooks do.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
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
    side_by_side,
    write_flip,
)

NOOP_CONFIG = """default_install_hook_types: [pre-commit, commit-msg]
repos:
  - repo: local
    hooks:
      - id: noop-pre-commit
        name: no-op
        entry: "true"
        language: unsupported
        pass_filenames: false
        always_run: true
        stages: [pre-commit]
      - id: noop-commit-msg
        name: no-op
        entry: "true"
        language: unsupported
        pass_filenames: false
        always_run: true
        stages: [commit-msg]
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--features", type=int, default=5000)
    args = parser.parse_args()
    print_rows(
        f"git commit in a scaffold with {args.features} features, {args.rounds} interleaved rounds",
        figures(args.rounds, args.features),
    )


def figures(rounds: int, n_features: int = 5000) -> list[Row]:
    args = argparse.Namespace(rounds=rounds, features=n_features)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

    home = scratch()
    env = bench_env(home)
    project = home / "project"
    sh(["shiftkit", "new", str(project), "--defaults"], home, env)
    (project / "features.json").write_text(make_features(args.features, verify="true"))
    sh(["git", "add", "-A"], project, env)
    # A synthetic list with half its features passing cannot pass the rules: set it up past them.
    sh(
        ["git", *NO_HOOKS, "commit", "-q", "--no-verify", "-m", "Bench: a 5,000-feature list"],
        project,
        env,
    )

    noop, noop_flip = home / "noop", home / "noop-flip"
    for where in (noop, noop_flip):
        sh(["git", "clone", "-q", str(project), str(where)], home, env)
        (where / ".pre-commit-config.yaml").write_text(NOOP_CONFIG)
        sh([sys.executable, "-m", "pre_commit", "install", *HOOK_TYPES], where, env)
        sh(
            ["git", *NO_HOOKS, "commit", "-q", "--no-verify", "-am", "Bench: no-op hooks"],
            where,
            env,
        )

    noflip = home / "noflip"
    sh(["git", "clone", "-q", str(project), str(noflip)], home, env)
    # (every hook the scaffold installs, as a clone gets them: `pre-commit install` alone
    # leaves out the reference-transaction hook, which every commit meets)
    sh(["shiftkit", "setup"], noflip, env)
    for where in (noop, noflip):
        (where / "notes.txt").write_text("a change that is not the feature list\n")
        sh(["git", "add", "notes.txt"], where, env)

    target = f"F{args.features // 2:04d}"  # the first feature that does not pass
    claimed = sh(["shiftkit", "claim", target], project, env)
    assert f"claimed {target}" in claimed, claimed
    write_flip(project, target)
    sh(["git", "add", "-A"], project, env)
    for name in ("features.json", "claude-progress.txt"):
        (noop_flip / name).write_text((project / name).read_text())
    sh(["git", "add", "-A"], noop_flip, env)

    staged_blob = sh(["git", "rev-parse", ":features.json"], project, env).strip()
    records = [
        project / ".git" / "shiftkit" / kind / staged_blob for kind in ("validated", "tables")
    ]

    def fresh_flip() -> None:
        # Every real flip stages a list never checked before: forget that this one was.
        for record in records:
            record.unlink(missing_ok=True)
        commit(project, f"{target}: the bench feature")

    def commit(where: Path, message: str) -> None:
        proc = subprocess.run(
            ["git", "commit", "-q", "-m", message],
            cwd=where,
            env=env,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise SystemExit(f"commit in {where.name} failed:\n{proc.stdout}{proc.stderr}")
        # (the undo runs no hook in any case, so it weighs the same on every side)
        subprocess.run(
            ["git", *NO_HOOKS, "reset", "-q", "--soft", "HEAD^"], cwd=where, env=env, check=True
        )

    medians = side_by_side(
        {
            "no-op, notes": lambda: commit(noop, "Add notes about the app"),
            "shiftkit, notes": lambda: commit(noflip, "Add notes about the app"),
            "no-op, flip": lambda: commit(noop_flip, f"{target}: the bench feature"),
            "shiftkit, flip": fresh_flip,
        },
        args.rounds,
    )
    notes, flip = medians["no-op, notes"], medians["no-op, flip"]
    mine, mine_flip = medians["shiftkit, notes"], medians["shiftkit, flip"]
    return [
        Row("commit, no flip / no-op hooks", mine / notes, f"{ms(mine)} / {ms(notes)}", 1.25),
        Row(
            "commit, cached flip / no-op notes commit",
            mine_flip / notes,
            f"{ms(mine_flip)} / {ms(notes)}",
            1.5,
        ),
        Row(
            "commit, cached flip / same flip, no-op hooks",
            mine_flip / flip,
            f"{ms(mine_flip)} / {ms(flip)}",
        ),
    ]


if __name__ == "__main__":
    main()
