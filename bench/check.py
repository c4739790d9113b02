"""`shiftkit check`: parallel verifiers, and the cost of a check that has nothing to run.

Run: python bench/check.py [--rounds N]
Bars (issue 18): 50 passing features whose verifiers sleep 0.2 s, `check -j 2` ÷ `check -j 1`
<= 0.6 (both with an empty cache: every verifier runs); a second `check` at the same HEAD
(everything recorded as passing at its tree) ÷ `status` <= 1.5.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from pathlib import Path

from _common import NO_HOOKS, Row, bench_env, ms, print_rows, scratch, sh, side_by_side

FEATURES = 50
SLEEP = 0.2


def build(home: Path, env: dict[str, str]) -> Path:
    project = home / "check-bench"
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
        for i in range(FEATURES)
    ]
    (project / "features.json").write_text(json.dumps(listing, indent=2) + "\n")
    sh(["git", "add", "-A"], project, env)
    sh(
        ["git", *NO_HOOKS, "commit", "-q", "--no-verify", "-m", "Bench: 50 sleeping features"],
        project,
        env,
    )
    return project


def figures(rounds: int = 3) -> list[Row]:
    home = scratch()
    env = bench_env(home)
    project = build(home, env)
    cache = project / ".git" / "shiftkit" / "passed"

    def check(*args: str, fresh: bool = False) -> None:
        if fresh:
            shutil.rmtree(cache, ignore_errors=True)
        proc = subprocess.run(
            ["shiftkit", "check", *args], cwd=project, env=env, capture_output=True, text=True
        )
        if proc.returncode != 0:
            raise SystemExit(f"bench: check failed\n{proc.stdout}{proc.stderr}")

    def status() -> None:
        subprocess.run(["shiftkit", "status"], cwd=project, env=env, capture_output=True)

    heavy = side_by_side(
        {
            "j1": lambda: check("-j", "1", fresh=True),
            "j2": lambda: check("-j", "2", fresh=True),
        },
        max(1, min(rounds, 3)),
    )
    check()  # every pass recorded at this tree
    light = side_by_side({"again": check, "status": status}, rounds)
    shutil.rmtree(home, ignore_errors=True)
    return [
        Row(
            "check -j 2 ÷ -j 1, 50 verifiers sleeping 0.2 s",
            heavy["j2"] / heavy["j1"],
            f"{ms(heavy['j2'])} vs {ms(heavy['j1'])}",
            0.6,
        ),
        Row(
            "check again at the same HEAD ÷ status",
            light["again"] / light["status"],
            f"{ms(light['again'])} vs {ms(light['status'])}",
            1.5,
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print_rows("shiftkit check", figures(args.rounds))


if __name__ == "__main__":
    main()
