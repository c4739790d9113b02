"""Git plumbing through the git command line.

Hooks run on every commit, so this module stays import-light and reads the staged state
through git itself (which honours GIT_INDEX_FILE); GitPython is used, lazily, on the
paths that are not hot.
"""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING, Mapping, Sequence

from shiftkit.errors import BadInput, ShiftkitError

if TYPE_CHECKING:
    from pathlib import Path

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
ZERO_OID = "0" * 40


class GitFailed(ShiftkitError):
    def __init__(self, args: Sequence[str], returncode: int, stderr: str) -> None:
        detail = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit {returncode}"
        super().__init__(f"git {' '.join(args[:2])} failed: {detail}", exit_code=1)
        self.returncode = returncode
        self.stderr = stderr


def run(
    args: Sequence[str],
    cwd: Path | str | None = None,
    *,
    input: str | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    full_env = None
    if env is not None:
        full_env = {**os.environ, **env}
    try:
        proc = subprocess.run(
            ["git", *args],
            cwd=cwd,
            input=input,
            env=full_env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="surrogateescape",
        )
    except FileNotFoundError:
        raise BadInput("git is not installed or not on PATH") from None
    if check and proc.returncode != 0:
        raise GitFailed(args, proc.returncode, proc.stderr)
    return proc


def out(args: Sequence[str], cwd: Path | str | None = None, **kwargs: object) -> str:
    return run(args, cwd, **kwargs).stdout  # type: ignore[arg-type]


def toplevel(cwd: Path | str | None = None) -> Path:
    from pathlib import Path

    where = Path(cwd or os.getcwd()).resolve()
    proc = run(["rev-parse", "--show-toplevel"], where, check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise BadInput(
            f"{where} is not inside a git work tree; cd into a shiftkit project "
            f"or scaffold one with `shiftkit new DIR`"
        )
    return Path(proc.stdout.strip())


def git_dir(cwd: Path) -> Path:
    """This worktree's own git dir (private per linked worktree)."""
    from pathlib import Path

    return Path(out(["rev-parse", "--absolute-git-dir"], cwd).strip())


def common_dir(cwd: Path) -> Path:
    from pathlib import Path

    path = Path(out(["rev-parse", "--git-common-dir"], cwd).strip())
    return path if path.is_absolute() else (cwd / path).resolve()


def head_oid(cwd: Path) -> str | None:
    proc = run(["rev-parse", "-q", "--verify", "HEAD^{commit}"], cwd, check=False)
    return proc.stdout.strip() or None


def branch(cwd: Path) -> str | None:
    proc = run(["symbolic-ref", "-q", "--short", "HEAD"], cwd, check=False)
    return proc.stdout.strip() or None


def show(cwd: Path, spec: str) -> str | None:
    """The blob at ``spec`` (``HEAD:path``, ``:path`` for the index), or None if absent."""
    proc = run(["cat-file", "blob", spec], cwd, check=False)
    if proc.returncode != 0:
        return None
    return proc.stdout


def staged_changes(cwd: Path, paths: Sequence[str]) -> list[str]:
    """Which of ``paths`` differ between HEAD (or the empty tree) and the index."""
    base = head_oid(cwd) or EMPTY_TREE
    listing = out(["diff-index", "--cached", "--no-renames", "--name-only", base, "--", *paths], cwd)
    return [line for line in listing.splitlines() if line]


def status_lines(cwd: Path) -> list[str]:
    return [
        line
        for line in out(["status", "--porcelain=v1", "--untracked-files=all"], cwd).splitlines()
        if line
    ]


def write_tree(cwd: Path) -> str:
    return out(["write-tree"], cwd).strip()


def refs(cwd: Path, prefix: str) -> dict[str, str]:
    listing = out(["for-each-ref", "--format=%(refname) %(objectname)", prefix], cwd)
    result = {}
    for line in listing.splitlines():
        name, _, oid = line.partition(" ")
        result[name] = oid
    return result


def has_identity(cwd: Path) -> bool:
    """Whether git can name an author and committer here (config or environment)."""
    return (
        run(["var", "GIT_AUTHOR_IDENT"], cwd, check=False).returncode == 0
        and run(["var", "GIT_COMMITTER_IDENT"], cwd, check=False).returncode == 0
    )


def read_blobs(cwd: Path | str, specs: Sequence[str]) -> list[str | None]:
    """Many blobs in one `git cat-file --batch` (``REV:path``, ``:path`` or an oid)."""
    if not specs:
        return []
    proc = subprocess.run(
        ["git", "cat-file", "--batch"], cwd=cwd, input="\n".join(specs).encode() + b"\n",
        capture_output=True,
    )  # fmt: skip
    if proc.returncode != 0:
        raise GitFailed(["cat-file", "--batch"], proc.returncode, proc.stderr.decode(errors="replace"))
    data = proc.stdout
    results: list[str | None] = []
    position = 0
    for _ in specs:
        end = data.index(b"\n", position)
        header = data[position:end].split()
        position = end + 1
        if len(header) != 3 or header[1] != b"blob":
            if len(header) == 3:  # an object of another type: skip its content
                position += int(header[2]) + 1
            results.append(None)
            continue
        size = int(header[2])
        results.append(data[position : position + size].decode("utf-8", "surrogateescape"))
        position += size + 1
    return results
