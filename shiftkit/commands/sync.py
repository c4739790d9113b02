"""`shiftkit sync`: share this branch through the claims remote.

The same first step as `claim` (`catch_up`); then what the commits here repaired is
re-marked, the outgoing commits are gated, the branch pushed, and this clone's claims whose
commits landed are released.
"""

from __future__ import annotations

from collections.abc import Callable

from shiftkit.commands import catch_up, claims, outgoing
from shiftkit.core.errors import BadInput, Refused
from shiftkit.edge import gitio, ledger, refused_update, regression, remote, state
from shiftkit.edge.context import Context, short

Say = Callable[[str], None]

RETRIES = 3  # rounds of catching up when the push loses a race to another clone's


def sync(ctx: Context, say: Say, jobs: int | None = None) -> int:
    """Catch up with the remote's branch and share this one: behind only, fast-forward;
    diverged, merge (the feature list's and the log's merge drivers do the work) and
    judge the merge by the rules, then push; ahead, push. Then release every claim of this
    worktree whose finishing commit is now on the remote."""
    name = ctx.config.claims.remote
    if not name:
        raise BadInput(
            ".shiftkit.toml: 'shiftkit.claims.remote' is empty; `shiftkit sync` shares work "
            'through a remote — set it (e.g. "origin") or push by hand'
        )
    remote.require_remote(ctx.root, name)
    branch = gitio.branch(ctx.root)
    if branch is None:
        raise Refused("HEAD is detached; check out the branch to sync")
    put_back = refused_update.undo(ctx.root)
    if put_back is not None:
        say(
            f"put back the files of the fetched commit {short(put_back)} that a refused "
            f"`git pull` or merge had staged (your own changes are kept)"
        )
    if gitio.status_lines(ctx.root):
        raise Refused(
            "the work tree is not clean; finish or revert the claimed work (or, as a person, "
            "commit or stash it) first, then sync"
        )
    for attempt in range(1, RETRIES + 1):
        how, remarked, recorded = _share(ctx, name, branch, say, jobs)
        if how not in ("pushed to", "merged and pushed to") and not remarked:
            break
        problem = remote.push_branch(ctx.root, name, branch)
        if problem is None:
            if remarked and how in ("already up to date with", "fast-forwarded to"):
                how += f" {name}/{branch}, then pushed the re-marks to"
            break
        if attempt == RETRIES or not _moved_on(ctx, name, branch):
            raise Refused(f"pushing {branch} to {name} was refused ({problem}); run sync again")
        say(f"{name}/{branch} moved on meanwhile (another clone pushed first): catching up again")
    released, said = claims.release_landed(ctx, name, branch)
    say(
        f"synced {branch}: {how} {name}/{branch}"
        + ("; shared the usage waiting here (on its own ref, no commit)" if recorded else "")
        + (f"; released {', '.join(released)}" if released else "")
        + (f"; {said}" if said else "")
    )
    return 0


def _share(
    ctx: Context, name: str, branch: str, say: Say, jobs: int | None
) -> tuple[str, list[str], bool]:
    """One round: caught up, repairs re-marked, waiting usage shared, the outgoing commits
    gated. Returns (how the branch met the remote's, the re-marked, whether usage moved)."""
    how = catch_up.catch_up(ctx, name, branch, say, jobs=jobs)
    # (what the commits here repaired — a teammate's, a merge's, one's own plain fix — is
    # re-marked now, in one commit the push carries: decision record 0093)
    remarked, at = regression.remark_repairs(ctx, "after `shiftkit sync`")
    if at is not None:
        say(
            f"re-marked {', '.join(remarked)} passing in {short(at)}: demoted before, "
            f"{'its verifier passes' if len(remarked) == 1 else 'their verifiers pass'} "
            f"again after the sync"
        )
    recorded = _publish_waiting_usage(ctx)
    outgoing.gate_outgoing(ctx, remote.tracking_ref(name, branch), say, jobs)  # (0056, 0083)
    return how, remarked, recorded


def _moved_on(ctx: Context, name: str, branch: str) -> bool:
    """Whether a refused push lost a race: the remote's branch (fetched now) has commits
    this one lacks — caught up by another round — rather than a refusal to wait out."""
    counts = remote.divergence(ctx.root, name, branch)
    return counts is not None and counts[1] > 0


def _publish_waiting_usage(ctx: Context) -> bool:
    """Usage recorded since this worktree's last boundary (a SessionEnd after the last
    `finish`, a Codex rollout, `usage add`) waits in the git dir: with no claim open here,
    sync moves it onto this clone's usage ref and pushes that (decision record 0065), so the
    remote's `cost` counts it without a commit on the branch. With a claim open it stays for
    the claim's `finish` or `revert`, whose unit it is."""
    if state.local_claim(ctx.git_dir) is not None:
        return False
    ledger.record_known_transcript(ctx, only_after_a_claim=True)
    moved, _ = ledger.publish(ctx)  # (a push that failed: the next sync pushes it)
    return moved
