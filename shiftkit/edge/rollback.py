"""Undoing a refused adoption: what shiftkit and the scaffold's setup may change in a
directory — the files it writes, the index, git's config, the hooks folder, shiftkit's state
in git's folder (the hooks write it), a new `.git` — saved before, and put back byte for
byte (modes and times included) on failure."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from shiftkit.edge import gitio, state

# The files in git's folder that `git add`, `git config`, `pre-commit install` and a refused
# `git commit` write (as `git rev-parse --git-path` names them); folders are saved whole.
GIT_FILES = ("index", "config", "COMMIT_EDITMSG")


@dataclass(frozen=True)
class Saved:
    data: bytes
    mode: int
    times: tuple[int, int]  # atime, mtime in ns: git's index compares them


@dataclass
class Journal:
    root: Path
    had_git: bool  # root was the top of a git work tree
    had_dot_git: bool  # root/.git existed (else a `git init` made it, and it goes)
    files: dict[Path, Saved | None] = field(default_factory=dict)
    new_dirs: list[Path] = field(default_factory=list)
    folders: dict[Path, Path | None] = field(default_factory=dict)  # -> its copy, or absent


def _save(path: Path) -> Saved | None:
    if not path.is_file():
        return None
    stat = path.stat()
    return Saved(path.read_bytes(), stat.st_mode & 0o7777, (stat.st_atime_ns, stat.st_mtime_ns))


def _put_back(path: Path, saved: Saved | None) -> None:
    if saved is None:
        path.unlink(missing_ok=True)
        return
    path.write_bytes(saved.data)
    path.chmod(saved.mode)
    os.utime(path, ns=saved.times)


def _is_repository_top(root: Path) -> bool:
    proc = gitio.run(["rev-parse", "--show-toplevel"], root, check=False)
    return proc.returncode == 0 and Path(proc.stdout.strip()).resolve() == root.resolve()


def _git_path(root: Path, name: str) -> Path:
    path = Path(gitio.out(["rev-parse", "--git-path", name], root).strip())
    return path if path.is_absolute() else root / path


@contextmanager
def undo_on_failure(root: Path, paths: Iterable[str]) -> Iterator[Journal]:
    """Save ``paths`` (relative to ``root``) and git's own files; on any exception inside the
    block, put them back and re-raise."""
    journal = Journal(root, _is_repository_top(root), (root / ".git").exists())
    for relative in paths:
        target = root / relative
        journal.files[target] = _save(target)
        for parent in reversed(target.relative_to(root).parents):
            folder = root / parent
            if parent != Path(".") and not folder.exists() and folder not in journal.new_dirs:
                journal.new_dirs.append(folder)
    with tempfile.TemporaryDirectory(prefix="shiftkit-undo-") as scratch:
        if journal.had_git:
            for name in GIT_FILES:
                path = _git_path(root, name)
                journal.files[path] = _save(path)
            folders = [
                _git_path(root, "hooks"),
                state.worktree_state(gitio.git_dir(root)),
                state.repo_state(gitio.common_dir(root)),
            ]
            for number, folder in enumerate(dict.fromkeys(folders)):
                copy = Path(scratch) / str(number) if folder.is_dir() else None
                if copy is not None:
                    shutil.copytree(folder, copy, symlinks=True)
                journal.folders[folder] = copy
        try:
            yield journal
        except BaseException:
            restore(journal)
            raise


def restore(journal: Journal) -> None:
    for path, saved in journal.files.items():
        _put_back(path, saved)
    for folder in reversed(journal.new_dirs):
        try:
            folder.rmdir()
        except OSError:
            pass  # not empty: something not ours is in it; leave it
    if not journal.had_dot_git:
        shutil.rmtree(journal.root / ".git", ignore_errors=True)
    for folder, copy in journal.folders.items():
        shutil.rmtree(folder, ignore_errors=True)
        if copy is not None:
            shutil.copytree(copy, folder, symlinks=True)
