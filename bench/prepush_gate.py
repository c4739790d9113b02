"""The cost of the publish gate (decision record 0056) in the pre-push hook, on a push whose
one plain commit touches no verifier's read set.

One project with 20 passing features (`test -f src/fN.txt`), each feature's read set measured
(strace) and stored; two clones, each pushing to its own bare remote, measured side by side
(interleaved rounds in shuffled order, medians; only the push is timed):

  gate       `git push` with shiftkit's pre-push hook (the audit of the new commits, then the
             publish gate, which finds no affected feature and runs nothing)
  no gate    `git push` with the same hook, the gate replaced by a no-op (this file's stand-in
             hook: the same interpreter, the same imports)
  no hook    `git push --no-verify`, reported beside

Run: python bench/prepush_gate.py [--rounds N]
Bar (issue 26): gate ÷ no gate <= 1.2.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

from _common import NO_HOOKS, Row, bench_env, make_features, ms, print_rows, scratch, sh

FEATURES = 20

HOOK = """#!/bin/sh
exec {python} -c '
import sys
from shiftkit.commands import outgoing
{stub}
from shiftkit import githooks
sys.exit(githooks.main(["pre-push", *sys.argv[1:]]))
' "$@"
"""


def figures(rounds: int) -> list[Row]:
    times = measure(rounds)
    return [
        Row(
            "pre-push gate ÷ the same push without it, a commit touching no read set",
            times["gate"] / times["no gate"],
            f"{ms(times['gate'])} / {ms(times['no gate'])}",
            1.2,
        ),
        Row(
            "pre-push with the gate ÷ git push --no-verify",
            times["gate"] / times["no hook"],
            f"{ms(times['gate'])} / {ms(times['no hook'])}",
        ),
    ]


def _record_read_sets(clone: Path) -> None:
    """Each passing feature's read set, measured as a verifier runs in a checkout of HEAD."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from shiftkit.edge import readsets, regression, verify
    from shiftkit.edge.context import open_context
    from shiftkit.edge.project import read_features

    ctx = open_context(clone)
    tree = regression.head_tree(clone)
    feature_list = read_features(ctx.project)
    work = regression.jobs(feature_list, regression.passing_ids(feature_list), ctx.config.verify)
    with verify.temporary_checkout(clone, tree) as target:
        for job in work:
            with readsets.measuring() as measure:
                if measure is None:
                    raise SystemExit("bench: strace cannot trace here; no read set to measure")
                outcome = verify.run_in(target, job.command, 60, prefix=measure.prefix)
                assert outcome.ok, outcome.output
                found = measure.read_set(target, tree, job.command)
            readsets.record(ctx.common_dir, job.feature.id, found)
            key = verify.cache_command(job.command, regression.CHECKOUT)
            verify.record_pass(ctx.common_dir, tree, key)


def measure(rounds: int) -> dict[str, float]:
    home = scratch()
    env = bench_env(home)
    origin = home / "origin"
    sh(["shiftkit", "new", str(origin), "--defaults"], home, env)
    text = make_features(FEATURES * 2, verify="test -f src/f{i}.txt")
    (origin / "features.json").write_text(text)
    (origin / "src").mkdir()
    for index in range(FEATURES * 2):
        (origin / "src" / f"f{index}.txt").write_text(f"{index}\n")
    sh(["git", "add", "-A"], origin, env)
    sh(["git", *NO_HOOKS, "commit", "-q", "--no-verify", "-m", "Bench: 20 passing"], origin, env)
    clones = {}
    for name in ("gate", "no gate", "no hook"):
        slug = name.replace(" ", "-")
        bare = home / f"{slug}.git"
        sh(["git", "clone", "-q", "--bare", str(origin), str(bare)], home, env)
        clone = home / slug
        sh(["git", "clone", "-q", str(bare), str(clone)], home, env)
        sh(["shiftkit", "install-hooks", "--force"], clone, env)
        stub = "outgoing.gate_push = lambda *args: None" if name == "no gate" else ""
        hook = clone / ".git" / "hooks" / "pre-push"
        hook.write_text(HOOK.format(python=sys.executable, stub=stub))
        hook.chmod(0o755)
        _record_read_sets(clone)
        clones[name] = clone
    args = {
        "gate": ["git", "push", "-q", "origin", "main"],
        "no gate": ["git", "push", "-q", "origin", "main"],
        "no hook": ["git", "push", "-q", "--no-verify", "origin", "main"],
    }
    samples: dict[str, list[float]] = {name: [] for name in clones}
    shuffler = random.Random(1729)
    names = list(clones)
    for index in range(rounds + 1):  # (the first round warms the caches)
        shuffler.shuffle(names)
        for name in names:
            clone = clones[name]
            (clone / "README.md").write_text(f"round {index}\n")
            sh(["git", "add", "README.md"], clone, env)
            sh(["git", "commit", "-q", "-m", f"Reword the readme, round {index}"], clone, env)
            start = time.perf_counter()
            sh(args[name], clone, env)
            if index:
                samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args()
    print_rows(
        f"the publish gate in pre-push, {args.rounds} interleaved rounds", figures(args.rounds)
    )


if __name__ == "__main__":
    main()
