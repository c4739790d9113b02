"""What every shift command works on: the project, this worktree's git dir and the shared one,
and the small git and file operations they share."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from shiftkit.core import features
from shiftkit.core.config import Config
from shiftkit.core.errors import Refused
from shiftkit.edge import gitio, project, state
from shiftkit.edge.atomic import atomic_write
from shiftkit.edge.files import read_optional


@dataclass(frozen=True)
class Context:
    project: project.Project
    git_dir: Path  # this worktree's own
    common_dir: Path  # shared by all worktrees

    @property
    def root(self) -> Path:
        return self.project.root

    @property
    def config(self) -> Config:
        return self.project.config


def open_context(cwd: Path | str | None = None) -> Context:
    proj = project.find(cwd)
    ctx = Context(proj, gitio.git_dir(proj.root), gitio.common_dir(proj.root))
    from shiftkit.edge import remote

    remote.keep_alive(ctx.root, ctx.git_dir, ctx.common_dir, proj.config.claims)
    return ctx


def bookkeeping(ctx: Context) -> frozenset[str]:
    """shiftkit's own files, as repository paths: the list, the log, its archive and the
    ledger. A commit changing only these changes no verifier's subject."""
    from shiftkit.core.ledger import LEDGER_FILE

    cfg = ctx.config
    return frozenset({cfg.features, cfg.progress, cfg.log.archive, LEDGER_FILE})


def log_time() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def iso_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def short(oid: str | None) -> str:
    return oid[:7] if oid else "-"


def work_tree_id(ctx: Context) -> str:
    """The tree object of the work tree as `git add -A` would stage it, computed in a
    temporary index so the real index is untouched."""
    fd, tmp_index = tempfile.mkstemp(prefix="shiftkit-index-", dir=ctx.git_dir)
    os.close(fd)
    try:
        real_index = ctx.git_dir / "index"
        if real_index.exists():
            atomic_write(Path(tmp_index), real_index.read_bytes())
            # (the copy keeps the index's mtime: git trusts an entry's stat data only when it
            # is older than the index, so a newer copy would take a file changed in the same
            # second as the index was written for unchanged — "racy git")
            seen = real_index.stat()
            os.utime(tmp_index, ns=(seen.st_atime_ns, seen.st_mtime_ns))
        else:
            os.unlink(tmp_index)
        env = {"GIT_INDEX_FILE": tmp_index}
        gitio.run(["add", "-A"], ctx.root, env=env)
        return gitio.out(["write-tree"], ctx.root, env=env).strip()
    finally:
        try:
            os.unlink(tmp_index)
        except FileNotFoundError:
            pass


def person_signs(ctx: Context) -> bool:
    """Whether a person's action must be signed here; refuses when it must and cannot be."""
    if ctx.config.people.policy != "signed":
        return False
    key = gitio.run(["config", "--get", "user.signingkey"], ctx.root, check=False).stdout.strip()
    if not key:
        raise Refused(
            "the people policy is 'signed', so this person's action must be signed, and "
            "git has no signing key here: set `git config user.signingkey` (with `git "
            "config gpg.format ssh` for an SSH key) to a key listed in "
            ".shiftkit/allowed_signers"
        )
    return True


def head_trailer(ctx: Context, key: str) -> list[str]:
    if gitio.head_oid(ctx.root) is None:
        return []
    value = gitio.out(["log", "-1", f"--format=%(trailers:key={key},valueonly)"], ctx.root)
    return [line.strip() for line in value.splitlines() if line.strip()]


def write_features(ctx: Context, feature_list: features.FeatureList) -> None:
    project.write_features(ctx.project, feature_list)


def pending_note_path(ctx: Context) -> Path:
    return state.worktree_state(ctx.git_dir) / "pending-note.txt"


def add_note(ctx: Context, text: str) -> None:
    """Add a line to the note the next log entry of this worktree's claim carries."""
    path = pending_note_path(ctx)
    atomic_write(path, read_optional(path) + text.strip() + "\n")


def pending_note(ctx: Context) -> str:
    """The note waiting for this worktree's next log entry ('' when none)."""
    return read_optional(pending_note_path(ctx)).strip()


def clear_note(ctx: Context) -> None:
    try:
        pending_note_path(ctx).unlink()
    except FileNotFoundError:
        pass


def plan_log(ctx: Context, log_text: str, blocked_ids: list[str]) -> tuple[str, str | None]:
    """The log to write, tidied (`progress.tidy`: what whitespace fixers leave unchanged),
    and the new archive when a prune is due (else None)."""
    from shiftkit.core import progress

    cfg = ctx.config
    return progress.plan(
        log_text,
        lambda: read_optional(ctx.project.archive_path),
        cfg.log.keep,
        cfg.log.block,
        blocked_ids,
        cfg.log.archive,
    )


def write_log(ctx: Context, log_text: str, blocked_ids: list[str]) -> None:
    """Write the progress log, pruning it into the archive first when it is due."""
    write_planned_log(ctx, *plan_log(ctx, log_text, blocked_ids))


def write_planned_log(ctx: Context, log_text: str, archive_text: str | None) -> None:
    if archive_text is not None:
        # Archive first: a crash in between leaves entries in both files, never in neither.
        atomic_write(ctx.project.archive_path, archive_text)
    atomic_write(ctx.project.progress_path, log_text)


def record_verified_at(ctx: Context, feature_ids: list[str]) -> None:
    """These features' verifiers passed now: the start check's rotation puts them last."""
    state.stamp_verified(ctx.common_dir, feature_ids)
