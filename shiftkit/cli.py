"""The command line: a thin click layer over the modules that do the work. The commands are
defined in `shiftkit.cli_commands` by who runs them and registered on `cli` by importing them
here; this module keeps the git hooks' group and `main`."""

from __future__ import annotations

import sys

import click

from shiftkit.cli_commands import project, reports, shift  # noqa: F401  (registers them)
from shiftkit.cli_commands.base import SECTIONS, Group, cli, summary
from shiftkit.core.errors import OK, REFUSED, USAGE, ShiftkitError, one_line

__all__ = ["SECTIONS", "Group", "cli", "main", "summary"]


@cli.group(cls=Group)
def hook() -> None:
    """The git hooks themselves: git runs them (`shiftkit setup` installs them)."""


def _hook(args: list[str]) -> int:
    # (git runs `shiftkit hook ...` through `main`, which calls `githooks` without click)
    from shiftkit import githooks

    return githooks.main(args)


@hook.command("pre-commit")
def hook_pre_commit() -> int:
    """Refuse a commit whose staged feature list, progress log, ledger, settings or decision
    records break a rule."""
    return _hook(["pre-commit"])


@hook.command("commit-msg")
@click.argument("message_file", metavar="FILE")
def hook_commit_msg(message_file: str) -> int:
    """Refuse a commit whose message (in FILE) breaks a rule: a bare or empty subject, a
    flip it does not name."""
    return _hook(["commit-msg", message_file])


@hook.command("reference-transaction")
@click.argument("state", metavar="STATE")
def hook_reference_transaction(state: str) -> int:
    """Judge every commit a branch update brings in, --no-verify commits included (git's
    reference-transaction hook; STATE: prepared, committed or aborted; ref updates on stdin)."""
    return _hook(["reference-transaction", state])


@hook.command("pre-push")
@click.argument("remote", metavar="REMOTE")
@click.argument("url", metavar="[URL]", required=False)
def hook_pre_push(remote: str, url: str | None) -> int:
    """Run `audit --reverify` on the commits a push sends to REMOTE (refs on stdin)."""
    return _hook(["pre-push", remote, *([url] if url else [])])


def main(argv: list[str]) -> int:
    try:
        result = cli.main(argv, prog_name="shiftkit", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        return OK
    except click.UsageError as exc:
        where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx else ""
        print(f"shiftkit: {one_line(exc.format_message())}{where}", file=sys.stderr)
        return USAGE
    except click.exceptions.Abort as exc:
        if isinstance(exc.__context__, KeyboardInterrupt):
            raise KeyboardInterrupt from None  # (Ctrl-C: `main` says what is kept, exit 130)
        print("shiftkit: aborted", file=sys.stderr)
        return REFUSED
    except click.ClickException as exc:
        print(f"shiftkit: {one_line(exc.format_message())}", file=sys.stderr)
        return exc.exit_code
    except ShiftkitError:
        raise
    if isinstance(result, int):
        return result
    return OK
