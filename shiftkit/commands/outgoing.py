"""The publish gate (decision records 0056, 0075): a push re-verifies first, at the tip it
publishes, the passing features its commits can break — whatever their messages say: no
trailer makes a commit trusted, only a pass recorded at the tip's own tree. A failure is
demoted in a commit on top of that tip, which `sync` publishes with the same push and a plain
`git push` asks to be pushed again (a pre-push hook cannot change what is pushed), so the
remote's branch never takes a tip whose list says a feature passes that fails there. `sync`
and the pre-push hook call it."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from shiftkit.core import affected as affected_sets
from shiftkit.core import features
from shiftkit.core.errors import Refused
from shiftkit.edge import culprit, fold, gitio, parking, regression, revisions, state, verify
from shiftkit.edge.context import Context, bookkeeping, short

Say = Callable[[str], None]


class Transient(NamedTuple):
    """A feature that fails at some unpublished commits before the tip whose lists mark it
    passing, and not at the tip: a later commit of the push repaired the break
    (``repaired``: it passes at the tip) or demoted it on top (`check`, `start`)."""

    feature: features.Feature
    commits: frozenset[str]
    outcome: verify.Outcome  # (one of those runs)
    repaired: bool


class Verdict(NamedTuple):
    """What the gate found at ``tip``: the affected passing features that fail there, and
    who broke each; ``passed``: the jobs that passed (verified now or before);
    ``transient``: the features that fail at unpublished commits before the tip only."""

    tip: str
    tree: str
    failing: list[tuple[features.Feature, verify.Outcome]]
    blamed: dict[str, culprit.Culprit]
    passed: list[regression.Job]
    transient: tuple[Transient, ...] = ()
    skipped: affected_sets.Skipped = affected_sets.Skipped()  # not re-run, by why

    @property
    def broken(self) -> bool:
        return bool(self.failing or self.transient)

    def text(self) -> str:
        """ "F001 fails at 1234567 (it first fails at …)", one clause per feature."""
        return "; ".join(
            [
                f"{feature.id} fails at {short(self.tip)} ({outcome.summary()}"
                + (f"; it {self.blamed[feature.id].text()}" if feature.id in self.blamed else "")
                + ")"
                for feature, outcome in self.failing
            ]
            + [
                f"{t.feature.id} fails at {', '.join(sorted(short(c) for c in t.commits))} "
                f"({t.outcome.summary()}), where the list marks it passing"
                + (f"; it passes again at {short(self.tip)}" if t.repaired else "")
                for t in self.transient
            ]
        )

    def ids(self) -> list[str]:
        return [f.id for f, _ in self.failing] + [t.feature.id for t in self.transient]


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


def affected(
    ctx: Context, work: Sequence[regression.Job], tree: str
) -> tuple[list[regression.Job], affected_sets.Skipped]:
    """The jobs whose feature a move to ``tree`` can break: each judged by its read set
    against the change since the tree it was measured at, an unknown set affected by every
    change (`readsets.selection_at`, decision record 0053); and why the rest are not."""
    from shiftkit.edge import readsets

    commands = {job.feature.id: job.command for job in work}
    chosen = readsets.selection_at(ctx.root, ctx.common_dir, commands, tree, bookkeeping(ctx))
    touched = set(chosen.touched)
    return [job for job in work if job.feature.id in touched], chosen.skipped


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
    every = regression.jobs(feature_list, regression.passing_ids(feature_list), cfg.verify)
    work, skipped = affected(ctx, every, tree)
    done = [job for job in work if regression.is_checked(ctx, tree, job)]
    todo = [job for job in work if not regression.is_checked(ctx, tree, job)]
    results = _run(ctx, tree, todo, workers, tip) if todo else []
    failing = [(job.feature, outcome) for job, outcome in results if not outcome.ok]
    blamed = regression.blame(ctx, failing, tip) if failing else {}
    passed = done + [job for job, outcome in results if outcome.ok]
    failed = {feature.id for feature, _ in failing}
    before = [c for c in changing(ctx, outgoing) if c.oid != tip]
    listed = regression.jobs(feature_list, list(feature_list.table.ids), cfg.verify)
    rest = [job for job in listed if job.feature.id not in failed]
    passing = {job.feature.id for job in every}
    transient = _between(ctx, before, rest, passing, workers) if before and rest else ()
    return Verdict(tip, tree, failing, blamed, passed, transient, skipped)


def _run(
    ctx: Context, tree: str, todo: Sequence[regression.Job], workers: int, tip: str
) -> list[tuple[regression.Job, verify.Outcome]]:
    """``todo`` verified at ``tree`` (``tip``'s) in clean checkouts, each pass recorded
    there."""
    try:
        results = regression.run_at_tree(
            ctx, tree, todo, workers, lambda job, outcome: None, tip=tip
        )
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
    return results


def _between(
    ctx: Context,
    before: Sequence[revisions.Commit],
    jobs: Sequence[regression.Job],
    passing: set[str],
    workers: int,
) -> tuple[Transient, ...]:
    """The features of ``jobs`` (not failing at the tip; ``passing`` there) that fail at an
    unpublished commit before it where its list marks them passing: at each such commit,
    those whose read set
    its tree touches (`readsets.affected_at`, against the tree each set was measured at,
    where it passed; unknown sets: every one) are verified there (cached by tree). A commit
    the rest pass at holds what they read where they passed (decision record 0083)."""
    from shiftkit.edge import readsets
    from shiftkit.edge.project import read_features_at

    cfg = ctx.config
    by_id = {job.feature.id: job for job in jobs}
    wanted: list[tuple[str, regression.Job]] = []
    for commit in before:
        listed = read_features_at(ctx.root, commit.oid, cfg.features)
        if listed is None:
            continue
        marked = [i for i in regression.passing_ids(listed) if i in by_id]
        commands = {i: by_id[i].command for i in marked}
        touched = readsets.affected_at(
            ctx.root, ctx.common_dir, commands, commit.tree, bookkeeping(ctx)
        )
        wanted += [(commit.oid, by_id[i]) for i in touched]
    if not wanted:
        return ()
    trees = {c.oid: c.tree for c in before}
    runs = [
        regression.TreeJob(trees[oid], job.command, cfg.init, cfg.verify_timeout, oid)
        for oid, job in wanted
    ]
    outcomes = regression.run_each(ctx, runs, workers)
    failed: dict[str, tuple[set[str], verify.Outcome]] = {}
    for (oid, job), outcome in zip(wanted, outcomes, strict=True):
        if not outcome.ok:
            failed.setdefault(job.feature.id, (set(), outcome))[0].add(oid)
    return tuple(
        Transient(by_id[i].feature, frozenset(commits), outcome, i in passing)
        for i, (commits, outcome) in failed.items()
    )


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


class Published(NamedTuple):
    """How a failure was demoted: in the commits that broke it (``folded``; ``told``, one
    clause per feature) or in one commit on top; ``head``: the branch's new tip."""

    head: str
    folded: fold.Folded | None
    why_on_top: str  # (with no fold: why not, "" when nothing was tried)
    told: str = ""

    def said(self, verdict: Verdict) -> str:
        """ "F001 fails at …: demoted F001 in 1234567 …"."""
        ids = ", ".join(feature.id for feature, _ in verdict.failing)
        if self.folded is None and self.told:
            return self.told
        if self.folded is None:
            why = f" ({self.why_on_top})" if self.why_on_top else ""
            return f"{verdict.text()}: demoted {ids} in {short(self.head)}, on top{why}"
        count = len(self.folded.rewritten)
        return (
            f"{self.told} ({count} unpublished commit{'s' if count != 1 else ''} written "
            f"again with the demotion, the tip now {short(self.head)})"
        )


def demote_where_broken(
    ctx: Context, verdict: Verdict, held: Sequence[str], where: str
) -> Published:
    """Demote what failed from the first unpublished commit at which each fails — and a
    break a later commit repaired exactly where it fails, re-marked where it passes again —
    writing the unpublished commits again (`fold`, decision record 0083), so no commit the
    remote receives says a feature passes that fails there. Where that cannot be done
    (signed commits, a break already published, a list or log with uncommitted changes, a
    rewrite the rules would refuse), what fails at the tip is demoted in one commit on top
    (`demote`), and a repaired break is refused (`Refused`). The branch moves through the
    reference-transaction hook either way."""
    from shiftkit.edge.regression import dirty_bookkeeping

    if dirty_bookkeeping(ctx):
        return _on_top(ctx, verdict, where, "")
    commits = fold.unpublished(ctx.root, verdict.tip, held)
    demotions = [
        fold.Demotion(feature.id, _start(commits, verdict.blamed.get(feature.id)))
        for feature, _ in verdict.failing
    ] + [
        fold.Demotion(t.feature.id, next(c for c in commits.order if c in t.commits), t.commits)
        for t in verdict.transient
    ]
    why = fold.why_not(ctx.root, commits, sorted({d.start for d in demotions}))
    if why is not None:
        return _on_top(ctx, verdict, where, why)
    cfg = ctx.config
    entry = _entries(verdict, where)
    folded = fold.fold(ctx.root, commits, demotions, (cfg.features, cfg.progress), entry)
    problem = _verify_remarks(ctx, folded, verdict) or _refused_by_the_rules(ctx, folded, held)
    if problem is not None:
        return _on_top(ctx, verdict, where, problem)
    _carry_passes(ctx, folded)
    moved = gitio.run(["reset", "-q", "--keep", folded.tip], ctx.root, check=False)
    if moved.returncode != 0:
        from shiftkit.core import gitmsg

        return _on_top(
            ctx, verdict, where, f"the branch could not be moved: {gitmsg.detail(moved.stderr)}"
        )
    state.add_demoted(ctx.git_dir, [feature.id for feature, _ in verdict.failing])
    parking.remap(ctx.git_dir, folded.rewritten)
    outcomes = {f.id: o for f, o in verdict.failing} | {
        t.feature.id: t.outcome for t in verdict.transient
    }
    told = "; ".join(
        _told(commits, folded, d, verdict.blamed.get(d.feature_id), outcomes[d.feature_id])
        for d in demotions
    )
    return Published(folded.tip, folded, "", told)


def _on_top(ctx: Context, verdict: Verdict, where: str, why: str) -> Published:
    """The demotion as one commit on top, when the commits cannot be written again (a
    break an earlier demotion on top already answers needs nothing more); a break repaired
    before the tip cannot be demoted there: refused, saying what a person does."""
    repaired = [t for t in verdict.transient if t.repaired]
    if repaired:
        ids = ", ".join(t.feature.id for t in repaired)
        raise Refused(
            f"{verdict.text()}; the commits cannot be written again with {ids} demoted "
            f"where it fails ({why or 'the list or the log has uncommitted changes'}): "
            f"a person squashes them into one (`git reset --soft` to the remote's branch, "
            f"then `git commit`) and publishes again"
        )
    if not verdict.failing:
        ids = ", ".join(t.feature.id for t in verdict.transient)
        told = f"{verdict.text()}; {ids} is demoted on top already ({why})"
        return Published(verdict.tip, None, why, told)
    return Published(demote(ctx, verdict, where), None, why)


def _entries(verdict: Verdict, where: str) -> fold.Entries:
    """The log entries `fold` writes: each demotion naming where it fails, each re-mark why
    it passes again."""
    from shiftkit.core import progress, rules
    from shiftkit.edge.context import log_time
    from shiftkit.edge.regression import demotion_entry

    outcomes = {f.id: o for f, o in verdict.failing} | {
        t.feature.id: t.outcome for t in verdict.transient
    }
    repaired = {t.feature.id for t in verdict.transient if t.repaired}
    demoted_later = {t.feature.id for t in verdict.transient if not t.repaired}

    def entry(feature_id: str, kind: str, oid: str, parent: str, renamed: Mapping[str, str]) -> str:
        if kind == fold.REMARKS:
            return progress.format_entry(
                log_time(),
                feature_id,
                f"{rules.REMARKED} passing (repaired)",
                short(parent),
                "demoted in an earlier commit of this push, where its verifier failed; it "
                "passes on this commit's tree, so it is re-marked here",
            )
        who = verdict.blamed.get(feature_id)
        if feature_id in repaired:
            told = "fails at this commit, and passes again at a later one of this push"
        elif feature_id in demoted_later:
            told = "fails at this commit; a later one of this push demotes it on top"
        elif who is not None and who.exact and who.commit == oid:
            # ("this commit" is the one the entry is written into; the entry's header names
            # its parent, so say which is which: "at this commit (last passed at <the
            # header's commit>)" read as a contradiction in the team trial)
            told = "first fails at the commit this entry is in" + (
                f" (its parent {short(who.since)} passed)"
                if who.since and who.since == parent
                else f" (it last passed at {short(who.since)})"
                if who.since
                else ""
            )
        else:
            found = ""
            if who is not None:
                named = who._replace(
                    commit=renamed.get(who.commit, who.commit),
                    since=renamed.get(who.since, who.since) if who.since else None,
                )
                found = f" (the search for the commit that broke it: it {named.text()})"
            told = (
                "fails at the tip of this push, and is demoted from this commit on, the "
                f"first of the push that marks it passing{found}"
            )
        return demotion_entry(feature_id, outcomes[feature_id], where, told, short(parent))

    return entry


def _told(
    commits: fold.Unpublished,
    folded: fold.Folded,
    demotion: fold.Demotion,
    who: culprit.Culprit | None,
    outcome: verify.Outcome,
) -> str:
    """ "F001 first fails at 1234567 'Tidy up' (was 89abcde; last passed at 0123456):
    demoted there"."""
    old = folded.first.get(demotion.feature_id, demotion.start)
    subject = commits.subject(old)
    subject = subject if len(subject) <= 50 else subject[:49] + "…"
    at = f"{short(folded.rewritten.get(old, old))} {subject!r} (was {short(old)}"
    if demotion.only is not None:
        again = ", ".join(sorted(short(c) for c in folded.remarked_at(demotion.feature_id)))
        return (
            f"{demotion.feature_id} fails at {at}), where the list marked it passing: "
            f"demoted there" + (f", re-marked at {again}, where it passes again" if again else "")
        )
    if who is not None and who.exact and who.commit == old:
        since = f"; last passed at {short(who.since)}" if who.since else ""
        return f"{demotion.feature_id} first fails at {at}{since}): demoted there"
    return (
        f"{demotion.feature_id} fails at the tip ({outcome.summary()}): demoted from the "
        f"first unpublished commit on, {at})"
    )


def _verify_remarks(ctx: Context, folded: fold.Folded, verdict: Verdict) -> str | None:
    """Each re-mark's evidence: its verifier passes at the commit it is re-marked at (run
    there unless a pass is recorded), recorded for every mode a judge may ask, so the
    hooks find it on the commit written again (`_carry_passes`). None, or why not."""
    cfg = ctx.config
    commands = {t.feature.id: t.outcome.command for t in verdict.transient}
    wanted = [(oid, f) for oid, ids in folded.remarked.items() for f in ids]
    if not wanted:
        return None
    trees = dict(
        zip(
            [oid for oid, _ in wanted],
            gitio.out(["rev-parse", *(f"{oid}^{{tree}}" for oid, _ in wanted)], ctx.root).split(),
            strict=True,
        )
    )
    runs = [
        regression.TreeJob(trees[oid], commands[f], cfg.init, cfg.verify_timeout, oid)
        for oid, f in wanted
    ]
    for (oid, feature_id), outcome in zip(
        wanted, regression.run_each(ctx, runs, workers()), strict=True
    ):
        if not outcome.ok:
            return f"{feature_id} fails again at {short(oid)}, where it would be re-marked"
        verify.record_pass(ctx.common_dir, trees[oid], commands[feature_id])
    return None


def _start(commits: fold.Unpublished, who: culprit.Culprit | None) -> str:
    """Where a failing feature's demotion starts: the commit that broke it when the bisect
    named it exactly and it is unpublished; else the first unpublished commit (a demotion
    too early is never a false "passes")."""
    if who is not None and who.exact and who.commit in commits.parents:
        return who.commit
    return commits.order[0]


def _refused_by_the_rules(ctx: Context, folded: fold.Folded, held: Sequence[str]) -> str | None:
    """The first violation the rules find in the commits written again (None: none)."""
    from shiftkit.commands import audit

    written = set(folded.rewritten.values())
    selected = [
        c
        for c in revisions.read_commits(ctx.root, [folded.tip, "--not", *held])
        if c.oid in written
    ]
    for finding in audit.audit_commits(ctx, selected, False, lambda text: None):
        if finding.violations:
            return f"written again, {short(finding.commit)} would break {finding.violations[0]}"
    return None


def _carry_passes(ctx: Context, folded: fold.Folded) -> None:
    """Each commit written again differs from the old one in the list and the log alone:
    the passes recorded at the old tree (finish's, the gate's) hold at the new one, so the
    hooks find a flip's evidence and the next push runs nothing again."""
    from shiftkit.edge.project import read_features_at

    cfg = ctx.config
    for old, new in folded.rewritten.items():
        trees = gitio.out(["rev-parse", f"{old}^{{tree}}", f"{new}^{{tree}}"], ctx.root).split()
        feature_list = read_features_at(ctx.root, new, cfg.features)
        if feature_list is None:
            continue
        every = regression.jobs(feature_list, list(feature_list.table.ids), cfg.verify)
        for job in every:
            for mode in ("worktree", regression.CHECKOUT):
                key = verify.cache_command(job.command, mode)
                if verify.is_cached(ctx.common_dir, trees[0], key):
                    verify.record_pass(ctx.common_dir, trees[1], key)


def workers() -> int:
    return os.cpu_count() or 1


# -- the two places that publish ------------------------------------------------------------


def gate_outgoing(
    ctx: Context,
    tracking: str,
    say: Say,
    jobs: int | None,
    where: str = "before publishing (`shiftkit sync`)",
) -> dict[str, str]:
    """The step of `sync` and `finish` before they push: HEAD judged against the remote's
    branch as just fetched (``tracking``); what fails is demoted where it broke, and the
    push publishes it. Returns the commits written again (old id -> new id)."""
    head = gitio.head_oid(ctx.root)
    if head is None:
        return {}
    there = gitio.refs(ctx.root, tracking).get(tracking)
    verdict = judge(ctx, head, [there] if there else [], jobs or workers())
    if verdict is None:
        return {}
    if not verdict.broken:
        if verdict.skipped.total:
            count = len(verdict.passed)
            say(
                f"before publishing: {count} passing feature{'s' if count != 1 else ''} "
                f"verified at the tip{verdict.skipped.clause()}"
            )
        return {}
    published = demote_where_broken(ctx, verdict, [there] if there else [], where)
    say(f"{published.said(verdict)}, published with this push")
    return published.folded.rewritten if published.folded is not None else {}


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
        if verdict is None or not verdict.broken:
            continue
        branch = gitio.branch(ctx.root)
        here = branch is not None and update.local_ref in (f"refs/heads/{branch}", "HEAD")
        if not here or gitio.head_oid(ctx.root) != update.local:
            return (
                f"push refused: {verdict.text()}; check out {update.local_ref} and run "
                f"`shiftkit check` to commit the demotion, then push again"
            )
        try:
            published = demote_where_broken(ctx, verdict, held, "before publishing (pre-push)")
        except Refused as refused:
            return f"push refused: {verdict.text()}, and {_why_not(refused.message)}"
        if published.head == update.local:
            continue  # (nothing to write: answered on top already)
        return f"push refused: {published.said(verdict)} on {branch}: push again to publish it"
    return None


def _why_not(message: str) -> str:
    """A demotion's refusal, as the end of the gate's line."""
    _, _, rest = message.partition(" and must be demoted, but ")
    return f"the demotion cannot be committed: {rest}" if rest else message
