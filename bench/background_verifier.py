"""What a process a verifier leaves running costs its run (decision record 0095).

Run: python bench/background_verifier.py [--rounds N]
Bars (issue 35 item 5): a verifier of 1 s that leaves `sleep 600` running ÷ the same verifier
leaving nothing <= 1.10, untraced and under strace (its read set measured, as `finish` runs it);
the leftover must be gone after each run. Before 0095 the traced run waited for the leftover
until `verify_timeout` (900 s) and failed; the untraced one passed and left it running.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import Row, ms, print_rows, scratch, side_by_side

from shiftkit.edge import readsets, verify

TIMEOUT = 900  # (the default `verify_timeout`: what a hung run would last)
ALONE = "sleep 1"


def leaving(pid_file: Path) -> str:
    return f"sleep 600 & echo $! > {pid_file}; sleep 1"


def gone(pid_file: Path) -> bool:
    """The leftover has exited (a zombie has: it waits only to be reaped)."""
    try:
        stat = Path(f"/proc/{pid_file.read_text().strip()}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rpartition(")")[2].split()[0] in ("Z", "X")


def figures(rounds: int = 5) -> list[Row]:
    home = scratch()
    pid_file = home / "leftover.pid"
    traced = readsets.tracer() is not None
    longest = [0.0]

    def run(command: str, measure: bool) -> None:
        with readsets.measuring(measure) as measured:
            prefix = measured.prefix if measured is not None else ()
            outcome = verify.run_command(command, home, TIMEOUT, prefix=prefix)
        if not outcome.ok:
            raise SystemExit(f"bench: {command!r} failed: {outcome.summary()}\n{outcome.output}")
        if command != ALONE and not gone(pid_file):
            raise SystemExit("bench: the verifier's leftover is still running")
        longest[0] = max(longest[0], outcome.seconds)

    cases = {
        "alone": lambda: run(ALONE, False),
        "leaving": lambda: run(leaving(pid_file), False),
    }
    if traced:
        cases["alone traced"] = lambda: run(ALONE, True)
        cases["leaving traced"] = lambda: run(leaving(pid_file), True)
    runs = side_by_side(cases, rounds)
    shutil.rmtree(home, ignore_errors=True)
    rows = [
        Row(
            "1 s verifier leaving `sleep 600` running ÷ leaving nothing",
            runs["leaving"] / runs["alone"],
            f"{ms(runs['leaving'])} vs {ms(runs['alone'])}",
            1.10,
        )
    ]
    if traced:
        rows.append(
            Row(
                "the same under strace (read set measured)",
                runs["leaving traced"] / runs["alone traced"],
                f"{ms(runs['leaving traced'])} vs {ms(runs['alone traced'])}",
                1.10,
            )
        )
    else:
        print("bench: strace is missing or cannot trace here: the traced row is left out")
    rows.append(
        Row(
            f"the longest run ÷ the timeout ({TIMEOUT} s)",
            longest[0] / TIMEOUT,
            f"{ms(longest[0])} vs {TIMEOUT} s",
            0.01,
        )
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print_rows("a verifier leaving a process running", figures(args.rounds))


if __name__ == "__main__":
    main()
