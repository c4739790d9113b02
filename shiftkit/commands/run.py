"""`shiftkit run --agent CMD`: the outer loop, one agent session after another.

Before each session the start check; after it, the usage recorded (the transcript or rollout
its hooks named; a `codex exec --json` session's rollout, found by its thread id; else the
usage the session printed: Claude Code's `-p --output-format json` result, Codex's
`turn.completed` events — one source per session, decision 0040), a claim the session
abandoned reverted (dirty tree: an attempt, logged) or released, the session's commits
audited, and the decision (`core.loop.decide`) taken on what HEAD says. `--agent claude`
and `--agent codex` are presets (`core.loop.preset_command`).
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, NamedTuple

from shiftkit.core import cost, features, jsonbound, ledger, loop, rollout
from shiftkit.core.errors import BadInput, Refused
from shiftkit.core.ledger import Usage
from shiftkit.core.words import counted
from shiftkit.edge import gitio, state
from shiftkit.edge import ledger as ledger_io
from shiftkit.edge import prices as price_table
from shiftkit.edge.context import Context, head_trailer, open_context, short
from shiftkit.edge.project import read_features, read_features_at

Say = Callable[[str], None]


class Session(NamedTuple):
    """What one agent session did, as the loop saw it afterwards."""

    number: int
    exit_code: int | None  # None: killed at the session timeout or by Ctrl-C
    outcome: str
    feature: str | None
    signature: str | None
    tokens: int
    fresh_equivalent: float
    tail: tuple[str, ...] = ()  # the agent's last output lines
    ids: tuple[str, ...] = ()  # the session ids its usage is recorded under

    @property
    def agent_failed(self) -> bool:
        """The agent itself failed (a non-zero exit, the timeout): its words say why. (A
        feature that failed its verifier is told by the revert's log entry.)"""
        return self.exit_code != 0


def head_list(ctx: Context) -> features.FeatureList:
    committed = read_features_at(ctx.root, "HEAD", ctx.config.features)
    return committed if committed is not None else read_features(ctx.project)


_COUNTS: dict[str, tuple[int, int, int]] = {}  # by the list's blob id: content-addressed


def verified_counts(ctx: Context) -> tuple[int, int, int]:
    """(total, passing, claimable) by the feature list at HEAD."""
    spec = f"HEAD:{ctx.config.features}"
    blob = gitio.run(["rev-parse", "-q", "--verify", spec], ctx.root, check=False).stdout.strip()
    if blob and blob in _COUNTS:
        return _COUNTS[blob]  # (the id alone: a 5,000-feature list is a megabyte to read)
    listing = head_list(ctx)
    passing = sum(1 for item in listing.items if item.get("passes") is True)
    counts = len(listing.items), passing, loop.claimable(listing.items)
    if blob:
        _COUNTS[blob] = counts
    return counts


def with_the_team(ctx: Context, current: loop.State, say: Say) -> loop.State:
    """With a claims remote, and no claim of this clone open: the branch brought up to the
    remote's when it is only behind (as `claim` would, before a session is spent on it), and
    what can be picked counted as `claim` counts it — a feature another clone or session
    holds cannot be (`loop.ALL_CLAIMED`: wait, do not spend a session finding that out)."""
    from shiftkit.commands import catch_up, upcoming
    from shiftkit.edge import remote

    name = ctx.config.claims.remote
    if not name or state.local_claim(ctx.git_dir) is not None:
        return current
    try:
        _publish_waiting(ctx, say)
        look = upcoming.outlook(ctx, head_list(ctx), fresh=True)
        branch = gitio.branch(ctx.root)
        if look.counted_on and branch and not gitio.status_lines(ctx.root):
            catch_up.catch_up(ctx, name, branch, lambda text: None)
            say(f"caught up with {look.counted_on}")
            ctx = open_context()
            look = upcoming.outlook(ctx, head_list(ctx))
    except (remote.Unreachable, Refused, BadInput) as problem:
        say(f"the claims remote was not asked: {problem}; counting what HEAD says")
        return current
    total, passing, claimable = verified_counts(ctx)
    pickable = len(look.next(limit=None))
    return current._replace(
        total=total,
        passing=passing,
        claimable=pickable,
        held_elsewhere=max(0, claimable - pickable),
    )


def _after_a_killed_merge(ctx: Context, say: Say) -> None:
    """An agent stopped (timeout, Ctrl-C, a team's budget) while its `finish` or `sync` was
    merging leaves git's own debris: an unfinished merge, and the merge driver's temporary
    `.merge_file_*` files. Nothing of the agent's work is in them (its commit is made or
    parked before a merge starts); they are cleared so the loop can go on without a person."""
    if (ctx.git_dir / "MERGE_HEAD").exists() and state.local_claim(ctx.git_dir) is None:
        gitio.run(["merge", "--abort"], ctx.root, check=False)
        say("an unfinished merge (an agent stopped while it merged) was aborted")
    debris = [p for p in ctx.root.glob(".merge_file_*") if p.is_file()]
    untracked = set(
        gitio.out(["ls-files", "--others", "--", ".merge_file_*"], ctx.root).splitlines()
    )
    gone = [p for p in debris if p.name in untracked]
    for path in gone:
        path.unlink()
    if gone:
        say(f"removed git's temporary files of a stopped merge ({len(gone)} .merge_file_*)")


def _publish_waiting(ctx: Context, say: Say) -> None:
    """What this clone committed that the remote lacks goes first, through `sync` (judged,
    what it broke demoted where it broke, pushed): a finished commit whose push never landed
    (its claim is this clone's, and no one else may take the feature), and a plain commit or
    a start check's demotion an agent left — unpublished, it would strand this clone (its
    list says one thing, the team's another) and hide the break from the team that must
    repair it."""
    from shiftkit.commands import sync
    from shiftkit.edge import parking, remote

    if gitio.status_lines(ctx.root):
        return
    waiting = sorted({row.feature for row in parking.read(ctx.git_dir)})
    branch = gitio.branch(ctx.root)
    counts = remote.divergence(ctx.root, ctx.config.claims.remote, branch) if branch else None
    if not waiting and (counts is None or not counts[0]):
        return
    said: list[str] = []
    sync.sync(ctx, said.append)
    what = (
        f"the finished work waiting here ({', '.join(waiting)})"
        if waiting
        else (
            f"the {counts[0] if counts else ''} commit{'s' if counts and counts[0] != 1 else ''} "
            f"left here unpublished"
        )
    )
    say(f"published {what}: {said[-1]}")


def run(
    agent: str,
    limits: loop.Limits,
    prompt_on_stdin: bool,
    say: Say,
    verbose: bool = False,
    bypass_hook_trust: bool = False,
) -> int:
    ctx = open_context()
    command = loop.preset_command(agent.strip(), str(ctx.common_dir)) or shlex.split(agent)
    if not command:
        raise BadInput("--agent is empty; give the command that runs one agent session")
    command = _codex_hooks(ctx, command, bypass_hook_trust)
    _after_a_killed_merge(ctx, say)
    if gitio.status_lines(ctx.root) and state.local_claim(ctx.git_dir) is None:
        raise Refused(
            "the work tree is not clean; commit it, `git stash --include-untracked` or "
            "delete it before `shiftkit run`"
        )
    # Ctrl-C (or `kill -INT`) stops the loop and cleans up the open claim, whatever SIGINT
    # state this process inherited: a shell starts a background job with SIGINT ignored, and
    # the loop would then run on through every session.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    run_id = os.urandom(3).hex()
    known = {e.id for e in ledger_io.read_all(ctx)}
    mine: set[str] = set()  # this run's sessions (a teammate's usage arrives here too)
    total, passing, claimable = verified_counts(ctx)
    current = loop.State(total, passing, claimable)
    sessions: list[Session] = []
    stop: loop.Stop | None = None
    try:
        while True:
            ctx = open_context()  # (a session may have committed new settings)
            current = with_the_team(ctx, current, say)
            stop = loop.decide(current, limits)
            if stop is not None and stop.code == loop.ALL_PASS:
                stop = _checked_at_head(ctx, say)
                if stop is None:  # demoted: repair first, in the next session
                    total, passing, claimable = verified_counts(open_context())
                    current = current._replace(total=total, passing=passing, claimable=claimable)
                    stop = loop.decide(current, limits)
            if stop is not None:
                break
            number = current.sessions + 1
            head_before = gitio.head_oid(ctx.root)
            session = one_session(
                ctx, command, number, run_id, limits, prompt_on_stdin, say, verbose
            )
            ctx = open_context()
            _audit_since(ctx, head_before, session.number)
            total, passing, claimable = verified_counts(ctx)
            current = loop.after(
                current._replace(total=total), passing, claimable, session.signature
            )
            mine.update(session.ids)
            spent = _spent(ctx, known, mine)
            current = current._replace(
                spent_tokens=spent.fresh_equivalent, spent_usd=spent.usd or 0.0
            )
            sessions.append(session)
            say(_session_line(session, passing, total))
            if session.agent_failed and not verbose:
                _say_tail(session, say)
    except KeyboardInterrupt:
        ctx = open_context()
        number = current.sessions + 1
        _clean_up(ctx, number, f"run-{run_id}-{number}", "was interrupted (Ctrl-C)", say)
        stop = loop.Stop(loop.INTERRUPTED, "interrupted (Ctrl-C); the open claim was cleaned up")
    _summary(open_context(), stop, sessions, known, mine, say)
    return stop.code


def _codex_hooks(ctx: Context, command: list[str], bypass: bool) -> list[str]:
    """A Codex session runs the project's hooks only when Codex trusts them (decision 0059):
    with ``bypass``, Codex is told to run them anyway; without it, a loop whose hooks Codex
    would skip is refused before it starts."""
    is_codex = Path(command[0]).name == "codex" and "exec" in command[1:3]
    if not is_codex:
        if bypass:
            raise BadInput("--dangerously-bypass-hook-trust is for --agent codex (Codex CLI)")
        return command
    if bypass:
        flag = "--dangerously-bypass-hook-trust"
        return command if flag in command else [*command[:2], flag, *command[2:]]
    from shiftkit.edge import codex_trust

    advice = codex_trust.line(ctx.root, command[0] if os.sep in command[0] else None)
    if advice:
        raise Refused(f"{advice}; `shiftkit run` will not start sessions whose hooks do not run")
    return command


def one_session(
    ctx: Context,
    command: list[str],
    number: int,
    run_id: str,
    limits: loop.Limits,
    prompt_on_stdin: bool,
    say: Say,
    verbose: bool = False,
) -> Session:
    from shiftkit.commands import start as startup

    if not startup.has_green_check(ctx):
        record = startup.run_checks(ctx, lambda text: None)
        for step in (s for s in record.steps if not s.ok):
            failure = loop.step_failure(step.name, step.command, step.summary, step.tail)
            say(f"  start check: {failure}")
        if record.demoted:
            say(f"  start check: demoted {', '.join(record.demoted)} (repair first)")
    listing = head_list(ctx)
    text = loop.prompt([str(item.get("id")) for item in listing.items[:2]])
    argv = loop.agent_argv(command, text, prompt_on_stdin)
    session_id = f"run-{run_id}-{number}"
    started = ledger_io.now()
    started_clock = time.time()
    head_before = gitio.head_oid(ctx.root)
    env = {**os.environ, "SHIFTKIT_SESSION": session_id}
    if verbose or _on_terminal():  # a person watching sees the session begin, not silence
        say(f"session {number}: started ({shlex.join(command)})")
    echo = (lambda line: say(f"  | {line}")) if verbose else None
    agent_run = run_agent(
        argv, ctx, env, text if prompt_on_stdin else "", limits.session_timeout, echo
    )
    exit_code, out, err = agent_run.exit_code, agent_run.stdout, agent_run.stderr
    ctx = open_context()
    result = parse_result(out)
    codex_run = rollout.exec_events(out) if result is None else None
    abandoned = _clean_up(
        ctx,
        number,
        session_id,
        "timed out" if exit_code is None else f"ended (exit {exit_code})",
        say,
    )
    from shiftkit.edge import session as sessions

    own = sessions.harness_session(ctx.git_dir, session_id)  # the harness's id, when it sent one
    names = {session_id, own} if own else {session_id}
    units = [
        e
        for e in ledger_io.read_all(ctx)
        if e.kind == "unit" and e.at >= started and e.session in names
    ]
    feature = units[-1].feature if units else None
    worked_on = sorted({u.feature for u in units if u.feature})
    ledger_io.record_known_transcript(ctx)  # (the file its hooks named: the usage it holds)
    if result is not None:
        _record_result(ctx, result, session_id, worked_on)
    if codex_run is not None:
        _record_codex(ctx, codex_run, session_id, worked_on, started_clock)
    said = err if err.strip() or result is not None or codex_run is not None else out
    outcome, signature = _outcome(units, abandoned, exit_code, said, head_before, ctx)
    sids = set(names)
    if result is not None and isinstance(result.get("session_id"), str):
        sids.add(result["session_id"])
    if codex_run is not None and codex_run.thread_id:
        sids.add(codex_run.thread_id)
    spent = _session_spend(ctx, sids)
    return Session(
        number,
        exit_code,
        outcome,
        feature,
        signature,
        spent.usage.tokens,
        spent.fresh_equivalent,
        tuple(loop.tail(agent_run.lines)),
        tuple(sorted(sids)),
    )


def _on_terminal() -> bool:
    import sys

    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


class AgentRun(NamedTuple):
    exit_code: int | None  # None: killed at the session timeout
    stdout: str
    stderr: str
    lines: list[str]  # both streams' lines, in the order they were read


def run_agent(
    argv: list[str],
    ctx: Context,
    env: dict[str, str],
    stdin_text: str,
    timeout: float | None,
    echo: Say | None,
) -> AgentRun:
    """Run one agent session, reading its standard output and error as they come: each line
    is kept (and given to ``echo`` at once, for `run --verbose`)."""
    try:
        proc = subprocess.Popen(
            argv,
            cwd=ctx.root,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            bufsize=1,
            start_new_session=True,  # Ctrl-C reaches shiftkit, which stops the agent
        )
    except OSError as exc:
        raise BadInput(f"--agent: cannot run {argv[0]!r}: {exc.strerror or exc}") from None
    lines: list[str] = []
    out: list[str] = []
    err: list[str] = []
    lock = threading.Lock()

    def pump(stream: IO[str] | None, kept: list[str]) -> None:
        for line in stream or ():
            kept.append(line)
            with lock:
                lines.append(line.rstrip("\n"))
                if echo is not None:
                    echo(line.rstrip("\n"))

    readers = [
        threading.Thread(target=pump, args=(proc.stdout, out), daemon=True),
        threading.Thread(target=pump, args=(proc.stderr, err), daemon=True),
    ]
    for reader in readers:
        reader.start()
    exit_code: int | None
    try:
        try:
            if proc.stdin is not None:
                if stdin_text:
                    proc.stdin.write(stdin_text)
                proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass  # the agent does not read its input
        exit_code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        exit_code = None
    except KeyboardInterrupt:
        _kill(proc)
        raise
    for reader in readers:
        reader.join(timeout=10)  # (a daemon the agent left behind may hold the pipe open)
    with lock:
        return AgentRun(exit_code, "".join(out), "".join(err), list(lines))


def _kill(proc: subprocess.Popen[str]) -> None:
    """End the agent and every process it started in its group, and wait until none is left:
    a `shiftkit claim` it ran may still be taking a claim, and the clean-up after it must see
    what that left."""
    from shiftkit.edge import process

    process.end_group(proc.pid, grace=5.0)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _clean_up(ctx: Context, number: int, session_id: str, how: str, say: Say) -> str | None:
    """A claim the session left open: reverted when the tree is dirty (an attempt, logged),
    released when it is clean; one the remote took for it that was never written down here
    (stopped in between), released. Returns the feature reverted, if any."""
    from shiftkit.commands import claims, own_claims, shift
    from shiftkit.core.errors import ShiftkitError

    _after_a_killed_merge(ctx, say)
    held = state.local_claim(ctx.git_dir)
    if held is None:
        try:
            lost = own_claims.release_lost(ctx, session_id) if ctx.config.claims.remote else []
        except ShiftkitError as problem:
            say(f"  session {number}: its claims on the remote were not looked at ({problem})")
            return None
        for feature_id in lost:
            say(
                f"  session {number} {how} after the remote took its claim on {feature_id}, "
                f"before it was written down here: released"
            )
        return None
    quiet: Say = lambda text: None  # noqa: E731
    if held.oid and held.oid in head_trailer(ctx, "Shiftkit-Claim"):
        # stopped between its commit and its push: publishing it is what finish does next
        # (releasing it would let another agent do the feature again)
        from shiftkit.commands import finish

        try:
            published = finish.finish(ctx, "", None, quiet) == 0
        except ShiftkitError:
            published = False
        said = "published it" if published else "it waits here for `shiftkit sync`"
        say(f"  session {number} {how} after committing {held.feature}: {said}")
        return None
    dirty = gitio.status_lines(ctx.root)
    if dirty:
        reason = (
            f"abandoned: session {number} of `shiftkit run` {how} with {held.feature} claimed "
            f"and {len(dirty)} uncommitted paths (e.g. {dirty[0][3:]})"
        )
        shift.revert(ctx, reason, quiet)
        say(
            f"  session {number} abandoned {held.feature} with a dirty tree: reverted, "
            f"attempt counted"
        )
        return held.feature
    claims.release(ctx, None, False, quiet)
    say(f"  session {number} left {held.feature} claimed with a clean tree: released")
    return None


def _outcome(
    units: list[ledger.Entry],
    abandoned: str | None,
    exit_code: int | None,
    output: str,
    head_before: str | None,
    ctx: Context,
) -> tuple[str, str | None]:
    """The session's outcome in words, and its failure signature (None: no failure)."""
    if units:
        last = units[-1]
        word = "abandoned, reverted" if abandoned and last.feature == abandoned else last.outcome
        signature = None
        if last.outcome in ("failed", "blocked"):
            signature = f"{last.feature}: {last.signature or 'reverted'}"
            if abandoned and last.feature == abandoned and not last.signature:
                signature = f"{last.feature}: abandoned"
            reverted_here = abandoned and last.feature == abandoned  # (the line says so)
            why = _attempt_reason(ctx, last.feature) if last.feature else ""
            if why and not reverted_here:
                word = f"{word} ({why})"
        return f"{last.feature} {word}", signature
    if exit_code is None:
        return "timed out", "timeout"
    if exit_code != 0:
        return f"agent exited {exit_code}", loop.exit_signature(exit_code, output)
    moved = gitio.head_oid(ctx.root) != head_before
    return ("committed, no unit" if moved else "no unit of work"), None


def parse_result(stdout: str) -> dict[str, Any] | None:
    """Claude Code's `-p --output-format json` result (or the last result line of
    `stream-json`), when the agent printed one."""
    candidates = [stdout.strip(), *reversed(stdout.strip().splitlines())]
    for text in candidates:
        if not text.startswith("{"):
            continue
        try:
            value = jsonbound.loads(text, "the agent's result")
        except BadInput:
            continue
        if isinstance(value, dict) and value.get("type") == "result":
            return value
    return None


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _number(value: object) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
    return float(value) if ok else None  # type: ignore[arg-type]


def result_usage(result: dict[str, Any]) -> list[tuple[str, Usage, float | None]]:
    """(model, usage, money) from a result: per model (`modelUsage`) when given, else the
    session's `usage` with `total_cost_usd`."""
    per_model = result.get("modelUsage")
    if isinstance(per_model, dict) and per_model:
        found = []
        for model, item in per_model.items():
            if not isinstance(item, dict):
                continue
            spent = Usage(
                _int(item.get("inputTokens")),
                _int(item.get("cacheReadInputTokens")),
                _int(item.get("cacheCreationInputTokens")),
                _int(item.get("outputTokens")),
            )
            found.append((str(model), spent, _number(item.get("costUSD"))))
        return found
    usage = result.get("usage")
    if not isinstance(usage, dict):
        return []
    spent = Usage(
        _int(usage.get("input_tokens")),
        _int(usage.get("cache_read_input_tokens")),
        _int(usage.get("cache_creation_input_tokens")),
        _int(usage.get("output_tokens")),
    )
    return [("unknown", spent, _number(result.get("total_cost_usd")))]


def _record_result(
    ctx: Context, result: dict[str, Any], session_id: str, worked_on: list[str]
) -> None:
    """The result's usage, unless the SessionEnd hook recorded the session's transcript
    already (each token once). Attributed to the one feature the session worked on, else
    unattributed."""
    claude_session = result.get("session_id")
    sid = claude_session if isinstance(claude_session, str) and claude_session else session_id
    entries = ledger_io.read_all(ctx)
    if any(e.kind == "usage" and e.session == sid and e.source == "transcript" for e in entries):
        return
    if any(e.kind == "usage" and e.session == sid and e.source == "result" for e in entries):
        return
    feature = worked_on[0] if len(worked_on) == 1 else None
    for model, spent, usd in result_usage(result):
        if spent.tokens or usd:
            ledger_io.add_usage(
                ctx, spent, model=model, session=sid, source="result", feature=feature, usd=usd
            )


def _record_codex(
    ctx: Context,
    codex_run: rollout.ExecRun,
    session_id: str,
    worked_on: list[str],
    started: float,
) -> None:
    """A `codex exec --json` session's usage: from its rollout when it can be found (each
    response at its time, to the feature claimed then); else from the ``turn.completed``
    events it printed, unless its rollout was recorded already (one source per session,
    decision 0040), attributed as `_record_result` does."""
    from shiftkit.edge import codex

    sid = codex_run.thread_id or session_id
    path = codex.rollout_of(codex_run.thread_id, started - 60) if codex_run.thread_id else None
    if path is not None:
        ledger_io.record_transcript(ctx, path, sid)
        return
    entries = ledger_io.read_all(ctx)
    if ledger.recorded(entries, sid, "transcript") or ledger.recorded(entries, sid, "result"):
        return
    if codex_run.usage.tokens:
        feature = worked_on[0] if len(worked_on) == 1 else None
        ledger_io.add_usage(
            ctx,
            codex_run.usage,
            model=rollout.UNKNOWN_MODEL,
            session=sid,
            source="result",
            feature=feature,
        )


def _session_spend(ctx: Context, sids: set[str]) -> cost.Spend:
    total = cost.Spend()
    prices = price_table.book(ctx.config.prices)
    for entry in ledger_io.read_all(ctx):
        if entry.kind == "usage" and entry.session in sids:
            total = total + cost.spend_of(entry, ctx.config.cost, prices)
    return total


def _spent(ctx: Context, known: set[str], mine: set[str]) -> cost.Spend:
    """What this run has spent: the usage entries of its sessions written since it began
    (not a teammate's, which a catch-up or a fetched usage ref brings here meanwhile)."""
    total = cost.Spend()
    prices = price_table.book(ctx.config.prices)
    for entry in ledger_io.read_all(ctx):
        if entry.kind == "usage" and entry.id not in known and entry.session in mine:
            total = total + cost.spend_of(entry, ctx.config.cost, prices)
    return total


def _checked_at_head(ctx: Context, say: Say) -> loop.Stop | None:
    """Every feature is marked passing: `check` at HEAD before saying so. The stop when all
    pass there; None when it demoted features (the loop goes on, repairing them first)."""
    from shiftkit.commands import check

    report = check.verify_head(ctx, None, True)
    if report.all_pass:
        return loop.Stop(loop.ALL_PASS, f"all {report.features} features pass (checked at HEAD)")
    if report.demoted_in is not None:
        ids = ", ".join(f.id for f, _ in report.failed)
        say(f"check at HEAD: {ids} failed, demoted in {short(report.demoted_in)}: repair first")
        return None
    return loop.Stop(
        loop.NOT_CHECKED,
        f"every feature is marked passing, but {', '.join(report.unverifiable)} cannot be "
        f"checked at HEAD (no verify command): a person must give it one",
    )


def _audit_since(ctx: Context, head_before: str | None, number: int) -> None:
    """The session's new commits must pass `audit`: what HEAD says passes is only believed
    when the commits that say it keep the rules."""
    from shiftkit.commands import audit as audit_mod

    if head_before is None or gitio.head_oid(ctx.root) == head_before:
        return
    selected = audit_mod.commits_in(ctx.root, head_before)
    findings = audit_mod.audit_commits(ctx, selected, False, lambda text: None)
    bad = [f for f in findings if f.violations]
    if bad:
        first = bad[0]
        raise Refused(
            f"session {number} made commits the rules refuse ({short(first.commit)}: "
            f"{first.violations[0]}); the loop stops — see `shiftkit audit`"
        )


def _attempt_reason(ctx: Context, feature_id: str) -> str:
    """Why the newest failed attempt at ``feature_id`` failed: the first line of its log
    entry (the reason `revert` was given), cut to one short line."""
    from shiftkit.core import orientation, progress
    from shiftkit.edge.files import read_optional

    try:
        log = progress.parse(read_optional(ctx.project.progress_path))
    except BadInput:
        return ""
    for entry in reversed(log.entries):
        if entry.feature == feature_id and entry.outcome.startswith("attempt"):
            body = entry.text.splitlines()[1:]
            first = next((line.strip() for line in body if line.strip()), "")
            return orientation.clip(first, 100)
    return ""


def _session_line(session: Session, passing: int, total: int) -> str:
    return (
        f"session {session.number}: {session.outcome} · {passing}/{total} passing · "
        f"{session.tokens:,} tokens ({cost.number(round(session.fresh_equivalent, 1))} "
        f"fresh-equivalent)"
    )


def _say_tail(session: Session, say: Say) -> None:
    """A failed session's last output lines: the agent's own words for what went wrong."""
    if not session.tail:
        say("  (the agent printed nothing)")
        return
    say(f"  the agent's last {counted(len(session.tail), 'line')}:")
    for line in session.tail:
        say(f"  | {line}")


def _summary(
    ctx: Context,
    stop: loop.Stop,
    sessions: list[Session],
    known: set[str],
    mine: set[str],
    say: Say,
) -> None:
    from shiftkit.commands import cost as cost_mod

    spent = _spent(ctx, known, mine)
    total, passing, _ = verified_counts(ctx)
    usd = f" (${spent.usd:,.2f})" if spent.usd is not None else ""
    say(
        f"stopped: {stop.reason} — exit {stop.code}, after {counted(len(sessions), 'session')}; "
        f"{passing}/{total} passing; this run spent {spent.usage.tokens:,} tokens, "
        f"{cost.number(round(spent.fresh_equivalent, 1))} fresh-equivalent{usd}"
    )
    line = cost_mod.status_line(ctx)
    if line:
        say(line)
