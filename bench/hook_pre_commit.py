"""`shiftkit hook pre-commit` on a 5,000-feature list, cold process, as ratios to `python -c pass`.

Run: python bench/hook_pre_commit.py [--rounds N]
Prints medians and ratios, measured side by side (interleaved) in one run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--features", type=int, default=5000)
    args = parser.parse_args()
    print_rows(
        f"shiftkit hook pre-commit, {args.features} features, {args.rounds} interleaved rounds",
        figures(args.rounds, args.features),
    )


def figures(rounds: int, n_features: int = 5000) -> list[Row]:
    args = argparse.Namespace(rounds=rounds, features=n_features)

    home = scratch()
    env = bench_env(home)
    project = home / "project"
    sh(["shiftkit", "new", str(project), "--defaults"], home, env)
    (project / "features.json").write_text(make_features(args.features))
    sh(["git", "add", "features.json"], project, env)
    # A synthetic list with half its features passing cannot pass the rules: set it up past
    # them. The first hook run validates it once and records that.
    sh(
        ["git", *NO_HOOKS, "commit", "-q", "--no-verify", "-m", "Bench: a 5,000-feature list"],
        project,
        env,
    )

    # A clone whose record of validated lists is wiped before every run: the hook checks all.
    clone = project.parent / "clone"
    sh(["git", "clone", "-q", str(project), str(clone)], home, env)

    unstaged = project.parent / "unstaged"
    sh(["git", "clone", "-q", str(project), str(unstaged)], home, env)
    (unstaged / "notes.txt").write_text("a change that is not the feature list\n")
    sh(["git", "add", "notes.txt"], unstaged, env)

    for where in (project, clone):
        doc = json.loads((where / "features.json").read_text())
        doc["features"].append(
            {
                "id": "F9999",
                "category": "functional",
                "description": "New",
                "steps": ["s"],
                "passes": False,
            }
        )
        (where / "features.json").write_text(json.dumps(doc, indent=2) + "\n")
        sh(["git", "add", "features.json"], where, env)

    def run(cmd: list[str], cwd: object) -> None:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True)
        if proc.returncode != 0:
            raise SystemExit(f"{cmd} failed: {proc.stderr.decode()}")

    hook = ["shiftkit", "hook", "pre-commit"]
    medians = side_by_side(
        {
            "python -c pass": lambda: run([sys.executable, "-c", "pass"], home),
            "hook, features.json not staged": lambda: run(hook, unstaged),
            "hook, list staged": lambda: run(hook, project),
            "hook, list staged, fresh clone": lambda: (
                shutil.rmtree(clone / ".git" / "shiftkit", ignore_errors=True),
                run(hook, clone),
            ),
        },
        args.rounds,
    )
    base = medians["python -c pass"]
    return [
        Row(f"hook pre-commit: {name} / python -c pass", value / base, f"{ms(value)} / {ms(base)}")
        for name, value in medians.items()
        if name != "python -c pass"
    ]


if __name__ == "__main__":
    main()
