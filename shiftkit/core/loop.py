"""`shiftkit run`'s decisions, pure: when the outer loop stops, and with which exit code.

It stops on verified state — the feature list at HEAD, after the session's commits passed
`audit` — on budgets and on lack of progress, never on anything the agent printed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from shiftkit.core.words import counted

# Exit codes of `shiftkit run`, one per stop reason (0-4 keep their meaning everywhere).
ALL_PASS = 0
ALL_BLOCKED = 10
BUDGET = 11
NO_PROGRESS = 12
REPEATED_FAILURE = 13
MAX_SESSIONS = 14
NOT_CHECKED = 15  # all marked passing, but some cannot be checked at HEAD
ALL_CLAIMED = 16  # every feature that could be picked is claimed by another clone or session
INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT

SHIFT_PROMPT = (
    "You are one shift of a long-running project. Follow AGENTS.md: run `shiftkit start`, "
    "take the next feature with `shiftkit claim`, work on that feature only, run `shiftkit "
    'verify`, then `shiftkit finish -m "what changed"` if it passes or `shiftkit revert '
    '--reason "why"` if it does not. Leave the tree clean, then stop: the next session takes '
    "the next feature."
)
INITIALIZER_PROMPT = (
    "You are the initializer session of a new project. Read AGENTS.md and "
    "claude-progress.txt (the goal). Take F000 with `shiftkit claim` and make the environment "
    "build (`./init.sh`, `./init.sh smoke`). The feature list is a person's to write: propose "
    "the project's features with `shiftkit note` (one note per feature, in priority order, "
    "each with its steps and a verify command that exits 0 when it works), then `shiftkit "
    "finish -m ...`. Leave the tree clean, then stop: a person appends the features."
)


class Limits(NamedTuple):
    max_sessions: int = 20
    budget_tokens: float | None = None  # fresh-equivalent tokens spent by this run
    budget_usd: float | None = None
    no_progress: int = 3  # sessions in a row without a new passing feature
    session_timeout: float | None = None


class State(NamedTuple):
    """What the loop knows between sessions, all of it read from git and the ledger."""

    total: int
    passing: int
    claimable: int  # open features the protocol could pick (not blocked, dependencies met)
    sessions: int = 0
    without_progress: int = 0
    signatures: tuple[str | None, ...] = ()  # each session's failure signature (None: none)
    spent_tokens: float = 0.0
    spent_usd: float = 0.0
    held_elsewhere: int = 0  # pickable features held by another clone's or session's claim


class Stop(NamedTuple):
    code: int
    reason: str


def decide(state: State, limits: Limits) -> Stop | None:
    """Whether to stop now (before a session, or after one), and why; None: run another."""
    if state.total and state.passing == state.total:
        # (`shiftkit run` checks every one at HEAD before it stops on this)
        return Stop(ALL_PASS, f"all {state.total} features marked passing")
    if state.claimable == 0 and state.held_elsewhere:
        return Stop(
            ALL_CLAIMED,
            f"every feature that can be picked is claimed elsewhere "
            f"({counted(state.held_elsewhere, 'feature')}): nothing to take until a claim ends",
        )
    if state.claimable == 0:
        return Stop(
            ALL_BLOCKED,
            f"every remaining feature is blocked ({state.total - state.passing} not passing, "
            f"none can be picked): a person must unblock them",
        )
    last = state.signatures[-2:]
    if len(last) == 2 and last[0] is not None and last[0] == last[1]:
        return Stop(REPEATED_FAILURE, f"the same failure ended two sessions in a row ({last[0]})")
    if state.without_progress >= limits.no_progress:
        return Stop(
            NO_PROGRESS,
            f"{counted(state.without_progress, 'session')} in a row without a new passing feature",
        )
    if limits.budget_tokens is not None and state.spent_tokens >= limits.budget_tokens:
        return Stop(
            BUDGET,
            f"the token budget is spent ({state.spent_tokens:,.0f} of "
            f"{limits.budget_tokens:,.0f} fresh-equivalent tokens)",
        )
    if limits.budget_usd is not None and state.spent_usd >= limits.budget_usd:
        return Stop(
            BUDGET,
            f"the money budget is spent (${state.spent_usd:,.2f} of ${limits.budget_usd:,.2f})",
        )
    if state.sessions >= limits.max_sessions:
        return Stop(
            MAX_SESSIONS, f"{counted(state.sessions, 'session')}, the most allowed (--max-sessions)"
        )
    return None


def after(state: State, passing: int, claimable: int, signature: str | None) -> State:
    """The state after a session that left ``passing`` features passing at HEAD."""
    progressed = passing > state.passing
    return state._replace(
        passing=passing,
        claimable=claimable,
        sessions=state.sessions + 1,
        without_progress=0 if progressed else state.without_progress + 1,
        signatures=(*state.signatures, None if progressed else signature),
    )


def claimable(items: Sequence[Mapping[str, Any]]) -> int:
    """How many features the protocol could pick now (not passing, not blocked, every
    dependency passing), read from the list's raw items: no `Feature` is built."""
    passing = {item.get("id") for item in items if item.get("passes") is True}
    return sum(
        1
        for item in items
        if item.get("passes") is not True
        and item.get("blocked") is None
        and all(dep in passing for dep in item.get("depends_on") or ())
    )


def prompt(feature_ids: list[str]) -> str:
    """The initializer's prompt while the list holds only F000, else the shift's."""
    return INITIALIZER_PROMPT if feature_ids == ["F000"] else SHIFT_PROMPT


PRESETS = ("claude", "codex")


def preset_command(name: str, git_common_dir: str) -> list[str] | None:
    """The command line of a harness preset (None: ``name`` is no preset). Both run one
    unattended headless session that prints its usage as JSON: Claude Code's ``-p`` with the
    JSON result, without permission prompts (no one is there to answer them); `codex exec
    --json` in Codex's workspace-write sandbox, with the repository's git dir writable (that
    sandbox keeps ``.git`` read-only, and a shift commits). Decision 0040."""
    if name == "claude":
        return ["claude", "-p", "--output-format", "json", "--dangerously-skip-permissions"]
    if name == "codex":
        roots = json.dumps([git_common_dir])  # (a TOML array of strings, as `-c` reads it)
        return [
            "codex",
            "exec",
            "--json",
            "--sandbox",
            "workspace-write",
            "-c",
            f"sandbox_workspace_write.writable_roots={roots}",
            # `bash -c`, not Codex's default `bash -lc`: a login shell's profile resets PATH,
            # and the agent's `shiftkit` commands would not be found (decision 0059)
            "-c",
            "allow_login_shell=false",
        ]
    return None


def agent_argv(command: list[str], text: str, on_stdin: bool) -> list[str]:
    """The agent's command with the prompt: where ``{prompt}`` stands, else as the last
    argument (or, ``on_stdin``, not at all: it goes on standard input)."""
    if any("{prompt}" in arg for arg in command):
        return [arg.replace("{prompt}", text) for arg in command]
    return command if on_stdin else [*command, text]


TAIL_LINES = 10  # the agent's last output lines shown when a session fails


def tail(lines: Sequence[str], count: int = TAIL_LINES, width: int = 240) -> list[str]:
    """The last ``count`` non-blank lines, each cut at ``width`` characters (with "…")."""
    kept = [line.rstrip() for line in lines if line.strip()][-count:]
    return [line if len(line) <= width else line[: width - 1] + "…" for line in kept]


def exit_signature(exit_code: int, output: str) -> str | None:
    """A session that ended with ``exit_code`` (not 0) and no unit of work: the exit code and a
    digest of its last output lines, so two sessions that failed alike are known as "the same
    failure". None when it printed nothing: an empty output says nothing about the cause, and
    the hash of nothing would make every silent failure "the same"."""
    lines = tail(output.splitlines(), 5, 10**6)
    if not lines:
        return None
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()[:12]
    return f"exit {exit_code} ({digest})"


def step_failure(name: str, command: str, summary: str, tail: str | None) -> str:
    """A failed start-check step in one line: what ran, how it ended and its last words, and
    where the session meets it again."""
    said = " ".join((tail or "").split())  # (the record keeps the last lines as one)
    if len(said) > 100:  # a failure's last words say the most
        said = "…" + said[-99:].lstrip()
    last = f": {said}" if said else ""
    return (
        f"{name} failed ({summary} from `{command}`{last}); the session's `shiftkit start` shows it"
    )
