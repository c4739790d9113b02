"""The finish gate (decision record 0054): `finish` re-verifies, beside the claimed feature,
every passing feature the change can break — in parallel temporary checkouts.

Run: python bench/finish_gate.py [--rounds N]
Bar (issue 26): with 10 affected passing features whose verifiers sleep 0.5 s, the gate (the
claimed feature's verifier and, beside it, the 10 others: `gate.verify_change`) at `-j 2` ÷ the
same at `-j 1` (one after another) <= 0.6. Reported: the whole `finish -j 2` ÷ `finish -j 1`,
whose commit through the real hooks costs the same for both. Each run is in a fresh copy of
one project (nothing recorded: every passing feature's read set unknown, so all 10 are
affected).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from _common import NO_HOOKS, Row, bench_env, ms, print_rows, scratch, sh, time_once

AFFECTED = 10
SLEEP = 0.5


def build(home: Path, env: dict[str, str]) -> Path:
    project = home / "finish-gate"
    sh(["shiftkit", "new", str(project), "--defaults"], home, env)
    listing = json.loads((project / "features.json").read_text())
    listing["features"] = [
        {
            "id": f"F{i:03d}",
            "category": "functional",
            "description": f"Feature {i} works",
            "steps": ["run it"],
            "verify": f"sleep {SLEEP}",
            "passes": True,
        }
        for i in range(1, AFFECTED + 1)
    ] + [
        {
            "id": "F099",
            "category": "functional",
            "description": "The feature being finished",
            "steps": ["run it"],
            "verify": "test -f done.txt",
            "passes": False,
        }
    ]
    (project / "features.json").write_text(json.dumps(listing, indent=2) + "\n")
    sh(["git", "add", "-A"], project, env)
    sh(
        ["git", *NO_HOOKS, "commit", "-q", "--no-verify", "-m", "Bench: 10 passing features"],
        project,
        env,
    )
    return project


def _finish(pristine: Path, home: Path, jobs: int, env: dict[str, str]) -> float:
    copy = home / f"copy-{jobs}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(pristine, copy, symlinks=True)
    sh(["shiftkit", "claim", "F099"], copy, env)
    (copy / "done.txt").write_text("done\n")

    def finish() -> None:
        proc = subprocess.run(
            ["shiftkit", "finish", "-j", str(jobs), "-m", "the feature is done"],
            cwd=copy,
            env=env,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0 or f"F{AFFECTED:03d}" not in proc.stdout:
            raise SystemExit(f"bench: finish failed\n{proc.stdout}{proc.stderr}")

    seconds = time_once(finish)
    shutil.rmtree(copy, ignore_errors=True)
    return seconds


def _gate(pristine: Path, home: Path, jobs: int, env: dict[str, str]) -> float:
    """The gate step alone, in this process: `gate.verify_change` for F099 at HEAD."""
    import os

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from shiftkit.edge import gate, gitio
    from shiftkit.edge.context import open_context
    from shiftkit.edge.project import read_features_at

    copy = home / f"gate-{jobs}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(pristine, copy, symlinks=True)
    (copy / "done.txt").write_text("done\n")
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        ctx = open_context(copy)
        committed = read_features_at(ctx.root, "HEAD", ctx.config.features)
        assert committed is not None
        feature = committed.by_id["F099"]
        head = gitio.head_oid(ctx.root) or ""
        verdict: list[object] = []
        seconds = time_once(
            lambda: verdict.append(
                gate.verify_change(ctx, feature, committed, head, jobs, lambda line: None)
            )
        )
    finally:
        os.environ.clear()
        os.environ.update(saved)
    if len(verdict[0].checked) != AFFECTED:  # type: ignore[attr-defined]
        raise SystemExit(f"bench: the gate verified {verdict[0]}")
    shutil.rmtree(copy, ignore_errors=True)
    return seconds


def figures(rounds: int = 3) -> list[Row]:
    home = scratch()
    env = bench_env(home)
    pristine = build(home, env)
    gates: dict[int, list[float]] = {1: [], 2: []}
    whole: dict[int, list[float]] = {1: [], 2: []}
    for n in range(max(1, rounds)):
        for jobs in (1, 2) if n % 2 == 0 else (2, 1):
            gates[jobs].append(_gate(pristine, home, jobs, env))
    for jobs in (1, 2):
        whole[jobs].append(_finish(pristine, home, jobs, env))
    shutil.rmtree(home, ignore_errors=True)
    one, two = statistics.median(gates[1]), statistics.median(gates[2])
    f_one, f_two = statistics.median(whole[1]), statistics.median(whole[2])
    return [
        Row(
            "finish's gate -j 2 ÷ -j 1, 10 affected verifiers sleeping 0.5 s",
            two / one,
            f"{ms(two)} vs {ms(one)}",
            0.6,
        ),
        Row(
            "the whole finish -j 2 ÷ -j 1 (its commit through the hooks included)",
            f_two / f_one,
            f"{ms(f_two)} vs {ms(f_one)}",
            None,
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print_rows("shiftkit finish: the gate", figures(args.rounds))


if __name__ == "__main__":
    main()
