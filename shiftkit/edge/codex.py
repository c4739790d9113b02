"""Where Codex CLI keeps its session rollouts: ``$CODEX_HOME/sessions/YYYY/MM/DD/
rollout-<time>-<session id>.jsonl`` (``CODEX_HOME`` defaults to ``~/.codex``)."""

from __future__ import annotations

import os
from pathlib import Path

from shiftkit.core import rollout

HEAD_BYTES = 1 << 20  # the session_meta line (it may carry the base instructions) fits


def home() -> Path:
    named = os.environ.get("CODEX_HOME", "").strip()
    return Path(named).expanduser() if named else Path.home() / ".codex"


def _files(since: float | None) -> list[Path]:
    sessions = home() / "sessions"
    try:
        found = [p for p in sessions.glob("**/rollout-*.jsonl") if p.is_file()]
    except OSError:
        return []
    if since is not None:
        found = [p for p in found if _mtime(p) >= since]
    return sorted(found)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _head(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            first = handle.readline(HEAD_BYTES)
    except OSError:
        return ""
    return first.decode("utf-8", errors="replace")


def _same_place(named: str, root: Path) -> bool:
    try:
        return Path(named).resolve() == root.resolve()
    except (OSError, ValueError, RuntimeError):
        return False


def rollouts_in(root: Path, since: float | None = None) -> list[tuple[Path, str]]:
    """(rollout, session id) of each Codex session whose ``session_meta.cwd`` is ``root``
    (modified at or after ``since``, when given), oldest path first."""
    found = []
    for path in _files(since):
        ident, cwd = rollout.meta(_head(path))
        if cwd is not None and _same_place(cwd, root):
            found.append((path, ident or path.stem))
    return found


def rollout_of(thread_id: str, since: float | None = None) -> Path | None:
    """The rollout of Codex session ``thread_id`` (its file name ends with the id, and its
    ``session_meta.id`` is the id), if there is one."""
    for path in _files(since):
        if path.stem.endswith(thread_id) and rollout.meta(_head(path))[0] == thread_id:
            return path
    return None
