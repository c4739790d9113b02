"""What each agent harness reads on a hook's standard output, where the two differ.

Claude Code and Codex CLI share the blocking contract of PreToolUse and Stop (exit 2, the
reason on stderr; exit 0 with nothing on stdout lets the call or the stop through), so the
guard and the stop check print the same for both. They differ at SessionStart: Claude Code adds
plain standard output to the model's context; Codex CLI does too, but fails the hook when the
text looks like JSON, and its documented output is a JSON object validated by its
`session-start.command.output` schema. shiftkit gives Codex that object, with the orientation in
`hookSpecificOutput.additionalContext` (decision 0039).
"""

from __future__ import annotations

import json
from collections.abc import Callable

CLAUDE = "claude"
CODEX = "codex"
HARNESSES = (CLAUDE, CODEX)
SMALLEST = 200  # below this many bytes of orientation, shrinking it further says nothing


def codex_context(event: str, text: str) -> str:
    """Codex CLI's hook output adding ``text`` to the model's context (one line of JSON)."""
    body = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def session_start(harness: str, render: Callable[[int], str], limit: int) -> str:
    """The SessionStart hook's standard output for ``harness`` (without its final newline),
    at most ``limit`` bytes with that newline. ``render(budget)``: the orientation within
    ``budget`` bytes (with its own final newline)."""
    if harness != CODEX:
        return render(limit)
    budget = limit
    while True:
        output = codex_context("SessionStart", render(budget))
        over = len(output.encode("utf-8")) + 1 - limit
        if over <= 0 or budget <= SMALLEST:
            return output
        budget = max(SMALLEST, budget - over)


def plain_for(harness: str, event: str, text: str) -> str:
    """A line of context for the model (a failure to orient, say) in ``harness``'s form."""
    return codex_context(event, text) if harness == CODEX else text
