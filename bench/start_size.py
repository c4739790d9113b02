"""Size of `shiftkit start --brief --no-check` for a small and a large project, next to the
naive start-up read (the whole feature list plus the whole progress log).

Run: python bench/start_size.py
Bars (issue "The shift"): large <= 8 KB and <= 1.2 x small.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from _common import bench_env, make_features, scratch, sh

BODY = ("Implemented the handler and its tests; the edge case with empty input is covered.\n"
        "Next: the pagination feature. Watch out: the fixture database is reset by init.sh.")


def make_log(preamble: str, entries: int) -> str:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from shiftkit import progress

    text = preamble
    for i in range(entries):
        entry = progress.format_entry(f"2026-11-{i % 28 + 1:02d} {i % 24:02d}:{i % 60:02d} UTC",
                                      f"F{i:04d}", "passed", f"{i:07x}", BODY)
        text = progress.append(text, entry)
    return text


def build(home: Path, name: str, n_features: int, n_entries: int, env: dict[str, str]) -> Path:
    project = home / name
    sh(["shiftkit", "new", str(project), "--defaults"], home, env)
    (project / "features.json").write_text(make_features(n_features))
    progress_path = project / "claude-progress.txt"
    progress_path.write_text(make_log(progress_path.read_text(), n_entries))
    for i in range(1, 4):
        (project / "docs" / "decisions" / f"{i + 1:04d}-decision-{i}.md").write_text(
            f"# {i + 1}. Decision number {i}\n\nBody.\n")
    sh(["git", "add", "-A"], project, env)
    sh(["git", "commit", "-q", "--no-verify", "-m", f"Bench: {n_features} features"], project, env)
    return project


def main() -> None:
    home = scratch()
    env = bench_env(home)
    sizes = {}
    for name, n_features, n_entries in (("small", 50, 20), ("large", 5000, 2000)):
        project = build(home, name, n_features, n_entries, env)
        out = subprocess.run(["shiftkit", "start", "--brief", "--no-check"], cwd=project, env=env,
                             capture_output=True, check=True).stdout
        naive = (project / "features.json").stat().st_size + (project / "claude-progress.txt").stat().st_size
        sizes[name] = (n_features, n_entries, len(out), naive)
    print(f"{'project':8} {'features':>9} {'entries':>8} {'start --brief':>14} {'naive read':>11}")
    for name, (nf, ne, brief, naive) in sizes.items():
        print(f"{name:8} {nf:9} {ne:8} {brief:14} {naive:11}")
    ratio = sizes["large"][2] / sizes["small"][2]
    print(f"large / small = {ratio:.3f} (bar 1.2); large = {sizes['large'][2]} bytes (bar 8192)")
    print(f"naive large / start --brief large = {sizes['large'][3] / sizes['large'][2]:.0f}x")


if __name__ == "__main__":
    main()
