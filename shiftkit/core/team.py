"""`shiftkit run --parallel N`'s decisions and its view, pure: what each agent's loop is
doing, the project's figures, when an agent starts again, and how the team run ends.

Each agent is one `shiftkit run` loop in its own clone of the one remote; this module only
reads what they report (their exit codes and lines) and what the remote holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from shiftkit.core import loop
from shiftkit.core.words import counted

STOPS = {
    loop.ALL_PASS: "all pass",
    loop.ALL_BLOCKED: "all blocked",
    loop.BUDGET: "budget spent",
    loop.NO_PROGRESS: "no progress",
    loop.REPEATED_FAILURE: "the same failure twice",
    loop.MAX_SESSIONS: "max sessions",
    loop.NOT_CHECKED: "not checkable",
    loop.ALL_CLAIMED: "nothing to take",
    loop.INTERRUPTED: "interrupted",
}


class Agent(NamedTuple):
    """One agent's loop as the team run sees it."""

    name: str
    feature: str | None  # its clone's open claim
    running: bool
    seconds: float  # in its present state: on the feature, waiting, or since it stopped
    sessions: int
    last: str  # the last line its loop said
    exit_code: int | None = None  # how its loop last ended (None: never ended yet)

    @property
    def waiting(self) -> bool:
        """Stopped because everything left was claimed elsewhere: it starts again when the
        remote changes."""
        return not self.running and self.exit_code == loop.ALL_CLAIMED


class Project(NamedTuple):
    """The remote's figures: the list on its branch, its claims, the team's spend."""

    total: int
    passing: int
    claimed: int
    tokens: float  # fresh-equivalent, spent since the team run began
    usd: float | None
    reachable: bool = True
    holders: tuple[str, ...] = ()  # "F003 (agent-2's clone)", "F004 (session s of clone c…)"


def stop_name(code: int | None) -> str:
    if code is None:
        return "running"
    return STOPS.get(code, f"failed (exit {code})")


def clock(seconds: float) -> str:
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def agent_state(agent: Agent) -> str:
    if agent.running:
        return f"working on {agent.feature}" if agent.feature else "between sessions"
    if agent.waiting:
        return "waiting (everything left is claimed)"
    return f"stopped: {stop_name(agent.exit_code)}"


def project_line(project: Project) -> str:
    spend = f"{project.tokens:,.0f} fresh-equivalent tokens"
    if project.usd is not None:
        spend += f" (${project.usd:,.2f})"
    per = (
        f", {project.tokens / project.passing:,.0f} per passing feature" if project.passing else ""
    )
    unreachable = "" if project.reachable else " — the remote did not answer: as last fetched"
    return (
        f"project: {project.passing}/{project.total} passing on the remote, "
        f"{counted(project.claimed, 'claim')} open; spent {spend}{per}{unreachable}"
    )


def view(agents: Sequence[Agent], project: Project) -> list[str]:
    """The combined view: one line per agent (feature, state, time, sessions, its last
    word), then the project's."""
    width = max((len(a.name) for a in agents), default=0)
    lines = []
    for agent in agents:
        last = f" · {agent.last}" if agent.last else ""
        lines.append(
            f"{agent.name:<{width}}  {agent_state(agent)} ({clock(agent.seconds)}), "
            f"{counted(agent.sessions, 'session')}{last}"
        )
    lines.append(project_line(project))
    return lines


def budget_spent(project: Project, limits: loop.Limits) -> str | None:
    """Why the team's budget is spent, or None."""
    if limits.budget_tokens is not None and project.tokens >= limits.budget_tokens:
        return (
            f"the token budget is spent ({project.tokens:,.0f} of {limits.budget_tokens:,.0f} "
            f"fresh-equivalent tokens, all agents)"
        )
    if limits.budget_usd is not None and (project.usd or 0.0) >= limits.budget_usd:
        return (
            f"the money budget is spent (${project.usd or 0.0:,.2f} of ${limits.budget_usd:,.2f})"
        )
    return None


def outcome(agents: Sequence[Agent], project: Project, cut: loop.Stop | None) -> loop.Stop:
    """How the team run ends once no agent runs: ``cut`` when the run cut it (budget,
    Ctrl-C); all pass when an agent's loop checked every feature at its HEAD and the
    remote says so; nothing to take for any agent; else the first agent's own stop."""
    if cut is not None:
        return cut
    checker = next((a for a in agents if a.exit_code == loop.ALL_PASS), None)
    if project.total and project.passing == project.total and checker is not None:
        return loop.Stop(
            loop.ALL_PASS,
            f"all {project.total} features pass on the remote ({checker.name} re-ran every "
            f"verifier at its HEAD)",
        )
    if agents and all(a.waiting for a in agents):
        held = "; ".join(project.holders) or "see `shiftkit claims`"
        return loop.Stop(
            loop.ALL_CLAIMED,
            f"every feature left is claimed ({held}): nothing any agent can take until those "
            f"claims end or expire",
        )
    for agent in agents:
        if agent.exit_code not in (None, loop.ALL_PASS, loop.ALL_CLAIMED):
            return loop.Stop(agent.exit_code, f"{agent.name} stopped: {stop_name(agent.exit_code)}")
    return loop.Stop(
        loop.NO_PROGRESS,
        f"the agents stopped with {project.passing}/{project.total} passing on the remote",
    )
