"""`shiftkit check`: every passing feature's verifier at HEAD's committed tree, in parallel
temporary checkouts; failures demoted in one commit. What makes "all pass" a checked
statement (decision 0035)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, NamedTuple

from shiftkit.commands import outgoing
from shiftkit.core import features
from shiftkit.core.affected import Skipped
from shiftkit.core.errors import BadInput, Refused
from shiftkit.edge import culprit, gitio, overlay, regression, state, verify
from shiftkit.edge.context import Context, short
from shiftkit.edge.project import read_features_at

Say = Callable[[str], None]


def _require_checkable(ctx: Context, demote: bool) -> None:
    if gitio.head_oid(ctx.root) is None:
        raise BadInput("this branch has no commit yet: there is nothing to check")
    if (ctx.common_dir / "shallow").exists():
        raise BadInput(
            "the clone is shallow: fetch the whole history (`git fetch --unshallow`; in CI, "
            "fetch-depth: 0), then run `shiftkit check`"
        )
    if demote and gitio.branch(ctx.root) is None:
        raise BadInput(
            "HEAD is detached, and `check` commits its demotions to a branch: check out a "
            "branch, or run `shiftkit check --no-demote` to verify without recording"
        )


class Report(NamedTuple):
    head: str  # after the demotion commit, if one was made
    tree: str  # the tree checked: HEAD's before any demotion
    features: int
    passing: int
    ran: int
    cached: int
    passed: list[str]
    failed: list[tuple[features.Feature, verify.Outcome]]
    unverifiable: list[str]  # passing, with no verify command to run
    demoted_in: str | None
    workers: int
    blamed: dict[str, culprit.Culprit]  # who broke each failing feature (`culprit.find`)
    since: str | None = None  # --since: the commit the change is measured from
    affected: tuple[str, ...] = ()  # the features that change can break: verified first
    restored: tuple[tuple[str, str], ...] = ()  # (feature id, its overlay's note): 0081
    remarked: tuple[str, ...] = ()  # demoted features passing again: re-marked (0093)
    # passing features not run: passed at an earlier tree, and nothing they ran or read has
    # changed since (the gate's selection; `check --all` runs them), by feature: that tree
    carried: tuple[tuple[str, str], ...] = ()
    skipped: Skipped = Skipped()

    @property
    def all_pass(self) -> bool:
        return not self.failed and not self.unverifiable and self.passing == self.features

    def as_json(self) -> dict[str, Any]:
        return {
            "head": self.head,
            "tree": self.tree,
            "features": self.features,
            "passing": self.passing,
            "ran": self.ran,
            "cached": self.cached,
            "passed": self.passed,
            "failed": [
                {
                    "id": f.id,
                    "summary": o.summary(),
                    "tail": o.last_lines(5, 600),
                    **self._blame_json(f.id),
                }
                for f, o in self.failed
            ],
            "unverifiable": self.unverifiable,
            "demoted_in": self.demoted_in,
            "workers": self.workers,
            "all_pass": self.all_pass,
            "since": self.since,
            "affected": list(self.affected),
            "oracle_restored": dict(self.restored),
            "remarked": list(self.remarked),
            "carried": dict(self.carried),
        }

    def _blame_json(self, feature_id: str) -> dict[str, Any]:
        who = self.blamed.get(feature_id)
        if who is None:
            return {}
        return {"broken_by": who.commit, "last_passed": who.since, "exact": who.exact}


def verify_head(
    ctx: Context,
    workers: int | None,
    demote: bool,
    progress: Callable[[int, int, regression.Job, verify.Outcome], None] | None = None,
    isolated: bool = False,
    since: str | None = None,
    carry: bool = False,
) -> Report:
    """Verify every passing feature at HEAD's tree (a pass recorded there before is not run
    again), and demote what fails in one commit unless ``demote`` is False. ``isolated``:
    every verifier run in `verify.isolated_environment`, none taken from the cache.
    ``since``: the features the change since that commit can break are verified first.
    ``carry``: a pass at an earlier tree that the change since touches nothing of (the
    gates' selection) is not run again; without it, such features run after the rest."""
    _require_checkable(ctx, demote)
    cfg = ctx.config
    feature_list = read_features_at(ctx.root, "HEAD", cfg.features)
    if feature_list is None:
        raise BadInput(f"{cfg.features} is not committed at HEAD: there is nothing to check")
    head = gitio.head_oid(ctx.root) or ""
    tree = regression.head_tree(ctx.root)
    passing = regression.passing_ids(feature_list)
    work = regression.jobs(feature_list, passing, cfg.verify)
    unverifiable = sorted(set(passing) - {job.feature.id for job in work})
    # (an isolated check trusts no pass recorded on this machine: it runs every verifier)
    checked = [not isolated and regression.is_checked(ctx, tree, job) for job in work]
    cached = [job for job, done in zip(work, checked, strict=True) if done]
    todo = [job for job, done in zip(work, checked, strict=True) if not done]
    since_oid, first = _affected_first(ctx, since, todo)
    todo = [*first, *(job for job in todo if job not in first)]
    # (isolated: CI's oracle, which trusts no selection either)
    carried, skipped = regression.untouched(ctx, tree, todo) if not isolated else ({}, None)
    if carry:
        todo = [job for job in todo if job.feature.id not in carried]
    else:  # (what the change can break first: the quick answer)
        todo = sorted(todo, key=lambda job: job.feature.id in carried)
        carried, skipped = {}, None
    # (a demoted feature earned before that passes here is repaired: re-marked, decision 0093)
    repairable = regression.repairable(ctx, feature_list) if demote else []
    todo += repairable
    count = workers or os.cpu_count() or 1
    done = [0]

    def finished(job: regression.Job, outcome: verify.Outcome) -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], len(todo), job, outcome)

    # (an isolated check re-verifies: each verifier with its feature's oracle as defined)
    restored = overlays(ctx, head, tree, todo) if isolated else {}
    trees = {job.feature.id: made.tree for job, made in restored.items()}
    try:
        results = _run_at_trees(ctx, tree, trees, todo, count, finished, isolated)
    except regression.InitFailed as failed:
        raise Refused(
            f"nothing was verified: {failed.outcome.output.splitlines()[0]}; fix init, "
            f"then run `shiftkit check` again"
        ) from None
    key = regression.CHECKOUT
    for n, (job, outcome) in enumerate(results):
        at = trees.get(job.feature.id, tree)  # (a pass with an overlay is its tree's, not HEAD's)
        if outcome.ok:
            verify.record_pass(ctx.common_dir, at, verify.cache_command(job.command, key))
        if job in restored:
            results[n] = (job, outcome._replace(note=restored[job].note()))
    repaired = [job for job, outcome in results if job in repairable and outcome.ok]
    results = [(job, outcome) for job, outcome in results if job not in repairable]
    passed = [job.feature.id for job in cached] + [j.feature.id for j, o in results if o.ok]
    state.stamp_verified(ctx.common_dir, passed)
    failing = [(job.feature, outcome) for job, outcome in results if not outcome.ok]
    demoted_in: str | None = None
    blamed = regression.blame(ctx, failing, head, isolated) if failing else {}
    if (failing or repaired) and demote:
        demoted_in = regression.demote(ctx, failing, "at HEAD (`shiftkit check`)", blamed, repaired)
        state.add_demoted(ctx.git_dir, [feature.id for feature, _ in failing])
        state.drop_demoted(ctx.git_dir, [job.feature.id for job in repaired])
    return Report(
        head=demoted_in or head,
        tree=tree,
        features=len(feature_list),
        passing=len(passing),
        ran=len(todo) - len(repairable),
        cached=len(cached),
        passed=passed,
        failed=failing,
        unverifiable=unverifiable,
        demoted_in=demoted_in,
        workers=count,
        blamed=blamed,
        since=since_oid,
        affected=tuple(job.feature.id for job in first),
        restored=tuple((job.feature.id, made.note()) for job, made in restored.items()),
        remarked=tuple(job.feature.id for job in repaired),
        carried=tuple(carried.items()),
        skipped=skipped or Skipped(),
    )


def overlays(
    ctx: Context, head: str, tree: str, todo: list[regression.Job]
) -> dict[regression.Job, overlay.Overlay]:
    """The jobs of ``todo`` whose oracle at HEAD is not as defined, with the tree that has it
    (decision record 0081)."""
    found = overlay.overlays(
        ctx.root, head, tree, [(job.feature, job.command) for job in todo], ctx.config
    )
    return {job: found[job.feature.id] for job in todo if job.feature.id in found}


def _run_at_trees(
    ctx: Context,
    tree: str,
    trees: dict[str, str],
    todo: list[regression.Job],
    count: int,
    finished: Callable[[regression.Job, verify.Outcome], None],
    isolated: bool,
) -> list[tuple[regression.Job, verify.Outcome]]:
    """`regression.run_at_tree` for each tree the jobs run at (HEAD's, or an overlay's), in
    the order of ``todo``."""
    groups: dict[str, list[regression.Job]] = {}
    for job in todo:
        groups.setdefault(trees.get(job.feature.id, tree), []).append(job)
    done: dict[int, verify.Outcome] = {}
    for at, group in groups.items():
        for job, outcome in regression.run_at_tree(ctx, at, group, count, finished, isolated):
            done[id(job)] = outcome
    return [(job, done[id(job)]) for job in todo]


def _affected_first(
    ctx: Context, since: str | None, todo: list[regression.Job]
) -> tuple[str | None, list[regression.Job]]:
    """(``since`` resolved, the jobs of ``todo`` the change since it to HEAD can break — run
    first: CI's quick answer to "what did this push break")."""
    if since is None:
        return None, []
    proc = gitio.run(["rev-parse", "-q", "--verify", f"{since}^{{commit}}"], ctx.root, check=False)
    oid = proc.stdout.strip()
    if proc.returncode != 0 or not oid or since.startswith("-"):
        raise BadInput(f"--since {since!r}: not a commit in this repository")
    changed = gitio.out(["diff", "--name-only", "-z", oid, "HEAD", "--"], ctx.root).split("\0")
    return oid, outgoing.affected_by(ctx, todo, [path for path in changed if path])


def check(
    ctx: Context,
    workers: int | None,
    demote: bool,
    as_json: bool,
    live: bool,
    say: Say,
    isolated: bool = False,
    since: str | None = None,
    carry: bool = False,
) -> int:
    """`shiftkit check`: 0 when every passing feature passes at HEAD, else 1."""

    def progress(n: int, of: int, job: regression.Job, outcome: verify.Outcome) -> None:
        if live:
            say(f"[{n}/{of}] {job.feature.id} {outcome.summary()} ({outcome.seconds:.1f}s)")

    report = verify_head(ctx, workers, demote, progress, isolated, since, carry)
    if as_json:
        import json

        say(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
    else:
        say(_text(report))
    return 1 if report.failed or report.unverifiable else 0


def _text(report: Report) -> str:
    lines = [
        f"checked {report.passing} passing features at HEAD's tree {short(report.tree)}: "
        f"{report.ran} verified now ({report.ran - len(report.failed)} passed, "
        f"{len(report.failed)} failed), {report.cached} already verified at this tree"
    ]
    if report.carried:
        count = len(report.carried)
        lines.append(
            f"not run: {count} that passed at an earlier tree{report.skipped.clause()} — "
            f"`shiftkit check --all` runs {'it' if count == 1 else 'them'} too"
        )
    if report.since is not None:
        named = ", ".join(report.affected) or "none"
        lines.append(
            f"affected by the change since {short(report.since)} (verified first): {named}"
        )
    for feature_id, note in report.restored:
        lines.append(
            f"{feature_id}: its oracle at HEAD is not as defined ({note}); verified with the "
            f"oracle as defined — a person should look (`shiftkit audit` names the commit)"
        )
    for feature, outcome in report.failed:
        who = report.blamed.get(feature.id)
        said = f"; it {who.text()}" if who else ""
        lines.append(f"FAILED {feature.id}: {outcome.summary()}{said}; last lines:")
        lines += [f"    {line}" for line in (outcome.last_lines() or "(no output)").splitlines()]
    if report.unverifiable:
        lines.append(f"cannot be checked (no verify command): {', '.join(report.unverifiable)}")
    if report.remarked:
        ids = ", ".join(report.remarked)
        lines.append(
            f"re-marked {ids} passing in {short(report.head)}: demoted before, "
            f"{'its verifier passes' if len(report.remarked) == 1 else 'their verifiers pass'}"
            f" again at HEAD"
        )
    if report.demoted_in and report.failed:
        ids = ", ".join(f.id for f, _ in report.failed)
        lines.append(f"demoted {ids} in {short(report.demoted_in)}: repair first")
    elif report.failed:
        lines.append("not demoted (--no-demote)")
    carried = f" ({len(report.carried)} carried from an earlier tree)" if report.carried else ""
    if not report.failed and not report.unverifiable:
        if report.all_pass and not carried:
            lines.append(f"all {report.features} features pass (checked at HEAD) — nothing to do")
        else:
            lines.append(f"all {report.passing} passing features pass at HEAD{carried}")
    return "\n".join(lines)
