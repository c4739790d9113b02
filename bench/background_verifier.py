"""A verifier that leaves a background process (decision record 0099): what it costs, untraced
and under strace (read sets), beside the same verifier leaving nothing behind.

Run: python bench/background_verifier.py [--rounds N]
Bar: a 1 s verifier leaving `sleep 600 &` behind ÷ the same verifier alone <= 1.10, traced and
untraced (before 0099, traced, it lasted until the 900 s timeout and failed). Also printed:
the environment a verifier run is given (the allowlist, the tree's plugins, the imports shim)
÷ a bare `/bin/sh` of the same 1 s command, reported.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import Row, ms, print_rows, side_by_side

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ALONE = "python3 -c 'import time; time.sleep(1)'"
LEAVING = "sleep 600 & python3 -c 'import time; time.sleep(1)'"


def main() -> None:
    from shiftkit.edge import readsets, verify

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    where = Path(tempfile.mkdtemp(prefix="bench-background-"))
    subprocess.run(["git", "init", "-q"], cwd=where, check=True)

    def run(command: str, traced: bool) -> None:
        with readsets.measuring(traced) as measure:
            prefix = measure.prefix if measure is not None else ()
            outcome = verify.run_command(command, where, timeout=60, prefix=prefix)
        assert outcome.ok, outcome

    def bare() -> None:
        subprocess.run(["/bin/sh", "-c", ALONE], cwd=where, check=True)

    actions = {
        "alone": lambda: run(ALONE, False),
        "leaving": lambda: run(LEAVING, False),
        "alone traced": lambda: run(ALONE, True),
        "leaving traced": lambda: run(LEAVING, True),
        "bare sh": bare,
    }
    medians = side_by_side(actions, args.rounds)
    rows = [
        Row(
            "leaving a process ÷ alone, untraced",
            medians["leaving"] / medians["alone"],
            f"{ms(medians['leaving'])} vs {ms(medians['alone'])}",
            1.10,
        ),
        Row(
            "leaving a process ÷ alone, under strace",
            medians["leaving traced"] / medians["alone traced"],
            f"{ms(medians['leaving traced'])} vs {ms(medians['alone traced'])}",
            1.10,
        ),
        Row(
            "a verifier run's environment ÷ a bare /bin/sh",
            medians["alone"] / medians["bare sh"],
            f"{ms(medians['alone'])} vs {ms(medians['bare sh'])}",
            1.10,
        ),
    ]
    print_rows("A verifier leaving a background process (decision record 0099)", rows)


if __name__ == "__main__":
    main()
