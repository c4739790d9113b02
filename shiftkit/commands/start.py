"""`shiftkit start`: the session-start routine done by code, with bounded output.

Where am I, what passes, what happened lately, and what to do next — then init, smoke and
a regression sample, demoting (in a commit) a passing feature that now fails.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from shiftkit.core import features, orientation, progress
from shiftkit.core.claim import LocalClaim
from shiftkit.core.errors import Refused
from shiftkit.edge import claims, files, gitio, regression, state, verify
from shiftkit.edge.context import Context, iso_now, short
from shiftkit.edge.files import read_optional
from shiftkit.edge.project import read_features, read_features_at

Say = Callable[[str], None]


# -- checks --------------------------------------------------------------------------------


def _record_path(ctx: Context) -> Path:
    return state.start_check_path(ctx.git_dir)


def last_check(ctx: Context) -> orientation.Checks | None:
    """The last start check's record in this worktree, read back from its file."""
    return orientation.checks_from_json(state.read_json(_record_path(ctx)))


def has_green_check(ctx: Context) -> bool:
    record = last_check(ctx)
    return record is not None and record.complete and record.head == gitio.head_oid(ctx.root)


def repair_first(ctx: Context) -> list[str]:
    """Features the last start check demoted: the next session repairs them first."""
    return state.demoted(ctx.git_dir)  # the reader `next` and `status` use too


def _run_step(ctx: Context, name: str, command: str, say: Say) -> orientation.Step:
    if not command:
        return orientation.Step(name, "", True, "not configured")
    outcome = verify.run_command(command, ctx.root, ctx.config.verify_timeout, leave_running=True)
    say(f"check {name}: {outcome.summary()} ({command})")
    return orientation.Step(
        name=name,
        command=command,
        ok=outcome.ok,
        summary=outcome.summary(),
        seconds=round(outcome.seconds, 2),
        tail=None if outcome.ok else orientation.clip(outcome.tail(3, 300), 300),
    )


def _regression(
    ctx: Context, work: list[regression.Job], clean: bool, say: Say
) -> list[tuple[regression.Job, verify.Outcome]]:
    """The sampled verifiers: a pass already recorded at HEAD's tree by `check` counts; the
    rest run in the work tree when it is clean and `verify_in` is "worktree", else in a
    temporary checkout of HEAD's tree (a dirty tree never switches the check off)."""
    cfg = ctx.config
    tree = regression.head_tree(ctx.root)
    done = [(job, _cached(job)) for job in work if regression.is_checked(ctx, tree, job)]
    rest = [job for job in work if not regression.is_checked(ctx, tree, job)]
    if clean and cfg.verify_in == "worktree":
        ran = [(job, _in_work_tree(ctx, job, tree)) for job in rest]
    else:
        if not clean:
            say("check regression: the work tree has uncommitted changes, so in a checkout of HEAD")
        ran = regression.run_at_tree(ctx, tree, rest, 1, lambda job, outcome: None)
        for job, outcome in ran:
            if outcome.ok:
                verify.record_pass(
                    ctx.common_dir, tree, verify.cache_command(job.command, regression.CHECKOUT)
                )
    order = {job.feature.id: n for n, job in enumerate(work)}
    return sorted(done + ran, key=lambda pair: order[pair[0].feature.id])


def _in_work_tree(ctx: Context, job: regression.Job, tree: str) -> verify.Outcome:
    """``job``'s verifier in the clean work tree (HEAD's ``tree``), its reads measured."""
    from shiftkit.edge import readsets

    def run(prefix: Sequence[str]) -> verify.Outcome:
        cfg = ctx.config
        return verify.run_verifier(
            job.command, ctx.root, cfg.verify_timeout, junit=cfg.junit, prefix=prefix
        )

    return readsets.run_measured(ctx.common_dir, job.feature.id, job.command, ctx.root, tree, run)


def _cached(job: regression.Job) -> verify.Outcome:
    return verify.Outcome(job.command, True, 0, 0.0, "(passed at this tree before)")


def _carried(job: regression.Job) -> verify.Outcome:
    return verify.Outcome(job.command, True, 0, 0.0, "(passed at another tree just now)")


def _repaired(ctx: Context, feature_list: features.FeatureList) -> list[regression.Job]:
    """The demoted features earned before that pass at HEAD's tree (in a checkout of it), when
    HEAD moved since the last start check — a merge or a sync may have repaired them — to be
    re-marked in the commit the check makes (decision record 0093)."""
    previous = last_check(ctx)
    head = gitio.head_oid(ctx.root)
    if head is None or (previous is not None and previous.head == head):
        return []
    return regression.passing_again(ctx, feature_list)


def run_checks(ctx: Context, say: Say) -> orientation.Checks:
    cfg = ctx.config
    steps = (_run_step(ctx, "init", cfg.init, say), _run_step(ctx, "smoke", cfg.smoke, say))
    clean = not gitio.status_lines(ctx.root)
    results: list[orientation.Regression] = []
    demoted: list[str] = []
    complete = True
    feature_list = read_features_at(ctx.root, "HEAD", cfg.features) or read_features(ctx.project)
    work = regression.jobs(feature_list, regression.sample(ctx, feature_list), cfg.verify)
    # (a pass judged just now at another tree whose reads nothing since has changed — the
    # incoming flips a catch-up verified — is not run again: decision record 0079)
    carried = regression.carried(ctx, regression.head_tree(ctx.root), work) if work else {}
    try:
        ran = [job for job in work if job.feature.id not in carried]
        outcomes = _regression(ctx, ran, clean, say) if ran else []
    except regression.InitFailed as failed:
        outcomes = []
        complete = False
        say(f"check regression: not run, {failed.outcome.output.splitlines()[0]}")
    passed = [job.feature.id for job, outcome in outcomes if outcome.ok]
    if complete:  # (a carried pass keeps its own stamp: the next check runs it)
        state.stamp_verified(ctx.common_dir, passed, new_check=True)
    failing = [(job.feature, outcome) for job, outcome in outcomes if not outcome.ok]
    outcomes += [(job, _carried(job)) for job in work if job.feature.id in carried]
    order = {job.feature.id: n for n, job in enumerate(work)}
    for job, outcome in sorted(outcomes, key=lambda pair: order[pair[0].feature.id]):
        at = carried.get(job.feature.id)
        summary = outcome.summary()
        if at is not None:
            summary = f"passed (at tree {short(at)}, just now; nothing it reads changed since)"
        results.append(orientation.Regression(job.feature.id, outcome.ok, summary))
        say(f"check regression {job.feature.id}: {summary}")
    repaired = _repaired(ctx, feature_list) if complete else []
    if failing or repaired:
        try:
            blamed = regression.blame(ctx, failing) if failing else {}
            made = regression.demote(ctx, failing, "at session start", blamed, repaired)
        except Refused as refused:
            complete = False
            say(f"shiftkit: {refused.message}")
        else:
            demoted = [f.id for f, _ in failing]
            who = "".join(f"; {key} {named.text()}" for key, named in blamed.items())
            if demoted:
                say(f"demoted {', '.join(demoted)} in {short(made)}{who}: repair first")
            if repaired:
                ids = ", ".join(job.feature.id for job in repaired)
                say(f"re-marked {ids} passing in {short(made)}: demoted before, passing at HEAD")
    record = orientation.Checks(
        head=gitio.head_oid(ctx.root),
        at=iso_now(),
        complete=complete,
        in_checkout=bool(work) and not clean,
        steps=steps,
        regression=tuple(results),
        demoted=tuple(demoted),
    )
    state.write_json(_record_path(ctx), orientation.checks_to_json(record))
    return record


# -- the report ----------------------------------------------------------------------------


class Amounts(NamedTuple):
    """How much of each part `gather` reads; `orientation.render` then cuts to its budget."""

    entries: int
    entry_chars: int
    decisions: int
    commits: int
    preamble_chars: int
    after: int
    blocked: int
    claims: int
    steps: int


BRIEF = Amounts(3, 4000, 4, 3, 1200, 3, 3, 3, 4)
FULL = Amounts(4, 8000, 6, 6, 3000, 5, 5, 5, 8)


def _recent_commits(ctx: Context, count: int, rev: str = "HEAD") -> tuple[str, ...]:
    if gitio.head_oid(ctx.root) is None:
        return ()
    from git import Repo

    with Repo(ctx.root) as repo:
        return tuple(
            orientation.clip(f"{commit.hexsha[:7]} {commit.summary!s}", 90)
            for commit in repo.iter_commits(rev, max_count=count)
        )


RECORD = re.compile(r"[0-9]{4}-.*\.md")


def _decisions(ctx: Context, count: int, rev: str | None = None) -> tuple[str, ...]:
    """The newest decision records' titles, newest first: the work tree's, or (``rev``) those
    committed there."""
    if rev is None:
        folder = ctx.project.decisions_path
        found = (
            sorted(p for p in folder.glob("[0-9][0-9][0-9][0-9]-*.md")) if folder.is_dir() else []
        )
        names = [path.name for path in found]
        newest = names[-count:] if count else []
        texts = [files.read_text(folder / name, errors="replace") for name in newest]
    else:
        folder_name = ctx.config.decisions.strip("/")
        listing = gitio.run(
            ["ls-tree", "--name-only", f"{rev}:{folder_name}"], ctx.root, check=False
        )
        names = sorted(name for name in listing.stdout.splitlines() if RECORD.fullmatch(name))
        newest = names[-count:] if count else []
        blobs = gitio.read_blobs(ctx.root, [f"{rev}:{folder_name}/{name}" for name in newest])
        texts = [text or "" for text in blobs]
    titles = []
    for name, text in reversed(list(zip(newest, texts, strict=True))):
        first = text.lstrip().splitlines()[:1]
        title = first[0] if first else name.removesuffix(".md")
        number = name[:4]
        titles.append(orientation.clip(f"{number} {orientation.record_title(number, title)}", 90))
    return tuple(titles)


def _log_text(ctx: Context, rev: str | None) -> str:
    """The progress log: the work tree's, or (``rev``) the one committed there."""
    if rev is None:
        return read_optional(ctx.project.progress_path)
    return gitio.read_blobs(ctx.root, [f"{rev}:{ctx.config.progress}"])[0] or ""


def _feature_view(
    feature: features.Feature, project_verify: str, steps: int
) -> orientation.FeatureView:
    return orientation.FeatureView(
        id=feature.id,
        description=orientation.clip(feature.description, 300),
        category=feature.category,
        verify=features.effective_verify(feature, project_verify),
        attempts=feature.attempts,
        steps=tuple(orientation.clip(step, 160) for step in feature.steps[:steps]),
        more_steps=max(0, len(feature.steps) - steps),
    )


def _claim_view(
    own: LocalClaim | None, feature_list: features.FeatureList, ctx: Context, steps: int
) -> orientation.ClaimView | None:
    """This worktree's claim record, as the orientation shows it."""
    if own is None:
        return None
    feature = feature_list.get(own.feature)
    return orientation.ClaimView(
        feature=own.feature,
        base=short(own.base),
        taken=own.record.taken,
        detail=_feature_view(feature, ctx.config.verify, steps) if feature else None,
    )


def _claim_rows(
    ctx: Context, taken: dict[str, claims.Claim], count: int
) -> tuple[orientation.ClaimRow, ...]:
    from shiftkit.core.claim import age
    from shiftkit.edge import session

    ttl = ctx.config.claims.ttl_hours
    now = session.now()
    return tuple(
        orientation.ClaimRow(
            id=c.feature,
            session=c.record.session if c.record else "(broken claim)",
            stale=claims.staleness(c.record, c.oid, ctx.common_dir, ttl),
            age=age(c.record.taken, now) if c.record else "",
            clone=c.record.clone if c.record else "",
        )
        for c in list(taken.values())[:count]
    )


def setup_warnings(ctx: Context) -> tuple[str, ...]:
    """What keeps the protocol from working here at all, for the orientation's first lines:
    a clone without the hooks or the merge driver."""
    from shiftkit.commands import setup
    from shiftkit.edge import installation

    if installation.recorded(ctx.common_dir) is None:
        installation.record(ctx.common_dir)  # the first start (or setup) of a clone: its judge
    changed = installation.problem(ctx.common_dir)
    lines: tuple[str, ...] = (f"WARNING: {changed}",) if changed else ()
    lines += hook_file_warnings(ctx)
    lacking = setup.missing(ctx.root, ctx.common_dir)
    if not lacking:
        return lines
    return (
        *lines,
        f"WARNING: not set up here, missing {', '.join(lacking)}: run `shiftkit setup`",
    )


HOOK_FILES = {
    ".claude/settings.json": "Claude Code",
    ".codex/hooks.json": "Codex CLI",
    ".pre-commit-config.yaml": "the pre-commit framework",
}
WHAT_EACH_DOES = {
    "SessionStart": "this brief",
    "PreToolUse": "the guard",
    "Stop": "the stop check",
    "shiftkit-pre-commit": "the rules on the staged tree",
    "shiftkit-commit-msg": "the rules on the message",
}


def hook_file_warnings(ctx: Context) -> tuple[str, ...]:
    """A line per committed hook file that lacks shiftkit's handlers at HEAD (issue 27.1):
    every later session of that harness runs without them. A harness file gone counts where
    the project has shiftkit's hook script (it was set up with it); a pre-commit config gone
    does not (a project without the framework has git's own hooks run the rules)."""
    from shiftkit.core import protected

    names = list(HOOK_FILES)
    texts = gitio.read_blobs(ctx.root, [f"HEAD:{name}" for name in [*names, ".shiftkit/hook"]])
    if texts[-1] is None:
        return ()
    lines = []
    for name, text in zip(names, texts[:-1], strict=True):
        if text is None and name == ".pre-commit-config.yaml":
            continue  # (no framework: the plain shims run the rules, `setup.missing` checks them)
        lacking = protected.missing_handlers(name, text)
        if lacking:
            what = ", ".join(f"{item} ({WHAT_EACH_DOES[item]})" for item in lacking)
            state = "is gone" if text is None else f"lacks shiftkit's {what}"
            without = "shiftkit" if text is None else "it" if len(lacking) == 1 else "them"
            lines.append(
                f"WARNING: {name} at HEAD {state}: {HOOK_FILES[name]} runs without "
                f"{without}; ask a person to restore it (a person action, rule 14)"
            )
    return tuple(lines)


def unhooked_warning(git_dir: Path, environ: Mapping[str, str]) -> str | None:
    """`start` run by hand inside an agent's shell (Claude Code sets CLAUDECODE, Codex CLI
    CODEX_THREAD_ID) where no SessionStart hook of this session recorded it: the harness's
    hooks are not running here, and the guard and the stop check with them (issue 27.1)."""
    from shiftkit.edge import session

    recorded, _ = session.recorded(git_dir)
    thread = environ.get("CODEX_THREAD_ID", "").strip()
    if thread:
        if recorded == thread:
            return None
        harness, file, hint = "Codex CLI", ".codex/hooks.json", " (Codex runs them once trusted)"
    elif environ.get("CLAUDECODE", "").strip() == "1":
        if recorded is not None:
            return None  # (its session id is not in the shell: a hook ran here once)
        harness, file, hint = "Claude Code", ".claude/settings.json", ""
    else:
        return None
    return (
        f"WARNING: this session was not started by {harness}'s SessionStart hook "
        f"({file}): its hooks are not running here, so neither is the guard nor the stop "
        f"check; tell a person{hint}"
    )


def gather(
    ctx: Context,
    brief: bool,
    checks: orientation.Checks | None,
    skipped_because: str | None = None,
    said_first: tuple[str, ...] = (),
) -> orientation.StartData:
    """The brief's data; ``said_first``: lines for its warnings (what `start` just did)."""
    cfg = ctx.config
    amounts = BRIEF if brief else FULL
    from shiftkit.commands import upcoming

    listing = regression.committed_listing(ctx)
    feature_list = listing.features
    view = upcoming.outlook(ctx, feature_list, fresh=True)  # (once a session: a fresh look)
    taken = view.taken
    # (counted where `claim` would choose and the advice below is computed: the remote's
    # branch when this one is only behind it, said in the header)
    counts = features.counts(view.feature_list, taken)
    # Behind only, the whole brief is the remote's branch's — counts, next, the log, the
    # decisions, the commits — never the stale HEAD's beside the remote's counts (decision
    # record 0079); HEAD itself is said in the "where" line.
    at = view.counted_ref
    log = progress.parse(_log_text(ctx, at))
    own = state.local_claim(ctx.git_dir)
    record = last_check(ctx)
    repair = view.repair
    chosen: features.Feature | None = None
    after: list[features.Feature] = []
    if own is None:
        options = view.next(1 + amounts.after)
        chosen, after = (options[0] if options else None), options[1:]
    blocked = features.blocked_open(view.feature_list)
    common = gitio.common_dir(ctx.root)
    progress_name = cfg.progress if at is None else f"`git show {view.counted_on}:{cfg.progress}`"
    decisions_name = cfg.decisions.rstrip("/")
    if at is not None:
        decisions_name = f"{view.counted_on}:{decisions_name}"
    behind = view.lines
    from shiftkit.commands import own_claims
    from shiftkit.core import ground

    elsewhere = view.elsewhere(ctx)
    yours = (*own_claims.brief_lines(ctx, taken), *own_claims.expired_lines(ctx, elsewhere))

    return orientation.StartData(
        ground=ground.describe(cfg.code),
        warnings=(
            *setup_warnings(ctx),
            *said_first,
            *yours,
            *behind,
            *((listing.edited,) if listing.edited else ()),
        ),
        where=orientation.Where(
            root=str(ctx.root),
            cwd=os.getcwd(),
            worktree="linked" if ctx.git_dir != common else "main",
            branch=gitio.branch(ctx.root),
            head=short(gitio.head_oid(ctx.root)),
        ),
        counts=orientation.Tally(
            total=counts.total,
            passing=counts.passing,
            open=counts.open,
            blocked=counts.blocked,
            claimed=counts.claimed,
            counted_on=view.counted_on,
            diverged_from=view.diverged_from,
        ),
        # (what to do now is counted where `claim` would choose: the remote's branch when
        # this one is only behind it)
        all_pass=features.all_pass(view.feature_list) and bool(view.feature_list.features),
        total_features_message=features.all_pass_message(
            view.feature_list, listing.checked, view.behind, view.counted_on, feature_list
        ),
        claim=_claim_view(own, feature_list, ctx, amounts.steps),
        repair_first=tuple(repair),
        next=_feature_view(chosen, cfg.verify, amounts.steps) if chosen else None,
        why_none=""
        if chosen or own
        else upcoming.blockers(view.feature_list, view.taken, view.done_there),
        after=tuple(
            orientation.Upcoming(f.id, orientation.clip(f.description, 100)) for f in after
        ),
        blocked=tuple(
            orientation.BlockedView(f.id, orientation.clip(f.blocked.reason, 100))
            for f in blocked[: amounts.blocked]
            if f.blocked
        ),
        claims=_claim_rows(ctx, dict((c.feature, c) for c in elsewhere), amounts.claims),
        checks=checks if checks is not None else record,
        dirty=tuple(line[3:] for line in gitio.status_lines(ctx.root)[:20]) if own is None else (),
        checks_ran=checks is not None,
        skipped_because=skipped_because,
        entries=tuple(
            orientation.clip_lines(e.text, amounts.entry_chars, progress_name)
            for e in reversed(progress.newest_entries(log, amounts.entries))
        ),
        entries_total=len(log.entries),
        index_line=log.index_line,
        decisions=_decisions(ctx, amounts.decisions, at),
        commits=_recent_commits(ctx, amounts.commits, at or "HEAD"),
        preamble=orientation.clip_lines(log.preamble, amounts.preamble_chars, progress_name),
        sources=orientation.Sources(
            progress=progress_name,
            decisions=decisions_name,
            at=view.counted_on,
        ),
    )


def start(
    ctx: Context,
    brief: bool,
    as_json: bool,
    check: bool,
    say: Say,
    skipped_because: str | None = None,
    harness: str = "claude",
) -> int:
    """The orientation, after the checks when ``check``; ``skipped_because`` says why they
    did not run now (a resumed or compacted session: re-read from the files, not re-run);
    ``harness``: whose SessionStart hook reads it (Codex CLI takes a JSON object)."""
    import json

    from shiftkit.commands import own_claims
    from shiftkit.core import harness as harnesses

    released = tuple(own_claims.release_orphans(ctx))  # (said first, in the brief)
    progress_lines: list[str] = []
    checks = run_checks(ctx, progress_lines.append) if check else None
    data = gather(ctx, brief, checks, skipped_because, released)
    if as_json:
        setup = [w for w in data.warnings if w.startswith("WARNING: not set up")]
        warning = setup[0] if setup else None  # (a "behind the remote" line is no setup warning)
        body = {"setup_warning": warning, **orientation.as_json(data)}
        say(json.dumps(body, indent=1, ensure_ascii=False))
        return 0
    budget = orientation.BRIEF_BUDGET if brief else orientation.FULL_BUDGET
    say(harnesses.session_start(harness, lambda room: orientation.render(data, room), budget))
    return 0


def start_cmd(
    text: str | None,
    brief: bool,
    as_json: bool,
    no_check: bool,
    harness: str,
    say: Say,
    warn: Say,
) -> int:
    """`shiftkit start`: `text` is the SessionStart hook's JSON (None: not a hook, a person
    at a terminal, who also gets the Codex-trust advice). In a hook, a broken project is
    said on standard output (only that reaches the model) and the exit is 0: a SessionStart
    hook cannot stop the session, so it starts by repairing it."""
    from shiftkit.core import harness as harnesses
    from shiftkit.core.errors import OK, ShiftkitError, one_line
    from shiftkit.edge import session
    from shiftkit.edge.context import open_context

    hook_input = text is not None
    skipped = orientation.skip_checks_for(text) if text is not None else None
    check = not no_check and skipped is None
    try:
        ctx = open_context()
        named = session.hook_session(text) if text is not None else None
        if named is not None:  # the harness's own id names this session's claims and usage
            session.record_session(ctx.git_dir, named)
        transcript = session.hook_field(text, "transcript_path") if text is not None else None
        if transcript is not None:  # (Claude Code's transcript or Codex's rollout: its
            from shiftkit.edge import ledger  # usage is recorded at each unit boundary)

            ledger.remember_transcript(ctx, Path(transcript).expanduser(), named)
        code = start(ctx, brief, as_json, check, say, skipped, harness)
        unhooked = None if hook_input else unhooked_warning(ctx.git_dir, os.environ)
        if unhooked is not None and not as_json:
            say(unhooked)
        if not hook_input:  # (a person at a terminal: would Codex run this project's hooks?)
            from shiftkit.commands import advice

            advice.codex_trust(ctx.root, warn)
        return code
    except ShiftkitError as exc:
        if not hook_input:
            raise
        reason = orientation.clip(one_line(exc.message), 1500)
        line = f"shiftkit: start could not orient this session: {reason}"
        say(harnesses.plain_for(harness, "SessionStart", line))
        warn(f"shiftkit: {one_line(exc.message)}")
        return OK
