"""The SessionStart hook under the real Claude Code (tests/harnesses.py's pinned CLI, against
the tests' scripted model on 127.0.0.1) at 5,000 features as a ratio to 50 features, by the
hook's own duration as Claude Code records it in its transcript (`hook_success.durationMs`).
Beside it, what the hook's time is made of: `shiftkit start --brief --no-check` (reading and
rendering, no checks) and the start check's commands alone (init, smoke, the regression
sample), both timed directly.

Run: python bench/session_start_real.py [--rounds N]
Bar (issue 28): the hook at 5,000 features <= 1.5 x at 50; its absolute time is printed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from _common import Row, bench_env, make_project, ms, print_rows, scratch, time_once

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(0, str(TESTS))

import harnesses  # noqa: E402
from model_server import ModelServer, Step  # noqa: E402

SMALL, LARGE = 50, 5_000


def always_done(_server: ModelServer, _body: dict[str, object]) -> Step:
    return Step(text="Done.")


def hook_seconds(home: Path) -> float:
    """The newest SessionStart hook's duration in Claude Code's newest transcript."""
    found = sorted(home.glob("projects/**/*.jsonl"), key=lambda p: p.stat().st_mtime)
    durations = []
    for line in found[-1].read_text().splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        attachment = value.get("attachment") if isinstance(value, dict) else None
        if isinstance(attachment, dict) and attachment.get("hookEvent") == "SessionStart":
            durations.append(float(attachment.get("durationMs", 0)) / 1000)
    if not durations:
        raise SystemExit(f"no SessionStart hook in {found[-1]}")
    return durations[-1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    found = harnesses.install(harnesses.CLAUDE)
    if not isinstance(found, Path):
        raise SystemExit(f"bench: {found}")
    home = scratch()
    env = bench_env(home)
    projects = {n: make_project(home, f"p{n}", n, env) for n in (SMALL, LARGE)}
    samples: dict[str, list[float]] = {}
    with ModelServer(always_done) as server:
        claude = harnesses.claude(server.url, home / "claude")
        run_env = {**env, **claude.env}

        def session(n: int) -> None:
            subprocess.run(
                claude.command("Say done."),
                cwd=projects[n],
                env=run_env,
                capture_output=True,
                timeout=600,
                check=True,
                stdin=subprocess.DEVNULL,
            )
            samples.setdefault(f"hook@{n}", []).append(hook_seconds(home / "claude"))

        def brief(n: int) -> None:
            subprocess.run(
                ["shiftkit", "start", "--brief", "--no-check"],
                cwd=projects[n],
                env=env,
                capture_output=True,
                check=True,
            )

        def checks(n: int) -> None:
            for step in (["./init.sh"], ["./init.sh", "smoke"]):
                subprocess.run(step, cwd=projects[n], env=env, capture_output=True, check=True)

        for n in (SMALL, LARGE):
            session(n)  # warm: the first session writes Claude Code's config
        samples.clear()
        for _ in range(args.rounds):
            for n in (SMALL, LARGE):
                session(n)
                samples.setdefault(f"brief@{n}", []).append(time_once(lambda n=n: brief(n)))
                samples.setdefault(f"checks@{n}", []).append(time_once(lambda n=n: checks(n)))
    median = {name: statistics.median(values) for name, values in samples.items()}
    rows = [
        Row(
            "SessionStart hook under Claude Code, 5,000 / 50 features",
            median[f"hook@{LARGE}"] / median[f"hook@{SMALL}"],
            f"{ms(median[f'hook@{LARGE}'])} vs {ms(median[f'hook@{SMALL}'])}",
            1.5,
        ),
        Row(
            "of it: start --brief --no-check, 5,000 / 50",
            median[f"brief@{LARGE}"] / median[f"brief@{SMALL}"],
            f"{ms(median[f'brief@{LARGE}'])} vs {ms(median[f'brief@{SMALL}'])}",
        ),
        Row(
            "of it: init + smoke, 5,000 / 50",
            median[f"checks@{LARGE}"] / median[f"checks@{SMALL}"],
            f"{ms(median[f'checks@{LARGE}'])} vs {ms(median[f'checks@{SMALL}'])}",
        ),
    ]
    print_rows(f"bench: SessionStart under {harnesses.version(harnesses.CLAUDE)}", rows)
    rest = median[f"hook@{LARGE}"] - median[f"brief@{LARGE}"] - median[f"checks@{LARGE}"]
    print(
        f"at {LARGE:,} features the hook takes {ms(median[f'hook@{LARGE}'])}: "
        f"{ms(median[f'brief@{LARGE}'])} reading and rendering, "
        f"{ms(median[f'checks@{LARGE}'])} init + smoke, {ms(max(rest, 0))} the rest "
        f"(the regression sample's verifiers, the start record, Python start-up)"
    )


if __name__ == "__main__":
    main()
