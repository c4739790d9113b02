"""The ledger on disk: the committed file, the entries waiting in the git dir for the next unit
boundary, and usage read from Claude Code transcripts and Codex rollouts.

Between boundaries entries wait in this worktree's git dir (``ledger-pending.jsonl``); at a
boundary (finish, revert, a demotion) they are appended to the project's ledger and committed
with the boundary's bookkeeping. A pending entry stays pending until HEAD's ledger holds its
id, so a refused or crashed commit loses nothing and a re-run writes nothing twice.
"""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime
from pathlib import Path

from shiftkit.core import ledger, rollout
from shiftkit.core.claim import LocalClaim
from shiftkit.core.errors import BadInput
from shiftkit.core.ledger import Entry, Usage
from shiftkit.edge import files, gitio, state
from shiftkit.edge.atomic import atomic_write

TYPE_CHECKING = False
if TYPE_CHECKING:
    from shiftkit.edge.context import Context

LEDGER_FILE = ledger.LEDGER_FILE
PENDING = "ledger-pending.jsonl"
TRANSCRIPT = "transcript.json"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_id() -> str:
    return os.urandom(8).hex()


def ledger_path(ctx: Context) -> Path:
    return ctx.root / ledger.LEDGER_FILE


def pending_path(ctx: Context) -> Path:
    return state.worktree_state(ctx.git_dir) / PENDING


def _read(path: Path) -> str:
    return files.read_optional(path)  # (a clear line for a folder or bad bytes)


def pending(ctx: Context) -> list[Entry]:
    return ledger.parse(_read(pending_path(ctx)), str(pending_path(ctx)))


def head_text(ctx: Context) -> str:
    return gitio.read_blobs(ctx.root, [f"HEAD:{ledger.LEDGER_FILE}"])[0] or ""


def read_all(ctx: Context) -> list[Entry]:
    """Every entry: the ledger in the work tree, what waits for the next boundary, and the
    usage refs (this clone's, and every clone's as last fetched: `usage_ref`), each id once."""
    from shiftkit.edge import usage_ref

    committed = ledger.parse(_read(ledger_path(ctx)), ledger.LEDGER_FILE)
    on_refs = usage_ref.entries(ctx.root, ctx.config.claims.ref_prefix)
    return ledger.merged(committed, pending(ctx), on_refs, _published(ctx))


def _published(ctx: Context) -> list[Entry]:
    """The ledger of the claims remote's branch as last fetched: entries this clone published
    and then dropped (a `git reset --hard` past its own pushed commit) are still recorded —
    without them a session's usage was recorded a second time (the night's "abandoned
    finished commit")."""
    from shiftkit.edge import gitio, remote

    name, branch = ctx.config.claims.remote, gitio.branch(ctx.root)
    if not name or branch is None:
        return []
    [text] = gitio.read_blobs(
        ctx.root, [f"{remote.tracking_ref(name, branch)}:{ledger.LEDGER_FILE}"]
    )
    if text is None:
        return []
    try:
        return ledger.parse(text, f"{name}/{branch}:{ledger.LEDGER_FILE}")
    except BadInput:
        return []  # (a published ledger a reader cannot parse: `audit` names it)


def fetch_usage(ctx: Context) -> str | None:
    """Before `cost`, `report` or `audit`: every clone's usage ref from the claims remote
    (nothing when there is none; when it does not answer, what was fetched last is read):
    why the fetch failed, or None."""
    from shiftkit.edge import usage_ref

    if not ctx.config.claims.remote:
        return None
    return usage_ref.fetch(ctx.root, ctx.config.claims.remote, ctx.config.claims.ref_prefix)


def move_waiting(ctx: Context) -> bool:
    """Move the waiting entries HEAD's ledger lacks onto this clone's usage ref (no commit on
    the branch); whether any moved. The caller knows no claim is open (its `finish` would
    take them instead)."""
    from shiftkit.edge import session, usage_ref

    waiting = pending(ctx)
    if not waiting:
        return False
    new = still_waiting(ledger.parse(head_text(ctx), f"{ledger.LEDGER_FILE} at HEAD"), waiting)
    prefix, clone = ctx.config.claims.ref_prefix, session.clone_id(ctx.common_dir)
    moved = usage_ref.append(ctx.root, prefix, clone, new) if new else False
    atomic_write(pending_path(ctx), "")
    return moved


def publish(ctx: Context) -> tuple[bool, str | None]:
    """`move_waiting`, then this clone's usage ref pushed to the claims remote: (whether
    entries moved, why the push failed or None)."""
    from shiftkit.edge import session, usage_ref

    moved = move_waiting(ctx)
    problem = None
    if ctx.config.claims.remote:
        prefix, clone = ctx.config.claims.ref_prefix, session.clone_id(ctx.common_dir)
        problem = usage_ref.push(ctx.root, ctx.config.claims.remote, prefix, clone)
    return moved, problem


def add_pending(ctx: Context, entries: list[Entry]) -> None:
    """Entries for the next boundary; one with the id of a waiting entry replaces it."""
    if not entries:
        return
    fresh = {e.id for e in entries}
    kept = [e for e in pending(ctx) if e.id not in fresh]
    atomic_write(pending_path(ctx), ledger.dumps([*kept, *entries]))


def fold(ctx: Context) -> bool:
    """Write HEAD's ledger plus the waiting entries HEAD lacks into the work tree, ready to be
    committed with the boundary's bookkeeping; drop waiting entries HEAD already has.
    Returns whether the ledger file now differs from HEAD's."""
    head = head_text(ctx)
    waiting = pending(ctx)
    new = still_waiting(ledger.parse(head, f"{ledger.LEDGER_FILE} at HEAD"), waiting)
    if len(new) != len(waiting):
        atomic_write(pending_path(ctx), ledger.dumps(new))
    if not new:
        return False
    base = head if not head or head.endswith("\n") else head + "\n"
    atomic_write(ledger_path(ctx), base + ledger.dumps(new))
    return True


def forget_committed(ctx: Context) -> None:
    """After a commit: waiting entries that HEAD's ledger now holds wait no longer (another
    branch checked out next must not get them again)."""
    if not _read(pending_path(ctx)).strip():
        return
    waiting = pending(ctx)
    left = still_waiting(ledger.parse(head_text(ctx), f"{ledger.LEDGER_FILE} at HEAD"), waiting)
    if len(left) != len(waiting):
        atomic_write(pending_path(ctx), ledger.dumps(left))


def still_waiting(committed: list[Entry], waiting: list[Entry]) -> list[Entry]:
    """The waiting entries the committed ledger does not hold as they are. A committed entry
    with a waiting one's id but other contents (a zeroed copy, committed by hand to make the
    real one look recorded) does not stand for it: the real one waits on under an id of its
    own, derived from its contents, so it is counted once whatever was committed."""
    held = {entry.id: entry for entry in committed}
    result = []
    for entry in waiting:
        if held.get(entry.id) == entry:
            continue
        if entry.id in held:
            digest = hashlib.sha1(ledger.dumps_entry(entry).encode()).hexdigest()[:12]
            entry = entry._replace(id=f"{entry.id}~{digest}")
            if held.get(entry.id) == entry:
                continue
        result.append(entry)
    return result


# -- what happens at the boundaries -----------------------------------------------------------


def note_verify(ctx: Context, feature_id: str, ok: bool, seconds: float) -> None:
    from shiftkit.edge import session

    entry = Entry(
        "verify",
        new_id(),
        now(),
        feature=feature_id,
        session=session.current(ctx.git_dir),  # (`cost --by session`: one row per session)
        ok=ok,
        seconds=round(seconds, 3),
    )
    add_pending(ctx, [entry])


def unit_id(held: LocalClaim) -> str:
    """One unit per claim: a finish that failed and the revert after it are one unit. Keyed
    by the record's nonce, which a remote heartbeat keeps while the claim object changes."""
    return "unit-" + (held.record.nonce or held.oid or held.record.taken)[:16]


def open_interval(ctx: Context, session: str | None = None) -> ledger.Interval | None:
    """This worktree's open claim's time (with ``session``: only when that session took it)."""
    held = state.local_claim(ctx.git_dir)
    if held is None or held.record.taken == "?":
        return None
    if session is not None and held.record.session != session:
        return None
    return ledger.Interval(held.feature, held.record.taken, None)


COORDINATION = "coordination-sessions.json"


def note_coordination(ctx: Context) -> None:
    """This worktree's session looked for a feature to claim and found none: its usage
    outside any claim is the cost of coordination, not idleness."""
    from shiftkit.edge import session

    path = state.worktree_state(ctx.git_dir) / COORDINATION
    known = state.read_json(path)
    sessions = [s for s in known if isinstance(s, str)] if isinstance(known, list) else []
    current = session.current(ctx.git_dir)
    if current not in sessions:
        state.write_json(path, [*sessions[-99:], current])


def _looked(ctx: Context, session: str) -> bool:
    known = state.read_json(state.worktree_state(ctx.git_dir) / COORDINATION)
    return isinstance(known, list) and session in known


def note_unit(ctx: Context, held: LocalClaim, outcome: str, signature: str | None = None) -> None:
    record_known_transcript(ctx)  # (while the claim is still open: its usage is its own)
    entry = Entry(
        "unit",
        unit_id(held),
        now(),
        feature=held.feature,
        session=held.record.session,
        outcome=outcome,
        claimed_at=held.record.taken,
        signature=signature,
    )
    add_pending(ctx, [entry])


def close_unit(ctx: Context, held: LocalClaim, outcome: str, signature: str | None = None) -> None:
    """At finish or revert, before its commit: the unit's entry, the usage so far, and the
    waiting entries written into the ledger file, which the boundary's commit takes."""
    note_unit(ctx, held, outcome, signature)
    fold(ctx)


# -- usage ----------------------------------------------------------------------------------


def add_usage(
    ctx: Context,
    usage: Usage,
    *,
    model: str,
    session: str,
    source: str,
    feature: str | None,
    usd: float | None = None,
    at: str | None = None,
    purpose: str | None = None,
) -> Entry:
    entry = Entry(
        "usage",
        new_id(),
        at or now(),
        feature=feature,
        session=session,
        model=model,
        usage=usage,
        usd=usd,
        source=source,
        purpose=purpose,
    )
    add_pending(ctx, [entry])
    return entry


def transcript_texts(path: Path) -> list[str]:
    """The session's transcript and its subagents' (``<session>/subagents/*.jsonl`` beside
    it), as text; a file that cannot be read is skipped."""
    found = [path, *sorted(path.with_suffix("").glob("**/*.jsonl"))]
    texts = []
    for file in found:
        try:
            texts.append(files.read_text(file, errors="replace"))
        except OSError:
            continue
    return texts


def remember_transcript(ctx: Context, path: Path, session: str | None) -> None:
    """The session's transcript (or rollout), recorded again at each unit boundary."""
    value: dict[str, str] = {"path": str(path)}
    if session:
        value["session"] = session
    state.write_json(state.worktree_state(ctx.git_dir) / TRANSCRIPT, value)


def record_transcript(
    ctx: Context, path: Path, session: str | None = None
) -> tuple[str, list[Entry]]:
    """Record what a Claude Code transcript or a Codex rollout (told apart by its lines)
    holds beyond what the ledger has for its session, each model response attributed to the
    feature claimed at its time. Remembers the file, so the next unit boundary records it
    too. The session is ``session``, else the rollout's own id, else the file's name. A
    session whose usage was recorded from its harness's printed result is not recorded again
    from its file (decision 0040: one source per session). Returns (session, entries)."""
    remember_transcript(ctx, path, session)
    if not path.is_file():
        raise BadInput(f"{path}: no such transcript")
    texts = transcript_texts(path)
    session = session or next(
        (rollout.meta(text)[0] for text in texts[:1] if rollout.is_rollout(text)), None
    )
    session = session or path.stem
    entries = read_all(ctx)
    if ledger.recorded(entries, session, "result"):
        return session, []
    messages = rollout.usage_messages(texts, session)
    # The session's own claims: every message of a session that held one lands on one of
    # them, its orientation and its wrap-up too (decision record 0065).
    # A session known here (this worktree's, or one whose `claim` found nothing) that held no
    # claim is coordination or idle; one whose claims carry another session's name (claimed
    # before its SessionStart hook named it) is read as before: at the claim of its time.
    from shiftkit.edge import session as sessions

    claims = ledger.intervals(entries, open_interval(ctx, session), session)
    looked = _looked(ctx, session)
    whole = bool(claims) or looked or sessions.current(ctx.git_dir) == session
    if not whole:
        claims = ledger.intervals(entries, open_interval(ctx))
    totals = ledger.attribute(messages, claims, whole_session=whole)
    place = ledger.session_feature if whole else ledger.feature_at
    latest: dict[ledger.Key, str] = {}
    for message in messages:
        latest[(place(message.at, claims), message.model)] = message.at
    before = ledger.recorded(entries, session, "transcript")
    purpose = None if not whole else ledger.COORDINATION if looked else ledger.IDLE
    written = []
    for (feature, model), extra in ledger.news(totals, before):
        written.append(
            add_usage(
                ctx,
                Usage(*(min(kind, ledger.MAX_TOKENS) for kind in extra)),
                model=model,
                session=session,
                source="transcript",
                feature=feature,
                at=latest.get((feature, model)),
                purpose=None if feature else purpose,
            )
        )
    return session, written


def known_transcript(ctx: Context) -> tuple[Path, str | None] | None:
    value = state.read_json(state.worktree_state(ctx.git_dir) / TRANSCRIPT)
    if not isinstance(value, dict):
        return None
    path, session = value.get("path"), value.get("session")
    if not isinstance(path, str) or not path or not isinstance(session, str | None):
        return None
    return Path(path), session or None


def record_known_transcript(ctx: Context, only_after_a_claim: bool = False) -> None:
    """At a boundary: the remembered transcript (from the session's hooks), if any.
    ``only_after_a_claim``: only when its session has ended a claim here (its wrap-up); a
    session that has not claimed yet is recorded later, once it is known what it was for."""
    known = known_transcript(ctx)
    if known is None or not known[0].is_file():
        return
    if only_after_a_claim:
        session = known[1] or known[0].stem
        if not ledger.intervals(read_all(ctx), None, session):
            return
    try:
        record_transcript(ctx, *known)
    except BadInput:
        return
