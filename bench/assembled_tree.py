"""The assembled tree (decision record 0086): what running every verdict on the judged
commit's files under `code` and the person's state for the rest adds to a verifier run.

Run: python bench/assembled_tree.py [--rounds N] [--files N] [--commits N]
Bar: a 1 s verifier in a temporary checkout with `code` set ÷ the same without <= 1.10 (the
person's state kept in the git dir, as after a first run), and the first run's cold assembly
(one `git log` of the history since `code` was set) printed beside it.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from _common import NO_HOOKS, Row, bench_env, ms, print_rows, scratch, sh, side_by_side

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

VERIFIER = "python3 -c 'import time; time.sleep(1)'"


def build(home: Path, env: dict[str, str], files: int, commits: int) -> tuple[Path, str, str]:
    """A project of ``files`` modules and tests; `code` set by a person; then ``commits``
    agent commits, each changing a file outside `code`. (project, tip without code, tip)."""
    project = home / "assembled-bench"
    sh(["shiftkit", "new", str(project), "--defaults"], home, env)
    for i in range(files):
        where = project / ("src/pkg" if i % 5 else "tests") / f"m{i}.py"
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text(f"VALUE = {i}\n")
    sh(["git", "add", "-A"], project, env)
    sh(["git", *NO_HOOKS, "commit", "-q", "--no-verify", "-m", "Bench: the project"], project, env)
    before = sh(["git", "rev-parse", "HEAD"], project, env).strip()
    settings = project / ".shiftkit.toml"
    settings.write_text(
        settings.read_text().replace("[shiftkit]\n", '[shiftkit]\ncode = ["src/**"]\n', 1)
    )
    sh(["git", "add", "-A"], project, env)
    message = "Bench: the ground\n\nShiftkit-Override: a person sets it\n"
    sh(["git", *NO_HOOKS, "commit", "-q", "--no-verify", "-m", message], project, env)
    for i in range(commits):
        (project / "docs" / f"n{i}.md").parent.mkdir(exist_ok=True)
        (project / "docs" / f"n{i}.md").write_text(f"note {i}\n")
        sh(["git", "add", "-A"], project, env)
        sh(["git", *NO_HOOKS, "commit", "-q", "--no-verify", "-m", f"Note {i}"], project, env)
    tip = sh(["git", "rev-parse", "HEAD"], project, env).strip()
    return project, before, tip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--commits", type=int, default=50)
    args = parser.parse_args()
    import os

    from shiftkit.edge import assemble, gitio, state, verify

    home = scratch()
    env = bench_env(home)
    os.environ.update(env)
    project, before, tip = build(home, env, args.files, args.commits)
    tree = gitio.out(["rev-parse", f"{tip}^{{tree}}"], project).strip()
    common = gitio.common_dir(project)

    def run(at: str) -> None:
        assemble._PERSON.clear()  # (a new process: only the git dir's record is kept)
        assemble._ASSEMBLED.clear()
        outcome = verify.run_in_checkout(project, tree, VERIFIER, "", 60, tip=at)
        assert outcome.ok, outcome.output

    def cold() -> None:
        shutil.rmtree(state.repo_state(common) / "person", ignore_errors=True)
        assemble._PERSON.clear()
        assemble._ASSEMBLED.clear()
        assemble.assembled(project, tree, tip)

    assert assemble.assembled(project, tree, tip) != tree  # (the notes are taken back)
    times = side_by_side(
        {"without code": lambda: run(before), "with code": lambda: run(tip), "cold": cold},
        args.rounds,
    )
    ratio = times["with code"] / times["without code"]
    cold_share = times["cold"] / times["without code"]
    print_rows(
        f"assembled tree: {args.files} files, {args.commits} agent commits outside `code`",
        [
            Row(
                "1 s verifier, `code` set / not set",
                ratio,
                f"{ms(times['with code'])} vs {ms(times['without code'])}",
                1.10,
            ),
            Row("cold assembly / 1 s verifier", cold_share, ms(times["cold"])),
        ],
    )
    shutil.rmtree(home, ignore_errors=True)
    if ratio > 1.10:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
