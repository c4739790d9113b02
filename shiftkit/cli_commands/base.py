"""The command line's base: the `shiftkit` group, its sections, and what every command
module shares (`shiftkit.cli` registers them all)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from shiftkit import __version__

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

    from shiftkit.edge.context import Context


def _stdin_text() -> str:
    """A hook's input: nothing from a terminal, and bytes that are not UTF-8 read as U+FFFD
    rather than failing (the harness sends UTF-8; anything else is judged as text)."""
    if sys.stdin is None or sys.stdin.isatty():
        return ""
    return sys.stdin.buffer.read().decode("utf-8", "replace")


def _complete_ids(
    kind: str,
) -> Callable[[click.Context, click.Parameter, str], list[CompletionItem]]:
    """Shell completion of feature ids of ``kind`` (see `shiftkit.commands.completion`)."""

    def complete(
        ctx: click.Context, param: click.Parameter, incomplete: str
    ) -> list[CompletionItem]:
        from click.shell_completion import CompletionItem

        from shiftkit.commands import completion

        return [
            CompletionItem(value, help=text or None)
            for value, text in completion.feature_ids(kind, incomplete)
        ]

    return complete


# `shiftkit --help` lists the commands by who runs them and when (`Group.format_commands`).
SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "The shift (what an agent session runs)",
        (
            "start",
            "next",
            "show",
            "claim",
            "verify",
            "finish",
            "revert",
            "release",
            "note",
            "log",
            "decide",
            "check",
            "sync",
            "renumber-decisions",
        ),
    ),
    (
        "A person's actions",
        (
            "new",
            "setup",
            "demo",
            "run",
            "add",
            "import",
            "validate",
            "unblock",
            "override",
            "accept",
        ),
    ),
    (
        "Hooks and integration",
        ("hook", "guard", "stop-check", "usage", "merge-features", "merge-log", "install-hooks"),
    ),
    ("Reports", ("status", "claims", "audit", "cost", "report")),
)


def summary(command: click.Command) -> str:
    """A command's description in the listing: its short help, else the first paragraph of
    its help, whole (click's own listing cuts it with "...")."""
    if command.short_help:
        return command.short_help
    text = (command.help or "").split("\f", 1)[0]
    return " ".join(text.strip().split("\n\n", 1)[0].split())


class Group(click.Group):
    """A group whose help lists its commands in named sections, each with its whole
    one-line description; commands no section names come last, under "Commands"."""

    def __init__(
        self, *args: Any, sections: tuple[tuple[str, tuple[str, ...]], ...] = (), **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.sections = sections

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        shown = {
            name: command
            for name in self.list_commands(ctx)
            if (command := self.get_command(ctx, name)) is not None and not command.hidden
        }
        named = {name for _, names in self.sections for name in names}
        rest = tuple(name for name in shown if name not in named)
        for title, names in (*self.sections, ("Commands", rest)):
            rows = [(name, summary(shown[name])) for name in names if name in shown]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


@click.group(cls=Group, sections=SECTIONS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="shiftkit")
def cli() -> None:
    """Long-running agent work in shifts, with the protocol enforced by git hooks.

    Exit codes: 0 ok; 1 a check failed or the rules refuse; 2 usage or bad input;
    3 the feature is claimed by someone else; 4 an internal error (a bug).
    `shiftkit COMMAND --help` tells a command's options.
    """


def _context() -> Context:
    from shiftkit.edge.context import open_context

    return open_context()


def _say(text: str) -> None:
    click.echo(text)


def _warn(text: str) -> None:
    click.echo(text, err=True)


def _write(text: str) -> None:
    click.echo(text, nl=False)
