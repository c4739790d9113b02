"""After a unit's commit: publish it and let the claim go — and when the push loses a race
(the remote's branch moved on meanwhile), catch up through the judged `sync` and push again,
a bounded number of times, so "finished" normally means "on the remote" (decision 0055)."""

from __future__ import annotations

from collections.abc import Callable

from shiftkit.commands import claims as claiming
from shiftkit.commands import sync as syncing
from shiftkit.core.claim import LocalClaim
from shiftkit.core.errors import ShiftkitError
from shiftkit.edge import gitio, remote
from shiftkit.edge.context import Context

Say = Callable[[str], None]

RETRIES = 3  # judged syncs after a lost push race, before leaving it to `shiftkit sync`


def publish(ctx: Context, held: LocalClaim, head: str, say: Say) -> str:
    """Push ``head`` and release ``held`` once it is on the remote (`claims.let_go`); a
    lost race runs `sync.sync` (the remote's commits judged here, merged, pushed) up to
    `RETRIES` times. Returns how the caller's last line ends: where the commit and the claim
    are now. The story is told in its order: a push that lost a race is said as the race
    (the remote moved on), not as a refusal first; a recovery that fails says why (the
    sync's reason) and that the commit is not on the remote."""
    name = ctx.config.claims.remote
    branch = gitio.branch(ctx.root)
    if name and branch:
        head = _gate(ctx, name, branch, head, say)
    said, ending = claiming.let_go(ctx, held, head)
    for _ in range(RETRIES):
        if not name or not branch or not _waiting(ctx, held) or not _raced(ctx, name, branch):
            break
        say(
            f"{name}/{branch} moved on meanwhile: syncing (another clone pushed first; its new "
            f"commits are judged here), then pushing again"
        )
        said = None  # (the refused push was the race: what the sync does is the news)
        try:
            syncing.sync(ctx, say)
        except ShiftkitError as exc:
            say(exc.message.removeprefix("shiftkit: "))
            return (
                f"not on {name}: the sync after the lost race failed (above); the claim stays "
                f"held on {name} until this commit is there: `shiftkit sync`"
            )
        ending = (
            f"pushed to {name} after catching up; claim released"
            if not _waiting(ctx, held)
            else f"the claim stays held on {name} (not released yet): `shiftkit sync` retries"
        )
    if said is not None:
        say(said)
    return ending


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
