"""`shiftkit run`'s own time per session (everything but the agent, whose command here is
`true`) at 50 and 5,000 features, and `shiftkit cost` over a 20,000-entry ledger next to
`shiftkit status` on the same project.

Run: python bench/run_and_cost.py [--rounds N]
Bar (issue 11): a run session at 5,000 features <= 1.2 x at 50. cost vs status: reported.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from _common import Row, bench_env, make_project, ms, print_rows, scratch, side_by_side

ENTRIES = 20_000


def build(home: Path, name: str, n_features: int, env: dict[str, str], ledger: int = 0) -> Path:
    files = {".shiftkit/ledger.jsonl": make_ledger(ledger, n_features)} if ledger else {}
    return make_project(home, name, n_features, env, files=files)


def make_ledger(n: int, n_features: int) -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from shiftkit.core import ledger
    from shiftkit.core.ledger import Entry, Usage

    entries = []
    for i in range(n):
        feature = f"F{i % n_features:04d}" if i % 10 else None
        at = f"2026-11-{i % 28 + 1:02d}T{i % 24:02d}:{i % 60:02d}:00.000Z"
        if i % 5 == 1:
            entries.append(
                Entry(
                    "unit",
                    f"u{i:015d}",
                    at,
                    feature or "F0000",
                    session=f"s{i // 7}",
                    outcome="failed" if i % 3 else "passed",
                    claimed_at=at,
                )
            )
        elif i % 5 == 2:
            entries.append(Entry("verify", f"v{i:015d}", at, feature, ok=True, seconds=1.5))
        else:
            entries.append(
                Entry(
                    "usage",
                    f"x{i:015d}",
                    at,
                    feature,
                    session=f"s{i // 7}",
                    model="claude-sonnet-4-5",
                    usage=Usage(1200, 40_000, 3000, 500),
                    source="transcript",
                )
            )
    return ledger.dumps(entries)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print_rows(f"shiftkit run and cost, {args.rounds} interleaved rounds", figures(args.rounds))


def figures(rounds: int = 5) -> list[Row]:
    home = scratch()
    env = bench_env(home)
    small = build(home, "small", 50, env)
    large = build(home, "large", 5000, env)
    billed = build(home, "billed", 50, env, ledger=ENTRIES)

    def session(project: Path) -> None:
        # The start check runs each time (its record is dropped), as before a real session.
        (project / ".git" / "shiftkit" / "start-check.json").unlink(missing_ok=True)
        proc = subprocess.run(
            ["shiftkit", "run", "--agent", "true", "--max-sessions", "1"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 14:  # stopped at --max-sessions, as expected
            raise SystemExit(f"bench: shiftkit run exited {proc.returncode}: {proc.stderr}")

    def agent_alone() -> None:
        subprocess.run(["true"], cwd=small, env=env, check=True)

    def command(project: Path, *args: str) -> None:
        subprocess.run(["shiftkit", *args], cwd=project, env=env, check=True, capture_output=True)

    cost_data = json.loads(
        subprocess.run(
            ["shiftkit", "cost", "--json"], cwd=billed, env=env, capture_output=True, check=True
        ).stdout
    )
    assert cost_data["totals"]["input"] > 0
    times = side_by_side(
        {
            "run 50": lambda: session(small),
            "run 5000": lambda: session(large),
            "agent": agent_alone,
            "cost": lambda: command(billed, "cost"),
            "cost --json": lambda: command(billed, "cost", "--json"),
            "status": lambda: command(billed, "status"),
        },
        rounds,
    )
    own_small = times["run 50"] - times["agent"]
    own_large = times["run 5000"] - times["agent"]
    return [
        Row(
            "run session (shiftkit's own), 5,000 / 50 features",
            own_large / own_small,
            f"{ms(own_large)} / {ms(own_small)} (agent `true` {ms(times['agent'])})",
            1.2,
        ),
        Row(
            f"cost / status, ledger of {ENTRIES:,} entries",
            times["cost"] / times["status"],
            f"{ms(times['cost'])} / {ms(times['status'])} (cost --json {ms(times['cost --json'])})",
        ),
    ]


if __name__ == "__main__":
    main()
