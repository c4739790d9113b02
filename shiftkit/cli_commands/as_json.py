"""`--json` for the shift commands an orchestrator drives (`claim`, `verify`, `finish`,
`revert`, `release`, `sync`): the command runs as always, what it says is collected instead of
printed, and one JSON object is printed at the end (issue 38 item 6):

    {"command", "exit_code", "outcome", "feature", "claim", "head", "published",
     "verifiers": [{"feature", "verdict", "line"}], "lines", "error"}

`outcome` is the exit code in words (0 "ok", 1 "refused or failed", 2 "bad input", 3
"claimed by someone else"); `claim` is the feature this worktree holds afterwards; `head` the
commit HEAD is at; `published` whether HEAD is on the claims remote's branch as last fetched
(null without a claims remote); `verifiers` the verdicts the command reported, one per line it
said about a verifier run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from shiftkit.core.errors import ShiftkitError

Say = Callable[[str], None]
OUTCOMES = {0: "ok", 1: "refused or failed", 2: "bad input", 3: "claimed by someone else"}
_VERDICT = re.compile(r"^([A-Za-z][\w.-]*): (passed|FAILED)\b")


def run(command: str, feature: str | None, action: Callable[[Say], int]) -> int:
    """Run ``action`` (given the function it says its lines with); print the object."""
    lines: list[str] = []
    error = None
    try:
        code = action(lines.append)
    except ShiftkitError as exc:
        error = exc.message.removeprefix("shiftkit: ")
        code = exc.exit_code
    held, head, published = _after()
    verdicts = [
        {"feature": found.group(1), "verdict": found.group(2).lower(), "line": line}
        for line in lines
        if (found := _VERDICT.match(line))
    ]
    document = {
        "command": command,
        "exit_code": code,
        "outcome": OUTCOMES.get(code, "error"),
        "feature": feature or held,
        "claim": held,
        "head": head,
        "published": published,
        "verifiers": verdicts,
        "lines": lines,
        "error": error,
    }
    print(json.dumps(document, indent=2, ensure_ascii=False))
    return code


def _after() -> tuple[str | None, str | None, bool | None]:
    """(the feature this worktree holds now, HEAD's commit, whether HEAD is on the claims
    remote's branch) — each None when it cannot be told."""
    from shiftkit.edge import gitio, remote, state
    from shiftkit.edge.context import open_context

    try:
        ctx = open_context()
    except (ShiftkitError, OSError):
        return None, None, None
    own = state.local_claim(ctx.git_dir)
    head = gitio.head_oid(ctx.root)
    name, branch = ctx.config.claims.remote, gitio.branch(ctx.root)
    published = None
    if name and branch and head:
        published = remote.on_remote(ctx.root, name, branch, head)
    return (own.feature if own else None), head, published
