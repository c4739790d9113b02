"""The one exception type every user-facing failure goes through, and its exit codes."""

from __future__ import annotations

import sys

OK = 0
REFUSED = 1  # a check failed or the rules refuse the action
USAGE = 2  # bad arguments or bad input files
CLAIM_HELD = 3  # the feature is claimed by someone else
INTERNAL = 4  # a bug in shiftkit: never expected, always reported


class ShiftkitError(Exception):
    """A failure the user can act on: one line of text and an exit code."""

    def __init__(self, message: str, exit_code: int = USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


class Refused(ShiftkitError):
    def __init__(self, message: str) -> None:
        super().__init__(message, REFUSED)


class HookRefused(Refused):
    """A commit hook refused a commit shiftkit made: the one-line reason, and what the hooks
    printed (``shown``), for the command to print before its own line."""

    def __init__(self, message: str, shown: str) -> None:
        super().__init__(message)
        self.shown = shown


class BadInput(ShiftkitError):
    def __init__(self, message: str) -> None:
        super().__init__(message, USAGE)


_LINE_BREAKS = {
    ord(char): char.encode("unicode_escape").decode("ascii")
    for char in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # what str.splitlines() breaks on
}


def one_line(text: str) -> str:
    """A message as one line, whatever line breaks the user's input brought into it."""
    return text.translate(_LINE_BREAKS)


def report(exc: ShiftkitError) -> int:
    print(f"shiftkit: {one_line(exc.message)}", file=sys.stderr)
    return exc.exit_code
