"""`shiftkit report` over a long history, against `shiftkit audit` over the same history.

The history of bench/audit_scale.py (50 features; after the commit that sets the list, 5,000
commits that each flip or demote a feature with its log entry and the trailers `finish`
writes, written past every hook and repacked as a clone receives it): every commit changes
the list, so the report's walk reads every version, as `audit` does.

Figures:
  report / audit, 5,000 commits   `shiftkit report -o FILE` (the page, charts included) against
                                  `shiftkit audit`, both over all protocol history

Run: python bench/report.py [--rounds N] [--commits N]
Bar (issue 22): report / audit <= 2.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path

from _common import Row, bench_env, print_rows, scratch, sh, side_by_side
from audit_scale import build

FEATURES = 50
COMMITS = 5000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--commits", type=int, default=COMMITS)
    args = parser.parse_args()
    print_rows(
        f"report against audit, {args.rounds} interleaved rounds",
        figures(args.rounds, args.commits),
    )


def audit_all(project: Path, env: dict[str, str]) -> None:
    """`shiftkit audit` over all protocol history (it names the setup's commit, made past the
    hooks, and exits 1: the same reading and judging either way)."""
    proc = subprocess.run(["shiftkit", "audit"], cwd=project, env=env, capture_output=True)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"bench: audit failed\n{proc.stderr.decode(errors='replace')}")


def figures(rounds: int, commits: int = COMMITS) -> list[Row]:
    home = scratch()
    env = bench_env(home)
    project, _ = build(home, "report-long", FEATURES, commits, env)
    page = home / "report.html"
    sh(["shiftkit", "report", "-o", str(page)], project, env)  # (fails loudly: no extra)
    times = side_by_side(
        {
            "report": lambda: sh(["shiftkit", "report", "-o", str(page)], project, env),
            "audit": lambda: audit_all(project, env),
        },
        max(1, min(rounds, 5)),
    )
    size = Path(page).stat().st_size
    shutil.rmtree(home, ignore_errors=True)
    return [
        Row(
            f"report / audit, {commits:,} commits at {FEATURES} features ({size // 1024} KiB page)",
            times["report"] / times["audit"],
            f"{times['report']:.2f} s / {times['audit']:.2f} s",
            2.0,
        )
    ]


if __name__ == "__main__":
    main()
