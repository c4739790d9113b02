"""Claims under contention: claimants racing round after round for one feature, in one
repository (8 processes, the claim ref's compare-and-swap) and through a bare remote on disk
(4 clones, lease-pushed claim refs). Reports double claims (the bar: 0) and the median claim
latency, local and remote side by side.

Run alone: python bench/claims.py [--local-rounds N] [--remote-rounds N]
"""

from __future__ import annotations

import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import Row, bench_env, ms, scratch, sh

LOCAL_CLAIMANTS, REMOTE_CLAIMANTS = 8, 4
LOCAL_ROUNDS, REMOTE_ROUNDS = 500, 200


def _record(feature: str, worker: int, round_: int) -> object:
    from shiftkit.core.claim import ClaimRecord

    return ClaimRecord(feature=feature, session=f"w{worker}-r{round_}", nonce=f"{worker}.{round_}")


def _claimant(
    worker: int,
    place: str,
    remote: str,
    rounds: int,
    barrier: multiprocessing.synchronize.Barrier,
    results: multiprocessing.Queue[tuple[int, int, bool, float]],
) -> None:
    from shiftkit.core.config import ClaimsConfig
    from shiftkit.edge import claims
    from shiftkit.edge import remote as remote_claims

    root = Path(place)
    # As `shiftkit claim` does, the claim push also looks at the remote's branch (ADR 0041).
    look = remote_claims.watch(root, ClaimsConfig(remote=remote)) if remote else None
    assert look is not None or not remote, "a clone without its branch's remote-tracking ref"
    for round_ in range(rounds):
        record = _record("F001", worker, round_)
        barrier.wait()
        start = time.perf_counter()
        try:
            if remote:
                oid = remote_claims.acquire(  # type: ignore[arg-type]
                    root, remote, record, look=look
                )
            else:
                oid = claims.acquire(root, record)  # type: ignore[arg-type]
            won = True
        except claims.ClaimHeld:
            won = False
        elapsed = time.perf_counter() - start
        results.put((round_, worker, won, elapsed))
        barrier.wait()  # every claimant has tried: the winner gives the claim back
        if won:
            if remote:
                remote_claims.release(root, remote, "F001", oid)
            else:
                claims.release_ref(root, "F001", oid)
        barrier.wait()


def race(places: list[Path], remote: str, rounds: int) -> tuple[int, list[float]]:
    """(rounds without exactly one winner, every claim's latency)."""
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(len(places))
    results: multiprocessing.Queue[tuple[int, int, bool, float]] = context.Queue()
    workers = [
        context.Process(target=_claimant, args=(i, str(place), remote, rounds, barrier, results))
        for i, place in enumerate(places)
    ]
    for worker in workers:
        worker.start()
    rows = [results.get(timeout=600) for _ in range(rounds * len(places))]
    for worker in workers:
        worker.join()
    winners: dict[int, int] = {}
    for round_, _, won, _ in rows:
        winners[round_] = winners.get(round_, 0) + int(won)
    bad = sum(1 for count in winners.values() if count != 1)
    return bad, [elapsed for *_, elapsed in rows]


def _repositories(claimants_local: int, claimants_remote: int) -> tuple[list[Path], list[Path]]:
    home = scratch()
    env = bench_env(home)
    os.environ.update({k: v for k, v in env.items() if k.startswith(("GIT_", "PATH"))})
    origin = home / "origin"
    origin.mkdir()
    sh(["git", "init", "-q"], origin, env)
    sh(["git", "commit", "-q", "--allow-empty", "-m", "Start"], origin, env)
    local = [origin]
    for i in range(1, claimants_local):
        tree = home / f"wt{i}"
        sh(["git", "worktree", "add", "-q", "-b", f"w{i}", str(tree)], origin, env)
        local.append(tree)
    bare = home / "remote.git"
    sh(["git", "clone", "-q", "--bare", str(origin), str(bare)], home, env)
    clones = []
    for i in range(claimants_remote):
        clone = home / f"clone{i}"
        sh(["git", "clone", "-q", str(bare), str(clone)], home, env)
        clones.append(clone)
    return local, clones


def figures(
    rounds: int = 11, local_rounds: int = LOCAL_ROUNDS, remote_rounds: int = REMOTE_ROUNDS
) -> list[Row]:
    """``rounds`` (bench/run's) is unused: the rounds here are the issue's."""
    local, clones = _repositories(LOCAL_CLAIMANTS, REMOTE_CLAIMANTS)
    bad_local, local_latency = race(local, "", local_rounds)
    bad_remote, remote_latency = race(clones, "origin", remote_rounds)
    local_median = statistics.median(local_latency)
    remote_median = statistics.median(remote_latency)
    return [
        Row(
            f"double claims, {LOCAL_CLAIMANTS} local claimants x {local_rounds} rounds",
            float(bad_local),
            f"{bad_local} rounds without exactly one winner",
            0.0,
        ),
        Row(
            f"double claims, {REMOTE_CLAIMANTS} remote claimants x {remote_rounds} rounds",
            float(bad_remote),
            f"{bad_remote} rounds without exactly one winner",
            0.0,
        ),
        Row(
            "claim latency, remote / local (median)",
            remote_median / local_median,
            f"{ms(remote_median)} / {ms(local_median)}",
        ),
    ]


if __name__ == "__main__":
    import argparse

    from _common import print_rows

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--local-rounds", type=int, default=LOCAL_ROUNDS)
    parser.add_argument("--remote-rounds", type=int, default=REMOTE_ROUNDS)
    args = parser.parse_args()
    rows = figures(local_rounds=args.local_rounds, remote_rounds=args.remote_rounds)
    print_rows("bench/claims.py", rows)
