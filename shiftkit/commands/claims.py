"""`shiftkit claim`, `release` and `claims`: the lock on parallel work (`sync` shares the
branch; both start with `catch_up`).

Within one repository the claim refs are the lock (`edge/claims.py`); with
`[shiftkit.claims] remote`, the remote's refs are (`edge/remote.py`), and a claim is let go
only once its finishing commit is on the remote's branch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from shiftkit.commands import catch_up
from shiftkit.core import features
from shiftkit.core.claim import ClaimRecord, LocalClaim
from shiftkit.core.errors import CLAIM_HELD, OK, REFUSED, BadInput, Refused, ShiftkitError
from shiftkit.edge import (
    claims,
    elsewhere,
    gitio,
    ledger,
    parking,
    remote,
    session,
    state,
)
from shiftkit.edge.context import (
    Context,
    add_note,
    clear_note,
    head_trailer,
    pending_note,
    short,
)
from shiftkit.edge.project import read_features

Say = Callable[[str], None]

# A claim without an id that loses a race moves on to the next eligible feature; each lost
# race means another session took one, so the bound only guards against a livelock.
CLAIM_TRIES = 16


taken = elsewhere.taken  # (below the commands: `edge/elsewhere.py`)


def _acquire(
    ctx: Context, record: ClaimRecord, replacing: str = "", look: remote.Watch | None = None
) -> str:
    name = ctx.config.claims.remote
    if name:
        from shiftkit.edge import usage_ref

        prefix = ctx.config.claims.ref_prefix
        usage = usage_ref.unshared(ctx.root, name, prefix, session.clone_id(ctx.common_dir))
        also = (usage,) if usage else ()  # (this clone's usage rides along: ADR 0072)
        return remote.acquire(ctx.root, name, record, replacing, prefix, look, also)
    return claims.acquire(ctx.root, record, replacing or gitio.ZERO_OID)


def _release(ctx: Context, feature_id: str, oid: str) -> remote.Released:
    """Release the claim if it is still ``oid``; raises when the remote refused or could not
    say (the claim then stays listed). Not ours any more: who holds it now."""
    name = ctx.config.claims.remote
    if name:
        return remote.release(ctx.root, name, feature_id, oid, ctx.config.claims.ref_prefix)
    if claims.release_ref(ctx.root, feature_id, oid):
        return remote.Released(True)
    return remote.Released(False, claims.list_claims(ctx.root).get(feature_id))


def _is_ours(ctx: Context, record: ClaimRecord | None) -> bool:
    """A claim of this clone for this worktree or a gone one (a path alone names no one;
    decision record 0096)."""
    from shiftkit.edge import ownership

    return ownership.is_ours(ctx.root, ctx.common_dir, record)


def _tidy(ctx: Context, say: Say) -> None:
    """This clone's finished claims whose commit was dropped unpublished are let go first."""
    from shiftkit.commands import own_claims

    for line in own_claims.release_orphans(ctx):
        say(line)


# -- claim ---------------------------------------------------------------------------------


def claim(ctx: Context, feature_id: str | None, steal: bool, say: Say, force: bool = False) -> int:
    _tidy(ctx, say)
    held = state.local_claim(ctx.git_dir)
    if held is not None:
        raise Refused(
            f"this worktree already holds a claim on {held.feature} (one feature at a "
            f"time): finish it, revert it, or `shiftkit release` it first"
        )
    branch = gitio.branch(ctx.root)
    if branch is None:
        raise Refused(
            "HEAD is detached; check out a branch before claiming (e.g. `git switch -c shift-work`)"
        )
    dirty = gitio.status_lines(ctx.root)
    if dirty:
        raise Refused(
            f"the work tree is not clean ({dirty[0][3:]}"
            f"{' and more' if len(dirty) > 1 else ''}); commit it, put it away with `git "
            f"stash --include-untracked`, or delete it before claiming, so a revert can "
            f"restore exactly this state (work meant for the feature: stash it, claim, then "
            f"`git stash pop`)"
        )
    if feature_id is not None:  # an unknown id is said before the catch-up and start check
        _require_known(ctx, feature_id, branch)
    settings = ctx.config.claims
    if settings.remote:
        remote.require_remote(ctx.root, settings.remote)
        if settings.enabled:
            # Usage waiting here with no claim open (an earlier session's wrap-up) goes onto
            # this clone's usage ref, which the claim push carries (decision record 0072);
            # bookkeeping that fails is said, never a reason to refuse the claim.
            try:
                ledger.move_waiting(ctx)
            except ShiftkitError as error:
                say(f"note: the waiting usage stays waiting ({error}); claiming anyway")
    for _ in range(CATCH_UP_TRIES):
        try:
            picked = _claim_caught_up(ctx, feature_id, steal, force, branch, say)
        except _Moved:
            continue  # (the remote's branch moved under the claim: caught up again)
        break
    else:
        raise Refused(
            f"{settings.remote}'s branch moved under every claim {CATCH_UP_TRIES} times in a "
            f"row, so each would have stood on a stale base (let go again); try again"
        )
    if picked is None:
        return 0
    record, oid, note, feature_list = picked
    state.save_local_claim(ctx.git_dir, LocalClaim(record, oid))
    if note:
        add_note(ctx, note)
    feature = features.require(feature_list, record.feature, ctx.config.features)
    say(f"claimed {feature.id}: {feature.description} (base {short(record.base)})")
    return 0


def _require_known(ctx: Context, feature_id: str, branch: str) -> None:
    """``feature_id`` is in the list here or — with shared claims, for which `claim` catches
    up before it claims — at the remote's branch (fetched now), as `start`, `next` and
    `claims` count there (decision records 0079, 0085); otherwise one bad-input line."""
    here = read_features(ctx.project)
    settings = ctx.config.claims
    if here.get(feature_id) is not None or not (settings.remote and settings.enabled):
        features.require(here, feature_id, ctx.config.features)
        return
    from shiftkit.edge.project import read_features_at

    remote.require_remote(ctx.root, settings.remote)
    remote.fetch_branch(ctx.root, settings.remote, branch, require_answer=True)
    tracking = remote.tracking_ref(settings.remote, branch)
    there = read_features_at(ctx.root, tracking, ctx.config.features)
    if there is None or there.get(feature_id) is None:
        tip = features.id_range(there) if there is not None else "none"
        raise BadInput(
            f"unknown feature id {feature_id!r} ({ctx.config.features} has "
            f"{features.id_range(here)} here and {tip} at {settings.remote}/{branch}); "
            f"`shiftkit next` names what is open"
        )


CATCH_UP_TRIES = 3


class _Moved(Exception):
    """The remote's branch moved between catching up and the claim push: the claim just taken
    was let go (its base would be behind), and the claim starts over."""


def _claim_caught_up(
    ctx: Context, feature_id: str | None, steal: bool, force: bool, branch: str, say: Say
) -> tuple[ClaimRecord, str, str, features.FeatureList] | None:
    """Catch up with the claims remote's branch (`catch_up`: a fast-forward or sync's judged
    merge), run the start check if this HEAD has none, then claim at HEAD: a claim's base is
    never behind the branch as the claim push saw it (`_Moved` otherwise)."""
    from shiftkit.commands import start as startup

    settings = ctx.config.claims
    green = startup.has_green_check(ctx)
    look = remote.watch(ctx.root, settings, branch)
    seen: dict[str, claims.Claim] | None = None
    if settings.remote and settings.enabled:
        if feature_id is None:
            seen = taken(ctx, with_branch=True)  # (one fetch: the claims and the branch)
        elif not green or look is None:
            # A wrong or silent remote is said before the start check, which can take
            # minutes (and a branch never fetched is fetched now: the push leases on it).
            remote.fetch_branch(ctx.root, settings.remote, branch, require_answer=True)
        # Behind the branch as last fetched: caught up before the claim (a claim push whose
        # look finds the branch moved since is let go and taken again: `_Moved`).
        catch_up.catch_up(ctx, settings.remote, branch, say, for_claim=True, fetch=False)
        green = startup.has_green_check(ctx)
        look = remote.watch(ctx.root, settings, branch)
    if not green:
        say("no start check at this HEAD in this worktree yet: running it now")
        startup.run_checks(ctx, say)
    feature_list = read_features(ctx.project)
    head = gitio.head_oid(ctx.root)  # (after the start check, which may commit a demotion)
    assert head is not None
    there = RemoteBranch(ctx, feature_list, say, Where(branch, head), look)
    if feature_id is None:
        record, oid = _claim_next(ctx, feature_list, startup.repair_first(ctx), say, there, seen)
        if record is None:
            return None
        return record, oid, "", feature_list
    chosen = features.require(feature_list, feature_id, ctx.config.features)
    _check_claimable(feature_list, chosen)
    try:
        record, oid, note = _claim_named(ctx, chosen, steal, force, there)
    except claims.ClaimHeld:
        there.refuse_if_done(chosen.id)
        raise
    there.refuse_if_done(chosen.id, LocalClaim(record, oid))
    return record, oid, note, feature_list


class Where(NamedTuple):
    """The branch a claim is taken on, and its commit."""

    branch: str
    head: str


def _new_record(ctx: Context, feature_id: str, where: Where) -> ClaimRecord:
    return claims.new_record(
        feature_id,
        ctx.root,
        where.branch,
        where.head,
        ctx.config.claims.ttl_hours,
        session.current(ctx.git_dir),
        session.clone_id(ctx.common_dir),
    )


class RemoteBranch:
    """The claims remote's branch as a claim must see it (ADR 0041): whether this branch is
    behind it (said once) and which features pass there but not here (nobody should do them
    again). The claim push itself looks at it (`remote.Watch` in ``look``): when it has not
    moved since it was last fetched, that copy is the truth and nothing more is asked; when
    it has, it is fetched after the push, and a claim just taken on a feature that passes
    there is let go again."""

    def __init__(
        self,
        ctx: Context,
        feature_list: features.FeatureList,
        say: Say,
        where: Where,
        look: remote.Watch | None,
    ) -> None:
        self.ctx, self.feature_list, self.say = ctx, feature_list, say
        self.where, self.look = where, look
        self.said = False

    def _look_again(self) -> None:
        self.look = remote.watch(self.ctx.root, self.ctx.config.claims, self.where.branch)

    def taken(self) -> dict[str, claims.Claim]:
        """Every claim now, the remote's branch fetched in the same connection."""
        held = taken(self.ctx, with_branch=True)
        self._look_again()
        return held

    def passing(self, fetch: bool) -> set[str]:
        """The features that pass on the remote's branch and not here: fetched first, or
        (not ``fetch``) as last fetched."""
        if not fetch and self.look is not None and self.look.expected == self.where.head:
            return set()  # (the remote's branch is this very commit: not behind)
        settings, branch = self.ctx.config.claims, self.where.branch
        line, tracking = remote.behind_line(self.ctx.root, settings, fetch=fetch, branch=branch)
        if fetch:
            self._look_again()
        if line is None:
            return set()
        if not self.said:
            self.say(line)
            self.said = True
        return passing_on_remote(self.ctx, self.feature_list, tracking)

    def after_push(self) -> set[str]:
        """After a claim push that carried ``look``: the features that pass there."""
        if self.look is None:
            return set()  # (no remote, or no branch there to compare with)
        return self.passing(fetch=not self.look.current)

    def let_go_if_moved(self, record: ClaimRecord, oid: str) -> None:
        """After a claim push: when the remote's branch is no longer the commit this claim
        stands on (it moved since the catch-up), let the claim go and start over (`_Moved`)."""
        feature_id = record.feature
        if self.look is None or self.look.current or not oid:
            return
        if not remote.fetch_branch(self.ctx.root, self.ctx.config.claims.remote, self.where.branch):
            return  # (cannot tell: the claim stands, as before)
        tracking = remote.tracking_ref(self.ctx.config.claims.remote, self.where.branch)
        if catch_up.is_ancestor(self.ctx, tracking, self.where.head):
            return
        try:
            _release(self.ctx, feature_id, oid)
        except ShiftkitError as exc:
            state.save_local_claim(self.ctx.git_dir, LocalClaim(record, oid))
            raise Refused(
                f"{self.ctx.config.claims.remote}'s branch moved under the claim on "
                f"{feature_id}, and letting it go failed ({exc.message}); `shiftkit release`, "
                f"`shiftkit sync`, then claim again"
            ) from None
        self.say(
            f"{self.ctx.config.claims.remote}/{self.where.branch} moved while claiming "
            f"{feature_id}: let go, catching up first"
        )
        raise _Moved

    def refuse_if_done(self, feature_id: str, taken_now: LocalClaim | None = None) -> None:
        """Refuse a feature that passes on the remote's branch, letting go of the claim
        ``taken_now`` on it first."""
        if feature_id not in self.after_push():
            return
        message = (
            f"{feature_id} already passes on {self.ctx.config.claims.remote}'s branch; run "
            f"`shiftkit sync` to catch up, then `shiftkit next`"
        )
        if taken_now is None or not taken_now.oid:
            raise Refused(message)
        try:
            _release(self.ctx, feature_id, taken_now.oid)
        except ShiftkitError as exc:
            state.save_local_claim(self.ctx.git_dir, taken_now)
            raise Refused(
                f"{message} — letting go of the claim just taken on it failed "
                f"({exc.message}); `shiftkit release` lets it go"
            ) from None
        raise Refused(message)


passing_on_remote = elsewhere.passing_on_remote


def _own_open_claim(
    ctx: Context, claimed: dict[str, claims.Claim], options: list[features.Feature]
) -> claims.Claim | None:
    """A claim this worktree took whose local record was lost (a crash between the two
    writes, or a claim push whose answer never came): it is recovered, not claimed again."""
    waiting = {row.feature for row in parked(ctx)}
    for option in options:
        held = claimed.get(option.id)
        if held is not None and option.id not in waiting and _is_ours(ctx, held.record):
            return held
    return None


def _claim_next(
    ctx: Context,
    feature_list: features.FeatureList,
    repair: list[str],
    say: Say,
    there: RemoteBranch,
    seen: dict[str, claims.Claim] | None = None,
) -> tuple[ClaimRecord | None, str]:
    """Claim the first feature `next` names; on a lost race, the next one. A claim of this
    worktree found held (its local record lost) is recovered first. The choice never falls
    on a feature passing on the remote's branch: the fetch of the claims brings that branch
    too, and the claim push checks it did not move since (`RemoteBranch`)."""
    claimed = seen if seen is not None else there.taken()
    done_there = there.passing(fetch=False)
    if ctx.config.claims.enabled:
        options = features.candidates(feature_list, done_there, repair)
        mine = _own_open_claim(ctx, claimed, options)
        if mine is not None and mine.record is not None:
            say(f"recovered this worktree's claim on {mine.feature} (its record here was lost)")
            return mine.record, mine.oid
    from shiftkit.commands.upcoming import blockers, choose

    said: set[str] = set()
    for attempt in range(CLAIM_TRIES):
        if attempt:
            claimed = there.taken()
            done_there = there.passing(fetch=False)
        options = choose(feature_list, claimed, done_there, repair, limit=1)
        _say_skipped(ctx, feature_list, claimed, done_there, repair, options, said, say)
        if not options:
            ledger.note_coordination(ctx)  # (its usage: the cost of coordination)
            if features.all_pass(feature_list):
                from shiftkit.edge import regression

                checked = regression.unchecked(ctx, feature_list) == []
                say(features.all_pass_message(feature_list, checked, there.said))
                return None, ""
            why = blockers(feature_list, claimed, done_there)
            raise Refused(f"no feature can be claimed now — {why}")
        record = _new_record(ctx, options[0].id, there.where)
        if not ctx.config.claims.enabled:
            return record, ""
        try:
            oid = _acquire(ctx, record, look=there.look)
        except claims.ClaimHeld as lost:
            said.add(record.feature)
            say(f"skipped {record.feature}: taken meanwhile by {holder(lost.claim)}")
            continue  # another session took it between our look and our claim
        there.let_go_if_moved(record, oid)
        try:
            there.refuse_if_done(record.feature, LocalClaim(record, oid))
        except Refused:
            if state.local_claim(ctx.git_dir) is not None:
                raise  # (the claim could not be let go: said, and kept here)
            continue  # the branch moved since our look, and it passes there now: let go
        return record, oid
    raise Refused(
        f"lost the race for a feature {CLAIM_TRIES} times in a row; try again "
        f"(`shiftkit claims` shows who holds what)"
    )


def _say_skipped(
    ctx: Context,
    feature_list: features.FeatureList,
    claimed: dict[str, claims.Claim],
    done_there: set[str],
    repair: list[str],
    options: list[features.Feature],
    said: set[str],
    say: Say,
) -> None:
    """Name the features ahead of the choice that are skipped because someone holds them."""
    from shiftkit.commands.upcoming import choose, short_holder

    upto = options[0].id if options else None
    for feature in choose(feature_list, set(), done_there, repair, limit=None):
        if feature.id == upto:
            break
        held = claimed.get(feature.id)
        if held is not None and feature.id not in said and not _is_ours(ctx, held.record):
            said.add(feature.id)
            say(f"skipped {feature.id}: claimed by {short_holder(held)}")


def _claim_named(
    ctx: Context, chosen: features.Feature, steal: bool, force: bool, there: RemoteBranch
) -> tuple[ClaimRecord, str, str]:
    """One lease push takes a free feature; only a refused one looks at the holder, which
    may be this worktree itself (its local record lost: recovered, not refused)."""
    record = _new_record(ctx, chosen.id, there.where)
    look = there.look
    if not ctx.config.claims.enabled:
        return record, "", ""
    if not steal:
        try:
            oid = _acquire(ctx, record, look=look)
        except claims.ClaimHeld as refused:
            existing = refused.claim
            waiting = {row.feature for row in parked(ctx)}
            if existing.record is None or not _is_ours(ctx, existing.record):
                expired = _take_expired(ctx, record, refused, look)
                if expired is None:
                    raise
                oid, note = expired
                there.say(note)
                there.let_go_if_moved(record, oid)
                return record, oid, note
            if chosen.id in waiting:
                from shiftkit.commands import own_claims

                own_claims.refuse_if_parked(ctx, chosen.id)
            # Our own claim whose local record was lost (a crash between the two writes, or
            # a claim push whose answer never came): recovered.
            return existing.record, existing.oid, ""
        there.let_go_if_moved(record, oid)
        return record, oid, ""
    stale_one = taken(ctx).get(chosen.id)
    if stale_one is None:
        return record, _acquire(ctx, record, look=look), ""
    _require_stale(ctx, stale_one, force)
    oid = _acquire(ctx, record, replacing=stale_one.oid, look=look)
    return record, oid, f"claim taken over (--steal) from {holder(stale_one)}"


def _take_expired(
    ctx: Context, record: ClaimRecord, refused: claims.ClaimHeld, look: remote.Watch | None
) -> tuple[str, str] | None:
    """Another's claim whose lease ran out is taken by a plain `claim ID` (decision record
    0096), leased on the object seen: a holder that beat meanwhile keeps it. (the claim
    object, the note for the log), or None when it has not expired."""
    from shiftkit.edge import ownership

    existing = refused.claim
    minutes = ctx.config.claims.lease_minutes
    why = ownership.expiry(ctx.common_dir, existing.record, existing.oid, minutes)
    if why is None or existing.record is None:
        return None
    oid = _acquire(ctx, record, replacing=existing.oid, look=look)
    session.forget(ctx.common_dir, existing.oid)
    return oid, f"took over the expired claim ({why}) of {holder(existing)}"


def _check_claimable(feature_list: features.FeatureList, feature: features.Feature) -> None:
    if feature.passes:
        raise Refused(f"{feature.id} already passes; `shiftkit next` shows what is open")
    if feature.blocked is not None:
        raise Refused(
            f"{feature.id} is blocked ({feature.blocked.reason}); a person must "
            f"`shiftkit unblock {feature.id} --note ...` first"
        )
    unmet = [dep for dep in feature.depends_on if not features.passes(feature_list, dep)]
    if unmet:
        raise Refused(
            f"{feature.id} depends on {', '.join(unmet)}, which do not pass yet: claim "
            f"{'that' if len(unmet) == 1 else 'those'} first (`shiftkit claim {unmet[0]}`), "
            f"or take what `shiftkit next` names"
        )


def stale(ctx: Context, held: claims.Claim) -> str | None:
    return claims.staleness(held.record, held.oid, ctx.common_dir, ctx.config.claims.ttl_hours)


def _require_stale(ctx: Context, held: claims.Claim, force: bool) -> None:
    """`--steal` takes only a claim that looks abandoned (no heartbeat for `ttl_hours`); a
    live one needs `--force` too. Two stealers racing: the first replaces the stale object,
    and the second then finds a live claim (or loses the lease on the stale one) — exactly
    one wins."""
    if force or held.record is None or stale(ctx, held) is not None:
        return
    from shiftkit.edge import ownership

    if ownership.expiry(ctx.common_dir, held.record, held.oid, ctx.config.claims.lease_minutes):
        return  # (its lease ran out: anyone may take it)
    raise ShiftkitError(
        f"{held.holder()}, and it does not look abandoned (its last heartbeat is within "
        f"ttl_hours = {ctx.config.claims.ttl_hours}); --steal takes only a stale claim — add "
        f"--force to take a live one",
        exit_code=CLAIM_HELD,
    )


def holder(held: claims.Claim) -> str:
    if held.record is None:
        return f"nobody (a planted or foreign claim: {held.broken})"
    return held.record.holder()


# -- release -------------------------------------------------------------------------------


def release(
    ctx: Context, feature_id: str | None, steal: bool, say: Say, force: bool = False
) -> int:
    from shiftkit.commands import own_claims

    _tidy(ctx, say)
    own = own_claims.recover(ctx, feature_id, "release", say)
    if feature_id is None or (own is not None and own.feature == feature_id):
        if own is None:
            raise Refused("this worktree holds no claim; `shiftkit claims` lists all claims")
        if own.oid and _finished_unpublished(ctx, own):
            # (released, the feature would be done again by someone else)
            raise Refused(
                f"{own.feature} is finished here (HEAD is its commit) but not published; "
                f"`shiftkit finish` publishes it and releases the claim"
            )
        # (a refusal raises here: the claim stays, here and on the remote)
        result = _release(ctx, own.feature, own.oid) if own.oid else remote.Released(True)
        ledger.note_unit(ctx, own, "released")
        noted = pending_note(ctx)
        _drop_own(ctx, own)
        if result.ours:
            say(f"released {own.feature} (no attempt counted)")
        else:
            say(lost_line(own.feature, result.holder))
        if noted:
            # (a release writes no log entry; the note is said here, not carried to the next
            # claim, whose entry is about other work)
            say(
                f"note not logged (a release writes no log entry): "
                f"{' / '.join(noted.splitlines())} — `shiftkit note` it again under the next "
                f"claim if it still holds"
            )
        return 0
    held = taken(ctx).get(feature_id)
    if held is None:
        raise BadInput(f"no claim on {feature_id!r}; `shiftkit claims` lists the claims")
    if not steal:
        own_claims.refuse_if_parked(ctx, feature_id)
        raise claims.ClaimHeld(held)
    _require_stale(ctx, held, force)
    result = _release(ctx, feature_id, held.oid)
    if not result.ours:
        now = holder(result.holder) if result.holder else "nobody"
        raise Refused(
            f"the claim on {feature_id} changed while releasing it (now held by {now}); look "
            f"again with `shiftkit claims`"
        )
    session.forget(ctx.common_dir, held.oid)
    say(f"released {feature_id}, which was held by {holder(held)}")
    return 0


def _finished_unpublished(ctx: Context, own: LocalClaim) -> bool:
    """HEAD is the claim's finished commit and a claims remote's branch lacks it: released
    now, the feature would be done again by someone else. (Without a claims remote, or once
    the remote has it, there is nothing to publish.)"""
    name, branch = ctx.config.claims.remote, gitio.branch(ctx.root)
    if not name or branch is None or own.oid not in head_trailer(ctx, "Shiftkit-Claim"):
        return False
    counts = remote.divergence(ctx.root, name, branch)  # (fetched now)
    return counts is None or counts[0] > 0


def _drop_own(ctx: Context, own: LocalClaim) -> None:
    state.drop_local_claim(ctx.git_dir)
    clear_note(ctx)
    session.forget(ctx.common_dir, own.oid)


def lost_line(feature_id: str, now: claims.Claim | None) -> str:
    who = holder(now) if now is not None else "nobody"
    return (
        f"this worktree's claim on {feature_id} was lost (taken over elsewhere); it is now "
        f"held by {who} — dropped here"
    )


def confirm_held(ctx: Context, held: LocalClaim) -> None:
    """Before a finish: with a claims remote, the server must still hold this worktree's
    claim object (one `ls-remote`). A lost claim is dropped here, saying who holds it."""
    name = ctx.config.claims.remote
    if not name or not held.oid or not ctx.config.claims.enabled:
        return
    prefix = ctx.config.claims.ref_prefix
    if remote.server_oid(ctx.root, name, held.feature, prefix) == held.oid:
        return
    now = remote.fetch(ctx.root, name, prefix).get(held.feature)
    claims.release_ref(ctx.root, held.feature, held.oid)
    _drop_own(ctx, held)
    raise ShiftkitError(
        f"{lost_line(held.feature, now)}; nothing was committed",
        exit_code=CLAIM_HELD if now is not None else 1,
    )


# -- after a finish or revert commit: done means on the remote ------------------------------


Parked = parking.Parked


def parked(ctx: Context) -> list[Parked]:
    return parking.read(ctx.git_dir)


def _save_parked(ctx: Context, rows: list[Parked]) -> None:
    parking.save(ctx.git_dir, rows)


def let_go(ctx: Context, held: LocalClaim, commit: str) -> tuple[str | None, str]:
    """Close this worktree's claim after its unit's commit. Without a remote the claim ref
    goes at once; with one, the branch is pushed first and the claim stays (parked, still
    locked on the remote) until its commit is there. Returns (a line to say first, or None;
    how the caller's last line ends) — one true account of where the claim is."""
    state.drop_local_claim(ctx.git_dir)
    clear_note(ctx)
    session.forget(ctx.common_dir, held.oid)
    name = ctx.config.claims.remote
    if not name or not held.oid:
        if held.oid:
            claims.release_ref(ctx.root, held.feature, held.oid)
        return None, "claim released"
    _save_parked(ctx, [*parked(ctx), Parked(held.feature, held.oid, commit)])
    branch = gitio.branch(ctx.root)
    problem = remote.push_branch(ctx.root, name, branch) if branch else "HEAD is detached"
    if problem is not None:
        return (
            f"pushing to {name} was refused ({problem})",
            f"the claim stays held on {name} until this commit is there: run `shiftkit sync`",
        )
    released, said = release_landed(ctx, name, branch or "")
    if held.feature in released:
        others = [f for f in released if f != held.feature]
        extra = f"; also released {', '.join(others)}" if others else ""
        return f"pushed to {name}{extra}" + (f"; {said}" if said else ""), "claim released"
    return (
        f"pushed to {name}" + (f"; {said}" if said else ""),
        f"the claim stays held on {name} (not released yet): `shiftkit sync` retries",
    )


def exit_when_published(ctx: Context, held: LocalClaim, say: Say) -> int:
    """A `finish`'s or `revert`'s exit code, said last: for a claim on the claims remote (the
    ones `let_go` pushes for), 0 only when this branch's HEAD (the unit's commit, or a merge
    over it) is on the remote's branch as last fetched or pushed; otherwise 1 and the line
    that says what to do — a loop that trusts exit codes must not move on while other clones
    see the feature claimed and lack the work (decision record 0085)."""
    name = ctx.config.claims.remote
    head = gitio.head_oid(ctx.root)
    if not name or not held.oid or head is None:
        return OK
    branch = gitio.branch(ctx.root)
    if branch is not None and remote.on_remote(ctx.root, name, branch, head):
        return OK
    where = f"{name}/{branch}" if branch else f"{name} (HEAD is detached: check out the branch)"
    say(
        f"not published: {held.feature}'s commit {short(head)} is here but not on {where}, and "
        f"its claim stays held on {name} meanwhile: fix what is said above, then run "
        f"`shiftkit sync` (it pushes the commit and releases the claim)"
    )
    return REFUSED


def release_landed(ctx: Context, name: str, branch: str) -> tuple[list[str], str]:
    """Release every parked claim whose commit is on the remote's branch: (the features no
    longer held, what went wrong with the others, '' when nothing)."""
    gitio.run(
        [
            "fetch",
            "--quiet",
            "--no-tags",
            name,
            f"+refs/heads/{branch}:refs/remotes/{name}/{branch}",
        ],
        ctx.root,
        check=False,
    )
    waiting, released, problems = [], [], []
    for row in parked(ctx):
        if not remote.on_remote(ctx.root, name, branch, row.commit):
            waiting.append(row)
            continue
        try:
            result = _release(ctx, row.feature, row.oid)
        except ShiftkitError as exc:
            waiting.append(row)
            problems.append(exc.message)
            continue
        released.append(row.feature)
        if not result.ours:
            problems.append(lost_line(row.feature, result.holder))
    _save_parked(ctx, waiting)
    return released, "; ".join(problems)


# -- claims --------------------------------------------------------------------------------


def listing(ctx: Context) -> list[dict[str, object]]:
    """Every claim: holder, age, staleness, and where it is held (this repository, the
    remote, or both — a claim only here while a remote is set is left over)."""
    from datetime import UTC, datetime

    local = claims.list_claims(ctx.root)
    name = ctx.config.claims.remote
    if name:
        remote.require_remote(ctx.root, name)
    far = remote.fetch(ctx.root, name, ctx.config.claims.ref_prefix) if name else {}
    now = datetime.now(UTC)
    rows: list[dict[str, object]] = []
    for feature_id in sorted(set(local) | set(far)):
        held = far.get(feature_id) or local[feature_id]
        where = "here" if not name else ("remote" if feature_id in far else "here only")
        taken_at = held.record.taken if held.record else ""
        try:
            age = int(
                (
                    now - datetime.strptime(taken_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
                ).total_seconds()
            )
        except ValueError:
            age = None
        rows.append(
            {
                "id": feature_id,
                **held.as_json(),
                "where": where,
                "age_seconds": age,
                "heartbeat": _last_beat(ctx, held),
                "stale": stale(ctx, held),
            }
        )
    return rows


def _last_beat(ctx: Context, held: claims.Claim) -> str:
    if held.record is None:
        return "?"
    return held.record.last_beat(session.seen(ctx.common_dir, held.oid))


def listing_cmd(ctx: Context, as_json: bool, say: Say) -> None:
    """`shiftkit claims`: every claim (`listing`), one line each or as JSON."""
    rows = listing(ctx)
    if as_json:
        import json

        say(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        say("no claims")
    for row in rows:
        stale = f"  STALE? {row['stale']}" if row["stale"] else ""
        where = f" [{row['where']}]" if row["where"] != "here" else ""
        if "broken" in row:
            say(
                f"{row['id']}  PLANTED OR FOREIGN: {row['broken']} (not a claim shiftkit "
                f"wrote){where}; a person releases it with `shiftkit release {row['id']} --steal`"
            )
            continue
        say(
            f"{row['id']}  session {row.get('session', '?')} in {row.get('worktree', '?')} "
            f"since {row.get('taken', '?')}, last heartbeat {row['heartbeat']}{where}{stale}"
        )
