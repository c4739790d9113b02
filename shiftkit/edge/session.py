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

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from shiftkit.core.claim import TIME_FORMAT
from shiftkit.core.config import ClaimsConfig
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


def hook_session(hook_input: str) -> str | None:
    """The ``session_id`` of a harness hook's JSON input, if it names one."""
    try:
        document = json.loads(hook_input)
    except ValueError:
        return None
    value = document.get("session_id") if isinstance(document, dict) else None
    return value.strip() if isinstance(value, str) and value.strip() else None


def record_session(git_dir: Path, session_id: str) -> None:
    path = state.worktree_state(git_dir) / SESSION
    if state.read_json(path) != {"session": session_id}:
        state.write_json(path, {"session": session_id})


def current(git_dir: Path) -> str:
    """This worktree's session: $SHIFTKIT_SESSION, else the one the SessionStart hook
    recorded, else "manual" (a person at a terminal)."""
    named = os.environ.get("SHIFTKIT_SESSION", "").strip()
    if named:
        return named
    recorded = state.read_json(state.worktree_state(git_dir) / SESSION)
    value = recorded.get("session") if isinstance(recorded, dict) else None
    return value if isinstance(value, str) and value else "manual"


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


def keep_alive(root: Path, git_dir: Path, common_dir: Path, claims: ClaimsConfig) -> None:
    """Every command's sign of life: the local heartbeat, and with a claims remote the claim
    ref re-pointed at a fresh heartbeat once `heartbeat_minutes` have passed since the last
    (other machines see only the remote). Never fails a command: a heartbeat that cannot be
    sent now is sent by a later command; a claim lost meanwhile is found at release/finish."""
    oid = beat(git_dir, common_dir)
    if oid is None or not claims.remote or not claims.enabled:
        return
    held = state.local_claim(git_dir)
    if held is None or held.oid != oid:
        return
    from datetime import timedelta

    stamp = now()
    try:
        since = datetime.strptime(stamp, TIME_FORMAT) - datetime.strptime(
            held.record.last_beat(), TIME_FORMAT
        )
    except ValueError:
        since = timedelta.max
    if since < timedelta(minutes=claims.heartbeat_minutes):
        return
    from shiftkit.core.claim import LocalClaim
    from shiftkit.core.errors import ShiftkitError
    from shiftkit.edge import remote

    try:
        fresh = remote.refresh(root, claims.remote, held, stamp, claims.ref_prefix)
    except (ShiftkitError, OSError):
        return
    if fresh is None:
        return
    state.save_local_claim(git_dir, LocalClaim(held.record._replace(heartbeat=stamp), fresh))
    forget(common_dir, held.oid)
    beat(git_dir, common_dir)
