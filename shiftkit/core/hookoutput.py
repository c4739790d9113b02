"""Reading what the commit hooks printed when they refused a commit shiftkit made.

The pre-commit framework prints one result line per hook (``name.....Failed``), and after a
failed one, ``- hook id: ID``, ``- exit code: N`` and ``- files were modified by this hook``,
then the hook's own output. Pure functions over that text; the callers run the commit.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_RESULT = re.compile(r"^(?P<name>\S.*?)\.{3,}(?:\([^()\n]*\))?(?P<status>Passed|Failed|Skipped)$")
_HOOK_ID = re.compile(r"^- hook id: (?P<id>\S+)$")
_MODIFIED = "- files were modified by this hook"
# What a refusal shows of the hooks' output at most: enough for a linter's report, bounded
# for a hook that prints a whole test run.
MAX_LINES = 200


class FailedHook(NamedTuple):
    id: str  # the `id:` of the hook in .pre-commit-config.yaml
    name: str
    modified_files: bool
    output: str  # its section of the output: result line, details, its own lines


def plain(output: str) -> str:
    """The output without terminal colours and with \\n line breaks."""
    return _ANSI.sub("", output).replace("\r\n", "\n")


def failed_hooks(output: str) -> list[FailedHook]:
    """Every hook the framework reports as failed, in the order it ran them."""
    lines = plain(output).split("\n")
    starts = [i for i, line in enumerate(lines) if _RESULT.match(line.rstrip())]
    failed = []
    for position, start in enumerate(starts):
        match = _RESULT.match(lines[start].rstrip())
        assert match is not None
        if match["status"] != "Failed":
            continue
        end = starts[position + 1] if position + 1 < len(starts) else len(lines)
        section = lines[start:end]
        hook_id = match["name"].strip()
        for line in section[1:4]:
            found = _HOOK_ID.match(line.rstrip())
            if found:
                hook_id = found["id"]
        modified = any(line.rstrip() == _MODIFIED for line in section[1:5])
        text = "\n".join(section).strip("\n")
        failed.append(FailedHook(hook_id, match["name"].strip(), modified, text))
    return failed


def shiftkit_reasons(output: str) -> list[str]:
    """The `shiftkit:` lines shiftkit's own hooks printed."""
    return [line.strip() for line in plain(output).split("\n") if line.startswith("shiftkit:")]


def refusal(output: str) -> str:
    """One line saying which hooks refused the commit and why, as far as the output tells."""
    failed = failed_hooks(output)
    reasons = shiftkit_reasons(output)
    if not failed:
        lines = [line.strip() for line in plain(output).split("\n") if line.strip()]
        return "the commit was refused by a hook: " + (
            " / ".join(reasons or lines[-3:]) or "it printed nothing"
        )
    names = ", ".join(hook.id for hook in failed)
    plural = "s" if len(failed) > 1 else ""
    text = f"the commit was refused by the hook{plural} {names}"
    modified = [hook.id for hook in failed if hook.modified_files]
    if modified:
        text += f" ({', '.join(modified)} modified files in the work tree)"
    if reasons:
        text += ": " + " / ".join(reasons)
    return text


def shown(output: str, limit: int = MAX_LINES) -> str:
    """What to show of the output: the failed hooks' sections in full (every hook's output
    when none can be told apart), at most ``limit`` lines, with a note of what was cut."""
    failed = failed_hooks(output)
    text = "\n\n".join(hook.output for hook in failed) if failed else plain(output).strip("\n")
    lines = text.split("\n")
    if len(lines) <= limit:
        return text
    cut = len(lines) - limit
    return "\n".join([*lines[:limit], f"... ({cut} more lines of hook output not shown)"])
