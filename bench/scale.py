"""Commands against the size of the project (issue 12): the same command on a project of 50
features / 20 log entries, 5,000 / 2,000 and 50,000 / 20,000, measured side by side.

  start, status, next   `start --brief --no-check`, `status`, `next`
  claim + release       one `claim` and its `release`
  finish                `finish` of a claimed feature whose verifier is `true` (the claim
                        before it is not timed)
  merge-features        the merge driver on three versions of the list (ours flips one
                        feature, theirs appends one), next to `git merge-file` on the same files,
                        in a repository whose hooks validated the base and ours (committed
                        there) but not theirs (fetched); and, reported only, with no list
                        validated before (a fresh clone: ours is checked in full, once)
  prune                 the log read and written as `finish` writes it (its context already
                        open), moving every entry but the newest 20 to the archive, next to
                        writing the same bytes once (both in this process); and, reported
                        only, next to writing them once as shiftkit writes a file (fsync and
                        rename: the prune writes two so)
  plain-shim append     `git commit` of the list with one more feature, with the plain hook
                        shims of `install-hooks` (the list's blob not validated before)
  peak RSS              the pre-commit hook, `start`, `finish` and `audit` at the largest size

Run: python bench/scale.py [--rounds N] [--largest N]
Bars (issue 12): each command 5,000 / 50 <= 1.5 and 50,000 / 50 <= 3; merge-features /
git merge-file <= 10 at 5,000; prune / one write <= 3; plain-shim append 50,000 / 50 <= 2.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import (
    NO_HOOKS,
    Row,
    bench_env,
    make_features,
    make_log,
    make_project,
    ms,
    print_rows,
    scratch,
    sh,
)


def build(home: Path, name: str, n_features: int, env: dict[str, str]) -> Path:
    return make_project(home, name, n_features, env, log_entries=n_features * 2 // 5)


def run(args: list[str], where: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(args, cwd=where, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} in {where.name} failed:\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def timed_rounds(
    cases: dict[str, tuple[Callable[[], object], Callable[[], object]]], rounds: int
) -> dict[str, float]:
    """Median seconds of each case's action, interleaved round by round in a shuffled order;
    each case's untimed preparation runs just before its action."""
    shuffler = random.Random(1729)
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for prepare, action in cases.values():  # warm up (and the first prune)
        prepare()
        action()
    names = list(cases)
    for _ in range(rounds):
        shuffler.shuffle(names)
        for name in names:
            prepare, action = cases[name]
            prepare()
            start = time.perf_counter()
            action()
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in samples.items()}


def nothing() -> None:
    return None


def command_cases(
    projects: dict[str, Path], env: dict[str, str]
) -> dict[str, tuple[Callable[[], object], Callable[[], object]]]:
    cases: dict[str, tuple[Callable[[], object], Callable[[], object]]] = {}
    for size, project in projects.items():

        def command(args: list[str], where: Path = project) -> Callable[[], object]:
            return lambda: run(args, where, env)

        def claim_release(where: Path = project) -> None:
            run(["shiftkit", "claim"], where, env)
            run(["shiftkit", "release"], where, env)

        cases[f"start {size}"] = (nothing, command(["shiftkit", "start", "--brief", "--no-check"]))
        cases[f"status {size}"] = (nothing, command(["shiftkit", "status"]))
        cases[f"next {size}"] = (nothing, command(["shiftkit", "next"]))
        cases[f"claim+release {size}"] = (nothing, claim_release)
        cases[f"finish {size}"] = (
            command(["shiftkit", "claim"]),
            command(["shiftkit", "finish", "-m", "Bench: finish one feature"]),
        )
    return cases


def merge_cases(
    home: Path, n_features: int, env: dict[str, str]
) -> dict[str, tuple[Callable[[], object], Callable[[], object]]]:
    from shiftkit.core import features
    from shiftkit.edge import state

    base_text = make_features(n_features, verify="true")
    base = features.loads(base_text, "base")
    target = base.features[n_features // 2]
    ours = base.replace_feature(target._replace(passes=True))
    theirs = base.append(target._replace(id=f"F{n_features + 1:05d}", passes=False))
    where = home / "merge"
    where.mkdir()
    sh(["git", "init", "-q"], where, env)
    texts = {
        "base": base_text,
        "ours": features.dumps(ours),
        "theirs": features.dumps(theirs),
    }
    validated = where / ".git" / "shiftkit" / "validated"

    def reset() -> None:
        for name, text in texts.items():
            (where / name).write_text(text)

    def as_committed() -> None:
        # Where git runs the driver: a repository whose hooks validated the lists committed
        # in it, the base and ours; theirs comes from elsewhere (a fetch) and was never seen.
        reset()
        shutil.rmtree(validated, ignore_errors=True)
        for name in ("base", "ours"):
            blob = sh(["git", "hash-object", name], where, env).strip()
            state.mark_validated(where / ".git", blob)

    def never_seen() -> None:
        reset()  # (the driver records ours, checked in full: forgotten each round)
        shutil.rmtree(validated, ignore_errors=True)

    def driver() -> None:
        run(["shiftkit", "merge-features", "base", "ours", "theirs"], where, env)

    def merge_file() -> None:
        # (exit status: the number of conflicts; the line-based merge conflicts here)
        subprocess.run(["git", "merge-file", "ours", "base", "theirs"], cwd=where, env=env)

    return {
        "merge-features": (as_committed, driver),
        "merge-features, no list validated before": (never_seen, driver),
        "git merge-file": (reset, merge_file),
    }


def prune_cases(
    home: Path, entries: int, env: dict[str, str]
) -> dict[str, tuple[Callable[[], object], Callable[[], object]]]:
    project = build(home, "prune", 50, env)
    log = project / "claude-progress.txt"
    log.write_text(make_log(log.read_text(), entries))
    sh(["git", "add", "-A"], project, env)
    sh(["git", *NO_HOOKS, "commit", "-q", "--no-verify", "-m", "Bench: a long log"], project, env)
    full = log.read_text()
    archive = project / "progress-archive.txt"
    copy = home / "copy.txt"

    def reset() -> None:
        log.write_text(full)
        archive.unlink(missing_ok=True)

    def write_once() -> None:
        with open(copy, "w", encoding="utf-8") as out:
            out.write(full)
            out.flush()

    def write_durably() -> None:
        # As shiftkit writes every file (a prune writes two): temporary file, fsync, rename.
        from shiftkit.edge.atomic import atomic_write

        atomic_write(copy, full)

    from shiftkit.edge import context

    opened: list[context.Context] = []

    def reset_and_open() -> None:
        reset()
        # (`finish` has its context open before it writes the log: finding the repository
        # and reading the settings are not the prune's)
        opened[:] = [context.open_context(project)]

    def prune() -> None:
        # In process, the path `finish` takes: a process's start-up would swamp one write.
        context.write_log(opened[0], log.read_text(encoding="utf-8"), [])

    return {
        "prune": (reset_and_open, prune),
        "one write": (nothing, write_once),
        "one durable write": (nothing, write_durably),
    }


def append_cases(
    home: Path, projects: dict[str, Path], env: dict[str, str]
) -> dict[str, tuple[Callable[[], object], Callable[[], object]]]:
    cases: dict[str, tuple[Callable[[], object], Callable[[], object]]] = {}
    for size, project in projects.items():
        shim = home / f"shim-{size}"
        sh(["git", "clone", "-q", str(project), str(shim)], home, env)
        sh(["shiftkit", "install-hooks", "--force"], shim, env)
        path = shim / "features.json"
        document = json.loads(path.read_text())
        document["features"].append({**document["features"][-1], "id": "F99999", "passes": False})
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        sh(["git", "add", "features.json"], shim, env)
        blob = sh(["git", "rev-parse", ":features.json"], shim, env).strip()
        records = [shim / ".git" / "shiftkit" / kind / blob for kind in ("validated", "tables")]

        def forget(records: list[Path] = records) -> None:
            for record in records:  # every real append stages a list never seen
                record.unlink(missing_ok=True)

        def commit(where: Path = shim) -> None:
            run(["git", "commit", "-q", "-m", "Add F99999: one more feature"], where, env)
            subprocess.run(
                ["git", *NO_HOOKS, "reset", "-q", "--soft", "HEAD^"], cwd=where, env=env, check=True
            )

        cases[f"append {size}"] = (forget, commit)
    return cases


def peak_rss(project: Path, env: dict[str, str]) -> dict[str, int]:
    """Peak resident set of each command, in KiB, each in a fresh measuring process."""
    measure = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    path = project / "features.json"
    document = json.loads(path.read_text())
    document["features"].append({**document["features"][-1], "id": "F99998", "passes": False})
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    sh(["git", "add", "features.json"], project, env)
    commands = {
        "hook pre-commit": ["shiftkit", "hook", "pre-commit"],
        "start": ["shiftkit", "start", "--brief", "--no-check"],
    }
    result = {
        name: int(run([sys.executable, "-c", measure, *argv], project, env))
        for name, argv in commands.items()
    }
    sh(["git", "checkout", "-q", "HEAD", "--", "features.json"], project, env)
    run(["shiftkit", "claim"], project, env)
    result["finish"] = int(
        run(
            [sys.executable, "-c", measure, "shiftkit", "finish", "-m", "Bench: peak memory"],
            project,
            env,
        )
    )
    result["audit"] = int(run([sys.executable, "-c", measure, "shiftkit", "audit"], project, env))
    return result


def figures(rounds: int, largest: int = 50000) -> list[Row]:
    home = scratch()
    env = bench_env(home)
    sizes = {"50": 50, "5,000": 5000, f"{largest:,}": largest}
    print(f"bench/scale: building projects in {home}", file=sys.stderr, flush=True)
    projects = {size: build(home, f"p{n}", n, env) for size, n in sizes.items()}
    medians = timed_rounds(
        {
            **command_cases(projects, env),
            **merge_cases(home, 5000, env),
            **prune_cases(home, 20000, env),
            **append_cases(home, {"50": projects["50"], "large": projects[f"{largest:,}"]}, env),
        },
        rounds,
    )
    rows = []
    large = f"{largest:,}"
    for command in ("start", "status", "next", "claim+release", "finish"):
        small = medians[f"{command} 50"]
        for size, bar in (("5,000", 1.5), (large, 3.0)):
            mine = medians[f"{command} {size}"]
            rows.append(
                Row(f"{command}, {size} / 50", mine / small, f"{ms(mine)} / {ms(small)}", bar)
            )
    merge, merge_file = medians["merge-features"], medians["git merge-file"]
    rows.append(
        Row(
            "merge-features / git merge-file, 5,000",
            merge / merge_file,
            f"{ms(merge)} / {ms(merge_file)}",
            10,
        )
    )
    unseen = medians["merge-features, no list validated before"]
    rows.append(
        Row(
            "merge-features, no list validated before / git merge-file",
            unseen / merge_file,
            f"{ms(unseen)} / {ms(merge_file)}",
        )
    )
    prune, once = medians["prune"], medians["one write"]
    rows.append(
        Row("prune 20,000 entries / one write", prune / once, f"{ms(prune)} / {ms(once)}", 3)
    )
    durable = medians["one durable write"]
    rows.append(
        Row(
            "prune 20,000 entries / one durable write",
            prune / durable,
            f"{ms(prune)} / {ms(durable)}",
        )
    )
    big, small = medians["append large"], medians["append 50"]
    rows.append(Row(f"plain-shim append, {large} / 50", big / small, f"{ms(big)} / {ms(small)}", 2))
    memory = peak_rss(projects[large], env)
    size_mib = (projects[large] / "features.json").stat().st_size / 2**20
    for name, kib in memory.items():
        rows.append(
            Row(
                f"peak RSS MiB, {name}, {large} features",
                kib / 1024,
                f"list {size_mib:.1f} MiB",
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--largest", type=int, default=50000)
    args = parser.parse_args()
    print_rows(
        f"commands by project size, {args.rounds} interleaved rounds",
        figures(args.rounds, args.largest),
    )


if __name__ == "__main__":
    main()
