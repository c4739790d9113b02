"""Re-verifying passing features at HEAD — the start check's rotating sample and `shiftkit
check`'s whole list — and the one demotion commit both make (decision 0035)."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import NamedTuple

from shiftkit.core import affected, features, progress, rotation
from shiftkit.core.errors import Refused, ShiftkitError
from shiftkit.edge import culprit, files, gitio, ledger, readsets, state, verify
from shiftkit.edge.committing import commit_bookkeeping
from shiftkit.edge.context import (
    Context,
    bookkeeping,
    log_time,
    short,
    write_features,
    write_log,
)
from shiftkit.edge.files import read_optional

CHECKOUT = "checkout"  # the cache's mode for a pass in a temporary checkout of the tree


class Job(NamedTuple):
    feature: features.Feature
    command: str


class InitFailed(Exception):
    """`init` failed (or changed the tree) in a temporary checkout: nothing was verified."""

    def __init__(self, outcome: verify.Outcome) -> None:
        super().__init__(outcome.summary())
        self.outcome = outcome


def jobs(feature_list: features.FeatureList, ids: Sequence[str], project_verify: str) -> list[Job]:
    """The verifier of each of ``ids`` (a passing feature without one has nothing to run,
    and is left out)."""
    wanted = set(ids)
    table = feature_list.table
    found = []
    for index, feature_id in enumerate(table.ids):
        if feature_id in wanted:
            feature = feature_list.at(index)
            command = features.effective_verify(feature, project_verify)
            if command is not None:
                found.append(Job(feature, command))
    return found


def passing_ids(feature_list: features.FeatureList) -> list[str]:
    table = feature_list.table
    return [i for i, flags in zip(table.ids, table.flags, strict=True) if flags & features.PASSES]


def sample(ctx: Context, feature_list: features.FeatureList) -> list[str]:
    """The passing features this start check re-verifies: the rotation's choice."""
    checks, stamps = state.read_stamps(ctx.common_dir)
    table = feature_list.table
    candidates = [
        rotation.Candidate(feature_id, bool(flags & features.CORE), stamps.get(feature_id))
        for feature_id, flags in zip(table.ids, table.flags, strict=True)
        if flags & features.PASSES
    ]
    return rotation.choose(candidates, ctx.config.regression_sample, checks + 1)


def head_tree(root: Path) -> str:
    return gitio.out(["rev-parse", "HEAD^{tree}"], root).strip()


def is_checked(ctx: Context, tree: str, job: Job) -> bool:
    return verify.is_cached(ctx.common_dir, tree, verify.cache_command(job.command, CHECKOUT))


def carried(ctx: Context, tree: str, work: Sequence[Job]) -> dict[str, str]:
    """The jobs of ``work`` whose pass holds at ``tree`` without running them again, each with
    the tree it passed at: verified since the last start check (stamped with its count — the
    incoming flips a catch-up judged, a `finish` gate's, a `check`'s), and `untouched` since.
    One check only: a carried pass keeps its stamp, so the next start check runs it (decision
    record 0079). Exactly ``tree``'s passes are `is_checked`'s."""
    checks, stamps = state.read_stamps(ctx.common_dir)
    recent = [job for job in work if stamps.get(job.feature.id) == checks]
    return untouched(ctx, tree, recent)[0] if recent else {}


def untouched(
    ctx: Context, tree: str, work: Sequence[Job]
) -> tuple[dict[str, str], affected.Skipped]:
    """The jobs of ``work`` whose pass holds at ``tree`` by the selection, each with the tree
    it passed at — verified in a clean checkout of the tree its reads were measured at (a pass
    recorded there), and the change from that tree to ``tree`` touches nothing they read
    (`readsets.selection_at`, the rule the finish and publish gates use) — and why."""
    pending = [job for job in work if not is_checked(ctx, tree, job)]
    if not pending:
        return {}, affected.Skipped()
    sets = readsets.load(ctx.common_dir, {job.feature.id: job.command for job in pending})
    grounded = {}
    for job in pending:
        measured = sets.get(job.feature.id)
        if measured is not None and measured.tree != tree and is_checked(ctx, measured.tree, job):
            grounded[job.feature.id] = (job.command, measured.tree)
    if not grounded:
        return {}, affected.Skipped()
    commands = {feature_id: command for feature_id, (command, _) in grounded.items()}
    chosen = readsets.selection_at(ctx.root, ctx.common_dir, commands, tree, bookkeeping(ctx))
    touched = set(chosen.touched)
    found = {
        feature_id: measured_at
        for feature_id, (_, measured_at) in grounded.items()
        if feature_id not in touched
    }
    return found, chosen.skipped


def unchecked(ctx: Context, feature_list: features.FeatureList) -> list[str] | None:
    """The passing features not verified at HEAD's committed tree (by `check`, or a
    checkout-mode `finish`) — a feature with no verifier never is; None without a HEAD."""
    if gitio.head_oid(ctx.root) is None:
        return None
    tree = head_tree(ctx.root)
    ids = passing_ids(feature_list)
    checked = {
        job.feature.id
        for job in jobs(feature_list, ids, ctx.config.verify)
        if is_checked(ctx, tree, job)
    }
    return [feature_id for feature_id in ids if feature_id not in checked]


def run_at_tree(
    ctx: Context,
    tree: str,
    work: Sequence[Job],
    workers: int,
    on_done: Callable[[Job, verify.Outcome], None],
    isolated: bool = False,
    tip: str | None = None,
) -> list[tuple[Job, verify.Outcome]]:
    """Each job's verifier at ``tree``, in temporary checkouts of it (``workers`` of them,
    `init` run once in each), in parallel; in the order of ``work``. A verifier that changes
    its checkout fails; `init` failing or changing the checkout raises `InitFailed`.
    ``isolated``: each checkout with its own `verify.isolated_environment`; ``tip``: the
    commit whose tree ``tree`` is, or that it is staged on (default HEAD: `assemble`)."""
    cfg = ctx.config
    pending = deque(work)
    results: dict[int, verify.Outcome] = {}
    order = {id(job): n for n, job in enumerate(work)}
    lock = threading.Lock()
    adding = threading.Lock()  # (`git worktree add` one at a time: it names the worktree)
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            with adding:
                checkout = verify.temporary_checkout(ctx.root, tree, tip)
                target = checkout.__enter__()
            environment = verify.environment_for(ctx.root, isolated)
            env = environment.__enter__()
            try:
                failed = verify.prepare_checkout(target, cfg.init, cfg.verify_timeout, env)
                if failed is not None:
                    raise InitFailed(failed)
                while True:
                    with lock:
                        if errors or not pending:
                            return
                        job = pending.popleft()
                    outcome = readsets.run_measured(
                        ctx.common_dir,
                        job.feature.id,
                        job.command,
                        target,
                        tree,
                        partial(
                            verify.run_in,
                            target,
                            job.command,
                            cfg.verify_timeout,
                            env,
                            cfg.junit,
                            exact=isolated,  # (re-verification: as written too)
                        ),
                    )
                    with lock:
                        results[order[id(job)]] = outcome
                        on_done(job, outcome)
            finally:
                environment.__exit__(None, None, None)
                with adding:
                    checkout.__exit__(None, None, None)
        except BaseException as exc:
            with lock:
                errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(max(1, min(workers, len(work))))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return [(job, results[n]) for n, job in enumerate(work)]


class TreeJob(NamedTuple):
    """A verifier to run at a tree of its own, after that tree's `init`."""

    tree: str
    command: str
    init: str
    timeout: float
    tip: str | None = None  # the commit judged (its person's state: `assemble`); None: HEAD


def run_each(
    ctx: Context,
    work: Sequence[TreeJob],
    workers: int,
    owners: Mapping[TreeJob, Sequence[str]] | None = None,
) -> list[verify.Outcome]:
    """Each job in a temporary checkout of its own tree (after its `init`), ``workers`` at a
    time; in the order of ``work``. Each worker makes one checkout and moves it to the next
    job's tree (`_switch`: exactly that tree, nothing else left). A job whose pass is
    recorded at its tree (in a checkout) is not run again — read for every job before any
    runs (decision record 0045) — and a pass found is recorded: the cache is by tree.
    ``owners``: the features whose verifier each job is; their reads are measured and kept
    (`readsets`), as every other run in a checkout keeps them (decision record 0079)."""
    unique = list(dict.fromkeys(work))
    key = {job: verify.cache_command(job.command, CHECKOUT) for job in unique}
    before = {job for job in unique if verify.is_cached(ctx.common_dir, job.tree, key[job])}
    found = {
        job: verify.Outcome(job.command, True, 0, 0.0, "(passed at this tree before)")
        for job in before
    }
    pending = deque(job for job in unique if job not in before)
    lock = threading.Lock()
    adding = threading.Lock()  # (`git worktree add` one at a time: it names the worktree)
    errors: list[BaseException] = []

    def worker() -> None:
        checkout = None
        try:
            while True:
                with lock:
                    if errors or not pending:
                        return
                    job = pending.popleft()
                if checkout is None:
                    with adding:
                        checkout = verify.temporary_checkout(ctx.root, job.tree, job.tip)
                        target = checkout.__enter__()
                else:
                    _switch(ctx, target, job.tree, job.tip)
                prepared = verify.prepare_checkout(target, job.init, job.timeout)
                outcome = (
                    prepared._replace(command=job.command)
                    if prepared is not None
                    else _run_owned(ctx, job, target, (owners or {}).get(job, ()))
                )
                if outcome.ok:
                    verify.record_pass(ctx.common_dir, job.tree, key[job])
                with lock:
                    found[job] = outcome
        except BaseException as exc:
            with lock:
                errors.append(exc)
        finally:
            if checkout is not None:
                with adding:
                    checkout.__exit__(None, None, None)

    count = max(1, min(workers, len(pending)))
    threads = [threading.Thread(target=worker) for _ in range(count if pending else 0)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return [found[job] for job in work]


def _run_owned(ctx: Context, job: TreeJob, target: Path, owners: Sequence[str]) -> verify.Outcome:
    """``job``'s verifier in ``target`` (a prepared checkout of its tree); with ``owners``,
    measured, and its reads kept for each of them."""
    junit = ctx.config.junit

    def run(prefix: Sequence[str]) -> verify.Outcome:
        return verify.run_in(target, job.command, job.timeout, junit=junit, prefix=prefix)

    if not owners:
        return run(())
    return readsets.run_measured(ctx.common_dir, owners, job.command, target, job.tree, run)


def _switch(ctx: Context, target: Path, tree: str, tip: str | None) -> None:
    """Move a temporary checkout to the tree a verdict on ``tree`` at ``tip`` runs on
    (`assemble.assembled`): a throwaway commit of it checked out, every file that tree does
    not hold removed (ignored ones too: `init` runs again)."""
    from shiftkit.edge import assemble

    env = verify.clean_environment()
    tree = assemble.assembled(ctx.root, tree, tip)
    holder = gitio.run(
        ["commit-tree", tree, "-m", "shiftkit: a temporary commit to verify this tree"],
        ctx.root,
        env={**verify._TEMP_IDENTITY},
        clean_env=env,
    ).stdout.strip()
    gitio.run(["checkout", "-q", "--detach", "--force", holder], target, clean_env=env)
    gitio.run(["clean", "-ffdxq"], target, clean_env=env)


# -- the demotion commit -------------------------------------------------------------------


def dirty_bookkeeping(ctx: Context) -> list[str]:
    """shiftkit's own files with uncommitted changes: a demotion commits them, so they
    must hold what HEAD holds."""
    cfg = ctx.config
    listing = gitio.out(
        ["status", "--porcelain", "--", cfg.features, cfg.progress, cfg.log.archive], ctx.root
    )
    return [line[3:] for line in listing.splitlines() if line.strip()]


def blame(
    ctx: Context,
    failing: Sequence[tuple[features.Feature, verify.Outcome]],
    tip: str | None = None,
    isolated: bool = False,
) -> dict[str, culprit.Culprit]:
    """Who broke each of ``failing`` (its verifier fails at ``tip``, default HEAD): the first
    commit since its last pass at which it fails (`culprit.find`, a bounded search;
    ``isolated``: its runs in `verify.isolated_environment`)."""
    tip = tip or gitio.head_oid(ctx.root)
    if tip is None:
        return {}
    cfg, found = ctx.config, {}
    for feature, outcome in failing:
        named = culprit.find(
            ctx.root,
            ctx.common_dir,
            feature.id,
            outcome.command,
            tip,
            cfg.init,
            cfg.verify_timeout,
            isolated,
            cfg.features,
        )
        if named is not None:
            found[feature.id] = named
    return found


DEMOTED_OUTCOME = "demoted (regression)"  # (rules.DEMOTED begins it)


def demotion_entry(
    feature_id: str, outcome: verify.Outcome, where: str, who: str, base: str
) -> str:
    """The log entry of one demotion: where it was re-verified and failed, who broke it
    (``who``: "first fails at …", or ""), and the verifier's last lines."""
    body = (
        f"re-verified {where} and failed ({outcome.summary()}): "
        f"demoted to not passing; {f'it {who}; ' if who else ''}repair it first.\n"
        + "\n".join(f"    {line}" for line in outcome.last_lines(5, 600).splitlines())
    )
    return progress.format_entry(log_time(), feature_id, DEMOTED_OUTCOME, base, body)


def earned_before(ctx: Context) -> set[str]:
    """Features a demotion entry in HEAD's log or archive names: they passed once (rule 5
    lets a demotion entry in only with its demotion)."""
    from shiftkit.core import rules

    cfg = ctx.config
    return rules.earned_before(
        gitio.read_blobs(ctx.root, [f"HEAD:{name}" for name in (cfg.progress, cfg.log.archive)])
    )


def repairable(ctx: Context, feature_list: features.FeatureList) -> list[Job]:
    """The demoted features of ``feature_list`` earned before: a pass of their verifier at a
    verified tree re-marks them (decision record 0093)."""
    earned = earned_before(ctx)
    ids = [f.id for f in feature_list.features if not f.passes and f.id in earned]
    return jobs(feature_list, ids, ctx.config.verify)


def passing_again(ctx: Context, feature_list: features.FeatureList) -> list[Job]:
    """The demoted features earned before (`repairable`) whose verifiers pass at HEAD's tree,
    in a checkout of it; each pass recorded. An `init` that fails re-marks nothing."""
    candidates = repairable(ctx, feature_list)
    if not candidates:
        return []
    tree = head_tree(ctx.root)
    try:
        ran = run_at_tree(ctx, tree, candidates, 1, lambda job, outcome: None)
    except InitFailed:
        return []
    for job, outcome in ran:
        if outcome.ok:
            verify.record_pass(ctx.common_dir, tree, verify.cache_command(job.command, CHECKOUT))
    return [job for job, outcome in ran if outcome.ok]


def remark_repairs(ctx: Context, where: str) -> tuple[list[str], str | None]:
    """Re-mark, in one commit of the list and the log, every demoted feature earned before
    that passes again at HEAD (a merge, a fast-forward may have repaired several: one step,
    never one session per feature — decision record 0093). (the ids, the commit) or
    ([], None) when none passes again."""
    from shiftkit.edge.project import read_features_at

    feature_list = read_features_at(ctx.root, "HEAD", ctx.config.features)
    if feature_list is None:
        return [], None
    again = passing_again(ctx, feature_list)
    if not again:
        return [], None
    commit = demote(ctx, [], where, repaired=again)
    return [job.feature.id for job in again], commit


def remark_entry(feature_id: str, tree: str, head: str, base: str) -> str:
    """The log entry of one re-mark: where its verifier passed again."""
    from shiftkit.core import rules

    body = (
        f"demoted by a regression after it had passed; its verifier passes again at "
        f"{short(head)} (tree {short(tree)}), so it is re-marked passing there"
    )
    return progress.format_entry(
        log_time(), feature_id, f"{rules.REMARKED} passing (repaired)", base, body
    )


def demote(
    ctx: Context,
    failing: Sequence[tuple[features.Feature, verify.Outcome]],
    where: str,
    blamed: Mapping[str, culprit.Culprit] | None = None,
    repaired: Sequence[Job] = (),
) -> str:
    """Demote ``failing`` to not passing and re-mark ``repaired`` (demoted features earned
    before whose verifiers passed at HEAD's tree) in one commit of the list and the log
    alone (never anything else that is dirty): each demotion with a log entry naming the
    commit that broke it (``blamed``, else `blame` asks now), each re-mark with one naming
    the commit it passes at. ``where``: "at session start" or "at HEAD (`shiftkit check`)".
    Refused, writing nothing, when the list or the log has uncommitted changes."""
    dirty = dirty_bookkeeping(ctx)
    ids = [feature.id for feature, _ in failing]
    again = [job.feature.id for job in repaired]
    if dirty:
        what = (
            f"{', '.join(ids)} failed {where} and must be demoted"
            if ids
            else f"{', '.join(again)} pass again {where} and are to be re-marked"
        )
        raise Refused(
            f"{what}, but {', '.join(dirty)} has uncommitted changes, and the "
            f"{'demotion' if ids else 're-mark'} commits it: commit or restore it "
            f"(`git restore -- {' '.join(dirty)}`), then run `shiftkit check`"
        )
    from shiftkit.edge.project import read_features

    if blamed is None:
        blamed = blame(ctx, failing)
    feature_list = read_features(ctx.project)
    head = gitio.head_oid(ctx.root) or ""
    base = short(head)
    checked_tree = head_tree(ctx.root)
    log_text = read_optional(ctx.project.progress_path)
    updated = feature_list
    named = []
    for feature, outcome in failing:
        updated = updated.replace_feature(feature._replace(passes=False))
        who = blamed.get(feature.id)
        if who is not None:
            named.append(f"{feature.id} {who.text()}.")
        log_text = progress.append(
            log_text, demotion_entry(feature.id, outcome, where, who.text() if who else "", base)
        )
    for job in repaired:
        again_passing = features.require(updated, job.feature.id, ctx.config.features)
        updated = updated.replace_feature(again_passing._replace(passes=True))
        log_text = progress.append(log_text, remark_entry(job.feature.id, checked_tree, head, base))
    write_features(ctx, updated)
    write_log(ctx, log_text, features.blocked_ids(updated))
    plain = where.split(" (")[0]
    subject = _verdict_subject(ids, again, plain)
    body = "\n".join(named)
    trailer = ""
    if again:
        tree = _tree_to_commit(ctx)
        for job in repaired:  # (the hooks' rule 4 evidence: the tree differs in bookkeeping)
            for mode in (ctx.config.verify_in, CHECKOUT):
                verify.record_pass(ctx.common_dir, tree, verify.cache_command(job.command, mode))
        body += (
            f"{chr(10) if body else ''}Re-marks {', '.join(again)} passing: demoted before, "
            f"each verifier passed again at {base} (tree {short(checked_tree)}), the commit "
            f"that repaired {'it' if len(again) == 1 else 'them'} or a later one."
        )
        trailer = f"\n\nShiftkit-Verified: {tree}"
    return commit_bookkeeping(ctx, subject + ("\n\n" + body if body else "") + trailer + "\n")


def _verdict_subject(ids: Sequence[str], again: Sequence[str], plain: str) -> str:
    parts = []
    if len(ids) == 1 and not again:
        return _within(f"{ids[0]}: demoted, its verifier fails {plain}", ids, again)
    if ids:
        parts.append(f"Demote {', '.join(ids)}: verifiers fail {plain}")
    if again:
        verb = "Re-mark" if not ids else "re-mark"
        parts.append(f"{verb} {', '.join(again)}: repaired, passing {plain}")
    return _within("; ".join(parts), ids, again)


def _within(subject: str, ids: Sequence[str], again: Sequence[str]) -> str:
    if len(subject) <= 72:
        return subject
    if not again:
        return f"Demote {len(ids)} features: verifiers fail"
    if not ids:
        return f"Re-mark {len(again)} repaired features passing"
    return f"Demote {len(ids)} features, re-mark {len(again)} repaired ones"


def _tree_to_commit(ctx: Context) -> str:
    """The tree `commit_bookkeeping` will commit: HEAD's with shiftkit's files as the work
    tree holds them (through a temporary index: the real one is untouched)."""
    import os
    import tempfile

    from shiftkit.core.ledger import LEDGER_FILE

    cfg = ctx.config
    ledger.fold(ctx)  # (what `commit_bookkeeping` folds first: then nothing is left to)
    fd, index = tempfile.mkstemp(prefix="shiftkit-index-", dir=ctx.git_dir)
    os.close(fd)
    os.unlink(index)
    env = {"GIT_INDEX_FILE": index}
    try:
        gitio.run(["read-tree", "HEAD"], ctx.root, env=env)
        paths = [cfg.features, cfg.progress, cfg.log.archive, LEDGER_FILE]
        present = [p for p in paths if (ctx.root / p).exists()]
        gitio.run(["update-index", "--add", "--remove", "--", *present], ctx.root, env=env)
        return gitio.out(["write-tree"], ctx.root, env=env).strip()
    finally:
        if os.path.exists(index):
            os.unlink(index)


# -- what `status`, `next`, `start` and `claim` read: the committed list, and whether it is true


class Listing(NamedTuple):
    features: features.FeatureList  # HEAD's (the work tree's before there is one)
    edited: str | None  # "(uncommitted edit of features.json)" when the work tree's differs
    checked: bool  # every passing feature verified at HEAD's tree


def committed_listing(ctx: Context) -> Listing:
    """The feature list the rules stand on — HEAD's — marking a work-tree edit of it, and
    (only when all are marked passing, so the common case reads nothing more) whether a
    check at HEAD's tree saw each passing feature pass."""
    from shiftkit.edge.project import read_features, read_features_at

    name = ctx.config.features
    committed = read_features_at(ctx.root, "HEAD", name)
    if committed is None:
        return Listing(read_features(ctx.project), None, False)
    edited = None
    try:
        working: str | None = files.read_text(ctx.project.features_path, "surrogateescape")
    except OSError:  # (missing, or not a regular file: not what HEAD holds either way)
        working = None
    if committed.text is None or working != committed.text:
        edited = f"(uncommitted edit of {name})"
        try:
            read_features(ctx.project)
        except ShiftkitError as exc:  # (said, not raised: HEAD's list is what counts)
            edited = f"(uncommitted edit of {name}, invalid: {exc.message})"
    checked = features.all_pass(committed) and unchecked(ctx, committed) == []
    return Listing(committed, edited, checked)
