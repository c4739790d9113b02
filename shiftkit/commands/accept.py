"""`shiftkit accept COMMIT... --reason TEXT`: a person lets commits that were forced past
every hook stand (decision record 0082).

Without it a rule-breaking commit on the shared branch deadlocks the team: every clone's
`sync` and `claim` refuse the branch for ever. The acceptance is a commit of its own on top
of the branch (the remote's, fetched now; without a remote, this one): a `Shiftkit-Accept`
trailer per accepted commit, and the demotion of each feature the accepted commits left
marked passing whose verifier fails there — the list is true again at the new tip. It is
pushed at once; every judge then reports the accepted violations as accepted.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence

from shiftkit.core import acceptance, features, progress
from shiftkit.core.config import Config
from shiftkit.core.errors import BadInput, Refused
from shiftkit.core.messages import Violation
from shiftkit.edge import gitio, judge, regression, remote, revisions, verify
from shiftkit.edge.committing import commit_on
from shiftkit.edge.context import Context, log_time, person_signs, short
from shiftkit.edge.project import read_features_at

Say = Callable[[str], None]


def accept(
    ctx: Context, revs: Sequence[str], reason: str, say: Say, warn: Say, jobs: int | None = None
) -> int:
    """Judge each of ``revs`` (re-verifying), re-verify at the branch's tip the passing
    features they named or can break, and commit the acceptance with the demotions on the
    tip (signed under the `signed` policy); push it, and move this branch when it was at
    that tip. 0, or a refusal that changed nothing."""
    from shiftkit.commands import audit

    reason = reason.strip()
    if not reason or "\n" in reason:
        raise BadInput("--reason must be one non-empty line: why a person lets the commits stand")
    branch = gitio.branch(ctx.root)
    if branch is None:
        raise BadInput("HEAD is detached: check out the branch the commits are on, then accept")
    name = ctx.config.claims.remote
    tip, where = _tip(ctx, name, branch)
    # The tip's settings judge the acceptance (its parent): its policy says whether to sign.
    cfg = judge.at_revisions(ctx.root, tip, f"{tip}:").parent
    at_tip = dataclasses.replace(ctx, project=dataclasses.replace(ctx.project, config=cfg))
    sign = person_signs(at_tip)  # before anything is run or written
    targets = [_accepted_commit(ctx, rev, tip, where) for rev in dict.fromkeys(revs)]
    _not_accepted_yet(ctx, targets, tip, warn)
    broken = []
    for commit in targets:
        findings = audit.audit_commits(ctx, [commit], True, warn)
        violations = [v for f in findings for v in f.violations]
        if not violations:
            raise Refused(
                f"{short(commit.oid)} breaks no rule here (re-verified); there is nothing to "
                f"accept — nothing changed"
            )
        broken.append((commit, violations))
    try:
        listed = read_features_at(ctx.root, tip, cfg.features)
    except BadInput as bad:
        listed, problem = None, bad.message
    else:
        problem = "it is not there"
    if listed is None:
        raise Refused(
            f"{cfg.features} cannot be read at {where} ({short(tip)}: {problem}), so what the "
            f"commits left marked passing cannot be demoted; an acceptance cannot repair a "
            f"list — nothing changed"
        )
    failing = _failing_at_tip(at_tip, listed, tip, broken, warn, jobs)
    texts = _demoted(ctx, cfg, listed, tip, failing, [c for c, _ in broken])
    message = _message([c for c, _ in broken], failing, reason, tip)
    made = commit_on(ctx, tip, texts, message, sign)
    said = _publish(ctx, name, branch, tip, made)
    demoted = (
        f"demoted {', '.join(f.id for f, _ in failing)} (failing at {short(tip)}); "
        if failing
        else f"nothing to demote (no feature they named or can break fails at {short(tip)}); "
    )
    shown = ", ".join(short(c.oid) for c, _ in broken)
    say(f"accepted {shown} in {short(made)}{' (signed)' if sign else ''}: {demoted}{said}")
    return 0


def _tip(ctx: Context, name: str, branch: str) -> tuple[str, str]:
    """The commit the acceptance goes on, and how to name it: the remote's branch, fetched
    now (every clone takes the acceptance from there), else this branch."""
    head = gitio.head_oid(ctx.root)
    if not name:
        if head is None:
            raise BadInput("this branch has no commit yet: there is nothing to accept")
        return head, branch
    remote.require_remote(ctx.root, name)
    tracking = remote.tracking_ref(name, branch)
    fetched = remote.fetch_branch(ctx.root, name, branch, require_answer=True)
    there = gitio.refs(ctx.root, tracking).get(tracking) if fetched else None
    if there is None:
        raise Refused(f"{name} has no branch {branch}; there is nothing to accept there")
    return there, f"{name}/{branch}"


def _accepted_commit(ctx: Context, rev: str, tip: str, where: str) -> revisions.Commit:
    from shiftkit.commands import audit

    oid = audit.tip_oid(ctx.root, rev)
    if oid is None:
        raise BadInput(f"COMMIT {rev!r}: not a commit in this repository")
    if not gitio.is_ancestor(ctx.root, oid, tip):
        raise BadInput(
            f"COMMIT {rev!r} ({short(oid)}) is not on {where}: an acceptance goes on the "
            f"branch that holds the commit"
        )
    return revisions.read_commits(ctx.root, ["--no-walk", oid])[0]


def _not_accepted_yet(ctx: Context, targets: list[revisions.Commit], tip: str, warn: Say) -> None:
    """Refused when a commit after one of ``targets`` accepts it already and breaks no rule
    itself (one that does is no acceptance: this one replaces it)."""
    from shiftkit.commands import audit

    for commit in targets:
        for later in revisions.read_commits(ctx.root, [tip, f"^{commit.oid}"]):
            if not any(a.commit == commit.oid for a in acceptance.read(later.message)[0]):
                continue
            if not any(f.violations for f in audit.audit_commits(ctx, [later], True, warn)):
                raise Refused(
                    f"{short(commit.oid)} is accepted already, in {short(later.oid)}; "
                    f"`shiftkit sync` brings it here — nothing changed"
                )


def _failing_at_tip(
    at_tip: Context,
    listed: features.FeatureList,
    tip: str,
    broken: list[tuple[revisions.Commit, list[Violation]]],
    warn: Say,
    jobs: int | None,
) -> list[tuple[features.Feature, verify.Outcome]]:
    """The features marked passing at ``tip`` that the accepted commits named in a
    violation or can break (`outgoing.affected_by`), whose verifiers fail there — run in
    temporary checkouts of the tip's tree, with the tip's `init` and timeout (``at_tip``:
    the context with the tip's settings)."""
    from shiftkit.commands import outgoing

    ctx, cfg = at_tip, at_tip.config
    passing = regression.passing_ids(listed)
    work = regression.jobs(listed, passing, cfg.verify)
    named = {v.feature for _, violations in broken for v in violations}
    changed: list[str] = []
    for commit, _ in broken:
        changed += _paths(ctx, commit)
    reach = {id(job) for job in outgoing.affected_by(ctx, work, changed)}
    todo = [job for job in work if job.feature.id in named or id(job) in reach]
    if not todo:
        return []
    tree = gitio.out(["rev-parse", f"{tip}^{{tree}}"], ctx.root).strip()
    for job in todo:
        warn(f"re-verifying {job.feature.id} at {short(tip)}: {job.command}")
    try:
        results = regression.run_at_tree(
            at_tip, tree, todo, jobs or os.cpu_count() or 1, lambda job, outcome: None, tip=tip
        )
    except regression.InitFailed as failed:
        raise Refused(
            f"nothing was verified at {short(tip)}: {failed.outcome.summary()} (its `init`); "
            f"a person repairs it, then accepts — nothing changed"
        ) from None
    for job, outcome in results:
        if outcome.ok:
            verify.record_pass(
                ctx.common_dir, tree, verify.cache_command(job.command, regression.CHECKOUT)
            )
    return [(job.feature, outcome) for job, outcome in results if not outcome.ok]


def _paths(ctx: Context, commit: revisions.Commit) -> list[str]:
    """The paths ``commit`` changes against its first parent (every path of a root)."""
    parent = commit.parents[0] if commit.parents else gitio.EMPTY_TREE
    listed = gitio.out(
        ["diff-tree", "-r", "--no-renames", "--name-only", "-z", parent, commit.oid], ctx.root
    )
    return [path for path in listed.split("\0") if path]


def _demoted(
    ctx: Context,
    cfg: Config,
    listed: features.FeatureList,
    tip: str,
    failing: list[tuple[features.Feature, verify.Outcome]],
    accepted: list[revisions.Commit],
) -> dict[str, str]:
    """The list and the log at ``tip`` with each of ``failing`` demoted and logged (no
    prune: an acceptance changes nothing else)."""
    if not failing:
        return {}
    updated = listed
    log_text = gitio.read_blobs(ctx.root, [f"{tip}:{cfg.progress}"])[0] or ""
    named = " ".join(short(c.oid) for c in accepted)
    for feature, outcome in failing:
        updated = updated.replace_feature(feature._replace(passes=False))
        body = (
            f"marked passing by {named}, which a person accepted though it was made past the "
            f"hooks; its verifier fails at {short(tip)} ({outcome.summary()}): demoted to not "
            f"passing, repair it first.\n"
            + "\n".join(f"    {line}" for line in outcome.last_lines(5, 600).splitlines())
        )
        entry = progress.format_entry(
            log_time(), feature.id, f"demoted (accepting {named})", short(tip), body
        )
        log_text = progress.append(log_text, entry)
    return {cfg.features: features.dumps(updated), cfg.progress: log_text}


def _message(
    accepted: list[revisions.Commit],
    failing: list[tuple[features.Feature, verify.Outcome]],
    reason: str,
    tip: str,
) -> str:
    if len(accepted) == 1:
        subject = f"Accept {short(accepted[0].oid)}, made past the hooks, as a person"
    else:
        subject = f"Accept {len(accepted)} commits made past the hooks, as a person"
    body = [f"{reason}"]
    if failing:
        body.append(
            "Demoted, their verifiers failing at "
            f"{short(tip)}: {', '.join(f.id for f, _ in failing)}."
        )
    trailer = "\n".join(
        f"{acceptance.ACCEPT_KEY}: {acceptance.value(c.oid, reason)}" for c in accepted
    )
    return f"{subject}\n\n" + "\n\n".join(body) + f"\n\n{trailer}\n"


def _publish(ctx: Context, name: str, branch: str, tip: str, made: str) -> str:
    """Push ``made`` to the remote's branch (when there is a remote) and fast-forward this
    branch to it when it was at ``tip``. Returns what to say."""
    pushed = ""
    if name:
        proc = gitio.run(
            ["push", "--quiet", "--porcelain", name, f"{made}:refs/heads/{branch}"],
            ctx.root,
            check=False,
        )
        if proc.returncode != 0:
            from shiftkit.core import gitmsg

            rejected = [line for line in proc.stdout.splitlines() if line.startswith("!")]
            problem = rejected[0].split("\t")[-1] if rejected else gitmsg.detail(proc.stderr)
            raise Refused(
                f"pushing the acceptance to {name}/{branch} was refused ({problem}); the "
                f"branch was not moved there or here — run `shiftkit accept` again"
            )
        pushed = f"pushed to {name}/{branch}; "
    if gitio.head_oid(ctx.root) != tip:
        return f"{pushed}`shiftkit sync` brings it here and to every clone"
    moved = gitio.run(["merge", "--ff-only", "--quiet", made], ctx.root, check=False)
    if moved.returncode != 0:
        from shiftkit.core import gitmsg

        detail = gitmsg.detail(moved.stderr + moved.stdout)
        if name:
            return f"{pushed}this branch did not move ({detail}): `shiftkit sync` brings it here"
        raise Refused(f"{branch} could not move onto the acceptance ({detail}); nothing changed")
    return f"{pushed}{branch} is on it" + ("; `shiftkit sync` in every other clone" if name else "")
