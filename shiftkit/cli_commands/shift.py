"""The command line, the shift: what an agent session runs (a thin click layer over
`shiftkit.commands`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from shiftkit.cli_commands import as_json as as_json_mod
from shiftkit.cli_commands.base import (
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


@cli.command()
@click.option(
    "--brief", is_flag=True, help="At most 2,000 bytes: for the agent harness's session start."
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--no-check", is_flag=True, help="Skip init, smoke and the regression sample.")
@click.option(
    "--hook-input",
    is_flag=True,
    help="Read the SessionStart hook's JSON on stdin: on `resume` and `compact` re-read the "
    "files without re-running the checks.",
)
@click.option(
    "--harness",
    type=click.Choice(["claude", "codex"]),
    default="claude",
    show_default=True,
    help="The agent harness whose SessionStart hook reads the output: `codex` prints Codex "
    "CLI's JSON object (the orientation as additionalContext).",
)
def start(brief: bool, as_json: bool, no_check: bool, hook_input: bool, harness: str) -> int:
    """The session-start routine: where we are, what to do, and the checks."""
    from shiftkit.commands import start as startup

    text = _stdin_text() if hook_input else None
    return startup.start_cmd(text, brief, as_json, no_check, harness, _say, _warn)


@cli.command()
@click.argument("feature_id", metavar="[ID]", required=False, shell_complete=_complete_ids("open"))
@click.option("--steal", is_flag=True, help="Take over a stale claim of another session.")
@click.option("--force", is_flag=True, help="With --steal: even a claim that looks alive.")
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object at the end (for orchestrators)."
)
def claim(feature_id: str | None, steal: bool, force: bool, as_json: bool) -> int:
    """Lock the next feature (or ID) for this worktree: one at a time.

    A claim is a git ref, refs/shiftkit/claims/ID, shared by this repository's worktrees;
    with `[shiftkit.claims] remote` set in .shiftkit.toml, a ref on that git remote taken
    with one lease push, so sessions on other machines see it too (a feature that already
    passes on the remote's branch is refused). Needs a clean tree and no other open claim
    here (exit 1). Exit 3: the feature is claimed by someone else; a claim of another
    clone without a heartbeat for `lease_minutes` has expired and is taken over (naming
    its holder), and one of an earlier session of this clone is resumed. --steal (a
    person's) takes over a claim without a heartbeat for `ttl_hours`, --steal --force even
    a live one."""
    from shiftkit.commands import claims

    if as_json:
        return as_json_mod.run(
            "claim", feature_id, lambda say: claims.claim(_context(), feature_id, steal, say, force)
        )
    return claims.claim(_context(), feature_id, steal, _say, force)


@cli.command()
@click.argument("feature_id", metavar="[ID]", required=False)
@click.option("--steal", is_flag=True, help="Release a stale claim of another session.")
@click.option("--force", is_flag=True, help="With --steal: even a claim that looks alive.")
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object at the end (for orchestrators)."
)
def release(feature_id: str | None, steal: bool, force: bool, as_json: bool) -> int:
    """Give a claim back without counting an attempt."""
    from shiftkit.commands import claims

    if as_json:
        return as_json_mod.run(
            "release",
            feature_id,
            lambda say: claims.release(_context(), feature_id, steal, say, force),
        )
    return claims.release(_context(), feature_id, steal, _say, force)


@cli.command(short_help="Merge with the remote's branch, push, and release claims finished there.")
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Verifiers run at once, each in its own temporary checkout (default: the CPU count).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object at the end (for orchestrators)."
)
def sync(jobs: int | None, as_json: bool) -> int:
    """Fetch and merge the remote's branch, push, and release the claims whose finishing
    commits are now on the remote ([shiftkit.claims] remote).

    Incoming flips are re-verified before the branch moves; before the push, the passing
    features the outgoing commits can break are re-verified (whatever their messages say),
    and what fails is demoted in a commit the same push publishes.
    """
    from shiftkit.commands import sync as syncing

    if as_json:
        return as_json_mod.run("sync", None, lambda say: syncing.sync(_context(), say, jobs))
    return syncing.sync(_context(), _say, jobs)


@cli.command("claims")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def claims_cmd(as_json: bool) -> int:
    """Every claim (this repository's and the remote's), with the ones that look abandoned
    marked."""
    from shiftkit.commands import claims

    claims.listing_cmd(_context(), as_json, _say)
    return OK


@cli.command()
@click.argument("feature_id", metavar="[ID]", required=False, shell_complete=_complete_ids("any"))
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object at the end (for orchestrators)."
)
def verify(feature_id: str | None, as_json: bool) -> int:
    """Run the verifier of the claimed feature (or ID) on the work tree."""
    from shiftkit.commands import shift

    if as_json:
        return as_json_mod.run(
            "verify", feature_id, lambda say: shift.verify_cmd(_context(), feature_id, say)
        )
    return shift.verify_cmd(_context(), feature_id, _say)


@cli.command()
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Verifiers run at once, each in its own temporary checkout (default: the CPU count).",
)
@click.option(
    "--no-demote",
    is_flag=True,
    help="Only report failures (for CI and a detached HEAD): commit no demotion.",
)
@click.option(
    "--isolated",
    is_flag=True,
    help="Run each init and verifier with a scrubbed environment: locale only, a fresh empty "
    "HOME, PATH without the repository's or HOME's folders; and each feature's oracle files "
    "as its definition (or a person since) left them (for CI).",
)
@click.option(
    "--since",
    metavar="REV",
    default=None,
    help="Verify first the features the change since REV can break (CI: the push's base).",
)
@click.option(
    "--all",
    "every",
    is_flag=True,
    help="Also run the features that passed at an earlier tree and that nothing changed since "
    "touches (run last).",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def check(
    jobs: int | None,
    no_demote: bool,
    as_json: bool,
    isolated: bool,
    since: str | None,
    every: bool,
) -> int:
    """Verify the passing features at HEAD's committed tree; demote what fails.

    Each verifier runs (after init) in a temporary checkout of exactly HEAD's tree; a pass
    recorded at that tree before is not run again, nor one at an earlier tree that nothing
    changed since can touch (the gates' selection: `--all` runs those too; `--isolated` runs
    every verifier). Exit 0 when all pass, 1 when any fails (demoted in one commit of the
    list and the log: repair first).
    """
    from shiftkit.commands import check as checking

    live = sys.stdout.isatty() and not as_json
    return checking.check(
        _context(), jobs, not no_demote, as_json, live, _say, isolated, since, carry=not every
    )


@cli.command()
@click.option(
    "-m",
    "--message",
    "summary",
    required=True,
    help="What changed: the commit subject, after the feature's id (`F012: ...`).",
)
@click.option("--note", help="More for the log entry: what is next, what to watch out for.")
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Other features' verifiers run at once beside the claimed one, each in its own "
    "temporary checkout (default: the CPU count).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object at the end (for orchestrators)."
)
def finish(summary: str, note: str | None, jobs: int | None, as_json: bool) -> int:
    """Verify the work, mark the feature passing, log it and commit.

    -m is the subject after `ID: `: at most 72 characters in all (for F012, 66). The claimed
    feature's verifier runs on the work tree; beside it, every passing feature whose
    verifier read a file the change touches (all of them while that is not known) is
    re-verified, and a failure refuses the finish, naming it; a demoted feature the change
    repairs is re-marked passing in the same commit. The commit is then pushed (with a
    claims remote), through a judged sync when the push lost a race; exit 1 when it is
    committed but not on the remote at the end (the last line says what to do).
    """
    from shiftkit.commands import finish as finishing

    if as_json:
        return as_json_mod.run(
            "finish", None, lambda say: finishing.finish(_context(), summary, note, say, jobs)
        )
    return finishing.finish(_context(), summary, note, _say, jobs)


@cli.command()
@click.option("--reason", required=True, help="Why the attempt failed.")
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object at the end (for orchestrators)."
)
def revert(reason: str, as_json: bool) -> int:
    """Give up the attempt: back to the claim's base commit, count the attempt, log it.

    The attempt's changes are discarded: commits since the claim, uncommitted edits and
    untracked files (ignored files stay). Save what you want to keep elsewhere first. Exit 1
    when the revert's commit is not on the claims remote at the end (`shiftkit sync`)."""
    from shiftkit.commands import shift

    if as_json:
        return as_json_mod.run("revert", None, lambda say: shift.revert(_context(), reason, say))
    return shift.revert(_context(), reason, _say)


@cli.command()
@click.argument("text")
def note(text: str) -> int:
    """Add TEXT to the log entry of the open claim."""
    from shiftkit.commands import shift

    return shift.note(_context(), text, _say)


@cli.command()
@click.argument("title")
@click.option("--why", required=True, help="The context: what forces the decision.")
@click.option(
    "--rejected",
    multiple=True,
    required=True,
    help="An alternative not taken, and why (repeatable).",
)
@click.option("--decision", help="The decision in full (default: the title).")
def decide(title: str, why: str, rejected: tuple[str, ...], decision: str | None) -> int:
    """Write the next decision record and its index line."""
    from shiftkit.commands import decisions

    decisions.decide_cmd(title, why, list(rejected), decision, _say)
    return OK


@cli.command("renumber-decisions")
@click.option(
    "--against",
    metavar="REF",
    help="The branch whose numbers win (default: the remote's copy of this branch).",
)
def renumber_decisions(against: str | None) -> int:
    """Renumber this branch's decision records whose numbers REF gives to other records."""
    from shiftkit.commands import decisions

    decisions.renumber_cmd(against, _say)
    return OK


@cli.command("log")
@click.option("--prune", "do_prune", is_flag=True, help="Prune now if due, and commit it.")
def log_cmd(do_prune: bool) -> int:
    """Print the progress log (or prune it)."""
    from shiftkit.commands import shift

    return shift.log_cmd(_context(), do_prune, _say)


@cli.command("stop-check")
def stop_check() -> int:
    """Stop hook (Claude Code, Codex CLI): exit 2 on the first stop while the tree is dirty."""
    from shiftkit.commands import shift

    return shift.stop_check_cmd(_stdin_text(), _warn)
