"""The gate at scale (issue 37): N passing features share one module (`pkg/ops.py`, one function
each, a pytest test each); one feature's change edits one of those functions. File-level read
sets re-verify every feature (each read the module); block-level sets (`SHIFTKIT_BLOCKS=on`,
decision record 0116) only the one whose function changed.

Run: python bench/block_sets.py [--features N] [--python PATH]
Prints, side by side in one run on copies of one project: the verifiers the change's `finish`
re-ran and its wall time at file level and at block level; with block sets, `finish` at N
passing ÷ `finish` at 1 passing; and a verifier run measured ÷ the same run plain.
``--python``: the verifiers' interpreter (with pytest; a venv's python): 3.12+ is measured by
`sys.monitoring` by default (decision record 0119); without it, this interpreter with
coverage.py (`SHIFTKIT_BLOCKS=on`, decision record 0116).
Bars (issue 37): block level re-runs <= 3 where file level re-runs N; N ÷ 1 <= 1.5; measured
÷ plain <= 1.15.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import bench_env  # noqa: E402

RERAN = re.compile(r"re-verifying the passing features this change can touch: ([F0-9, ]+)")


def sh(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"block_sets: {' '.join(args)} failed:\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def verifier(k: int) -> str:
    return f"python -m pytest -q -p no:cacheprovider tests/test_f{k}.py"


def project(root: Path, n: int, env: dict[str, str]) -> Path:
    place = root / "shared"
    sh(["shiftkit", "new", str(place), "--defaults", "--data", "code=pkg/**,tests/**"], root, env)
    sh(["shiftkit", "claim", "F000"], place, env)
    sh(["shiftkit", "finish", "-m", "the environment builds"], place, env)
    (place / "pkg").mkdir()
    (place / "pkg" / "__init__.py").write_text("")
    (place / "pkg" / "ops.py").write_text('"""Every feature\'s function."""\n')
    (place / "tests").mkdir()
    (place / ".gitignore").write_text((place / ".gitignore").read_text() + "__pycache__/\n")
    for k in range(1, n + 2):
        (place / "tests" / f"test_f{k}.py").write_text(
            f"from pkg.ops import f{k}\n\n\ndef test_f{k}():\n    assert f{k}(2) == {k + 2}\n"
        )
        sh(["shiftkit", "add", "--description", f"f{k} adds {k}", "--step", "s",
            "--verify", verifier(k)], place, env)  # fmt: skip
    sh(["git", "add", "-A"], place, env)
    sh(["git", "commit", "-q", "-m", "The features' tests, written first"], place, env)
    return place


def finish(place: Path, k: int, env: dict[str, str], edit: bool = False) -> tuple[float, list[str]]:
    """Claim F{k}, write its function (and, ``edit``: change f1's body too), finish: (wall
    seconds of `finish`, the passing features its gate re-verified)."""
    sh(["shiftkit", "claim", f"F{k:03d}"], place, env)
    ops = place / "pkg" / "ops.py"
    text = ops.read_text() + f"\n\ndef f{k}(x):\n    return x + {k}\n"
    if edit:
        text = text.replace("def f1(x):\n    return x + 1\n", "def f1(x):\n    return 1 + x\n")
    ops.write_text(text)
    started = time.monotonic()
    out = sh(["shiftkit", "finish", "-m", f"f{k} works"], place, env)
    took = time.monotonic() - started
    found = RERAN.search(out)
    return took, found.group(1).strip().split(", ") if found else []


def overhead(place: Path, env: dict[str, str], rounds: int = 7) -> float:
    """A verifier run measured (every Python process, as `blocksets.prefix` starts it) ÷ the
    same run plain: medians of ``rounds`` alternating runs."""
    import statistics

    from shiftkit.edge import blocksets

    folder = Path(tempfile.mkdtemp(prefix="shiftkit-blocks-measure-"))
    os.environ[blocksets.SWITCH] = env[blocksets.SWITCH]  # (prefix reads it here)
    measured = list(blocksets.prefix(folder, place))
    command = ["/bin/sh", "-c", verifier(1)]
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(rounds):
        for with_blocks in (False, True):
            started = time.monotonic()
            argv = [*measured, *command] if with_blocks else command
            subprocess.run(argv, cwd=place, env=env, capture_output=True, check=True)
            times[with_blocks].append(time.monotonic() - started)
            shutil.rmtree(folder / "data", ignore_errors=True)
            (folder / "data").mkdir()
    return statistics.median(times[True]) / statistics.median(times[False])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--features", type=int, default=100)
    parser.add_argument("--python", type=Path, help="the verifiers' interpreter (with pytest)")
    args = parser.parse_args()
    n = args.features
    root = Path(tempfile.mkdtemp(prefix="shiftkit-blocks-"))
    home = root / "home"
    home.mkdir()
    env = {**bench_env(home), "SHIFTKIT_BLOCKS": "auto" if args.python else "on"}
    if args.python:
        shims = root / "bin"
        shims.mkdir()
        for name in ("python", "python3"):  # (python3: an installing init's overlay uses it)
            (shims / name).write_text(f'#!/bin/sh\nexec {args.python.absolute()} "$@"\n')
            (shims / name).chmod(0o755)
        env["PATH"] = f"{shims}:{env['PATH']}"
    version = sh(["python", "-c", "import sys; print(sys.version.split()[0])"], root, env).strip()
    place = project(root, n, env)
    first, _ = finish(place, 1, env)
    for k in range(2, n + 1):
        finish(place, k, env)
    copies = {}
    for granularity in ("files", "blocks"):
        copies[granularity] = root / granularity
        shutil.copytree(place, copies[granularity], symlinks=True)
    file_env = {**env, "SHIFTKIT_BLOCKS": "off"}
    file_time, file_ran = finish(copies["files"], n + 1, file_env, edit=True)
    block_time, block_ran = finish(copies["blocks"], n + 1, env, edit=True)
    how = "sys.monitoring" if tuple(map(int, version.split(".")[:2])) >= (3, 12) else "coverage.py"
    print(f"block sets: {n} passing features share pkg/ops.py; F{n + 1:03d}'s finish also edits f1")
    print(f"  verifiers on Python {version}, measured by {how}")
    some = ", ".join(file_ran[:4])
    print(f"  file level:  re-verified {len(file_ran)} ({some}…), {file_time:.1f} s")
    print(
        f"  block level: re-verified {len(block_ran)} ({', '.join(block_ran)}), {block_time:.1f} s"
    )
    print(f"  block level ÷ file level: {block_time / file_time:.2f}")
    print(
        f"  finish at {n} passing ÷ at 1 passing (block level): {block_time / first:.2f} (bar 1.5)"
    )
    cost = overhead(place, env)
    print(f"  a verifier run measured ÷ plain: {cost:.2f} (bar 1.15 with sys.monitoring)")
    ok = len(block_ran) <= 3 and len(file_ran) >= n - 1
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
