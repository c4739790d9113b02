"""Size of `shiftkit start --brief --no-check` for a small and a large project, next to the
naive start-up read (the whole feature list plus the whole progress log).

Run: python bench/start_size.py
Bars: large <= 1.2 x small (issue "The shift"), and <= 2,000 bytes (issue 9: Claude Code shows a
model about the first 2 KB of a SessionStart hook's output).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from _common import Row, bench_env, make_project, print_rows, scratch

BODY = (
    "Implemented the handler and its tests; the edge case with empty input is covered.\n"
    "Next: the pagination feature. Watch out: the fixture database is reset by init.sh."
)


def build(home: Path, name: str, n_features: int, n_entries: int, env: dict[str, str]) -> Path:
    decisions = {
        f"docs/decisions/{i + 1:04d}-decision-{i}.md": f"# {i + 1}. Decision number {i}\n\nBody.\n"
        for i in range(1, 4)
    }
    return make_project(
        home,
        name,
        n_features,
        env,
        verify="pytest -q tests/test_f{i}.py",
        log_entries=n_entries,
        log_body=BODY,
        files=decisions,
    )


def main() -> None:
    print_rows("start --brief --no-check, output size", figures())


def figures(rounds: int = 1) -> list[Row]:
    """Sizes, not times: ``rounds`` is accepted for bench/run and unused."""
    home = scratch()
    env = bench_env(home)
    sizes = {}
    for name, n_features, n_entries in (("small", 50, 20), ("large", 5000, 2000)):
        project = build(home, name, n_features, n_entries, env)
        out = subprocess.run(
            ["shiftkit", "start", "--brief", "--no-check"],
            cwd=project,
            env=env,
            capture_output=True,
            check=True,
        ).stdout
        naive = (project / "features.json").stat().st_size + (
            project / "claude-progress.txt"
        ).stat().st_size
        sizes[name] = (len(out), naive)
    (small, _), (large, naive) = sizes["small"], sizes["large"]
    return [
        Row(
            "start --brief bytes, 5,000 / 50 features", large / small, f"{large} B / {small} B", 1.2
        ),
        Row(
            "start --brief bytes at 5,000 features / 2,000",
            large / 2000,
            f"{large} B / 2000 B",
            1.0,
        ),
        Row(
            "naive read (list + log) / start --brief, 5,000",
            naive / large,
            f"{naive} B / {large} B",
        ),
    ]


if __name__ == "__main__":
    main()
