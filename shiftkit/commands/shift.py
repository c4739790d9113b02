"""The unit of work: claim, verify, finish or revert, release — plus unblock and notes.

Every state change is a sequence of atomic steps chosen so that a kill at any instant leaves
HEAD at the base or at the new commit, valid files, and a claim that is visible and can be
finished, reverted or released. Re-running an interrupted `finish` or `revert` completes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from shiftkit.core import features, jsonbound, progress, rules
from shiftkit.core.claim import LocalClaim
from shiftkit.core.errors import BadInput, Refused
from shiftkit.edge import claims, gitio, ledger, snapshot, state, verify
from shiftkit.edge.committing import commit, commit_bookkeeping
from shiftkit.edge.context import (
    Context,
    add_note,
    head_trailer,
    iso_now,
    log_time,
    pending_note_path,
    person_signs,
    plan_log,
    record_verified_at,
    short,
    work_tree_id,
    write_features,
    write_log,
    write_planned_log,
)
from shiftkit.edge.files import read_optional
from shiftkit.edge.project import read_features, read_features_at
from shiftkit.edge.undo import undone_on_refusal

Say = Callable[[str], None]


def require_claim(ctx: Context, action: str) -> LocalClaim:
    record = state.local_claim(ctx.git_dir)
    if record is None:
        raise Refused(
            f"no open claim in this worktree, nothing to {action}; take one with `shiftkit claim`"
        )
    return record


def verifier_of(ctx: Context, feature: features.Feature) -> str:
    command = features.effective_verify(feature, ctx.config.verify)
    if command is None:
        raise Refused(
            f"{feature.id} has no verify command and no project-wide 'verify' is set "
            f"in .shiftkit.toml, so it cannot become passing"
        )
    return command


def _last_failure_path(ctx: Context) -> Any:
    return state.worktree_state(ctx.git_dir) / "last-failure.json"


def record_failure(ctx: Context, feature_id: str, outcome: verify.Outcome) -> None:
    state.write_json(
        _last_failure_path(ctx),
        {
            "feature": feature_id,
            "signature": verify.signature(outcome.output),
            "summary": outcome.summary(),
            "tail": outcome.tail(10),
        },
    )


# -- notes ---------------------------------------------------------------------------------


def note(ctx: Context, text: str, say: Say) -> int:
    record = require_claim(ctx, "note")
    if not text.strip():
        raise BadInput("the note is empty; say what you learned or what to watch out for")
    add_note(ctx, text)
    say(f"noted for the {record.feature} log entry")
    return 0


# -- verify --------------------------------------------------------------------------------


def verify_work(ctx: Context, feature: features.Feature, say: Say) -> tuple[bool, str]:
    """Run (or reuse) the verifier on the work tree's tree — in the work tree itself, or with
    `verify_in = "checkout"` in a temporary worktree of exactly that tree; returns (passed,
    tree id). A verifier that changes the tree it judges has not judged it: a failure."""
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
        outcome = verify.run_in_checkout(
            ctx.root,
            tree,
            command,
            ctx.config.init,
            ctx.config.verify_timeout,
            junit=ctx.config.junit,
        )
    else:
        outcome = verify.run_verifier(
            command, ctx.root, ctx.config.verify_timeout, junit=ctx.config.junit
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


def verify_cmd(ctx: Context, feature_id: str | None, say: Say) -> int:
    feature_list = read_features(ctx.project)
    if feature_id is None:
        feature_id = require_claim(ctx, "verify").feature
    feature = features.require(feature_list, feature_id, ctx.config.features)
    passed, _ = verify_work(ctx, feature, say)
    return 0 if passed else 1


# -- finish --------------------------------------------------------------------------------


def _already_committed(ctx: Context, held: LocalClaim) -> bool:
    return bool(held.oid) and held.oid in head_trailer(ctx, "Shiftkit-Claim")


def _close_claim(ctx: Context, held: LocalClaim, say: Say) -> str:
    """Let the claim go; returns how the caller's last line ends (where the claim is now)."""
    from shiftkit.commands import claims as claiming

    head = gitio.head_oid(ctx.root) or ""
    said, ending = claiming.let_go(ctx, held, head)
    if said is not None:
        say(said)
    try:
        _last_failure_path(ctx).unlink()
    except FileNotFoundError:
        pass
    return ending


def _without_crashed_entry(log_text: str, feature_id: str, base: str, outcome_start: str) -> str:
    """An entry this claim wrote before a crash is dropped, so a re-run writes it once."""
    log = progress.parse(log_text)
    if log.entries:
        last = log.entries[-1]
        if (
            last.feature == feature_id
            and last.base == base
            and last.outcome.startswith(outcome_start)
        ):
            return log.head + "".join(e.text for e in log.entries[:-1])
    return log_text


def _entry_body(ctx: Context, first: str, extra: str | None) -> str:
    parts = [first.strip()]
    pending = read_optional(pending_note_path(ctx)).strip()
    if pending:
        parts.append(pending)
    if extra and extra.strip():
        parts.append(extra.strip())
    return "\n".join(parts)


class FinishPlan(NamedTuple):
    """What `finish` will commit, planned and checked before anything is written."""

    held: LocalClaim
    feature: features.Feature
    subject: str
    flipped: features.FeatureList
    log: str
    archive: str | None  # the new archive when a prune is due
    message: str  # with TREE where the committed tree's id goes


def finish(ctx: Context, summary: str, extra_note: str | None, say: Say) -> int:
    """Verify, flip, log, commit, release — each a step below. Refused before the commit:
    nothing changed; refused at it: everything as it was (`undone_on_refusal`)."""
    held = require_claim(ctx, "finish")
    if _already_committed(ctx, held):  # (a re-run after a crash past the commit)
        ending = _close_claim(ctx, held, say)
        say(f"{held.feature} was already committed at HEAD; {ending}")
        return 0
    subject = _finish_subject(held.feature, summary)
    feature = _feature_to_finish(ctx, held)
    verified_tree = _verified_tree(ctx, feature, say)
    plan = _plan_finish(ctx, held, feature, subject, summary, extra_note)
    _precheck(ctx, plan.flipped, plan.log, plan.archive, plan.message, held.feature)
    _say_unstaged(ctx, say)
    new_head = _commit_finish(ctx, plan, verified_tree, say)
    ending = _close_claim(ctx, held, say)
    say(
        f"{held.feature} passes: committed {short(new_head)} {subject!r} (its verifier passed "
        f"on this tree; the commit adds the list and the log); {ending}"
    )
    return 0


def _finish_subject(feature_id: str, summary: str) -> str:
    """`ID: SUMMARY`, within rule 9 (72 characters, says something)."""
    room = 72 - len(f"{feature_id}: ")
    if len(summary.strip()) > room:
        raise BadInput(
            f"-m is {len(summary.strip())} characters; the subject is `{feature_id}: ` and "
            f"the summary, at most 72 in all: keep -m to {room} and put the detail in --note"
        )
    subject = f"{feature_id}: {summary.strip()}"
    problems = rules.check_message(subject)
    if problems:
        raise BadInput(f"-m: {problems[0].message}")
    return subject


def _feature_to_finish(ctx: Context, held: LocalClaim) -> features.Feature:
    """The claimed feature, while the claim is still this worktree's and HEAD does not
    already pass it (the work tree's list may be a crashed finish's)."""
    _require_current_claim(ctx, held)
    feature = features.require(read_features(ctx.project), held.feature, ctx.config.features)
    if _passes_at_head(ctx, held.feature):
        raise Refused(
            f"{held.feature} already passes; nothing was committed (`shiftkit release` "
            f"hands the claim back)"
        )
    return feature


def _verified_tree(ctx: Context, feature: features.Feature, say: Say) -> str:
    passed, tree = verify_work(ctx, feature, say)
    if not passed:
        raise Refused(
            f"{feature.id} does not pass; nothing was changed. Fix it and run "
            f"`shiftkit finish` again, or `shiftkit revert --reason ...`"
        )
    return tree


def _plan_finish(
    ctx: Context,
    held: LocalClaim,
    feature: features.Feature,
    subject: str,
    summary: str,
    extra_note: str | None,
) -> FinishPlan:
    """The flipped list, the log with its entry (pruned when due) and the message."""
    base = short(held.base)
    flipped = read_features(ctx.project).replace_feature(feature._replace(passes=True))
    head_log = read_optional(ctx.project.progress_path)
    log_text = _without_crashed_entry(head_log, feature.id, base, "passed")
    body = _entry_body(ctx, summary, extra_note)
    entry = progress.format_entry(log_time(), feature.id, "passed", base, body)
    new_log, new_archive = plan_log(
        ctx, progress.append(log_text, entry), features.blocked_ids(flipped)
    )
    message = (
        f"{subject}\n\nShiftkit-Feature: {feature.id}\nShiftkit-Verified: TREE\n"
        f"Shiftkit-Claim: {held.oid or '-'}\n"
    )
    return FinishPlan(held, feature, subject, flipped, new_log, new_archive, message)


def _commit_finish(ctx: Context, plan: FinishPlan, verified_tree: str, say: Say) -> str:
    """Write the plan and commit it, the tree being the verified tree plus the bookkeeping.
    Refused here (a hook, or a tree that is not the verified one): the index and shiftkit's
    files as they were, so `finish` can simply be run again."""
    again = (
        f"nothing was committed, and the index, {ctx.config.features} and the log are as "
        f"they were: fix what it reports (a fixer's changes are in the work tree) and run "
        f"`shiftkit finish` again, which verifies the tree it commits"
    )
    with undone_on_refusal(ctx, say, again):
        write_features(ctx, plan.flipped)
        write_planned_log(ctx, plan.log, plan.archive)
        ledger.close_unit(ctx, plan.held, "passed")
        gitio.run(["add", "-A"], ctx.root)
        tree = gitio.write_tree(ctx.root)
        _require_verified_tree(ctx, verified_tree, tree)
        command = verify.cache_command(verifier_of(ctx, plan.feature), ctx.config.verify_in)
        verify.record_pass(ctx.common_dir, tree, command)
        return commit(ctx, plan.message.replace("TREE", tree))


def _say_unstaged(ctx: Context, say: Say) -> None:
    """`finish` commits the whole work tree (`git add -A`; what .gitignore matches never):
    it names every path it adds that was not staged, so nothing lands unseen."""
    cfg = ctx.config
    ours = {cfg.features, cfg.progress, cfg.log.archive, ledger.LEDGER_FILE}
    added = sorted({path for path in verify.unstaged_paths(ctx.root) if path not in ours})
    if added:
        say(f"finish commits the work tree; adding what was not staged: {', '.join(added)}")


def _passes_at_head(ctx: Context, feature_id: str) -> bool:
    try:
        committed = read_features_at(ctx.root, "HEAD", ctx.config.features)
    except BadInput:
        return False
    return committed is not None and features.passes(committed, feature_id)


def _require_current_claim(ctx: Context, record: LocalClaim) -> None:
    if not ctx.config.claims.enabled:
        return
    problem = claims.current_problem(ctx.root, record)
    if problem is not None:
        raise Refused(f"{problem}; nothing was committed")
    from shiftkit.commands.claims import confirm_held

    confirm_held(ctx, record)  # (with a claims remote: still ours there, or dropped here)


def _require_verified_tree(ctx: Context, verified: str, committed: str) -> None:
    """The tree about to be committed must be the verified tree plus the bookkeeping files:
    something that changed the work tree meanwhile was not verified."""
    cfg = ctx.config
    ours = {cfg.features, cfg.progress, cfg.log.archive, ledger.LEDGER_FILE}
    changed = gitio.out(
        ["diff-tree", "-r", "--name-only", "-z", "--no-renames", verified, committed], ctx.root
    ).split("\0")
    strangers = [path for path in changed if path and path not in ours]
    if not strangers:
        return
    raise Refused(
        f"the work tree changed after the verifier ran ({', '.join(strangers[:3])}); "
        f"the tree to commit is not the tree verified, so nothing was committed — "
        f"run `shiftkit finish` again"
    )


def _precheck(
    ctx: Context,
    planned: features.FeatureList,
    log_text: str,
    archive_text: str | None,
    message: str,
    feature_id: str,
) -> None:
    """The hooks' rules (bar the verifier, which just passed) over the planned commit, judged
    by HEAD's settings, so a refusal comes before anything is written."""
    from shiftkit.edge import judge

    cfg = ctx.config
    names = (cfg.features, cfg.progress, cfg.log.archive)
    parents, blobs = snapshot.read_sides(ctx.root, ["HEAD"], names, ctx.common_dir)
    archive = archive_text if archive_text is not None else parents[0].archive
    proposed = rules.Proposed(features.dumps(planned), log_text, archive)
    settings = judge.judging(
        gitio.read_blobs(ctx.root, [f"HEAD:{n}" for n in judge.SETTINGS_FILES]),
        [read_optional_or_none(ctx.root / n) for n in judge.SETTINGS_FILES],
        has_parent=True,
    )
    report = rules.evaluate(
        parents,
        proposed,
        rules_to_check=rules.ALL - {rules.Rule.VERIFIED},
        names=names,
        message=message,
        claimed=feature_id,
        claims_enabled=cfg.claims.enabled,
        **snapshot.trust(parents, blobs, ctx.common_dir),
        checked=planned if planned.checked else None,  # (each change to it checked)
        judge=settings.judge,
    )
    if report.violations:
        raise Refused(f"{report.violations[0]}; nothing was changed")


def read_optional_or_none(path: Any) -> str | None:
    try:
        text: str = path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return None
    return text


# -- revert --------------------------------------------------------------------------------


def _failure_history_path(ctx: Context) -> Any:
    return state.repo_state(ctx.common_dir) / "failure-signatures.json"


def revert(ctx: Context, reason: str, say: Say) -> int:
    record = require_claim(ctx, "revert")
    if not reason.strip():
        raise BadInput("--reason is empty; say why the attempt failed")
    feature_id, base = record.feature, record.base
    if _already_committed(ctx, record):
        ending = _close_claim(ctx, record, say)
        say(f"the revert of {feature_id} was already recorded at HEAD; {ending}")
        return 0
    failure = state.read_json(_last_failure_path(ctx))
    if not isinstance(failure, dict) or failure.get("feature") != feature_id:
        failure = None
    again = (
        f"nothing was reverted: the work tree, the index and the claim on {feature_id} are as "
        f"they were; fix what it reports and run `shiftkit revert` again"
    )
    # Refused on the way (by a hook): the attempt's files, the branch and the index come back.
    with undone_on_refusal(ctx, say, again, work_tree=True):
        gitio.run(["reset", "-q", "--hard", base], ctx.root)
        # -d without -x: untracked files of the attempt go; ignored files and .git stay.
        gitio.run(["clean", "-f", "-d", "-q"], ctx.root)
        attempt = _record_attempt(ctx, record, reason, failure)
        outcome = "blocked" if attempt.blocked else "failed"
        ledger.close_unit(ctx, record, outcome, attempt.signature)
        new_head = commit_bookkeeping(ctx, attempt.message)
    if attempt.signature is not None and not attempt.repeated:
        history_path = _failure_history_path(ctx)
        history = state.read_json(history_path) or {}
        history[feature_id] = [*history.get(feature_id, []), attempt.signature]
        state.write_json(history_path, history)
    ending = _close_claim(ctx, record, say)
    say(
        f"reverted to {short(base)}; recorded attempt {attempt.number} of {feature_id} in "
        f"{short(new_head)}; {ending}"
    )
    if attempt.blocked is not None:
        say(f"{feature_id} is now BLOCKED ({attempt.blocked.reason}); a person must unblock it")
    _reset_environment(ctx, say)
    return 0


class Attempt(NamedTuple):
    number: int
    blocked: features.Blocked | None
    signature: str | None
    repeated: bool  # the same failure signature as an earlier attempt
    message: str  # of the commit that records it


def _record_attempt(
    ctx: Context, record: LocalClaim, reason: str, failure: dict[str, Any] | None
) -> Attempt:
    """Count the failed attempt in the feature list (blocking at the limit or a repeated
    failure) and log it; the files are written, not committed."""
    feature_id, base = record.feature, record.base
    feature_list = read_features(ctx.project)
    feature = features.require(feature_list, feature_id, ctx.config.features)
    attempts = feature.attempts + 1
    seen = (state.read_json(_failure_history_path(ctx)) or {}).get(feature_id, [])
    signature = failure["signature"] if failure else None
    repeated = signature is not None and signature in seen
    blocked = None
    if attempts >= ctx.config.max_attempts or repeated:
        why = (
            f"the same failure twice ({signature})"
            if repeated
            else f"{attempts} failed attempts (max_attempts = {ctx.config.max_attempts})"
        )
        blocked = features.Blocked(f"{why}; last: {reason.strip()}", iso_now(), attempts)
    updated = feature_list.replace_feature(feature._replace(attempts=attempts, blocked=blocked))
    outcome = f"attempt {attempts} failed, {'blocked' if blocked else 'reverted'}"
    body_lines = [reason.strip()]
    if failure:
        body_lines.append(f"verifier: {failure['summary']}; failure signature {signature}")
        body_lines += [f"    {line}" for line in failure["tail"].splitlines()[-5:]]
    log_text = _without_crashed_entry(
        read_optional(ctx.project.progress_path),
        feature_id,
        short(base),
        f"attempt {attempts} failed",
    )
    entry = progress.format_entry(
        log_time(), feature_id, outcome, short(base), _entry_body(ctx, "\n".join(body_lines), None)
    )
    write_features(ctx, updated)
    write_log(ctx, progress.append(log_text, entry), features.blocked_ids(updated))
    subject = f"{feature_id}: {outcome}"
    message = f"{subject}\n\n{reason.strip()}\n\nShiftkit-Claim: {record.oid or '-'}\n"
    return Attempt(attempts, blocked, signature, repeated, message)


def _reset_environment(ctx: Context, say: Say) -> None:
    command = ctx.config.env_reset
    if command:
        outcome = verify.run_command(command, ctx.root, ctx.config.verify_timeout)
        say(f"environment reset ({command}): {outcome.summary()}")
        if not outcome.ok:
            say(outcome.tail(5))
        return
    ignored = [
        line
        for line in gitio.out(["status", "--porcelain", "--ignored"], ctx.root).splitlines()
        if line.startswith("!!")
    ]
    say(
        "not restored: ignored files"
        + (f" ({len(ignored)} paths, e.g. {ignored[0][3:]})" if ignored else "")
        + ", running processes, databases and installed packages; to reset them after a "
        "revert, ask a person to set 'env_reset' in [shiftkit] of .shiftkit.toml (a setting "
        "the agent may not change)"
    )


# -- unblock -------------------------------------------------------------------------------


def _require_bookkeeping_clean(ctx: Context) -> None:
    cfg = ctx.config
    dirty = gitio.out(["status", "--porcelain", "--", cfg.features, cfg.progress], ctx.root)
    if dirty.strip():
        raise Refused(
            f"{cfg.features} or {cfg.progress} has uncommitted changes; commit or "
            f"restore them first"
        )


def unblock(ctx: Context, feature_id: str, note_text: str, say: Say) -> int:
    if not note_text.strip():
        raise BadInput("--note is empty; say what changed so the feature can be tried again")
    _require_bookkeeping_clean(ctx)
    feature_list = read_features(ctx.project)
    feature = features.require(feature_list, feature_id, ctx.config.features)
    if feature.blocked is None:
        raise Refused(f"{feature_id} is not blocked")
    sign = person_signs(ctx)  # before anything is written
    updated = feature_list.replace_feature(feature._replace(blocked=None, attempts=0))
    head = gitio.head_oid(ctx.root)
    entry = progress.format_entry(
        log_time(),
        feature_id,
        "unblocked",
        short(head),
        f"{note_text.strip()}\n(was blocked: {feature.blocked.reason})",
    )
    again = "nothing was committed and the files are as they were; run it again once fixed"
    with undone_on_refusal(ctx, say, again):
        write_features(ctx, updated)
        write_log(
            ctx,
            progress.append(read_optional(ctx.project.progress_path), entry),
            features.blocked_ids(updated),
        )
        new_head = commit_bookkeeping(
            ctx, f"{feature_id}: unblocked by a person\n\n{note_text.strip()}\n", sign
        )
    say(f"{feature_id} is unblocked (attempts reset) in {short(new_head)}")
    return 0


# -- override: a person's commit past rules 2, 6, 7 and 14 -----------------------------------


def override(ctx: Context, subject: str, reason: str, say: Say) -> int:
    """Commit what is staged with a `Shiftkit-Override` trailer (signed under the 'signed'
    policy). The hooks still run: only rules 2, 6, 7 and 14 can be overridden, never a flip's."""
    if not reason.strip() or "\n" in reason.strip():
        raise BadInput("--reason must be one non-empty line: why a person overrides the rules")
    problems = rules.check_message(subject)
    if problems:
        raise BadInput(f"-m: {problems[0].message}")
    if not gitio.out(["diff", "--cached", "--name-only"], ctx.root).strip():
        raise Refused("nothing is staged; `git add` the change to make as a person first")
    sign = person_signs(ctx)
    again = "nothing was committed and the index is as it was; run it again once fixed"
    with undone_on_refusal(ctx, say, again):
        message = f"{subject.strip()}\n\nShiftkit-Override: {reason.strip()}\n"
        new_head = commit(ctx, message, [], sign)
    say(f"committed {short(new_head)} as a person's override{' (signed)' if sign else ''}")
    return 0


# -- log -----------------------------------------------------------------------------------


def log_cmd(ctx: Context, do_prune: bool, say: Say) -> int:
    cfg = ctx.config
    text = read_optional(ctx.project.progress_path)
    if not do_prune:
        say(text.rstrip("\n"))
        return 0
    if state.local_claim(ctx.git_dir) is not None:
        raise Refused(
            "a claim is open; the log is pruned only at unit boundaries (finish, "
            "revert or release first)"
        )
    _require_bookkeeping_clean(ctx)
    log = progress.parse(text)
    if not progress.due(log, cfg.log.keep, cfg.log.block):
        say(
            f"nothing to prune: {len(log.entries)} entries, pruned above "
            f"{cfg.log.keep + cfg.log.block}"
        )
        return 0
    again = "nothing was committed and the log is as it was; run it again once fixed"
    with undone_on_refusal(ctx, say, again):
        write_log(ctx, text, features.blocked_ids(read_features(ctx.project)))
        new_head = commit(
            ctx, "Prune the progress log into the archive\n", [cfg.progress, cfg.log.archive]
        )
    say(f"pruned the log in {short(new_head)}")
    return 0


# -- the agent harness's Stop hook -----------------------------------------------------------


STOP_PATHS_SHOWN = 5


def _unpublished(ctx: Context) -> str | None:
    """What this clone finished but the claims remote does not have (as last fetched or
    pushed: no network): commits of this branch not on the remote's, and claims whose
    finishing commit waits to land there (still held on the remote). None: all published."""
    from shiftkit.commands import claims as claiming
    from shiftkit.edge import remote

    name = ctx.config.claims.remote
    branch = gitio.branch(ctx.root)
    if not name or branch is None:
        return None
    waiting = [row.feature for row in claiming.parked(ctx)]
    tracking = remote.tracking_ref(name, branch)
    has_tracking = bool(gitio.refs(ctx.root, tracking))
    ahead = gitio.run(
        ["rev-list", "--count", f"{tracking}..HEAD" if has_tracking else "HEAD"],
        ctx.root,
        check=False,
    ).stdout.strip()
    count = int(ahead) if ahead.isdigit() else 0
    if not count and not waiting:
        return None
    parts = []
    if count:
        parts.append(
            f"{count} commit{'s' if count != 1 else ''} of {branch} not on {name}/{branch}"
        )
    if waiting:
        parts.append(f"the claim on {', '.join(waiting)} still held on {name}")
    return f"this session's finished work is not published ({'; '.join(parts)})"


def stop_check(ctx: Context, hook_input: str, say_err: Say) -> int:
    """The harness's Stop hook: exit 2 (the reason on stderr) while the tree is dirty —
    with a claim open, or without one (untracked files that are not ignored count) — or,
    with a claims remote and no claim open, while finished work is not on the remote or a
    finished claim is still held there (`_unpublished`, issue 29). When
    the harness says the agent was already sent back once (`stop_hook_active`), it lets the
    session stop, and with a claim open writes that down: a session is never trapped."""
    dirty = gitio.status_lines(ctx.root)
    try:
        payload = jsonbound.loads(hook_input, "hook input") if hook_input.strip() else {}
    except BadInput:
        payload = {}
    active = isinstance(payload, dict) and payload.get("stop_hook_active") is True
    record = state.local_claim(ctx.git_dir)
    if not dirty:
        unpublished = None if active or record is not None else _unpublished(ctx)
        if unpublished is None:
            return 0
        say_err(f"shiftkit: {unpublished}: run `shiftkit sync` before stopping")
        return 2
    if record is None:
        if active:
            return 0
        shown = [line[3:] for line in dirty[:STOP_PATHS_SHOWN]]
        more = f" and {len(dirty) - len(shown)} more" if len(dirty) > len(shown) else ""
        paths = "1 uncommitted path" if len(dirty) == 1 else f"{len(dirty)} uncommitted paths"
        say_err(
            f"shiftkit: no claim is open and the work tree has {paths} "
            f"({', '.join(shown)}{more}); leave it clean before stopping: commit it "
            f"(`git commit -m` with a message that says what changed), put it away with "
            f"`git stash --include-untracked`, or delete it"
        )
        return 2
    feature_id = record.feature
    if active:
        add_note(
            ctx,
            f"[{iso_now()}] the session stopped with {feature_id} claimed and "
            f"{len(dirty)} uncommitted paths (e.g. {dirty[0][3:]})",
        )
        return 0
    say_err(
        f"shiftkit: {feature_id} is claimed and the tree has {len(dirty)} uncommitted changes: "
        f"run `shiftkit finish -m ...` if it works, `shiftkit revert --reason ...` if not, "
        f"or `shiftkit release` to hand it back, before stopping"
    )
    return 2
