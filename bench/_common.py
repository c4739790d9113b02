"""Helpers shared by the benchmarks: a scratch project, side-by-side timing, medians."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

# Setting up a synthetic history (half the features passing at once) is only possible past
# every hook, the reference-transaction hook included.
NO_HOOKS = ["-c", "core.hooksPath=/dev/null/none"]
# The hook types shiftkit's setup installs (`pre-commit install` alone installs only the
# types the config names, and a scaffold's config names none: its hooks declare their stages).
HOOK_TYPES = ["--hook-type", "pre-commit", "--hook-type", "commit-msg"]

IDENTITY = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@shiftkit.invalid",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@shiftkit.invalid",
}


def bench_env(home: Path) -> dict[str, str]:
    config = home / "gitconfig"
    config.write_text("[init]\n\tdefaultBranch = main\n")
    # Measure what users run: with bytecode caching. (Some sandboxes export
    # PYTHONDONTWRITEBYTECODE, which makes every hook process recompile shiftkit.)
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {
        **environment,
        **IDENTITY,
        "GIT_CONFIG_GLOBAL": str(config),
        "GIT_CONFIG_NOSYSTEM": "1",
        "PRE_COMMIT_HOME": str(home / "pre-commit"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }


def scratch() -> Path:
    return Path(tempfile.mkdtemp(prefix="shiftkit-bench-"))


def sh(args: Sequence[str], cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"bench setup failed: {' '.join(args)}\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def time_once(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def side_by_side(actions: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Median seconds of each action, run interleaved round by round so noise hits all alike,
    in a shuffled order each round so no action always follows the same one."""
    import random

    shuffler = random.Random(1729)
    samples: dict[str, list[float]] = {name: [] for name in actions}
    for action in actions.values():  # warm the file cache
        action()
    names = list(actions)
    for _ in range(rounds):
        shuffler.shuffle(names)
        for name in names:
            samples[name].append(time_once(actions[name]))
    return {name: statistics.median(values) for name, values in samples.items()}


def make_features(
    n: int, verify: str = "pytest -q tests/test_f{i}.py", passing: int | None = None
) -> str:
    """A list of ``n`` features, the first ``passing`` of them passing (None: half)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from shiftkit.core import features

    items = tuple(
        features.Feature(
            id=f"F{i:04d}",
            category="functional",
            description=f"Feature {i} works end to end",
            steps=(f"Open screen {i}", "Do the thing", "See the result"),
            verify=verify.format(i=i),
            passes=i < (n // 2 if passing is None else passing),
        )
        for i in range(n)
    )
    return features.dumps(features.FeatureList(items))


LOG_BODY = "Implemented the handler and its tests.\nNext: the pagination feature."


def make_log(preamble: str, entries: int, body: str = LOG_BODY) -> str:
    """The progress log after ``entries`` entries, as `finish` appends them (one blank line
    before each), none pruned."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from shiftkit.core import progress

    parts = [preamble.rstrip("\n") + "\n"]
    for i in range(entries):
        parts.append(
            progress.format_entry(
                f"2026-11-{i % 28 + 1:02d} {i % 24:02d}:{i % 60:02d} UTC",
                f"F{i:04d}",
                "passed",
                f"{i:07x}",
                body,
            )
        )
    return "\n".join(parts)


def make_project(
    home: Path,
    name: str,
    n_features: int,
    env: dict[str, str],
    *,
    verify: str = "true",
    log_entries: int = 0,
    log_body: str = LOG_BODY,
    files: dict[str, str] | None = None,
) -> Path:
    """`shiftkit new` with a list of ``n_features`` (half passing), ``log_entries`` entries in
    the log and any other ``files`` (path relative to the project -> text), committed past the
    hooks: a synthetic list cannot pass the rules it is set up past."""
    project = home / name
    sh(["shiftkit", "new", str(project), "--defaults"], home, env)
    (project / "features.json").write_text(make_features(n_features, verify=verify))
    if log_entries:
        log = project / "claude-progress.txt"
        log.write_text(make_log(log.read_text(), log_entries, log_body))
    for path, text in (files or {}).items():
        (project / path).write_text(text)
    sh(["git", "add", "-A"], project, env)
    sh(
        ["git", *NO_HOOKS, "commit", "-q", "--no-verify", "-m", f"Bench: {n_features} features"],
        project,
        env,
    )
    return project


class Row:
    """One figure of a benchmark: a ratio measured side by side, the medians behind it, and
    the bar it must stay under (None: reported only)."""

    def __init__(self, figure: str, ratio: float, detail: str, bar: float | None = None) -> None:
        self.figure, self.ratio, self.detail, self.bar = figure, ratio, detail, bar

    @property
    def verdict(self) -> str:
        if self.bar is None:
            return "report"
        return "pass" if self.ratio <= self.bar else "FAIL"


def print_rows(title: str, rows: Sequence[Row]) -> None:
    print(title)
    width = max(len(row.figure) for row in rows)
    print(f"{'figure':{width}} {'ratio':>8} {'bar':>6} {'verdict':>7}  medians")
    for row in rows:
        bar = f"{row.bar:.2f}" if row.bar is not None else "-"
        print(f"{row.figure:{width}} {row.ratio:8.2f} {bar:>6} {row.verdict:>7}  {row.detail}")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def write_flip(project: Path, target: str) -> None:
    """Mark ``target`` passing in the work tree's list, with its log entry (not staged)."""
    import json

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from shiftkit.core import progress

    path = project / "features.json"
    document = json.loads(path.read_text())
    next(f for f in document["features"] if f["id"] == target)["passes"] = True
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    log = project / "claude-progress.txt"
    entry = progress.format_entry("2026-11-29 12:00 UTC", target, "passed", "0000000", "bench flip")
    log.write_text(progress.append(log.read_text(), entry))
