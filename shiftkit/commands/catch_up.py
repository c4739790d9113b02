"""Bringing a branch up to its remote's: the one step `sync` and `claim` share.

Fetch the remote's branch; behind only, its commits judged here and fast-forwarded; diverged,
judged and merged (the feature list's and the log's merge drivers do the work, the merge
judged by the rules). Nothing moves unless every incoming commit passes the rules here.
"""

from __future__ import annotations

from collections.abc import Callable

from shiftkit.core.claim import LocalClaim
from shiftkit.core.errors import Refused
from shiftkit.edge import gitio, remote
from shiftkit.edge.context import Context, short

Say = Callable[[str], None]


def catch_up(
    ctx: Context,
    name: str,
    branch: str,
    say: Say,
    for_claim: bool = False,
    fetch: bool = True,
    jobs: int | None = None,
) -> str:
    """Fetch the remote's ``branch`` and bring this one up to it: behind only, judged and
    fast-forwarded; diverged, judged and merged (the feature list's and the log's merge
    drivers do the work, the merge judged by the rules) — and, ``for_claim``, pushed at once,
    so the claim stands on what the remote has. Not ``fetch``: against the branch as last
    fetched. Returns how sync says it."""
    tracking = f"refs/remotes/{name}/{branch}"
    if fetch:
        fetched = gitio.run(
            ["fetch", "--quiet", "--no-tags", name, f"+refs/heads/{branch}:{tracking}"],
            ctx.root,
            check=False,
        )
        if fetched.returncode != 0 and "couldn't find remote ref" not in fetched.stderr:
            raise remote.Unreachable(name, f"fetch {branch}", fetched.stderr)
        there = tip_of(ctx, tracking) if fetched.returncode == 0 else None
    else:
        there = tip_of(ctx, tracking)
    if there is None:  # the remote has no such branch yet
        return "pushed to"
    if gitio.head_oid(ctx.root) == there:
        return "already up to date with"
    if is_ancestor(ctx, "HEAD", tracking):  # behind only
        judge_incoming(ctx, name, branch, tracking, say, jobs)
        _fast_forward(ctx, name, branch, tracking)
        if for_claim:
            say(f"caught up first: fast-forwarded {branch} to {name}/{branch}")
        return "fast-forwarded to"
    if is_ancestor(ctx, tracking, "HEAD"):  # ahead only
        return "pushed to"
    judge_incoming(ctx, name, branch, tracking, say, jobs)
    _merge(ctx, name, branch, tracking, say)
    if for_claim:
        problem = remote.push_branch(ctx.root, name, branch)
        if problem is not None:
            raise Refused(
                f"caught up with {name}/{branch} by a merge, but pushing it was refused "
                f"({problem}); run `shiftkit sync`, then claim"
            )
        say(f"caught up first: merged {name}/{branch} and pushed")
    return "merged and pushed to"


def under_the_work(ctx: Context, held: LocalClaim, say: Say) -> LocalClaim:
    """`finish`'s first step: with a claims remote, a branch only behind the remote's is
    fast-forwarded under the uncommitted work (judged first, as any catch-up), so the commit
    lands on the remote's tip and publishes without a merge. Where git will not (a changed
    file the incoming commits also change), nothing moves: the race is caught up after the
    commit, as before. Returns the claim, standing on the new HEAD when it moved."""
    from shiftkit.edge import state

    moved = only_behind(ctx, say)
    head = gitio.head_oid(ctx.root)
    if not moved or head is None:
        return held
    say(
        f"caught up first: fast-forwarded {gitio.branch(ctx.root)} to "
        f"{ctx.config.claims.remote}/{gitio.branch(ctx.root)} under your changes "
        f"({moved} commit{'s' if moved != 1 else ''}), so {held.feature}'s commit lands on it"
    )
    standing = LocalClaim(held.record._replace(base=head), held.oid)
    state.save_local_claim(ctx.git_dir, standing)
    return standing


def only_behind(ctx: Context, say: Say) -> int:
    """With a claims remote, a branch only behind the remote's (as just fetched) is judged
    and fast-forwarded to it, whatever is uncommitted, when git can: how many commits it
    moved (0: up to date, ahead, diverged, unreachable, or git would overwrite a change)."""
    name, branch = ctx.config.claims.remote, gitio.branch(ctx.root)
    if not name or branch is None or not ctx.config.claims.enabled:
        return 0
    try:
        counts = remote.divergence(ctx.root, name, branch)
    except remote.Unreachable:
        return 0
    if counts is None or counts[0] or not counts[1]:
        return 0  # up to date, ahead, or diverged: the commit's publication handles it
    tracking = remote.tracking_ref(name, branch)
    judge_incoming(ctx, name, branch, tracking, say)
    moved = gitio.run(["merge", "--ff-only", "--quiet", tracking], ctx.root, check=False)
    return counts[1] if moved.returncode == 0 else 0


def tip_of(ctx: Context, ref: str) -> str | None:
    return gitio.refs(ctx.root, ref).get(ref)


def is_ancestor(ctx: Context, older: str, newer: str) -> bool:
    proc = gitio.run(["merge-base", "--is-ancestor", older, newer], ctx.root, check=False)
    return proc.returncode == 0


def judge_incoming(
    ctx: Context, name: str, branch: str, tracking: str, say: Say, jobs: int | None = None
) -> None:
    """The remote's commits are judged here before the branch moves onto them: every flip
    re-verified in a clean checkout (``jobs`` at once, cached by tree), every rule asked
    (`audit.accept`, which records the verdicts the reference-transaction hook then finds:
    decision record 0043)."""
    from shiftkit.commands import audit

    findings = audit.accept(ctx, tracking, say, jobs)
    broken = [f for f in findings if f.violations]
    if broken:
        first = broken[0]
        ids = " ".join(f.commit for f in broken)
        raise Refused(
            f"{name}/{branch} brings {len(broken)} commit{'s' if len(broken) != 1 else ''} "
            f"that break the rules here ({short(first.commit)}: {first.violations[0]}); "
            f"nothing changed — a person must look (`shiftkit audit --reverify "
            f"{name}/{branch}`), and to let {'them' if len(broken) != 1 else 'it'} stand "
            f'runs `shiftkit accept {ids} --reason "why"` (it demotes what '
            f"{'they' if len(broken) != 1 else 'it'} left untrue and pushes the acceptance); "
            f"then `shiftkit sync` goes on in every clone"
        )


def _fast_forward(ctx: Context, name: str, branch: str, tracking: str) -> None:
    """Behind only: the branch moves to the remote's commits, judged here just before
    (`judge_incoming`), through the reference-transaction hook like any update."""
    proc = gitio.run(["merge", "--ff-only", "--quiet", tracking], ctx.root, check=False)
    if proc.returncode != 0:
        from shiftkit.core import gitmsg

        raise Refused(
            f"fast-forwarding {branch} to {name}/{branch} failed "
            f"({gitmsg.detail(proc.stderr + proc.stdout)}); nothing changed"
        )


def _merge(ctx: Context, name: str, branch: str, tracking: str, say: Say) -> None:
    from shiftkit.commands import audit

    before = gitio.head_oid(ctx.root)
    merged = gitio.run(
        ["merge", "--no-edit", "-m", f"Merge {name}/{branch} (shiftkit sync)", tracking],
        ctx.root,
        check=False,
    )
    if merged.returncode != 0:
        gitio.run(["merge", "--abort"], ctx.root, check=False)
        from shiftkit.core import gitmsg

        detail = gitmsg.merge_failure(merged.stdout + merged.stderr)
        raise Refused(
            f"merging {name}/{branch} failed ({detail}); nothing changed — fix that, or "
            f"merge by hand, then `shiftkit sync`"
        )
    head = gitio.head_oid(ctx.root)
    if head != before and head is not None:
        findings = audit.audit_commits(ctx, audit.commits_in(ctx.root, before), False, say)
        broken = [f for f in findings if f.violations]
        if broken:
            gitio.run(["reset", "--quiet", "--keep", before or "HEAD"], ctx.root)
            raise Refused(
                f"the merge with {name}/{branch} breaks the rules "
                f"({broken[0].violations[0]}); nothing changed"
            )
