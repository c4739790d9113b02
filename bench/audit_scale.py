"""`shiftkit audit` over long histories, at 50 and at 5,000 features.

Projects with one history shape: after the commit that sets the list, every commit changes it
and appends a progress-log entry — flips with the trailers `shiftkit finish` writes
(`Shiftkit-Feature`, `Shiftkit-Verified` naming the commit's own tree, `Shiftkit-Claim`),
alternating with demotions, spread over the list — and the log is pruned to the archive
whenever `finish` would. The history is written with `git fast-import` (past every hook) and
repacked as a clone receives it, so `audit` has real work on every commit and finds nothing
wrong.

Figures:
  audit per commit, 5,000 / 50 features   the marginal cost of a commit, (audit of the range
                                          - audit of an empty range) / commits, 200 commits
                                          each, measured side by side
  git's read at 5,000 / audit at 50       per commit, `git cat-file --batch` of each commit's
                                          list read into this process as `audit` reads it
                                          (the floor of any audit that reads every version)
                                          against the whole audit at 50 features: above 1.5,
                                          the first bar is out of reach (docs/decisions/0023)
  audit / git's read                      per commit, at each size (reported)
  audit / git log --raw                   the whole `shiftkit audit` of a long history against
                                          `git log --raw` of the same range (reported)

Run: python bench/audit_scale.py [--rounds N] [--commits N] [--no-long]
Bars (issue 12): per commit, 5,000 / 50 features <= 1.5; audit / git log --raw: reported
(aim under 100).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
from pathlib import Path

from _common import NO_HOOKS, Row, bench_env, ms, print_rows, scratch, sh, side_by_side

COMMITS = 200  # per project, for the per-commit ratio
# The long histories, for the ratio to `git log --raw`: (features, commits). At 5,000 features
# fewer commits: writing and packing 5,000 versions of a 1.3 MB list takes minutes.
LONG = ((50, 5000), (5000, 2000))
CLAIM = "c1a1" * 10  # the claim object a flip names (audit reads only that there is one)


def main() -> None:
    if sys.argv[1:2] == ["--read-lists"]:  # (the reader's own fresh process: see read_lists)
        read_lists(Path(sys.argv[2]), sys.argv[3], dict(os.environ))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--commits", type=int, default=COMMITS)
    parser.add_argument("--no-long", action="store_true", help="skip the long histories")
    args = parser.parse_args()
    print_rows(
        f"audit at scale, {args.rounds} interleaved rounds",
        figures(args.rounds, args.commits, () if args.no_long else LONG),
    )


def figures(
    rounds: int, commits: int = COMMITS, long: tuple[tuple[int, int], ...] = LONG
) -> list[Row]:
    home = scratch()
    env = bench_env(home)
    small = build(home, "small", 50, commits, env)
    large = build(home, "large", 5000, commits, env)
    times = side_by_side(
        {
            "small": lambda: run_audit(*small, env),
            "small, empty": lambda: run_audit(small[0], "HEAD", env),
            "large": lambda: run_audit(*large, env),
            "large, empty": lambda: run_audit(large[0], "HEAD", env),
            "small, git read": lambda: run_reader(*small, env),
            "small, git read, empty": lambda: run_reader(small[0], "HEAD", env),
            "large, git read": lambda: run_reader(*large, env),
            "large, git read, empty": lambda: run_reader(large[0], "HEAD", env),
        },
        rounds,
    )
    per_small = (times["small"] - times["small, empty"]) / commits
    per_large = (times["large"] - times["large, empty"]) / commits
    read_small = (times["small, git read"] - times["small, git read, empty"]) / commits
    read_large = (times["large, git read"] - times["large, git read, empty"]) / commits
    rows = [
        Row(
            f"audit per commit, 5,000 / 50 features ({commits} commits, each changes the list)",
            per_large / per_small,
            f"{ms(per_large)} / {ms(per_small)}",
            1.5,
        ),
        Row(
            "git's read of the list per commit at 5,000 / audit per commit at 50",
            read_large / per_small,
            f"{ms(read_large)} / {ms(per_small)}",
        ),
        Row(
            "audit per commit / git's read of the list per commit, at 5,000 features",
            per_large / read_large,
            f"{ms(per_large)} / {ms(read_large)}",
        ),
        Row(
            "audit per commit / git's read of the list per commit, at 50 features",
            per_small / read_small,
            f"{ms(per_small)} / {ms(read_small)}",
        ),
    ]
    for n_features, n_commits in long:
        project, base = build(home, f"long-{n_features}", n_features, n_commits, env)
        rows.append(against_git_log(project, base, n_features, n_commits, env, rounds))
    return rows


def against_git_log(
    project: Path, base: str, n_features: int, n_commits: int, env: dict[str, str], rounds: int
) -> Row:
    whole = side_by_side(
        {
            "audit": lambda: run_audit(project, base, env),
            "git log": lambda: sh(
                ["git", "log", "--raw", "--format=%H", f"{base}..HEAD"], project, env
            ),
        },
        max(1, rounds // 2),
    )
    return Row(
        f"audit of {n_commits:,} commits at {n_features:,} features / git log --raw",
        whole["audit"] / whole["git log"],
        f"{whole['audit']:.2f} s / {whole['git log']:.3f} s",
    )


def run_reader(project: Path, since: str, env: dict[str, str]) -> None:
    """`read_lists` in a fresh Python process, as `audit` runs: a long-lived process reads
    megabyte strings faster once its allocator has grown (measured: 1.2 against 3.6 ms a
    commit), which no audit gets."""
    subprocess.run(
        [sys.executable, __file__, "--read-lists", str(project), since], env=env, check=True
    )


def read_lists(project: Path, since: str, env: dict[str, str]) -> int:
    """Every version of the list in ``since..HEAD`` through one `git cat-file --batch`, read
    into this process a header line and a body at a time, as `audit` reads them."""
    commits = sh(["git", "rev-list", "--reverse", f"{since}..HEAD"], project, env).split()
    asked = "".join(f"{commit}:features.json\n" for commit in commits).encode()
    proc = subprocess.Popen(
        ["git", "cat-file", "--batch"],
        cwd=project,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(asked)
    proc.stdin.close()
    total = 0
    for _ in commits:
        size = int(proc.stdout.readline().split()[2])
        total += len(str(memoryview(proc.stdout.read(size + 1))[:-1], "utf-8"))
    proc.wait()
    return total


def run_audit(project: Path, since: str, env: dict[str, str]) -> str:
    return sh(["shiftkit", "audit", "--since", since], project, env)


# -- the history --------------------------------------------------------------------------


def build(
    home: Path, name: str, n_features: int, n_commits: int, env: dict[str, str]
) -> tuple[Path, str]:
    """A scaffold with ``n_features`` features (set past the hooks), then ``n_commits`` commits
    that each flip or demote a feature with its log entry. Returns (project, the commit before
    them), after checking that `audit` finds the history clean."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from shiftkit.core import features, progress

    project = home / name
    sh(["shiftkit", "new", str(project), "--defaults"], home, env)
    items = [
        features.Feature(
            id=f"F{i:04d}",
            category="functional",
            description=f"Feature {i} works end to end",
            steps=(f"Open screen {i}", "Do the thing", "See the result"),
            verify="true",
            passes=i % 2 == 0,
        )
        for i in range(n_features)
    ]
    list_text = features.dumps(features.FeatureList(items))
    pieces = list_text.split(features.ITEM_SEPARATOR)
    (project / "features.json").write_text(list_text)
    sh(["git", "add", "-A"], project, env)
    sh(
        ["git", *NO_HOOKS, "commit", "-q", "--no-verify", "-m", f"Bench: {n_features} features"],
        project,
        env,
    )
    base = sh(["git", "rev-parse", "HEAD"], project, env).strip()
    root = {
        parts[3]: (parts[0], parts[2])
        for line in sh(["git", "ls-tree", "HEAD"], project, env).splitlines()
        if (parts := line.replace("\t", " ").split(" ", 3))
    }
    log_text = (project / "claude-progress.txt").read_text()
    archive_text = ""
    importer = subprocess.Popen(
        ["git", *NO_HOOKS, "fast-import", "--quiet"], cwd=project, env=env, stdin=subprocess.PIPE
    )
    assert importer.stdin is not None
    # Odd features start open: flip one, demote it two commits later, spread over the list.
    open_ids = [i for i in range(1, n_features, 2)]
    stride = max(1, len(open_ids) // 7 + 1)
    for k in range(n_commits):
        index = open_ids[(k // 2 * stride) % len(open_ids)]
        feature_id = f"F{index:04d}"
        flipping = k % 2 == 0
        old, new = ("false", "true") if flipping else ("true", "false")
        pieces[index] = pieces[index].replace(f'"passes": {old}', f'"passes": {new}')
        outcome = "passed" if flipping else "regressed"
        entry = progress.format_entry(
            f"2026-11-{k % 28 + 1:02d} {k % 24:02d}:{k % 60:02d} UTC",
            feature_id,
            outcome,
            f"{k:07x}",
            f"Bench commit {k}: {feature_id} {outcome}.",
        )
        log_text = progress.append(log_text, entry)
        files = {"claude-progress.txt": log_text}
        log = progress.parse(log_text)
        if progress.due(log, 20, 10):  # what `finish` does
            pruned = progress.prune(log, archive_text, 20, [], "progress-archive.txt")
            log_text, archive_text = pruned.log_text, pruned.archive_text
            files = {"claude-progress.txt": log_text, "progress-archive.txt": archive_text}
        files["features.json"] = features.ITEM_SEPARATOR.join(pieces)
        blobs = {path: text.encode() for path, text in files.items()}
        for path, data in blobs.items():
            root[path] = ("100644", _object_id("blob", data))
        tree = _tree_id(root)
        if flipping:
            message = (
                f"{feature_id}: bench flip {k}\n\nShiftkit-Feature: {feature_id}\n"
                f"Shiftkit-Verified: {tree}\nShiftkit-Claim: {CLAIM}\n"
            )
        else:
            message = f"Demote {feature_id}: bench regression {k}\n"
        importer.stdin.write(_fast_import_commit(k, message, blobs, base if k == 0 else None))
    importer.stdin.close()
    if importer.wait() != 0:
        raise SystemExit(f"bench setup failed: git fast-import in {project}")
    # As a clone receives it: every version of the list a delta of another (fast-import's own
    # pack stores many whole).
    sh(["git", "repack", "-adfq"], project, env)
    summary = run_audit(project, base, env).splitlines()[-1]
    if not summary.startswith(f"audit: {n_commits} commits checked, 0 with violations"):
        raise SystemExit(f"bench setup failed: the history of {project} is not clean: {summary}")
    return project, base


def _fast_import_commit(k: int, message: str, blobs: dict[str, bytes], parent: str | None) -> bytes:
    text = message.encode()
    out = bytearray(b"commit refs/heads/main\n")
    out += f"committer Bench <bench@shiftkit.invalid> {1_790_000_000 + k * 60} +0000\n".encode()
    out += f"data {len(text)}\n".encode() + text + b"\n"
    if parent is not None:
        out += f"from {parent}\n".encode()
    for path, data in blobs.items():
        out += f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n"
    return bytes(out)


def _object_id(kind: str, data: bytes) -> str:
    return hashlib.sha1(f"{kind} {len(data)}\0".encode() + data).hexdigest()


def _tree_id(entries: dict[str, tuple[str, str]]) -> str:
    """The id of a tree of ``entries`` (name -> (mode, oid)), as git sorts them."""

    def key(name: str) -> bytes:
        return (name + "/" if entries[name][0] == "040000" else name).encode()

    body = b"".join(
        f"{entries[name][0].lstrip('0')} {name}\0".encode() + bytes.fromhex(entries[name][1])
        for name in sorted(entries, key=key)
    )
    return _object_id("tree", body)


if __name__ == "__main__":
    main()
