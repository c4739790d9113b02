"""The console entry point: hooks take a fast path that never imports click."""

from __future__ import annotations

import os
import sys

from shiftkit.core.errors import INTERNAL, BadInput, ShiftkitError, one_line, report

# A path no file can have: its parent is a device. (decision record 0067)
NO_GRAFTS = os.path.join(os.devnull, "grafts")
BLOCKED = 2  # the exit code Claude Code and Codex read as "the tool call is blocked"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    # The judges read the history as it was committed: `git replace` could otherwise show
    # them a harmless commit in place of the one a branch points to, and `.git/info/grafts`
    # (which GIT_NO_REPLACE_OBJECTS leaves on) give a judged commit unjudged parents — the
    # verdict's "all it reaches" (decision record 0045). Every git shiftkit runs inherits this.
    # The grafts file is a path that cannot exist (under a device, not a folder): git opens
    # an existing one (`/dev/null`) and then prints its 8-line deprecation hint on every
    # command; a missing one it skips in silence (decision record 0067).
    os.environ["GIT_NO_REPLACE_OBJECTS"] = "1"
    os.environ["GIT_GRAFT_FILE"] = NO_GRAFTS
    try:
        _require_utf8(args)
        if args[:1] == ["hook"] and not _asks_for_help(args[1:]):
            from shiftkit import githooks

            return githooks.main(args[1:])
        if args == ["guard"]:
            return _guard()
        if args[:1] == ["merge-features"] and _plain(args[1:], 3):
            # git runs the merge driver as it runs hooks: past click, as `cli` would call it.
            from pathlib import Path

            from shiftkit.commands import merge

            merge.merge_features(*(Path(arg) for arg in args[1:]))
            return 0
        from shiftkit import cli

        return cli.main(args)
    except ShiftkitError as exc:
        return report(exc)
    except KeyboardInterrupt:
        print(
            "shiftkit: interrupted: what was committed stays and nothing is half-written; a "
            "claim this session held is still yours (`shiftkit start` shows where things are)",
            file=sys.stderr,
        )
        return 130
    except Exception as exc:  # a bug: say so in one line, traceback only on request
        if os.environ.get("SHIFTKIT_DEBUG"):
            raise
        print(
            f"shiftkit: internal error: {type(exc).__name__}: {one_line(str(exc))} "
            f"(a bug; rerun with SHIFTKIT_DEBUG=1 for the traceback and report it)",
            file=sys.stderr,
        )
        return INTERNAL


def _guard() -> int:
    """The harness runs the guard before every tool call: past click (decision 0070). Both
    harnesses read only exit 2 as "blocked": any other failure lets the tool call run, so a
    bug in the guard (any exception, a ShiftkitError too) denies the call, in one line."""
    try:
        from shiftkit.commands import guard

        return guard.guard_cmd(guard.hook_input(), _stderr)
    except Exception as exc:
        if os.environ.get("SHIFTKIT_DEBUG"):  # the traceback, and still refused
            import traceback

            traceback.print_exc()
        _stderr(
            f"shiftkit guard: internal error ({type(exc).__name__}: {one_line(str(exc))}); "
            f"the call is refused \u2014 report it"
        )
        return BLOCKED


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _asks_for_help(args: list[str]) -> bool:
    """`shiftkit hook [NAME] --help` goes to click, which knows every hook's help; what git
    runs never holds these words."""
    return "--help" in args or "-h" in args


def _plain(args: list[str], count: int) -> bool:
    """``count`` arguments, none of which click would read as an option."""
    return len(args) == count and not any(arg.startswith("-") for arg in args)


def _require_utf8(args: list[str]) -> None:
    """Bytes that are not UTF-8 reach Python as lone surrogates, which no file, git
    object or terminal can take: refuse them before any command runs."""
    for position, arg in enumerate(args, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            raise BadInput(
                f"argument {position} ({arg!r}) is not UTF-8 text; pass it as UTF-8"
            ) from None


if __name__ == "__main__":
    raise SystemExit(main())
