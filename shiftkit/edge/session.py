"""Who is working: the clone's id, the harness's session, and the claim's heartbeat.

* The clone id is random, made once per clone (lazily, in the common git dir): two machines
  may check a repository out at the same path, so a path alone names no one.
* The session is the harness's own id: the SessionStart hook records the ``session_id`` it
  reads on stdin (Claude Code and Codex both send one) in this worktree's git dir;
  ``SHIFTKIT_SESSION`` (set by `shiftkit run`) wins over it.
* The heartbeat is a file per claim object in the common git dir, touched by every shiftkit
  command and hook: under Claude Code every Bash call is its own shell, so no process id
  says whether a session lives — only that it still acts.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from shiftkit.core import jsonbound
from shiftkit.core.claim import TIME_FORMAT
from shiftkit.core.errors import BadInput
from shiftkit.edge import heartbeat, state
from shiftkit.edge.atomic import atomic_write

CLONE_ID = "clone-id"
SESSION = "session.json"


def clone_id(common_dir: Path) -> str:
    """This clone's random id, made on first use (two racing makers agree: the first wins)."""
    path = state.repo_state(common_dir) / CLONE_ID
    try:
        found = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        found = ""
    if found:
        return found
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return path.read_text(encoding="ascii").strip() or _rewrite(path)
    import secrets

    with os.fdopen(fd, "w", encoding="ascii") as handle:
        made = secrets.token_hex(6)
        handle.write(made + "\n")
    return made


def _rewrite(path: Path) -> str:
    import secrets

    made = secrets.token_hex(6)
    atomic_write(path, made + "\n")
    return made


def hook_field(hook_input: str, key: str) -> str | None:
    """A string field of a harness hook's JSON input, if it has a non-blank one."""
    try:
        document = jsonbound.loads(hook_input, "hook input")
    except BadInput:
        return None
    value = document.get(key) if isinstance(document, dict) else None
    return value.strip() if isinstance(value, str) and value.strip() else None


def hook_session(hook_input: str) -> str | None:
    """The ``session_id`` of a harness hook's JSON input, if it names one."""
    return hook_field(hook_input, "session_id")


def record_session(git_dir: Path, session_id: str) -> None:
    """The harness's session id, from its SessionStart hook; under `shiftkit run`, with the
    run's name for the session it started (``$SHIFTKIT_SESSION``), which the id then stands
    for (decision 0060)."""
    path = state.worktree_state(git_dir) / SESSION
    value = {"session": session_id}
    run = os.environ.get("SHIFTKIT_SESSION", "").strip()
    if run and run != session_id:
        value["run"] = run
    if state.read_json(path) != value:
        state.write_json(path, value)


def recorded(git_dir: Path) -> tuple[str | None, str | None]:
    """(the recorded harness session, the `run` session it stands for)."""
    recorded = state.read_json(state.worktree_state(git_dir) / SESSION)
    if not isinstance(recorded, dict):
        return None, None
    value, run = recorded.get("session"), recorded.get("run")
    return (
        value if isinstance(value, str) and value else None,
        run if isinstance(run, str) and run else None,
    )


def harness_session(git_dir: Path, run_session: str) -> str | None:
    """The harness's own id for the session `shiftkit run` named ``run_session``, if its
    SessionStart hook recorded one."""
    value, run = recorded(git_dir)
    return value if run == run_session else None


def current(git_dir: Path) -> str:
    """This worktree's session: the harness's own id its SessionStart hook recorded (under
    `shiftkit run`, for the session ``$SHIFTKIT_SESSION`` names), else $SHIFTKIT_SESSION,
    else "manual" (a person at a terminal)."""
    named = os.environ.get("SHIFTKIT_SESSION", "").strip()
    value, run = recorded(git_dir)
    if named:
        return value if value and run == named else named
    return value or "manual"


# -- heartbeats --------------------------------------------------------------------------------


def now() -> str:
    return datetime.now(UTC).strftime(TIME_FORMAT)


def beat(git_dir: Path, common_dir: Path) -> str | None:
    """Refresh this worktree's claim's heartbeat; the claim object's id, None without one."""
    return heartbeat.beat(git_dir, common_dir)


def seen(common_dir: Path, oid: str) -> str:
    """The last heartbeat of claim object ``oid`` in this clone ('' when none)."""
    where = heartbeat.path(common_dir, oid)
    try:
        stamp = where.stat().st_mtime if where is not None else None
    except (OSError, ValueError):
        stamp = None
    return "" if stamp is None else datetime.fromtimestamp(stamp, UTC).strftime(TIME_FORMAT)


def forget(common_dir: Path, oid: str) -> None:
    where = heartbeat.path(common_dir, oid)
    if where is not None:
        where.unlink(missing_ok=True)
