"""The reference-transaction hook on a fast-forward of many already-judged commits.

Since "judged" is a record (decision record 0043), a branch that moves onto commits no local
branch holds is judged commit by commit, unless a judge here passed them before (the verdict
cache). This measures that the record keeps the hook incremental: one project (a scaffold
with the hooks `setup` installs), a ref outside refs/heads holding N commits on top of main
and another holding 1, both judged once by the hook (untimed); then, side by side, a branch
at main moved onto each (`git update-ref`, timed) and deleted again.

Run: python bench/judged_ff.py [--rounds N] [--commits N]
Bar (issue "Trust by construction"): 1,000 judged commits / 1 commit <= 1.5.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import time
from pathlib import Path

from _common import Row, bench_env, ms, print_rows, scratch, sh

BAR = 1.5


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--commits", type=int, default=1000)
    args = parser.parse_args()
    print_rows(
        f"reference-transaction hook, fast-forward of judged commits, {args.rounds} rounds",
        figures(args.rounds, args.commits),
    )


def figures(rounds: int, commits: int = 1000) -> list[Row]:
    many, one = measure(rounds, commits)
    return [
        Row(
            f"reference-transaction: fast-forward of {commits:,} judged commits / of 1",
            many / one,
            f"{ms(many)} / {ms(one)}",
            BAR,
        )
    ]


def measure(rounds: int, commits: int) -> tuple[float, float]:
    home = scratch()
    env = bench_env(home)
    project = home / "project"
    sh(["shiftkit", "new", str(project), "--defaults"], home, env)
    base = sh(["git", "rev-parse", "HEAD"], project, env).strip()
    tips = {}
    for name, count in (("many", commits), ("one", 1)):
        tips[name] = _chain(project, env, base, count, name)
        sh(["git", "update-ref", f"refs/bench/{name}", tips[name]], project, env)
        # Judged once, by the hook itself: the branch moves on (and is deleted again).
        sh(["git", "update-ref", f"refs/heads/judge-{name}", tips[name]], project, env)
        sh(["git", "update-ref", "-d", f"refs/heads/judge-{name}"], project, env)

    def move(name: str) -> float:
        sh(["git", "update-ref", f"refs/heads/ff-{name}", base], project, env)
        start = time.perf_counter()
        timed = subprocess.run(
            ["git", "update-ref", f"refs/heads/ff-{name}", tips[name], base],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
        )
        elapsed = time.perf_counter() - start
        if timed.returncode != 0:
            raise SystemExit(f"the fast-forward was refused:\n{timed.stderr}")
        sh(["git", "update-ref", "-d", f"refs/heads/ff-{name}"], project, env)
        return elapsed

    # Interleaved rounds in a shuffled order; only the move itself is timed.
    shuffler = random.Random(1729)
    samples: dict[str, list[float]] = {name: [] for name in tips}
    names = list(tips)
    for name in names:  # warm caches
        move(name)
    for _ in range(rounds):
        shuffler.shuffle(names)
        for name in names:
            samples[name].append(move(name))
    return statistics.median(samples["many"]), statistics.median(samples["one"])


def _chain(project: Path, env: dict[str, str], base: str, count: int, name: str) -> str:
    """``count`` commits on ``base``, each adding a line to a notes file (nothing the rules
    protect), made with `git fast-import`: one process however many."""
    lines = []
    text = ""
    for index in range(count):
        text += f"{name} {index}\n"
        data = text.encode()
        message = f"Take note {index} ({name})".encode()
        lines.append(b"commit refs/bench/build-" + name.encode())
        lines.append(b"committer Bench <bench@shiftkit.invalid> 1764590400 +0000")
        lines.append(b"data %d" % len(message) + b"\n" + message)
        if index == 0:
            lines.append(b"from " + base.encode())
        lines.append(b"M 100644 inline notes-" + name.encode() + b".txt")
        lines.append(b"data %d" % len(data) + b"\n" + data)
    lines.append(b"")
    proc = subprocess.run(
        ["git", "fast-import", "--quiet"],
        cwd=project,
        env=env,
        input=b"\n".join(lines),
        capture_output=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"fast-import failed: {proc.stderr.decode()}")
    ref = f"refs/bench/build-{name}"
    tip = sh(["git", "rev-parse", ref], project, env).strip()
    sh(["git", "update-ref", "-d", ref], project, env)
    return tip


if __name__ == "__main__":
    main()
