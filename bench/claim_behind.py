"""`shiftkit claim` on a clone that is behind three flips whose verifiers sleep 1 s (issue 29,
decision record 0079): the claim catches up first (each incoming flip re-verified at its own
commit), then runs its start check at the new HEAD. Not in `bench/run` (no bar): a figure to
compare two versions of shiftkit — `--source DIR` runs the shiftkit of that checkout (put first
on PYTHONPATH for every process, hooks included).

Each round claims in a fresh copy of the clone behind (its verify cache and read sets empty),
and the claim ref is taken off the remote again after it.

Run alone: python bench/claim_behind.py [--rounds N] [--source DIR]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import bench_env, scratch, sh

NAMES = ("a", "b", "c")


def measure(rounds: int, source: Path | None) -> list[float]:
    home = scratch()
    env = bench_env(home)
    if source is not None:
        env["PYTHONPATH"] = str(source.resolve())
    origin = home / "origin"
    sh(["shiftkit", "new", str(origin), "--defaults"], home, env)
    for name in NAMES:
        verifier = f"sleep 1; grep -q {name} {name}.txt"
        add = ["shiftkit", "add", "--description", f"{name} exists", "--step", "s"]
        sh([*add, "--verify", verifier], origin, env)
    config = origin / ".shiftkit.toml"
    config.write_text(config.read_text().replace('remote = ""', 'remote = "origin"'))
    sh(["git", "add", "-A"], origin, env)
    sh(["git", "commit", "-q", "-m", "Bench: three sleeping features"], origin, env)
    bare = home / "remote.git"
    sh(["git", "clone", "-q", "--bare", str(origin), str(bare)], home, env)
    clones = {}
    for name in ("worker", "behind"):
        clones[name] = home / name
        sh(["git", "clone", "-q", str(bare), str(clones[name])], home, env)
        sh(["shiftkit", "install-hooks", "--force"], clones[name], env)
    sh(["shiftkit", "start"], clones["behind"], env)  # (its own start check, at the old HEAD)
    worker = clones["worker"]
    for index, name in enumerate(NAMES, 1):
        sh(["shiftkit", "claim", f"F{index:03d}"], worker, env)
        (worker / f"{name}.txt").write_text(f"{name}\n")
        sh(["git", "add", f"{name}.txt"], worker, env)
        sh(["shiftkit", "finish", "-m", f"{name}.txt exists"], worker, env)
    times = []
    for round_number in range(rounds):
        clone = home / f"round{round_number}"
        shutil.copytree(clones["behind"], clone, symlinks=True)
        start = time.perf_counter()
        said = sh(["shiftkit", "claim"], clone, env)
        times.append(time.perf_counter() - start)
        assert "caught up first" in said and "claimed F000" in said, said
        sh(["git", "update-ref", "-d", "refs/shiftkit/claims/F000"], bare, env)
    shutil.rmtree(home, ignore_errors=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--source", type=Path, default=None)
    args = parser.parse_args()
    times = measure(args.rounds, args.source)
    shown = ", ".join(f"{t:.2f}" for t in times)
    print(
        f"claim behind 3 flips (1 s verifiers): median {statistics.median(times):.2f} s ({shown})"
    )


if __name__ == "__main__":
    main()
