"""The publish gate (decision records 0056, 0075): a push re-verifies first, at the tip it
publishes, the passing features its commits can break — whatever their messages say: no
trailer makes a commit trusted, only a pass recorded at the tip's own tree. A failure is
demoted in a commit on top of that tip, which `sync` publishes with the same push and a plain
`git push` asks to be pushed again (a pre-push hook cannot change what is pushed), so the
remote's branch never takes a tip whose list says a feature passes that fails there. `sync`
and the pre-push hook call it."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import NamedTuple

from shiftkit.core import features
from shiftkit.core.errors import Refused
from shiftkit.edge import culprit, gitio, regression, revisions, state, verify
from shiftkit.edge.context import Context, bookkeeping, short

Say = Callable[[str], None]


class Verdict(NamedTuple):
    """What the gate found at ``tip``: the affected passing features that fail there, and
    who broke each; ``passed``: the jobs that passed (verified now or before)."""

    tip: str
    tree: str
    failing: list[tuple[features.Feature, verify.Outcome]]
    blamed: dict[str, culprit.Culprit]
    passed: list[regression.Job]

    def text(self) -> str:
        """ "F001 fails at 1234567 (it first fails at …)", one clause per feature."""
        return "; ".join(
            f"{feature.id} fails at {short(self.tip)} ({outcome.summary()}"
            + (f"; it {self.blamed[feature.id].text()}" if feature.id in self.blamed else "")
            + ")"
            for feature, outcome in self.failing
        )


def changed_files(ctx: Context, commits: Sequence[revisions.Commit]) -> dict[str, set[str]]:
    """Each commit's changed paths against each of its parents (all of a root's), in one
    `git diff-tree --stdin`: a merge that keeps its own side of a conflict changes nothing
    against its first parent but undoes the remote's work against the other (found by an
    agent trial)."""
    if not commits:
        return {}
    lines = "".join(
        "".join(f"{c.oid} {parent}\n" for parent in c.parents) if c.parents else f"{c.oid}\n"
        for c in commits
    )
    listing = gitio.out(
        ["diff-tree", "--stdin", "--root", "-r", "--no-renames", "--name-only", "-z"],
        ctx.root,
        input=lines,
    )
    wanted = {c.oid for c in commits}
    found: dict[str, set[str]] = {oid: set() for oid in wanted}
    current: set[str] | None = None
    for item in listing.split("\0"):
        item = item.strip("\n")
        if item in wanted:
            current = found[item]
        elif item and current is not None:
            current.add(item)
    return found


def changing(ctx: Context, outgoing: Sequence[revisions.Commit]) -> list[revisions.Commit]:
    """The commits of ``outgoing`` that change more than shiftkit's own files (a demotion or
    a usage record changes no verifier's subject). Every such commit is judged, made under a
    claim or not: a message is text the agent writes (decision record 0075)."""
    ours = bookkeeping(ctx)
    changed = changed_files(ctx, outgoing)
    return [c for c in outgoing if not changed[c.oid] <= ours]


def affected(ctx: Context, work: Sequence[regression.Job], tree: str) -> list[regression.Job]:
    """The jobs whose feature a move to ``tree`` can break: each judged by its read set
    against the change since the tree it was measured at, an unknown set affected by every
    change (`readsets.affected_at`, decision record 0053)."""
    from shiftkit.edge import readsets

    commands = {job.feature.id: job.command for job in work}
    touched = set(readsets.affected_at(ctx.root, ctx.common_dir, commands, tree, bookkeeping(ctx)))
    return [job for job in work if job.feature.id in touched]


def affected_by(
    ctx: Context, work: Sequence[regression.Job], changed: Sequence[str]
) -> list[regression.Job]:
    """The jobs of ``work`` whose feature the change of ``changed`` (paths) can break: by
    its read set where one is known here; with none (a fresh clone, CI), those whose verify
    command names a changed path or a folder of one (a test file, its folder), or, when
    none does, every one — as soon as the change is more than shiftkit's own files."""
    from shiftkit.core.affected import Change, touches
    from shiftkit.edge import readsets

    paths = set(changed) - bookkeeping(ctx)
    if not paths:
        return []
    sets = readsets.load(ctx.common_dir, {job.feature.id: job.command for job in work})
    change = Change(frozenset(paths))
    unknown = [job for job in work if sets.get(job.feature.id) is None]
    named = [job for job in unknown if _names_any(job.command, paths)]
    guessed = {id(job) for job in (named or unknown)}
    return [
        job
        for job in work
        if id(job) in guessed
        or (sets.get(job.feature.id) is not None and touches(sets[job.feature.id], change))
    ]


def _names_any(command: str, paths: set[str]) -> bool:
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    for word in words:
        word = word.removeprefix("./").rstrip("/").split("::", 1)[0]
        if word and any(path == word or path.startswith(word + "/") for path in paths):
            return True
    return False


def judge(ctx: Context, tip: str, held: Sequence[str], workers: int) -> Verdict | None:
    """The gate on publishing ``tip`` to a remote that holds ``held`` (commits): None when no
    commit it would publish changes more than bookkeeping, else the affected passing features
    verified at ``tip``'s tree, in parallel (a checkout pass recorded there is not run again),
    and who broke each that fails. Raises `Refused` when `init` fails (nothing verified)."""
    from shiftkit.edge.project import read_features_at

    outgoing = revisions.read_commits(ctx.root, [tip, "--not", *held] if held else [tip])
    if not changing(ctx, outgoing):
        return None
    cfg = ctx.config
    feature_list = read_features_at(ctx.root, tip, cfg.features)
    if feature_list is None:
        return None
    tree = gitio.out(["rev-parse", f"{tip}^{{tree}}"], ctx.root).strip()
    work = regression.jobs(feature_list, regression.passing_ids(feature_list), cfg.verify)
    work = affected(ctx, work, tree)
    done = [job for job in work if regression.is_checked(ctx, tree, job)]
    todo = [job for job in work if not regression.is_checked(ctx, tree, job)]
    if not todo:
        return Verdict(tip, tree, [], {}, done)
    try:
        results = regression.run_at_tree(ctx, tree, todo, workers, lambda job, outcome: None)
    except regression.InitFailed as failed:
        raise Refused(
            f"the passing features could not be re-verified before publishing: "
            f"{failed.outcome.output.splitlines()[0]}; fix init, then push again"
        ) from None
    mode = regression.CHECKOUT
    for job, outcome in results:
        if outcome.ok:
            verify.record_pass(ctx.common_dir, tree, verify.cache_command(job.command, mode))
    state.stamp_verified(ctx.common_dir, [j.feature.id for j, o in results if o.ok])
    failing = [(job.feature, outcome) for job, outcome in results if not outcome.ok]
    blamed = regression.blame(ctx, failing, tip) if failing else {}
    passed = done + [job for job, outcome in results if outcome.ok]
    return Verdict(tip, tree, failing, blamed, passed)


def demote(ctx: Context, verdict: Verdict, where: str) -> str:
    """Demote what failed in one commit on top of HEAD (``verdict.tip``); the passes at the
    tip hold at the demotion's tree too, which differs from it only in the list and the log
    (so the next push's gate finds them and runs nothing). Returns the demotion commit."""
    demoted = regression.demote(ctx, verdict.failing, where, verdict.blamed)
    state.add_demoted(ctx.git_dir, [feature.id for feature, _ in verdict.failing])
    tree = regression.head_tree(ctx.root)
    for job in verdict.passed:
        command = verify.cache_command(job.command, regression.CHECKOUT)
        verify.record_pass(ctx.common_dir, tree, command)
    return demoted


def workers() -> int:
    return os.cpu_count() or 1


# -- the two places that publish ------------------------------------------------------------


def gate_outgoing(ctx: Context, name: str, tracking: str, say: Say, jobs: int | None) -> None:
    """`sync`'s step before it pushes: HEAD judged against the remote's branch as just
    fetched (``tracking``); what fails is demoted at HEAD, and the push publishes it."""
    head = gitio.head_oid(ctx.root)
    if head is None:
        return
    there = gitio.refs(ctx.root, tracking).get(tracking)
    verdict = judge(ctx, head, [there] if there else [], jobs or workers())
    if verdict is None or not verdict.failing:
        return
    demoted = demote(ctx, verdict, "before publishing (`shiftkit sync`)")
    ids = ", ".join(feature.id for feature, _ in verdict.failing)
    say(f"{verdict.text()}: demoted {ids} in {short(demoted)}, published with this push")


class Update(NamedTuple):
    """One branch a push moves: the local ref and commit, the remote's ref."""

    local_ref: str
    local: str
    remote_ref: str


def gate_push(ctx: Context, updates: Sequence[Update], held: Sequence[str]) -> str | None:
    """The pre-push hook's gate: None when every branch pushed may go, else the one line of
    its refusal. A failure at the tip of the branch checked out here is demoted in a commit
    on top of it (the list and the log alone: the work tree may be dirty), to push again."""
    for update in updates:
        verdict = judge(ctx, update.local, held, workers())
        if verdict is None or not verdict.failing:
            continue
        ids = ", ".join(feature.id for feature, _ in verdict.failing)
        branch = gitio.branch(ctx.root)
        here = branch is not None and update.local_ref in (f"refs/heads/{branch}", "HEAD")
        if not here or gitio.head_oid(ctx.root) != update.local:
            return (
                f"push refused: {verdict.text()}; check out {update.local_ref} and run "
                f"`shiftkit check` to commit the demotion, then push again"
            )
        try:
            demoted = demote(ctx, verdict, "before publishing (pre-push)")
        except Refused as refused:
            return f"push refused: {verdict.text()}, and {_why_not(refused.message)}"
        return (
            f"push refused: {verdict.text()}; demoted {ids} in {short(demoted)} on top of "
            f"{branch}: push again to publish it with them"
        )
    return None


def _why_not(message: str) -> str:
    """A demotion's refusal, as the end of the gate's line."""
    _, _, rest = message.partition(" and must be demoted, but ")
    return f"the demotion cannot be committed: {rest}" if rest else message
