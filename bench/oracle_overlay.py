"""Re-verification's oracle overlay (decision record 0081) on an honest project: what finding
the oracle as defined costs when nothing is to restore (the common case).

Run: python bench/oracle_overlay.py [--rounds N]
Bars: on a project of 20 pytest features, each defined with its test and flipped in its own
commit with unrelated commits between, planning the overlays (finding each definition,
diffing it with the judged commit) ÷ `audit --reverify --isolated` over the same flips <= 0.05;
the same for `check --isolated` at the tip <= 0.05.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import NO_HOOKS, Row, bench_env, ms, print_rows, scratch, sh, side_by_side, write_flip

FEATURES = 20
PYTEST = "python -m pytest -q -p no:cacheprovider"


def build(home: Path, env: dict[str, str]) -> Path:
    project = home / "overlay-bench"
    sh(["shiftkit", "new", str(project), "--defaults"], home, env)
    # (the flips below are made past the hooks, under no claim: claims off, a person's act)
    config = project / ".shiftkit.toml"
    text = config.read_text()
    config.write_text(text.replace("enabled = true", "enabled = false", 1))
    sh(["git", "add", "-A"], project, env)
    commit(project, env, "Bench: no claims")
    listing = json.loads((project / "features.json").read_text())
    listing["features"] += [
        {
            "id": f"F{i + 1:03d}",
            "category": "functional",
            "description": f"Feature {i} works",
            "steps": ["run it"],
            "verify": f"{PYTEST} tests/test_f{i}.py",
            "passes": False,
        }
        for i in range(FEATURES)
    ]
    (project / "features.json").write_text(json.dumps(listing, indent=2) + "\n")
    (project / "tests").mkdir()
    (project / "app").mkdir()
    for i in range(FEATURES):
        (project / "tests" / f"test_f{i}.py").write_text(
            f"def test_f{i}():\n    assert {i} == {i}\n"
        )
    sh(["git", "add", "-A"], project, env)
    commit(project, env, "Bench: the features and their tests")
    for i in range(FEATURES):
        (project / "app" / f"m{i}.py").write_text(f"VALUE = {i}\n")
        sh(["git", "add", "-A"], project, env)
        commit(project, env, f"Work towards F{i + 1:03d}")
        write_flip(project, f"F{i + 1:03d}")
        sh(["git", "add", "-A"], project, env)
        tree = sh(["git", "write-tree"], project, env).strip()
        commit(
            project,
            env,
            f"F{i + 1:03d}: works\n\nShiftkit-Feature: F{i + 1:03d}\nShiftkit-Verified: {tree}\n"
            "Shiftkit-Claim: -\n",
        )
    return project


def commit(project: Path, env: dict[str, str], message: str) -> None:
    sh(["git", *NO_HOOKS, "commit", "-q", "--no-verify", "-m", message], project, env)


def planning(project: Path) -> tuple[float, float]:
    """Seconds to plan the overlays of every flip (as `audit --reverify` does, one call per
    flip) and of every passing feature at the tip (as `check --isolated` does); both find
    none on this honest history."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from shiftkit.commands.audit import commits_in
    from shiftkit.core import features, rules
    from shiftkit.edge import overlay
    from shiftkit.edge.context import open_context
    from shiftkit.edge.project import read_features_at

    ctx = open_context(project)
    flips = []
    for found in commits_in(ctx.root, None, ctx.config.features):
        named = rules.trailers(found.message).get("Shiftkit-Feature", [])
        listed = read_features_at(ctx.root, found.oid, ctx.config.features)
        if named and listed is not None:
            feature = next(f for f in listed.features if f.id == named[0])
            flips.append((found, feature, features.effective_verify(feature, ctx.config.verify)))
    start = time.perf_counter()
    for found, feature, command in flips:
        assert not overlay.overlays(
            ctx.root, found.oid, found.tree, [(feature, command or "")], ctx.config
        )
    per_flip = time.perf_counter() - start
    head = read_features_at(ctx.root, "HEAD", ctx.config.features)
    assert head is not None
    work = [(f, f.verify or "") for f in head.features if f.passes]
    tip = subprocess.run(
        ["git", "rev-parse", "HEAD", "HEAD^{tree}"], cwd=project, capture_output=True, text=True
    ).stdout.split()
    start = time.perf_counter()
    assert not overlay.overlays(ctx.root, tip[0], tip[1], work, ctx.config)
    return per_flip, time.perf_counter() - start


def figures(rounds: int = 3) -> list[Row]:
    home = scratch()
    env = bench_env(home)
    project = build(home, env)

    def run(*args: str) -> None:
        proc = subprocess.run(
            ["shiftkit", *args], cwd=project, env=env, capture_output=True, text=True
        )
        if proc.returncode != 0 or "oracle restored" in proc.stdout:
            raise SystemExit(
                f"shiftkit {' '.join(args)}: exit {proc.returncode}\n{proc.stdout}{proc.stderr}"
            )

    times = side_by_side(
        {
            "audit": lambda: run("audit", "--reverify", "--isolated"),
            "check": lambda: run("check", "--isolated", "--no-demote"),
        },
        rounds,
    )
    plans = [planning(project) for _ in range(rounds)]
    audit_plan = statistics.median(p[0] for p in plans)
    check_plan = statistics.median(p[1] for p in plans)
    return [
        Row(
            f"audit --reverify: planning the overlays of {FEATURES} flips ÷ the audit",
            audit_plan / times["audit"],
            f"{ms(audit_plan)} / {ms(times['audit'])}",
            0.05,
        ),
        Row(
            f"check --isolated: planning the overlays of {FEATURES} features ÷ the check",
            check_plan / times["check"],
            f"{ms(check_plan)} / {ms(times['check'])}",
            0.05,
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    rows = figures(parser.parse_args().rounds)
    print_rows("oracle overlay (decision record 0081)", rows)
    if any(row.verdict == "FAIL" for row in rows):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
