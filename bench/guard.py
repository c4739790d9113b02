"""`shiftkit guard` on a 500-character Bash command, as the harness runs it: the process
`.claude/settings.json` and `.codex/hooks.json` spawn (`.shiftkit/hook guard`, the hook JSON on
stdin), its 95th percentile against the 150 ms bar (issue 27), side by side with a bare
`python -c pass` of the same interpreter (its p95, and the ratio of the medians), and the
decision alone in process.

Run: python bench/guard.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

from _common import Row, bench_env, ms, print_rows, scratch, sh

BAR = 0.150  # seconds: issue 27's bar for the guard's p95
COMMAND = (
    "cd src && pytest -q tests/test_todo.py -k 'add or remove' 2>&1 | tail -20 && cd .. && "
    "git add -A && git commit -m \"$(cat <<'EOF'\nF012: the todo list keeps its order\n\n"
    "Sorting moved into the store so the endpoint and the CLI agree; the old helper is gone.\n"
    'Co-Authored-By: an agent <agent@example.invalid>\nEOF\n)" && git log --oneline -3 && '
    "python3 -c \"import json; print(len(json.load(open('features.json'))['features']))\" && "
    "grep -rn 'TODO' src | head -5; ls -la .shiftkit && shiftkit status"
)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def figures(rounds: int) -> list[Row]:
    home = scratch()
    env = bench_env(home)
    project = home / "project"
    sh(["shiftkit", "new", str(project), "--defaults"], home, env)
    command = (COMMAND + " " + "x" * 500)[:500]
    payload = json.dumps(
        {
            "session_id": "bench",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "cwd": str(project),
        }
    ).encode()
    # the interpreter `shiftkit setup` recorded, which the hook script runs
    python = (project / ".git" / "shiftkit" / "interpreter").read_text().strip()

    def hook() -> None:
        proc = subprocess.run(
            [str(project / ".shiftkit" / "hook"), "guard"],
            cwd=project,
            env=env,
            input=payload,
            capture_output=True,
        )
        if proc.returncode != 0:
            raise SystemExit(f"guard did not allow the command: {proc.stderr.decode()}")

    def bare() -> None:
        subprocess.run([python, "-c", "pass"], cwd=project, env=env, check=True)

    actions = {"guard": hook, "python": bare}
    samples: dict[str, list[float]] = {name: [] for name in actions}
    for action in actions.values():  # warm the file cache and the bytecode
        action()
    order = list(actions)
    shuffler = random.Random(1729)
    for _ in range(rounds):
        shuffler.shuffle(order)  # interleaved, so the machine's load hits both alike
        for name in order:
            start = time.perf_counter()
            actions[name]()
            samples[name].append(time.perf_counter() - start)
    p95, base95 = (percentile(samples[n], 0.95) for n in ("guard", "python"))
    median, base = (percentile(samples[n], 0.5) for n in ("guard", "python"))
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from shiftkit.core.guard_command import check_command
    from shiftkit.core.guard_paths import Site

    site = Site("features.json", ("claude-progress.txt",), str(project), "")
    decisions = []
    for _ in range(rounds * 10):
        start = time.perf_counter()
        check_command(command, site)
        decisions.append(time.perf_counter() - start)
    decided = percentile(decisions, 0.95)
    return [
        Row(
            "guard p95 (.shiftkit/hook guard, whole process), 500 chars / 150 ms",
            p95 / BAR,
            f"{ms(p95)} (python -c pass p95 {ms(base95)})",
            1.0,
        ),
        Row("guard p95 / python -c pass p95", p95 / base95, f"{ms(p95)} / {ms(base95)}"),
        Row("guard median / python -c pass median", median / base, f"{ms(median)} / {ms(base)}"),
        Row("guard decision alone (in process) p95 / 150 ms", decided / BAR, f"{ms(decided)}"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    print_rows(f"shiftkit guard, {args.rounds} rounds", figures(args.rounds))


if __name__ == "__main__":
    main()
