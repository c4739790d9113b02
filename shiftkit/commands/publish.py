"""After a unit's commit: publish it and let the claim go — and when the push loses a race
(the remote's branch moved on meanwhile), replay the unit's commit onto the remote's tip and
verify it there (decision 0114) or, where that cannot be, catch up through the judged `sync`
(a merge), and push again, a bounded number of times, so "finished" normally means "on the
remote" (decision 0055)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from shiftkit.commands import claims as claiming
from shiftkit.commands import replay
from shiftkit.commands import sync as syncing
from shiftkit.core.claim import LocalClaim
from shiftkit.core.errors import ShiftkitError
from shiftkit.edge import gitio, remote
from shiftkit.edge.context import Context

Say = Callable[[str], None]


class Published(NamedTuple):
    ending: str  # how the caller's last line ends: where the commit and the claim are now
    commit: str  # the unit's commit as it is now (replayed onto the remote's tip: the new one)


RETRIES = 3  # judged syncs after a lost push race, before leaving it to `shiftkit sync`


def publish(ctx: Context, held: LocalClaim, head: str, say: Say) -> Published:
    """Push ``head`` and release ``held`` once it is on the remote (`claims.let_go`); a
    lost race replays the commit onto the remote's tip (`replay.onto_tip`) or, where it
    cannot, runs `sync.sync` (the remote's commits judged here, merged, pushed), up to
    `RETRIES` times. Returns how the caller's last line ends (where the commit and the claim
    are now) and the unit's commit. The story is told in its order: a push that lost a race
    is said as the race (the remote moved on), not as a refusal first; a recovery that fails
    says why (the sync's reason) and that the commit is not on the remote."""
    name = ctx.config.claims.remote
    branch = gitio.branch(ctx.root)
    if name and branch:
        head = _gate(ctx, name, branch, head, say)
    said, ending = claiming.let_go(ctx, held, head)
    for _ in range(RETRIES):
        if not name or not branch or not _waiting(ctx, held) or not _raced(ctx, name, branch):
            break
        said = None  # (the refused push was the race: what the catch-up does is the news)
        say(
            f"{name}/{branch} moved on meanwhile (another clone pushed first): replaying "
            f"{held.feature}'s commit onto it (its new commits are judged here)"
        )
        replayed = replay.onto_tip(ctx, held, name, branch, say)
        if replayed is not None:
            head = replayed
            said, ending = _push_replayed(ctx, held, name, branch)
            continue
        say(
            f"{name}/{branch} moved on meanwhile: syncing instead (a merge, judged here), then "
            f"pushing again"
        )
        try:
            syncing.sync(ctx, say)
        except ShiftkitError as exc:
            say(exc.message.removeprefix("shiftkit: "))
            return Published(
                f"not on {name}: the sync after the lost race failed (above); the claim stays "
                f"held on {name} until this commit is there: `shiftkit sync`",
                head,
            )
        ending = (
            f"pushed to {name} after catching up; claim released"
            if not _waiting(ctx, held)
            else f"the claim stays held on {name} (not released yet): `shiftkit sync` retries"
        )
    if said is not None:
        say(said)
    return Published(ending, head)


def _push_replayed(ctx: Context, held: LocalClaim, name: str, branch: str) -> tuple[str, str]:
    """(the line to say, how the last line ends) after pushing a replayed unit commit."""
    problem = remote.push_branch(ctx.root, name, branch)
    if problem is not None:
        return (
            f"pushing to {name} was refused ({problem})",
            f"the claim stays held on {name} until this commit is there: run `shiftkit sync`",
        )
    released, trouble = claiming.release_landed(ctx, name, branch)
    line = f"pushed to {name}" + (f"; {trouble}" if trouble else "")
    if held.feature in released:
        return line, f"pushed to {name} after catching up; claim released"
    return line, f"the claim stays held on {name} (not released yet): `shiftkit sync` retries"


def _gate(ctx: Context, name: str, branch: str, head: str, say: Say) -> str:
    """The publish gate before the push, as `sync` runs it (decision records 0056, 0083):
    the commits under ``head`` that the remote lacks — a plain commit before the claim, a
    demotion on top of it — are judged, and what lies is demoted where it broke, so the
    pre-push hook need not refuse the push to do it. Returns the commit to push (``head``
    written again, or as it was). A fetch that fails leaves it to the pre-push hook."""
    from shiftkit.commands import outgoing

    if not remote.fetch_branch(ctx.root, name, branch):
        return head
    tracking = remote.tracking_ref(name, branch)
    where = "before publishing (`shiftkit finish`)"
    try:
        rewritten = outgoing.gate_outgoing(ctx, tracking, say, None, where)
    except ShiftkitError as exc:  # (the pre-push hook refuses the push with it, too)
        say(exc.message.removeprefix("shiftkit: "))
        return head
    return rewritten.get(head, head)


def _waiting(ctx: Context, held: LocalClaim) -> bool:
    """Whether ``held`` is parked: committed here, not yet released on the remote."""
    return any(row.feature == held.feature and row.oid == held.oid for row in claiming.parked(ctx))


def _raced(ctx: Context, name: str, branch: str) -> bool:
    """Whether the remote's branch holds commits this one lacks (fetched now): a push lost
    to another clone's, which a sync can catch up with — not a refusal to wait out."""
    if not remote.fetch_branch(ctx.root, name, branch):
        return False
    tracking = remote.tracking_ref(name, branch)
    behind = gitio.run(["merge-base", "--is-ancestor", tracking, "HEAD"], ctx.root, check=False)
    return behind.returncode == 1
