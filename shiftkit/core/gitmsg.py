"""Reading git's answers: a push's porcelain result for one ref, and the line of git's error
output worth showing a person (never a ``hint:``)."""

from __future__ import annotations

from typing import NamedTuple

# A ref's push result, as `git push --porcelain` reports it.
PUSHED, LEASE, POLICY, UNKNOWN = "pushed", "lease", "policy", "unknown"

# "[remote rejected]" reasons that mean another push got there first: a race, not a policy.
_RACE_REASONS = (
    "lock",
    "failed to update ref",
    "incorrect old value",
    "already exists",
    "stale info",
    "fetch first",
)


class PushResult(NamedTuple):
    outcome: str  # PUSHED, LEASE (the ref was not what we expected), POLICY, UNKNOWN
    reason: str = ""  # git's reason for the ref ("stale info", "hook declined", ...)


def push_result(stdout: str, ref: str, exit_code: int) -> PushResult:
    """The outcome for ``ref`` of a `git push --porcelain`: read from the push's own output.
    No line for the ref means the push never got the server's answer (it may have arrived)."""
    for line in stdout.splitlines():
        flag, _, rest = line.partition("\t")
        refspec, _, summary = rest.partition("\t")
        if not refspec.endswith(":" + ref) or len(flag) != 1:
            continue
        if flag != "!":
            return PushResult(PUSHED) if exit_code == 0 or flag in " +-*=" else PushResult(UNKNOWN)
        reason = summary.partition("(")[2].rstrip(")").strip()
        if summary.startswith("[rejected]"):
            return PushResult(LEASE, reason)
        if any(word in reason for word in _RACE_REASONS):
            return PushResult(LEASE, reason)
        return PushResult(POLICY, reason or summary)
    return PushResult(UNKNOWN)


def remote_says(stderr: str) -> str:
    """The server's own words: its first non-empty ``remote:`` line ('' when none)."""
    for line in stderr.splitlines():
        if line.startswith("remote:"):
            said = line[len("remote:") :].strip()
            if said and not said.startswith(("error: hook declined", "hint:")):
                return said
    return ""


def detail(stderr: str, fallback: str = "no answer") -> str:
    """The line of git's error output to show: the first ``fatal:``/``error:``/``remote:``
    line, else the first line that is not a ``hint:``; never a hint."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    meaningful = [line for line in lines if not line.startswith(("hint:", "remote: hint:"))]
    for line in meaningful:
        if line.startswith(("fatal:", "error:", "remote:")) and not line.startswith(
            "error: failed to push some refs"
        ):
            return unprefixed(line)
    return unprefixed(meaningful[0]) if meaningful else fallback


def unprefixed(line: str) -> str:
    """A quoted line without its own ``shiftkit:`` prefix (a hook's refusal, quoted inside
    a shiftkit line: one prefix per line)."""
    line = line.strip()
    while line.startswith("shiftkit:"):
        line = line.removeprefix("shiftkit:").strip()
    return line


def merge_failure(output: str, shown: int = 3) -> str:
    """What a failed `git merge` is told by: git's own ``CONFLICT`` lines (up to ``shown``,
    then how many more), else a hook's refusal (it names the rule), else git's first line —
    never an "Auto-merging" progress line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    conflicts = [line for line in lines if line.startswith("CONFLICT")]
    if conflicts:
        more = len(conflicts) - shown
        return "; ".join(conflicts[:shown]) + (f"; and {more} more" if more > 0 else "")
    ours = [line for line in lines if "rule " in line or line.startswith("shiftkit:")]
    rest = [line for line in lines if not line.startswith(("Auto-merging", "hint:"))]
    return unprefixed((ours or rest or lines or ["conflict"])[0])


# Git's words for a push that never reached a server (nothing can have changed there).
_NEVER_CONNECTED = (
    "does not appear to be a git repository",
    "unable to connect",
    "connection refused",
    "could not resolve host",
    "unable to look up",
    "repository not found",
    "no such remote",
    "permission denied",
)
# ... and for a connection that broke once the push was under way.
_BROKE = ("hung up", "unexpected disconnect", "early eof", "broken pipe", "reset by peer")


def never_connected(stderr: str) -> bool:
    """Whether a failed push's errors say it never reached the server."""
    text = stderr.lower()
    return any(w in text for w in _NEVER_CONNECTED) and not any(w in text for w in _BROKE)
