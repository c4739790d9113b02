"""The command line, the reports: status, audit, cost, the report page and the usage
ledger (a thin click layer over `shiftkit.commands`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from shiftkit.cli_commands.base import (
    Group,
    _complete_ids,
    _context,
    _say,
    _stdin_text,
    _warn,
    cli,
)
from shiftkit.core.errors import OK

if TYPE_CHECKING:
    pass


@cli.command(
    short_help="Counts (a bar on a terminal), the blocked and claimed features (list at HEAD)."
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status(as_json: bool) -> int:
    """Counts (a progress bar on a terminal, plain when piped), the blocked and claimed
    features, and what is next (of the list committed at HEAD: the one the rules stand on)."""
    from shiftkit.commands import upcoming

    upcoming.status_cmd(_context(), as_json, sys.stdout.isatty(), _say)
    return OK


@cli.command("next")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def next_(as_json: bool) -> int:
    """The feature the protocol picks now (from the list committed at HEAD)."""
    from shiftkit.commands import upcoming

    return upcoming.next_cmd(_context(), as_json, _say)


@cli.command()
@click.argument("feature_id", metavar="ID", shell_complete=_complete_ids("any"))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def show(feature_id: str, as_json: bool) -> int:
    """One feature in full."""
    from shiftkit.commands import definitions

    definitions.show(feature_id, as_json, _say)
    return OK


@cli.command()
@click.option(
    "--since",
    metavar="REV",
    help="Check only the commits after REV (default: all since shiftkit was adopted).",
)
@click.option(
    "--reverify",
    is_flag=True,
    help="Re-run each flip's verifier at its commit, with the feature's oracle files as its "
    "definition (or a person since) left them.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Refuse person actions (overrides, unblocks, acceptances, settings changes) too.",
)
@click.option(
    "--isolated",
    is_flag=True,
    help="With --reverify: run each init and verifier with a scrubbed environment: locale "
    "only, a fresh empty HOME, PATH without the repository's or HOME's folders (for CI).",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option(
    "--people",
    is_flag=True,
    help="Print every person action as a Markdown table (commit, author, signature) for a "
    "person to read (CI's job summary); under the `signed` policy exit 1 when one is refused.",
)
@click.argument("rev", metavar="[REV]", required=False)
def audit(
    since: str | None,
    reverify: bool,
    strict: bool,
    isolated: bool,
    as_json: bool,
    people: bool,
    rev: str | None,
) -> int:
    """Check every commit up to REV (default HEAD) against the rules (for CI).

    History before the commit that adopted shiftkit (the first adding .shiftkit.toml) is
    outside the protocol and not judged. With --reverify, the commits that break no rule are
    recorded as judged on this machine, so a branch may move onto them (commits fetched from
    another clone: `shiftkit audit --reverify origin/BRANCH`, then merge or check it out)."""
    from shiftkit.commands import audit as audit_mod

    return audit_mod.audit_cmd(
        _context(), since, reverify, strict, isolated, as_json, people, rev, _say, _warn
    )


@cli.command()
def guard() -> int:
    """PreToolUse hook (Claude Code, Codex CLI): deny the ways around the commit hooks."""
    from shiftkit.commands import guard as guard_mod

    return guard_mod.guard_cmd(guard_mod.hook_input(), _warn)


@cli.command(short_help="What the work cost: tokens, money, and the cost per passing feature.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option(
    "--by",
    type=click.Choice(["feature", "session", "day"]),
    default="feature",
    show_default=True,
    help="One row per feature, session or day.",
)
def cost(as_json: bool, by: str) -> int:
    """What the work cost: tokens by kind, fresh-equivalent tokens, money, and the cost per
    passing feature (all spend / features passing now)."""
    from shiftkit.commands import cost as cost_mod

    return cost_mod.cost_cmd(_context(), as_json, by, _say)


@cli.command(short_help="The work and its cost as one HTML page (or --json).")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="The HTML file to write (default: shiftkit/report.html in the git dir, off the work "
    "tree).",
)
@click.option("--json", "as_json", is_flag=True, help="The same data as JSON, on stdout.")
def report(output: Path | None, as_json: bool) -> int:
    """The work and its cost as one self-contained HTML page (no network needed to open
    it): burn-up, cost per passing feature over time, each feature's attempts, time and
    spend, the claims now and the last check; each chart with a table of its numbers."""
    from shiftkit.commands import report as report_mod

    return report_mod.report_and_advise(_context(), output, as_json, _say, _warn)


@cli.group(cls=Group)
def usage() -> None:
    """Record the agent's token usage in the ledger (committed at the next unit boundary)."""


@usage.command("record")
@click.option(
    "--transcript",
    type=click.Path(path_type=Path),
    help="A Claude Code transcript or Codex rollout (default: 'transcript_path' of the hook "
    "JSON on stdin, else this worktree's Codex sessions under $CODEX_HOME/sessions).",
)
@click.option(
    "--session",
    help="The session id (default: the hook's 'session_id', else the rollout's own id).",
)
def usage_record(transcript: Path | None, session: str | None) -> int:
    """Record a session's usage from its Claude Code transcript or Codex rollout, per feature
    claimed (Claude Code's SessionEnd hook; each response counted once however often read)."""
    from shiftkit.commands import cost as cost_mod

    return cost_mod.record(_context(), _stdin_text(), transcript, session, _say)


@usage.command("add")
@click.option(
    "--input",
    "input_tokens",
    type=click.IntRange(min=0),
    required=True,
    help="Fresh (uncached) input tokens.",
)
@click.option(
    "--output", "output_tokens", type=click.IntRange(min=0), required=True, help="Output tokens."
)
@click.option(
    "--cache-read", type=click.IntRange(min=0), default=0, help="Input tokens read from a cache."
)
@click.option(
    "--cache-write", type=click.IntRange(min=0), default=0, help="Input tokens written to a cache."
)
@click.option(
    "--model", default="unknown", show_default=True, help="The model ([shiftkit.prices] key)."
)
@click.option("--cost-usd", type=float, help="What the harness says it cost.")
@click.option(
    "--session",
    help="The session id (default: $SHIFTKIT_SESSION, else the one the SessionStart hook "
    "recorded, else 'manual').",
)
def usage_add(
    input_tokens: int,
    output_tokens: int,
    cache_read: int,
    cache_write: int,
    model: str,
    cost_usd: float | None,
    session: str | None,
) -> int:
    """Record usage reported by any harness, for this worktree's current claim."""
    from shiftkit.commands import cost as cost_mod
    from shiftkit.core.ledger import Usage

    spent = Usage(input_tokens, cache_read, cache_write, output_tokens)
    return cost_mod.add(_context(), spent, model, cost_usd, session, _say)
