"""The unit of work: claim, verify, finish or revert, release — plus unblock and notes.

Every state change is a sequence of atomic steps chosen so that a kill at any instant leaves
HEAD at the base or at the new commit, valid files, and a claim that is visible and can be
finished, reverted or released. Re-running an interrupted `finish` or `revert` completes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from shiftkit.commands import catch_up
from shiftkit.core import features, jsonbound, progress, rules
from shiftkit.core.claim import LocalClaim
from shiftkit.core.errors import BadInput, Refused
from shiftkit.edge import finish_plan, gate, gitio, ledger, state, verify
from shiftkit.edge.committing import commit, commit_bookkeeping
from shiftkit.edge.context import (
    Context,
    add_note,
    head_trailer,
    iso_now,
    log_time,
    person_signs,
    short,
    write_features,
    write_log,
)
from shiftkit.edge.files import read_optional
from shiftkit.edge.project import read_features
from shiftkit.edge.undo import undone_on_refusal

Say = Callable[[str], None]


def require_claim(ctx: Context, action: str) -> LocalClaim:
    record = state.local_claim(ctx.git_dir)
    if record is None:
        raise Refused(
            f"no open claim in this worktree, nothing to {action}; take one with `shiftkit claim`"
        )
    return record


# -- notes ---------------------------------------------------------------------------------


def note(ctx: Context, text: str, say: Say) -> int:
    record = require_claim(ctx, "note")
    if not text.strip():
        raise BadInput("the note is empty; say what you learned or what to watch out for")
    add_note(ctx, text)
    say(f"noted for the {record.feature} log entry")
    return 0


# -- verify --------------------------------------------------------------------------------


def verify_cmd(ctx: Context, feature_id: str | None, say: Say) -> int:
    feature_list = read_features(ctx.project)
    if feature_id is None:
        feature_id = require_claim(ctx, "verify").feature
    feature = features.require(feature_list, feature_id, ctx.config.features)
    passed, _ = gate.verify_work(ctx, feature, say)
    return 0 if passed else 1


# -- closing a unit ------------------------------------------------------------------------


def _already_committed(ctx: Context, held: LocalClaim) -> bool:
    return bool(held.oid) and held.oid in head_trailer(ctx, "Shiftkit-Claim")


def _close_claim(ctx: Context, held: LocalClaim, say: Say) -> str:
    """Publish the unit's commit and let the claim go — a push that lost a race catches up
    through the judged sync, as `finish` does (`publish.publish`); returns how the caller's
    last line ends (where the claim is now)."""
    from shiftkit.commands import publish

    head = gitio.head_oid(ctx.root) or ""
    ending = publish.publish(ctx, held, head, say).ending
    gate.last_failure_path(ctx).unlink(missing_ok=True)
    return ending


# -- revert --------------------------------------------------------------------------------


def _failure_history_path(ctx: Context) -> Any:
    return state.repo_state(ctx.common_dir) / "failure-signatures.json"


def revert(ctx: Context, reason: str, say: Say) -> int:
    from shiftkit.commands import claims as claiming
    from shiftkit.commands import own_claims

    if not reason.strip():
        raise BadInput("--reason is empty; say why the attempt failed")
    for line in own_claims.release_orphans(ctx):
        say(line)
    recovered = None
    if state.local_claim(ctx.git_dir) is None:  # (an earlier session's claim of this clone)
        recovered = own_claims.recover(ctx, None, "revert", say)
    record = recovered if recovered is not None else require_claim(ctx, "revert")
    if recovered is not None and not gitio.is_ancestor(ctx.root, record.base, "HEAD"):
        raise Refused(
            f"the claim on {record.feature} stands on {short(record.base)}, which this "
            f"branch does not hold (it was taken in another worktree); `shiftkit release "
            f"{record.feature}` lets it go without resetting this branch"
        )
    feature_id, base = record.feature, record.base
    if _already_committed(ctx, record):
        ending = _close_claim(ctx, record, say)
        say(f"the revert of {feature_id} was already recorded at HEAD; {ending}")
        return claiming.exit_when_published(ctx, record, say)
    failure = state.read_json(gate.last_failure_path(ctx))
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
        # (the attempt's record lands on the remote's tip when only behind it: no merge)
        moved = catch_up.only_behind(ctx, say)
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
    caught = f", then fast-forwarded to the remote's tip ({moved} new)" if moved else ""
    say(
        f"reverted to {short(base)}{caught}; recorded attempt {attempt.number} of "
        f"{feature_id} in {short(new_head)}; {ending}"
    )
    if attempt.blocked is not None:
        say(f"{feature_id} is now BLOCKED ({attempt.blocked.reason}); a person must unblock it")
    _reset_environment(ctx, say)
    return claiming.exit_when_published(ctx, record, say)  # (1: not on the remote)


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
    log_text = finish_plan.without_crashed_entries(
        read_optional(ctx.project.progress_path),
        short(base),
        lambda e: e.feature == feature_id and e.outcome.startswith(f"attempt {attempts} failed"),
    )
    entry = progress.format_entry(
        log_time(),
        feature_id,
        outcome,
        short(base),
        finish_plan.entry_body(ctx, "\n".join(body_lines), None),
    )
    write_features(ctx, updated)
    write_log(ctx, progress.append(log_text, entry), features.blocked_ids(updated))
    subject = f"{feature_id}: {outcome}"
    message = f"{subject}\n\n{reason.strip()}\n\nShiftkit-Claim: {record.oid or '-'}\n"
    return Attempt(attempts, blocked, signature, repeated, message)


def _reset_environment(ctx: Context, say: Say) -> None:
    command = ctx.config.env_reset
    if command:
        outcome = verify.run_command(
            command, ctx.root, ctx.config.verify_timeout, leave_running=True
        )
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
    from shiftkit.edge import claims, ownership, session

    now = session.current(ctx.git_dir)
    waiting = []
    for row in claiming.parked(ctx):
        if not ownership.on_a_branch(ctx.root, row.commit):
            continue  # (dropped unpublished: nothing to publish; the next command releases it)
        record = claims.read_claim(ctx.root, row.feature, row.oid).record
        whose = "" if record is None or record.session == now else f" (session {record.session}'s)"
        waiting.append(row.feature + whose)
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
    return f"this clone's finished work is not published ({'; '.join(parts)})"


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
        f"shiftkit: {feature_id} is claimed and the tree has {len(dirty)} uncommitted "
        f"change{'s' if len(dirty) != 1 else ''}: "
        f"run `shiftkit finish -m ...` if it works, `shiftkit revert --reason ...` if not, "
        f"or `shiftkit release` to hand it back, before stopping"
    )
    return 2


def stop_check_cmd(hook_input: str, warn: Say) -> int:
    """`shiftkit stop-check` (`stop_check`), which must never trap an agent: when it cannot
    decide, the session may stop (0, the reason on `warn`)."""
    from shiftkit.core.errors import OK, ShiftkitError
    from shiftkit.edge.context import open_context

    try:
        return stop_check(open_context(), hook_input, warn)
    except ShiftkitError as exc:
        warn(f"shiftkit: stop-check cannot decide ({exc.message}); letting the session stop")
        return OK
