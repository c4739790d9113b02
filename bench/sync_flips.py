"""`shiftkit sync` bringing in 8 flips whose verifiers sleep 1 s: re-verified in parallel
(`-j 2`) against one after another (`-j 1`) — issue 29.6.

A worker clone finishes 8 features (`sleep 1` each) and pushes them; each round, a fresh clone
behind them (reset to the commit before the flips, its verification cache empty) runs `sync`,
which re-verifies every incoming flip in a temporary checkout before moving the branch. Only
the sync is timed; the two cases alternate, in a shuffled order each round.

Run: python bench/sync_flips.py [--rounds N]
Bar (issue 29): -j 2 ÷ -j 1 <= 0.6.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import time
from pathlib import Path

from _common import Row, bench_env, ms, print_rows, scratch, sh

FLIPS = 8


def figures(rounds: int) -> list[Row]:
    times = measure(max(1, min(rounds, 3)))
    return [
        Row(
            f"sync -j 2 ÷ -j 1, {FLIPS} incoming flips sleeping 1 s",
            times["j2"] / times["j1"],
            f"{ms(times['j2'])} vs {ms(times['j1'])}",
            0.6,
        )
    ]


def measure(rounds: int) -> dict[str, float]:
    home = scratch()
    env = bench_env(home)
    origin = home / "origin"
    sh(["shiftkit", "new", str(origin), "--defaults"], home, env)
    for index in range(FLIPS):
        sh(
            [
                "shiftkit",
                "add",
                "--description",
                f"part {index}",
                "--step",
                "s",
                "--verify",
                "sleep 1",
            ],
            origin,
            env,
        )
    config = origin / ".shiftkit.toml"
    config.write_text(config.read_text().replace('remote = ""', 'remote = "origin"'))
    sh(["git", "add", "-A"], origin, env)
    sh(["git", "commit", "-q", "-m", "Bench: eight sleeping features"], origin, env)
    bare = home / "remote.git"
    sh(["git", "clone", "-q", "--bare", str(origin), str(bare)], home, env)
    worker = home / "worker"
    sh(["git", "clone", "-q", str(bare), str(worker)], home, env)
    sh(["shiftkit", "install-hooks", "--force"], worker, env)
    base = sh(["git", "rev-parse", "HEAD"], worker, env).strip()
    for index in range(1, FLIPS + 1):
        sh(["shiftkit", "claim", f"F{index:03d}"], worker, env)
        (worker / f"part{index}.txt").write_text(f"{index}\n")
        sh(["git", "add", f"part{index}.txt"], worker, env)
        sh(["shiftkit", "finish", "-m", f"part {index} works"], worker, env)

    def behind(name: str) -> Path:
        clone = home / name
        shutil.rmtree(clone, ignore_errors=True)
        sh(["git", "clone", "-q", str(bare), str(clone)], home, env)
        sh(["git", "reset", "-q", "--hard", base], clone, env)
        sh(["shiftkit", "install-hooks", "--force"], clone, env)
        return clone

    samples: dict[str, list[float]] = {"j1": [], "j2": []}
    shuffler = random.Random(1729)
    names = list(samples)
    for _ in range(rounds):
        shuffler.shuffle(names)
        for name in names:
            clone = behind(name)
            start = time.perf_counter()
            said = sh(["shiftkit", "sync", "-j", name[1:]], clone, env)
            samples[name].append(time.perf_counter() - start)
            assert "fast-forwarded" in said, said
    shutil.rmtree(home, ignore_errors=True)
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print_rows("shiftkit sync, incoming flips", figures(args.rounds))


if __name__ == "__main__":
    main()
