"""The finish gate: the claimed feature's verifier on the work tree, and, beside it in
temporary checkouts of the same tree, every passing feature the change can break (by their
read sets, decision record 0054) and every demoted feature the change may have repaired.

A passing feature that fails refuses the finish (it names the feature and quotes its last
lines); a demoted feature earned before that passes is repaired: `finish` re-marks it in the
same commit (decision record 0055).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

from shiftkit.core import affected, features
from shiftkit.core.errors import Refused
from shiftkit.edge import gitio, ledger, readsets, regression, state, verify
from shiftkit.edge.context import Context, bookkeeping, record_verified_at, short, work_tree_id

Say = Callable[[str], None]


def verifier_of(ctx: Context, feature: features.Feature) -> str:
    command = features.effective_verify(feature, ctx.config.verify)
    if command is None:
        raise Refused(
            f"{feature.id} has no verify command and no project-wide 'verify' is set "
            f"in .shiftkit.toml, so it cannot become passing"
        )
    return command


def last_failure_path(ctx: Context) -> Path:
    return state.worktree_state(ctx.git_dir) / "last-failure.json"


def record_failure(ctx: Context, feature_id: str, outcome: verify.Outcome) -> None:
    state.write_json(
        last_failure_path(ctx),
        {
            "feature": feature_id,
            "signature": verify.signature(outcome.output),
            "summary": outcome.summary(),
            "tail": outcome.tail(10),
        },
    )


def verify_work(ctx: Context, feature: features.Feature, say: Say) -> tuple[bool, str]:
    """Run (or reuse) the verifier on the work tree's tree — in the work tree itself, or with
    `verify_in = "checkout"` in a temporary worktree of exactly that tree; returns (passed,
    tree id). A verifier that changes the tree it judges has not judged it: a failure. A
    pass keeps the files the verifier read (`readsets`)."""
    command = verifier_of(ctx, feature)
    mode = ctx.config.verify_in
    key = verify.cache_command(command, mode)
    if mode == "worktree":
        hidden = verify.hidden_paths(ctx.root)
        if hidden:
            raise Refused(
                f"{hidden[0]} is marked skip-worktree/assume-unchanged, so no tree holds "
                f"what the verifier would see; clear it with `git update-index "
                f"--no-skip-worktree --no-assume-unchanged {hidden[0]}`"
            )
    tree = work_tree_id(ctx)
    if verify.is_cached(ctx.common_dir, tree, key):
        say(f"{feature.id}: passed (cached for tree {short(tree)}): {command}")
        return True, tree
    say(
        f"{feature.id}: running {command}"
        + (" in a temporary checkout" if mode != "worktree" else "")
    )
    if mode == "checkout":
        outcome = _in_checkout(ctx, feature.id, tree, command)
    else:
        outcome = readsets.run_measured(
            ctx.common_dir,
            feature.id,
            command,
            ctx.root,
            tree,
            lambda prefix: verify.run_verifier(
                command,
                ctx.root,
                ctx.config.verify_timeout,
                junit=ctx.config.junit,
                prefix=prefix,
            ),
        )
        after = work_tree_id(ctx)
        if after != tree:
            changed = gitio.out(
                ["diff-tree", "-r", "--name-only", "--no-renames", tree, after], ctx.root
            ).split()
            outcome = outcome._replace(
                ok=False,
                exit_code=outcome.exit_code or 1,
                output=(
                    f"the verifier changed files it was judging ({', '.join(changed[:5])}); "
                    f"a verifier must leave the tree as it found it (ignore its outputs in "
                    f".gitignore)\n" + outcome.output
                ),
            )
    ledger.note_verify(ctx, feature.id, outcome.ok, outcome.seconds)
    if outcome.ok:
        verify.record_pass(ctx.common_dir, tree, key)
        record_verified_at(ctx, [feature.id])
        say(f"{feature.id}: passed in {outcome.seconds:.1f}s")
        return True, tree
    record_failure(ctx, feature.id, outcome)
    say(f"{feature.id}: FAILED ({outcome.summary()}); last lines of the output:")
    say(outcome.tail() or "(no output)")
    return False, tree


def _in_checkout(ctx: Context, feature_id: str, tree: str, command: str) -> verify.Outcome:
    cfg = ctx.config
    with verify.temporary_checkout(ctx.root, tree) as target:
        prepared = verify.prepare_checkout(target, cfg.init, cfg.verify_timeout)
        if prepared is not None:
            return prepared._replace(command=command)
        return readsets.run_measured(
            ctx.common_dir,
            feature_id,
            command,
            target,
            tree,
            lambda prefix: verify.run_in(
                target, command, cfg.verify_timeout, junit=cfg.junit, prefix=prefix
            ),
        )


# -- what else the change can break, or repair ------------------------------------------------


class Others(NamedTuple):
    """The features verified beside the claimed one."""

    passing: list[regression.Job]  # passing at HEAD, the change can break them
    repairable: list[regression.Job]  # demoted after a pass, the change may repair them
    skipped: affected.Skipped  # passing features the change cannot touch, by why


def earned_before(ctx: Context) -> set[str]:
    """Features a demotion entry in HEAD's log or archive names: they passed once."""
    return regression.earned_before(ctx)


def others_to_verify(
    ctx: Context, committed: features.FeatureList, claimed: str, base: str, tree: str
) -> Others:
    """Beside ``claimed``: the passing features of HEAD's list whose read sets a move to
    ``tree`` touches (unknown sets included), and the demoted features earned before whose
    reads the change since ``base`` (the claim's base) touches. A pass already recorded at
    ``tree`` for a feature is not run again."""
    passing_ids = [i for i in regression.passing_ids(committed) if i != claimed]
    jobs = regression.jobs(committed, passing_ids, ctx.config.verify)
    commands = {job.feature.id: job.command for job in jobs}
    selection = readsets.selection_at(ctx.root, ctx.common_dir, commands, tree, bookkeeping(ctx))
    touched = set(selection.touched)
    passing = [
        j for j in jobs if j.feature.id in touched and not regression.is_checked(ctx, tree, j)
    ]
    earned = earned_before(ctx)
    open_ids = [
        f.id for f in committed.features if not f.passes and f.id in earned and f.id != claimed
    ]
    repairable = regression.jobs(committed, open_ids, ctx.config.verify)
    if repairable:
        base_tree = gitio.out(["rev-parse", f"{base}^{{tree}}"], ctx.root).strip()
        change = readsets.change(ctx.root, base_tree, tree)
        sets = readsets.load(ctx.common_dir, {j.feature.id: j.command for j in repairable})
        wanted = set(
            affected.affected(
                [j.feature.id for j in repairable], sets, change.paths, change.added, change.resized
            )
        )
        repairable = [j for j in repairable if j.feature.id in wanted]
    return Others(passing, repairable, selection.skipped)


class Verdict(NamedTuple):
    tree: str  # the work tree's tree, verified
    checked: list[str]  # passing features verified beside the claimed one (all passed)
    repaired: list[str]  # demoted features that pass again: re-marked in the finish commit


def verify_change(
    ctx: Context,
    feature: features.Feature,
    committed: features.FeatureList,
    base: str,
    workers: int | None,
    say: Say,
) -> Verdict:
    """The claimed ``feature`` on the work tree and, in parallel (``workers`` temporary
    checkouts of the same tree), what `others_to_verify` finds. Refused, nothing changed,
    when the claimed feature fails, or a passing one does (named, its last lines said)."""
    tree = work_tree_id(ctx)
    others = others_to_verify(ctx, committed, feature.id, base, tree)
    work = others.passing + others.repairable
    count = max(1, workers or os.cpu_count() or 1)
    if work:
        say(_plan_line(others, count))
    elif others.skipped.total:
        say(f"no other passing feature to re-verify{others.skipped.clause()}")
    results: list[tuple[regression.Job, verify.Outcome]] = []
    errors: list[BaseException] = []

    def beside() -> None:
        try:
            results.extend(regression.run_at_tree(ctx, tree, work, count, _said(say, others)))
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=beside)
    if work:
        thread.start()
    try:
        passed, verified_tree = verify_work(ctx, feature, say)
    finally:
        if work:
            thread.join()
    if errors:
        if isinstance(errors[0], regression.InitFailed):
            raise Refused(
                f"nothing was committed: {errors[0].outcome.output.splitlines()[0]}; fix "
                f"init, then run `shiftkit finish` again"
            )
        raise errors[0]
    if not passed:
        raise Refused(
            f"{feature.id} does not pass; nothing was changed. Fix it and run "
            f"`shiftkit finish` again, or `shiftkit revert --reason ...`"
        )
    if verified_tree != tree:
        raise Refused(
            "the work tree changed while the verifiers ran; nothing was committed — run "
            "`shiftkit finish` again"
        )
    for job, outcome in results:
        if outcome.ok:
            verify.record_pass(
                ctx.common_dir, tree, verify.cache_command(job.command, regression.CHECKOUT)
            )
    passing_ids = {job.feature.id for job in others.passing}
    broken = [(job, o) for job, o in results if job.feature.id in passing_ids and not o.ok]
    if broken:
        _refuse_broken(feature.id, broken, say)
    repaired = [job.feature.id for job, o in results if job.feature.id not in passing_ids and o.ok]
    checked = [job.feature.id for job, o in results if job.feature.id in passing_ids]
    if checked:
        record_verified_at(ctx, checked)
    return Verdict(tree, checked, repaired)


def _plan_line(others: Others, workers: int) -> str:
    parts = []
    if others.passing:
        ids = ", ".join(j.feature.id for j in others.passing)
        parts.append(f"re-verifying the passing features this change can touch: {ids}")
    if others.repairable:
        ids = ", ".join(j.feature.id for j in others.repairable)
        parts.append(f"trying the demoted features it may repair: {ids}")
    return (
        f"{'; '.join(parts)}{others.skipped.clause()}, {workers} at a time in temporary checkouts"
    )


def _said(say: Say, others: Others) -> Callable[[regression.Job, verify.Outcome], None]:
    passing = {job.feature.id for job in others.passing}

    def done(job: regression.Job, outcome: verify.Outcome) -> None:
        what = "" if job.feature.id in passing else " (demoted)"
        say(f"{job.feature.id}{what}: {outcome.summary()} ({outcome.seconds:.1f}s)")

    return done


def _refuse_broken(
    claimed: str, broken: Sequence[tuple[regression.Job, verify.Outcome]], say: Say
) -> None:
    for job, outcome in broken:
        say(f"{job.feature.id} is marked passing but FAILS on this tree ({outcome.summary()}):")
        say(
            "\n".join(
                f"    {line}" for line in (outcome.last_lines() or "(no output)").splitlines()
            )
        )
    ids = ", ".join(job.feature.id for job, _ in broken)
    raise Refused(
        f"finishing {claimed} would break {ids} (marked passing; "
        f"{'its' if len(broken) == 1 else 'their'} verifier fails on this tree); nothing was "
        f"committed: fix it, or `shiftkit revert --reason ...` (if it fails at HEAD too, "
        f"`shiftkit check` demotes it there first)"
    )
