"""This clone's claims beyond the open one (decision record 0096): no feature stays locked by
this clone's own state.

* A parked claim whose finished commit was dropped before it was published (no branch here
  nor the remote's tracking branch holds it) is released, with a log entry, by the next
  command that looks at claims (`start`, `claim`, `release`, `revert`, `status`).
* A claim of this clone whose worktree record is lost — an earlier session's, a worktree
  that is gone — is recovered by `release` and `revert`, and `claim ID` resumes it.
* The brief names these, and the claims of others whose lease ran out.
"""

from __future__ import annotations

from collections.abc import Callable

from shiftkit.core import progress
from shiftkit.core.claim import LocalClaim
from shiftkit.core.errors import Refused, ShiftkitError
from shiftkit.edge import claims, gitio, ownership, parking, remote, session, state
from shiftkit.edge.context import Context, log_time, short

Say = Callable[[str], None]


def _let_go(ctx: Context, feature_id: str, oid: str) -> bool:
    """Release the claim ``oid`` where it is held; whether it was still that object."""
    name = ctx.config.claims.remote
    if name:
        prefix = ctx.config.claims.ref_prefix
        return remote.release(ctx.root, name, feature_id, oid, prefix).ours
    return claims.release_ref(ctx.root, feature_id, oid)


def release_orphans(ctx: Context) -> list[str]:
    """Release every parked claim whose finished commit is on no branch here nor the
    remote's tracking branch (dropped before it was published, e.g. `git reset --hard`):
    nothing of it can reach the remote, so nothing should keep the feature locked. Each
    release is logged (a log entry committed, when the log is clean). Returns what to say,
    one line per feature; a release that fails leaves the row for the next command."""
    rows = parking.read(ctx.git_dir)
    lost = [row for row in rows if not ownership.on_a_branch(ctx.root, row.commit)]
    if not lost:
        return []
    kept = [row for row in rows if row not in lost]
    lines, released = [], []
    for row in lost:
        try:
            _let_go(ctx, row.feature, row.oid)
        except ShiftkitError as exc:
            kept.append(row)
            lines.append(
                f"{row.feature}'s finished commit {short(row.commit)} is no longer on any "
                f"branch, but releasing its claim failed ({exc.message}); the next command "
                f"tries again"
            )
            continue
        session.forget(ctx.common_dir, row.oid)
        released.append(row)
    parking.save(ctx.git_dir, kept)
    if ctx.config.claims.remote:
        remote.forget_look(ctx.common_dir)
    for row in released:
        logged = _log_release(ctx, row)
        lines.append(
            f"released {row.feature}: its finished commit {short(row.commit)} was never "
            f"published and is on no branch any more (dropped), so nothing of it can reach "
            f"the remote; no attempt counted — {logged}"
        )
    return lines


def _log_release(ctx: Context, row: parking.Parked) -> str:
    """Commit a log entry for the release of ``row`` (only the log: whatever else is dirty
    stays); how the line ends."""
    from shiftkit.edge.committing import commit
    from shiftkit.edge.files import read_optional

    name = ctx.config.progress
    if gitio.out(["status", "--porcelain", "--", name], ctx.root).strip():
        return f"not logged ({name} has uncommitted changes)"
    head = gitio.head_oid(ctx.root)
    entry = progress.format_entry(
        log_time(),
        row.feature,
        "released (finished, dropped unpublished)",
        short(head),
        f"The claim's finished commit {short(row.commit)} was dropped before it was published "
        f"(no branch holds it); the claim was released without a person. No attempt counted.",
    )
    path = ctx.project.progress_path
    before = read_optional(path)
    path.write_text(progress.append(before, entry), encoding="utf-8")
    try:
        made = commit(ctx, f"{row.feature}: claim released (finished commit dropped)\n", [name])
    except ShiftkitError as exc:
        path.write_text(before, encoding="utf-8")
        return f"not logged (the log's commit was refused: {exc.message})"
    return f"logged in {short(made)}"


def held_by_us(ctx: Context, seen: dict[str, claims.Claim] | None = None) -> list[claims.Claim]:
    """The claims this clone holds for this worktree (or a gone one) that no record here
    opens and no finished commit waits for: an earlier session's, its record lost.
    ``seen``: the claims as just looked at (otherwise fetched now)."""
    from shiftkit.edge.elsewhere import taken

    if seen is None:
        seen = taken(ctx)
    waiting = {row.feature for row in parking.read(ctx.git_dir)}
    own = state.local_claim(ctx.git_dir)
    return [
        held
        for held in seen.values()
        if held.record is not None
        and held.feature not in waiting
        and (own is None or own.feature != held.feature)
        and ownership.is_ours(ctx.root, ctx.common_dir, held.record)
    ]


def release_lost(ctx: Context, session_id: str) -> list[str]:
    """Release this clone's claims taken by ``session_id`` that no record here opens: the
    session was stopped (Ctrl-C, a timeout) after the remote took its claim and before the
    claim was written down here. The features, released."""
    released = []
    for held in held_by_us(ctx):
        mine = held.record is not None and held.record.session == session_id
        if mine and _let_go(ctx, held.feature, held.oid):
            session.forget(ctx.common_dir, held.oid)
            released.append(held.feature)
    if released and ctx.config.claims.remote:
        remote.forget_look(ctx.common_dir)
    return released


def recover(ctx: Context, feature_id: str | None, action: str, say: Say) -> LocalClaim | None:
    """This worktree's open claim: its record, or — none here — this clone's claim on
    ``feature_id`` (or its only one) recovered into it, base and all; None when there is
    none. Two or more with no id: refused, naming them."""
    own = state.local_claim(ctx.git_dir)
    if own is not None:
        return own
    mine = [held for held in held_by_us(ctx) if feature_id in (None, held.feature)]
    if not mine:
        return None
    if len(mine) > 1:
        ids = ", ".join(held.feature for held in mine)
        raise Refused(
            f"this clone holds claims on {ids} from earlier sessions; name one: "
            f"`shiftkit {action} {mine[0].feature}`"
        )
    held = mine[0]
    assert held.record is not None
    recovered = LocalClaim(held.record, held.oid)
    state.save_local_claim(ctx.git_dir, recovered)
    say(
        f"recovered this clone's claim on {held.feature}, from session "
        f"{held.record.session} (ended; no record of it was left in this worktree)"
    )
    return recovered


def brief_lines(ctx: Context, seen: dict[str, claims.Claim]) -> tuple[str, ...]:
    """For the brief: this clone's claims from ended sessions, with the command for each."""
    lines = []
    now = session.current(ctx.git_dir)
    own = state.local_claim(ctx.git_dir)
    if own is not None and own.record.session != now:
        lines.append(
            f"the open claim on {own.feature} is yours, from session {own.record.session} "
            f"(ended): finish it, `shiftkit revert --reason ...`, or `shiftkit release`"
        )
    for held in held_by_us(ctx, seen):
        assert held.record is not None
        lines.append(
            f"{held.feature} is yours, from session {held.record.session} (ended): "
            f"`shiftkit claim {held.feature}` resumes it (base {short(held.record.base)} "
            f"kept), `shiftkit revert --reason ...` or `shiftkit release {held.feature}` "
            f"lets it go"
        )
    return tuple(lines)


def expired_lines(ctx: Context, others: list[claims.Claim]) -> tuple[str, ...]:
    """Others' claims whose lease ran out, each with the command that takes it."""
    minutes = ctx.config.claims.lease_minutes
    lines = []
    for held in others:
        why = ownership.expiry(ctx.common_dir, held.record, held.oid, minutes)
        if why is not None and held.record is not None:
            lines.append(
                f"{held.feature}'s claim has expired (session {held.record.session} of clone "
                f"{held.record.clone or '?'}: {why}): `shiftkit claim {held.feature}` takes it"
            )
    return tuple(lines)


def refuse_if_parked(ctx: Context, feature_id: str) -> None:
    """This clone finished ``feature_id`` and the commit waits here to be published: the
    claim is released by publishing it, not by hand (the work would be lost to the others)."""
    for row in parking.read(ctx.git_dir):
        if row.feature == feature_id:
            name = ctx.config.claims.remote or "the remote"
            raise Refused(
                f"{feature_id} is finished in this clone (commit {short(row.commit)}) but not "
                f"on {name} yet; `shiftkit sync` publishes it and releases the claim"
            )
