"""Git plumbing through the git command line.

Hooks run on every commit, so this module stays import-light and reads the staged state
through git itself (which honours GIT_INDEX_FILE); GitPython is used, lazily, on the
paths that are not hot.
"""

from __future__ import annotations

import os

from shiftkit.core import own_refs
from shiftkit.core.errors import BadInput, ShiftkitError

TYPE_CHECKING = False  # the commit hooks import this module: no typing at run time
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Mapping, Sequence
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
    clean_env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``env``: variables added to ours; ``clean_env``: the whole environment instead."""
    import subprocess

    full_env = dict(clean_env) if clean_env is not None else None
    if env is not None:
        full_env = {**(full_env if full_env is not None else os.environ), **env}
    if own_refs.marks(args):  # shiftkit's own update of its refs (decision record 0091)
        full_env = {**(full_env if full_env is not None else os.environ), own_refs.MARKER: "1"}
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


def head_oid(cwd: Path | str) -> str | None:
    code, out, _ = plumb(["rev-parse", "-q", "--verify", "HEAD^{commit}"], cwd)
    return (out.decode().strip() or None) if code == 0 else None


def branch(cwd: Path) -> str | None:
    proc = run(["symbolic-ref", "-q", "--short", "HEAD"], cwd, check=False)
    return proc.stdout.strip() or None


def status_lines(cwd: Path) -> list[str]:
    return [
        line
        for line in out(["status", "--porcelain=v1", "--untracked-files=all"], cwd).splitlines()
        if line
    ]


def write_tree(cwd: Path) -> str:
    code, tree, err = plumb(["write-tree"], cwd)
    if code != 0:
        raise GitFailed(["write-tree"], code, err.decode(errors="replace"))
    return tree.decode().strip()


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
    return [blob[1] if blob else None for blob in read_blobs_with_ids(cwd, specs)]


def read_blobs_with_ids(cwd: Path | str, specs: Sequence[str]) -> list[tuple[str, str] | None]:
    """(object id, text) of each blob, None where there is none."""
    if not specs:
        return []
    code, data, err = plumb(["cat-file", "--batch"], cwd, "\n".join(specs).encode() + b"\n")
    if code != 0:
        raise GitFailed(["cat-file", "--batch"], code, err.decode(errors="replace"))
    results: list[tuple[str, str] | None] = []
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
        text = data[position : position + size].decode("utf-8", "surrogateescape")
        results.append((header[0].decode(), text))
        position += size + 1
    return results


def object_ids(cwd: Path | str, specs: Sequence[str]) -> list[str | None]:
    """The id of each object (``REV:path``), None where there is none: one `git cat-file
    --batch-check`, no contents read."""
    if not specs:
        return []
    code, data, err = plumb(["cat-file", "--batch-check"], cwd, "\n".join(specs).encode() + b"\n")
    if code != 0:
        raise GitFailed(["cat-file", "--batch-check"], code, err.decode(errors="replace"))
    lines = data.decode("utf-8", "surrogateescape").split("\n")[: len(specs)]
    # ("<id> <type> <size>", or "<spec> missing" where the spec may hold spaces)
    return [
        parts[0] if len(parts := line.split(" ")) == 3 and parts[2].isdigit() else None
        for line in lines
    ]


def object_type(cwd: Path | str, spec: str) -> str | None:
    """The type of an object (``REV:path``): blob, tree, commit; None where there is none."""
    code, out, _ = plumb(["cat-file", "-t", spec], cwd)
    return out.decode().strip() if code == 0 else None


def merge_bases(cwd: Path | str, first: str, other: str) -> list[str]:
    """Every best common ancestor of two commits (`merge-base --all`: a criss-cross merge has
    several); none for unrelated histories."""
    code, out, _ = plumb(["merge-base", "--all", first, other], cwd)
    return out.decode().split() if code == 0 else []


def is_ancestor(cwd: Path | str, older: str, newer: str) -> bool:
    """Whether ``older`` is ``newer`` or one of its ancestors."""
    code, _, _ = plumb(["merge-base", "--is-ancestor", older, newer], cwd)
    return code == 0


def authors(cwd: Path | str, commits: Sequence[str]) -> dict[str, str]:
    """Each commit's author, as ``Name <email>``."""
    if not commits:
        return {}
    code, out, _ = plumb(["log", "--no-walk=unsorted", "--format=%H %an <%ae>", *commits], cwd)
    lines = out.decode("utf-8", "replace").splitlines() if code == 0 else []
    return dict(line.split(" ", 1) for line in lines if " " in line)


def merge_parents(git_dir: Path) -> list[str]:
    """The other parents of a merge being committed (empty for an ordinary commit)."""
    try:
        with open(os.path.join(git_dir, "MERGE_HEAD"), encoding="ascii") as handle:
            return handle.read().split()
    except FileNotFoundError:
        return []


def git_dirs(root: Path) -> tuple[Path, Path]:
    """(this worktree's git dir, the common git dir), read from `.git` without running git
    when it can be (the commit hooks call this on every commit)."""
    from pathlib import Path

    dot = Path(root) / ".git"
    if "GIT_DIR" not in os.environ:
        if dot.is_dir():
            return dot, dot
        try:
            first = dot.read_text(encoding="utf-8").splitlines()[0]
        except (OSError, IndexError):
            first = ""
        if first.startswith("gitdir: "):
            own = Path(first[len("gitdir: ") :].strip())
            own = own if own.is_absolute() else (Path(root) / own).resolve()
            try:
                common_text = (own / "commondir").read_text(encoding="utf-8").strip()
            except OSError:
                return own, own
            common = Path(common_text)
            return own, common if common.is_absolute() else (own / common).resolve()
    return git_dir(Path(root)), common_dir(Path(root))


def plumb(args: Sequence[str], cwd: Path | str, stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    """Run git with small input and return (exit code, stdout, stderr), without importing
    subprocess: the commit hooks spend a tenth of their time importing it otherwise."""
    if len(stdin) > 16384:  # more than a pipe can hold before we read: let subprocess juggle
        import subprocess

        proc = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True)
        return proc.returncode, proc.stdout, proc.stderr
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    actions = [
        (os.POSIX_SPAWN_DUP2, in_read, 0),
        (os.POSIX_SPAWN_DUP2, out_write, 1),
        (os.POSIX_SPAWN_DUP2, err_write, 2),
    ]
    previous = os.getcwd()
    os.chdir(cwd)  # posix_spawn has no cwd argument before Python 3.13
    try:
        pid = os.posix_spawnp("git", ["git", *args], os.environ, file_actions=actions)
    except FileNotFoundError:
        raise BadInput("git is not installed or not on PATH") from None
    finally:
        os.chdir(previous)
        for fd in (in_read, out_write, err_write):
            os.close(fd)
    try:
        os.write(in_write, stdin)
    finally:
        os.close(in_write)
    out = _drain(out_read)
    err = _drain(err_read)  # git writes little to stderr; it fits the pipe meanwhile
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out, err


def _drain(fd: int) -> bytes:
    chunks = []
    try:
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)
