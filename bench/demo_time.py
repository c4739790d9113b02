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
import time

from _common import Row, bench_env, print_rows, scratch

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
    failed = ""
    try:
        for n in range(max(1, min(rounds, 3))):
            target = home / f"demo-{n}" / "todo-app"
            start = time.perf_counter()
            done = subprocess.run(
                ["shiftkit", "demo", str(target)],
                cwd=home,
                env=env,
                capture_output=True,
                text=True,
            )
            times.append(time.perf_counter() - start)
            if done.returncode != 0:  # a figure of a demo that did not play is no figure
                last = (done.stdout + done.stderr).strip().splitlines()[-1:] or [""]
                failed = f"demo exited {done.returncode}: {last[0][:120]}"
                break
    finally:
        shutil.rmtree(home, ignore_errors=True)
    if failed:
        return [Row("demo wall time (s)", float("inf"), failed, BAR_SECONDS)]
    median = statistics.median(times)
    detail = f"median of {len(times)}: {median:.1f} s ({', '.join(f'{t:.1f}' for t in times)})"
    return [Row("demo wall time (s)", median, detail, BAR_SECONDS)]


if __name__ == "__main__":
    main()
