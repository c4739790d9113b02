"""`shiftkit demo`'s wall time: a newcomer's first command (four shifts through `shiftkit run`
and the real hooks), in a fresh folder each round.

Figures:
  demo wall time (s)   the median of ``rounds`` runs (at most 3: a run takes ~25 s)

Run: python bench/demo_time.py [--rounds N]
Bar (issue 30): <= 30 s on this machine.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
from pathlib import Path

from _common import Row, bench_env, print_rows, scratch, time_once

BAR_SECONDS = 30.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print_rows("shiftkit demo, wall time", figures(args.rounds))


def figures(rounds: int = 3) -> list[Row]:
    home = scratch()
    env = bench_env(home)
    times = []
    try:
        for n in range(max(1, min(rounds, 3))):
            target = home / f"demo-{n}" / "todo-app"

            def play(target: Path = target) -> None:
                done = subprocess.run(
                    ["shiftkit", "demo", str(target)], env=env, capture_output=True, text=True
                )
                if done.returncode != 0:
                    raise SystemExit(f"shiftkit demo failed:\n{done.stdout}{done.stderr}")

            times.append(time_once(play))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    median = statistics.median(times)
    detail = f"median of {len(times)}: {median:.1f} s ({', '.join(f'{t:.1f}' for t in times)})"
    return [Row("demo wall time (s)", median, detail, BAR_SECONDS)]


if __name__ == "__main__":
    main()
