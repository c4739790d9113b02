"""`shiftkit run --parallel N`: N agent loops at once, one per clone of the claims remote.

Each agent is an ordinary `shiftkit run` in an ordinary clone (`edge.team_clones`): the same
claims, `sync` and gate as a person's clone, nothing private (decision record 0113). This
process only starts them, shows one combined view (`core.team`), keeps the team's budget,
starts again an agent that found everything left claimed once the remote moves, and ends
when no agent has anything left to do.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from shiftkit.core import cost, features, ledger, loop, team
from shiftkit.core.errors import BadInput
from shiftkit.edge import claims, gitio, remote, state, team_clones
from shiftkit.edge import ledger as ledger_io
from shiftkit.edge import prices as price_table
from shiftkit.edge.context import Context, open_context
from shiftkit.edge.project import read_features_at

Say = Callable[[str], None]

POLL_SECONDS = 0.5
LOOK_SECONDS = 5.0  # how often the remote's figures are fetched for the view
STOP_GRACE_SECONDS = 300.0  # an interrupted agent's loop cleans up its claim in this time


class _Child:
    """One agent's `shiftkit run` process and what it said."""

    def __init__(
        self, name: str, place: Path, argv: list[str], lines: queue.Queue[tuple[str, str]]
    ):
        self.name, self.place, self.argv, self.lines = name, place, argv, lines
        self.proc: subprocess.Popen[str] | None = None
        self.exit_code: int | None = None
        self.sessions = 0
        self.last = ""
        self.since = time.monotonic()
        self.feature: str | None = None
        self.stopped_on: str | None = None  # the remote's fingerprint when it stopped

    @property
    def waiting_since(self) -> str | None:
        """The remote's fingerprint when it stopped with nothing to take (None: it is not
        waiting)."""
        if self.running or self.exit_code != loop.ALL_CLAIMED:
            return None
        return self.stopped_on

    def start(self, sessions: int) -> None:
        """Its loop, allowed ``sessions`` more sessions."""
        env = {k: v for k, v in os.environ.items() if k != "SHIFTKIT_SESSION"}
        self.proc = subprocess.Popen(
            [*self.argv, "--max-sessions", str(sessions)],
            cwd=self.place,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            bufsize=1,
            start_new_session=True,  # Ctrl-C reaches this process, which passes it on once
        )
        self.exit_code, self.since = None, time.monotonic()
        threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True).start()

    def _pump(self, stream: IO[str] | None) -> None:
        for line in stream or ():
            self.lines.put((self.name, line.rstrip("\n")))

    @property
    def running(self) -> bool:
        return self.proc is not None and self.exit_code is None

    def reap(self) -> bool:
        """Whether it ended just now."""
        if self.proc is None or self.exit_code is not None:
            return False
        code = self.proc.poll()
        if code is None:
            return False
        self.exit_code, self.since = code, time.monotonic()
        return True

    def interrupt(self) -> None:
        if self.running and self.proc is not None:
            try:
                self.proc.send_signal(signal.SIGINT)
            except ProcessLookupError:
                pass

    def view(self) -> team.Agent:
        held = state.local_claim(self.place / ".git")
        feature = held.feature if held is not None else None
        if feature != self.feature:
            self.feature, self.since = feature, time.monotonic()
        return team.Agent(
            self.name,
            feature,
            self.running,
            time.monotonic() - self.since,
            self.sessions,
            self.last,
            self.exit_code,
        )


def run_team(
    agent: str,
    parallel: int,
    limits: loop.Limits,
    clones: Path | None,
    passed_on: list[str],
    say: Say,
) -> int:
    """``passed_on``: the options each agent's `shiftkit run` gets as given (the budget is
    the team's, kept here)."""
    ctx = open_context()
    name = ctx.config.claims.remote
    if not name:
        raise BadInput(
            "--parallel: agents share their work only through a claims remote; set "
            "[shiftkit.claims] remote in .shiftkit.toml (a person's change) and push the "
            "project there"
        )
    branch = gitio.branch(ctx.root)
    if branch is None:
        raise BadInput("--parallel: HEAD is detached; check out the branch the agents work on")
    url = team_clones.remote_url(ctx.root, name)
    counts = remote.divergence(ctx.root, name, branch, require_answer=True)
    if counts is None:
        raise BadInput(
            f"--parallel: {name} has no branch {branch!r}; push it first "
            f"(`git push {name} {branch}`): the agents clone the remote"
        )
    if counts[0]:
        say(
            f"{branch} has {counts[0]} commit(s) {name}/{branch} lacks: the agents start from "
            f"{name}/{branch} (push first to give them those)"
        )
    folder = clones or team_clones.default_folder(ctx.root)
    places = team_clones.prepare(folder, url, name, parallel)
    made = sum(1 for _, new in places if new)
    say(
        f"{parallel} agents, each in its own clone of {url} under {folder} "
        f"({made} made now, {parallel - made} reused)"
    )
    lines: queue.Queue[tuple[str, str]] = queue.Queue()
    argv = [sys.executable, "-m", "shiftkit", "run", "--agent", agent, *passed_on]
    children = [_Child(place.name, place, argv, lines) for place, _ in places]
    known = _usage_ids(ctx, children)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    cut: loop.Stop | None = None
    shown: list[str] = []
    project, fingerprint = _look(ctx, branch, children, known)
    try:
        for child in children:
            child.start(limits.max_sessions)
            time.sleep(1.0)  # (claims race safely; staggered, they rarely need to)
        looked = time.monotonic()
        while True:
            _drain(lines, children, say)
            for child in children:
                if child.reap():
                    say(f"[{child.name}] stopped: {team.stop_name(child.exit_code)}")
                    child.stopped_on = fingerprint
            idle = not any(c.running for c in children)
            if idle or time.monotonic() - looked >= LOOK_SECONDS:
                project, fingerprint = _look(ctx, branch, children, known)
                looked = time.monotonic()
                why = team.budget_spent(project, limits)
                if why is not None and cut is None:
                    cut = loop.Stop(loop.BUDGET, why)
                    say(f"{why}: stopping every agent (each cleans up its claim)")
                    for child in children:
                        child.interrupt()
                shown = _show(children, project, shown, say)
            if cut is None:
                for child in children:  # the remote moved: there may be something to take
                    left = limits.max_sessions - child.sessions
                    if child.waiting_since not in (None, fingerprint) and left > 0:
                        say(f"[{child.name}] the remote moved: starting again")
                        child.start(left)
            if not any(c.running for c in children):
                break
            time.sleep(POLL_SECONDS)
    except KeyboardInterrupt:
        cut = loop.Stop(loop.INTERRUPTED, "interrupted (Ctrl-C); every agent cleaned up its claim")
        say("interrupted: stopping every agent (each cleans up its claim)")
        _stop_all(children, lines, say)
    _drain(lines, children, say)
    project, _ = _look(ctx, branch, children, known)
    agents = [c.view() for c in children]
    for line in team.view(agents, project):
        say(line)
    stop = team.outcome(agents, project, cut)
    say(f"stopped: {stop.reason} — exit {stop.code}")
    return stop.code


def _drain(lines: queue.Queue[tuple[str, str]], children: list[_Child], say: Say) -> None:
    by_name = {c.name: c for c in children}
    while True:
        try:
            name, line = lines.get_nowait()
        except queue.Empty:
            return
        child = by_name[name]
        if line.startswith("session ") and ": " in line and "started" not in line:
            child.sessions += 1
            child.last = line.split(" · ", 1)[0]
        say(f"[{name}] {line}")


def _stop_all(children: list[_Child], lines: queue.Queue[tuple[str, str]], say: Say) -> None:
    """Ctrl-C: each agent's loop told once (it reverts or releases its claim), then waited
    for; one that does not end in the grace time is killed."""
    for child in children:
        child.interrupt()
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    while any(c.running for c in children) and time.monotonic() < deadline:
        try:
            for child in children:
                child.reap()
            _drain(lines, children, say)
            time.sleep(POLL_SECONDS)
        except KeyboardInterrupt:
            break  # a second Ctrl-C: do not wait
    for child in children:
        if child.running and child.proc is not None:
            child.proc.kill()
            child.proc.wait()
            child.reap()


def _show(children: list[_Child], project: team.Project, shown: list[str], say: Say) -> list[str]:
    """The combined view, said when what it shows (but the clocks) changed."""
    agents = [c.view() for c in children]
    key = [f"{a.name}|{team.agent_state(a)}|{a.sessions}|{a.last}" for a in agents] + [
        team.project_line(project)
    ]
    if key != shown:
        for line in team.view(agents, project):
            say(f"  {line}")
    return key


def _holder(feature_id: str, held: claims.Claim, children: list[_Child]) -> str:
    from shiftkit.commands.upcoming import short_holder

    where = held.record.worktree if held.record is not None else ""
    for child in children:
        if where and Path(where) == child.place:
            return f"{feature_id} by {child.name}'s clone"
    return f"{feature_id} by {short_holder(held)}"


def _entries(ctx: Context, children: list[_Child]) -> list[ledger.Entry]:
    groups = [ledger_io.read_all(ctx)]
    for child in children:
        if (child.place / ".git").exists():
            groups.append(ledger_io.read_all(open_context(child.place)))
    return ledger.merged(*groups)


def _usage_ids(ctx: Context, children: list[_Child]) -> set[str]:
    ledger_io.fetch_usage(ctx)
    return {e.id for e in _entries(ctx, children)}


def _look(
    ctx: Context, branch: str, children: list[_Child], known: set[str]
) -> tuple[team.Project, str]:
    """The remote's figures (its branch's list, its claims) and the team's spend since the
    start, with a fingerprint of the remote (its tip and claims) to tell when it moved."""
    name = ctx.config.claims.remote
    reachable = True
    try:
        claimed = remote.fetch(ctx.root, name, ctx.config.claims.ref_prefix, branch)
    except remote.Unreachable:
        claimed, reachable = remote.mirrored(ctx.root, name), False
    tracking = remote.tracking_ref(name, branch)
    listing = read_features_at(ctx.root, tracking, ctx.config.features)
    c = features.counts(listing, claimed) if listing is not None else None
    ledger_io.fetch_usage(ctx)
    prices = price_table.book(ctx.config.prices)
    spent = cost.Spend()
    for entry in _entries(ctx, children):
        if entry.kind == "usage" and entry.id not in known:
            spent = spent + cost.spend_of(entry, ctx.config.cost, prices)
    tip = gitio.run(["rev-parse", "-q", "--verify", tracking], ctx.root, check=False)
    # (claim ids, not their objects: a heartbeat moves an object, and is no news)
    fingerprint = f"{tip.stdout.strip()} {sorted(claimed)}"
    project = team.Project(
        c.total if c else 0,
        c.passing if c else 0,
        c.claimed if c else len(claimed),
        spent.fresh_equivalent,
        spent.usd,
        reachable,
        tuple(_holder(feature_id, held, children) for feature_id, held in sorted(claimed.items())),
    )
    return project, fingerprint
