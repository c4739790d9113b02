"""Putting things back when a command's commit is refused (by a hook, or a check on the way):
the index as it was, shiftkit's own files as they were and, for `revert`, the attempt's work
tree and branch too — so that nothing is left half done and the command can simply be run
again. Files a fixer hook changed outside shiftkit's own stay changed: that is the fix."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from shiftkit.core.errors import HookRefused, ShiftkitError
from shiftkit.edge import gitio
from shiftkit.edge.atomic import atomic_write
from shiftkit.edge.context import Context, work_tree_id


class Saved(NamedTuple):
    head: str | None
    staged: bytes | None  # the index file itself: what was staged, exactly
    files: dict[Path, bytes | None]  # shiftkit's own files (None: absent)
    tree: str | None  # the whole work tree as `git add -A` would stage it (revert only)


def bookkeeping_paths(ctx: Context) -> tuple[Path, ...]:
    from shiftkit.edge import ledger

    proj = ctx.project
    return (proj.features_path, proj.progress_path, proj.archive_path, ledger.ledger_path(ctx))


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def save(ctx: Context, work_tree: bool = False) -> Saved:
    return Saved(
        gitio.head_oid(ctx.root),
        _read(ctx.git_dir / "index"),
        {path: _read(path) for path in bookkeeping_paths(ctx)},
        work_tree_id(ctx) if work_tree else None,
    )


def restore(ctx: Context, saved: Saved) -> None:
    root = ctx.root
    if saved.tree is not None and saved.head is not None:
        # Back to the commit the command started from, then the work tree it found: tracked
        # and untracked files of the attempt, deleted ones deleted (ignored files were never
        # touched: no `clean -x`).
        gitio.run(["reset", "-q", "--hard", saved.head], root)
        gitio.run(["clean", "-f", "-d", "-q"], root)
        gitio.run(["read-tree", "-m", "-u", saved.head, saved.tree], root)
    for path, data in saved.files.items():
        if data is None:
            path.unlink(missing_ok=True)
        elif _read(path) != data:
            atomic_write(path, data)
    if saved.staged is not None:
        atomic_write(ctx.git_dir / "index", saved.staged)
        gitio.run(["update-index", "-q", "--refresh"], root, check=False)
    else:
        gitio.run(["reset", "-q"], root)


@contextlib.contextmanager
def undone_on_refusal(
    ctx: Context, say: Callable[[str], None], again: str, work_tree: bool = False
) -> Iterator[None]:
    """Run the block; when it fails, restore what `save` kept and fail. A hook's refusal
    prints the hooks' output first and ends its one line with ``again`` (what to do now)."""
    saved = save(ctx, work_tree)
    try:
        yield
    except ShiftkitError as exc:
        restore(ctx, saved)
        if isinstance(exc, HookRefused):
            if exc.shown:
                say(exc.shown)
            raise HookRefused(f"{exc.message}; {again}", exc.shown) from None
        raise
