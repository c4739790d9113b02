"""The command line: a thin click layer over the modules that do the work."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from shiftkit import __version__
from shiftkit.core.errors import OK, REFUSED, USAGE, ShiftkitError, one_line

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


@cli.command(
    short_help="Scaffold a project in DIRECTORY, or adopt shiftkit in an existing repository."
)
@click.argument("directory", type=click.Path(path_type=Path))
@click.option(
    "--data",
    "data_pairs",
    multiple=True,
    metavar="KEY=VALUE",
    help="Answer a template question (repeatable).",
)
@click.option("--defaults", is_flag=True, help="Use the default for every unanswered question.")
@click.option(
    "--features",
    "features_file",
    type=click.Path(path_type=Path),
    help="Append this feature list (either format) after F000.",
)
@click.option(
    "--template",
    metavar="SRC",
    help="Render this template (a git URL or path) instead of the bundled one.",
)
@click.option(
    "--vcs-ref",
    metavar="REF",
    help="The template's git tag or commit (with --template: copier's default, the newest tag).",
)
@click.option(
    "--overwrite",
    is_flag=True,
    help="Replace existing files shiftkit cannot merge into (never the merged ones).",
)
@click.option(
    "--skip-answered", is_flag=True, help="Do not ask questions the answers file already holds."
)
@click.option("--trust", is_flag=True, help="Let a --template run its tasks.")
def new(
    directory: Path,
    data_pairs: tuple[str, ...],
    defaults: bool,
    features_file: Path | None,
    template: str | None,
    vcs_ref: str | None,
    overwrite: bool,
    skip_answered: bool,
    trust: bool,
) -> int:
    """Scaffold a new shiftkit project in DIRECTORY (copier, bundled template), or adopt
    shiftkit in an existing one, merging into its AGENTS.md, CLAUDE.md, .gitattributes,
    .pre-commit-config.yaml, .claude/settings.json and .codex/hooks.json.

    The answers file records a template source and version that `copier update` can use:
    the --template given, or this checkout, or the source and commit the installed
    package was built from."""
    from shiftkit.commands import render, scaffold

    scaffold.new(
        directory,
        render.parse_data(data_pairs),
        defaults=defaults,
        features_file=features_file,
        template=template,
        vcs_ref=vcs_ref,
        overwrite=overwrite,
        skip_answered=skip_answered,
        trust=trust,
        release=__version__,
    )
    return OK


@cli.command(hidden=True)
@click.option("--features-import", default="", help="Feature list to append after F000.")
@click.option("--operation", default="", help="copier's operation: copy or update.")
@click.option("--template", default="", help="The template copier rendered (its local copy).")
@click.option("--template-ref", default="", help="The template's commit copier rendered.")
@click.option("--quiet", is_flag=True, help="copier's --quiet: no template line, no next steps.")
def bootstrap(
    features_import: str, operation: str, template: str, template_ref: str, quiet: bool
) -> int:
    """The template's task: git init, import, install hooks, first commit; or, given copier's
    operation and template, the adoption or merge of shiftkit's part (decision 0037)."""
    from shiftkit.commands import template_task

    template_task.task(Path.cwd(), operation, template, template_ref, features_import, quiet)
    return OK


@cli.command()
@click.argument("path", required=False, type=click.Path(path_type=Path))
def validate(path: Path | None) -> int:
    """Check the feature list (or PATH) against the packaged schema."""
    from shiftkit.commands import definitions

    definitions.validate(path, _say)
    return OK


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
@click.option("--id", "feature_id", help="The new feature's id (default: the next free F number).")
@click.option("--description", required=True, help="What works when this feature passes.")
@click.option("--step", "steps", multiple=True, required=True, help="A test step (repeatable).")
@click.option("--verify", "verify_cmd", help="Shell command that exits 0 when the feature works.")
@click.option(
    "--category",
    default="functional",
    show_default=True,
    help="A free word grouping features (e.g. functional, ui, api).",
)
@click.option(
    "--core",
    is_flag=True,
    help="A central feature: the start check's spare slots go to core features first, so "
    "they are re-verified more often (every passing feature is, within ⌈n/k⌉ starts).",
)
@click.option(
    "--depends-on", "depends_on", multiple=True, help="An id this feature needs (repeatable)."
)
@click.option(
    "--oracle",
    "oracle_paths",
    multiple=True,
    metavar="PATH",
    help="A path or glob its verifier judges by (tests, fixtures, data; repeatable): once "
    "committed, a change of these files is a person's action (rule 14).",
)
def add(
    feature_id: str | None,
    description: str,
    steps: tuple[str, ...],
    verify_cmd: str | None,
    category: str,
    core: bool,
    depends_on: tuple[str, ...],
    oracle_paths: tuple[str, ...],
) -> int:
    """A person's action: append a feature to the list (the only change to definitions
    allowed; the guard denies it to an agent)."""
    from shiftkit.commands import definitions

    definitions.add(
        feature_id,
        description,
        steps,
        verify_cmd,
        category,
        core,
        depends_on,
        oracle_paths,
        _say,
    )
    return OK


@cli.command("import")
@click.argument("source", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="Write the converted list here instead of standard output.",
)
def import_(source: Path, output: Path | None) -> int:
    """Convert a feature list (legacy bare array or current) to the current format."""
    from shiftkit.commands import bootstrap

    bootstrap.import_cmd(source, output, _write, _warn)
    return OK


def _context() -> Context:
    from shiftkit.edge.context import open_context

    return open_context()


def _say(text: str) -> None:
    click.echo(text)


def _warn(text: str) -> None:
    click.echo(text, err=True)


def _write(text: str) -> None:
    click.echo(text, nl=False)


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
def claim(feature_id: str | None, steal: bool, force: bool) -> int:
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

    return claims.claim(_context(), feature_id, steal, _say, force)


@cli.command()
@click.argument("feature_id", metavar="[ID]", required=False)
@click.option("--steal", is_flag=True, help="Release a stale claim of another session.")
@click.option("--force", is_flag=True, help="With --steal: even a claim that looks alive.")
def release(feature_id: str | None, steal: bool, force: bool) -> int:
    """Give a claim back without counting an attempt."""
    from shiftkit.commands import claims

    return claims.release(_context(), feature_id, steal, _say, force)


@cli.command(short_help="Merge with the remote's branch, push, and release claims finished there.")
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Verifiers run at once, each in its own temporary checkout (default: the CPU count).",
)
def sync(jobs: int | None) -> int:
    """Fetch and merge the remote's branch, push, and release the claims whose finishing
    commits are now on the remote ([shiftkit.claims] remote).

    Incoming flips are re-verified before the branch moves; before the push, the passing
    features the outgoing commits can break are re-verified (whatever their messages say),
    and what fails is demoted in a commit the same push publishes.
    """
    from shiftkit.commands import claims

    return claims.sync(_context(), _say, jobs)


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
def verify(feature_id: str | None) -> int:
    """Run the verifier of the claimed feature (or ID) on the work tree."""
    from shiftkit.commands import shift

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
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def check(
    jobs: int | None, no_demote: bool, as_json: bool, isolated: bool, since: str | None
) -> int:
    """Verify every passing feature at HEAD's committed tree; demote what fails.

    Each verifier runs (after init) in a temporary checkout of exactly HEAD's tree; a pass
    recorded at that tree before is not run again. Exit 0 when all pass, 1 when any fails
    (demoted in one commit of the list and the log: repair first).
    """
    from shiftkit.commands import check as checking

    live = sys.stdout.isatty() and not as_json
    return checking.check(_context(), jobs, not no_demote, as_json, live, _say, isolated, since)


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
def finish(summary: str, note: str | None, jobs: int | None) -> int:
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

    return finishing.finish(_context(), summary, note, _say, jobs)


@cli.command()
@click.option("--reason", required=True, help="Why the attempt failed.")
def revert(reason: str) -> int:
    """Give up the attempt: back to the claim's base commit, count the attempt, log it.

    The attempt's changes are discarded: commits since the claim, uncommitted edits and
    untracked files (ignored files stay). Save what you want to keep elsewhere first. Exit 1
    when the revert's commit is not on the claims remote at the end (`shiftkit sync`)."""
    from shiftkit.commands import shift

    return shift.revert(_context(), reason, _say)


@cli.command()
@click.argument("feature_id", metavar="ID", shell_complete=_complete_ids("blocked"))
@click.option("--note", required=True, help="What changed so the feature can be tried again.")
def unblock(feature_id: str, note: str) -> int:
    """A person's action: clear a feature's block and reset its attempts."""
    from shiftkit.commands import shift

    return shift.unblock(_context(), feature_id, note, _say)


@cli.command()
@click.option("-m", "--message", "subject", required=True, help="The commit's subject.")
@click.option("--reason", required=True, help="Why a person overrides rules 2, 6, 7 or 14.")
def override(subject: str, reason: str) -> int:
    """A person's action: commit what is staged past rules 2, 6, 7 and 14 (signed when the
    people policy is 'signed')."""
    from shiftkit.commands import shift

    return shift.override(_context(), subject, reason, _say)


@cli.command()
@click.argument("commits", metavar="COMMIT...", nargs=-1, required=True)
@click.option("--reason", required=True, help="Why a person lets the commits stand.")
@click.option(
    "-j", "--jobs", type=click.IntRange(min=1), help="Verifiers to run at once (default: cores)."
)
def accept(commits: tuple[str, ...], reason: str, jobs: int | None) -> int:
    """A person's action: let commits forced past the hooks stand, demoting what they left
    untrue, in one commit on the remote's branch (signed when the policy is 'signed').

    The way out when `shiftkit sync` or `claim` refuses a branch that holds commits which
    break the rules: each COMMIT is judged here, the passing features it named or can break
    re-verified at the branch's tip, the failing ones demoted; the acceptance is committed
    on that tip (a `Shiftkit-Accept` trailer per COMMIT) and pushed. Every judge then
    reports the accepted violations as accepted, refusing none of them."""
    from shiftkit.commands import accept as accepting

    return accepting.accept(_context(), commits, reason, _say, _warn, jobs)


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


@cli.command(
    "run",
    short_help="The outer loop: agent sessions one after another until a stop reason "
    "(exit 0, 10-15).",
)
@click.option(
    "--agent",
    required=True,
    help="The command that runs one agent session, or a preset: 'claude' (claude -p "
    "--output-format json ...) or 'codex' (codex exec --json ...).",
)
@click.option(
    "--max-sessions",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="Stop after this many sessions (exit 14).",
)
@click.option(
    "--budget-tokens",
    type=click.FloatRange(min=0),
    help="Stop once this run spent this many fresh-equivalent tokens.",
)
@click.option("--budget-usd", type=click.FloatRange(min=0), help="Stop once this run spent this.")
@click.option(
    "--no-progress",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Stop after K sessions in a row without a new passing feature.",
)
@click.option(
    "--session-timeout", type=click.FloatRange(min=0), help="Seconds before a session is stopped."
)
@click.option(
    "--prompt-stdin",
    is_flag=True,
    help="Give the prompt on standard input, not as the last argument ({prompt} places it).",
)
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Show the agent's output as it comes (else only a failed session's last lines).",
)
@click.option(
    "--dangerously-bypass-hook-trust",
    "bypass_hook_trust",
    is_flag=True,
    help="--agent codex: pass Codex this flag, so it runs the project's hooks that no person "
    "has trusted (without it, run refuses to start a loop whose hooks Codex would skip).",
)
def run_cmd(
    agent: str,
    max_sessions: int,
    budget_tokens: float | None,
    budget_usd: float | None,
    no_progress: int,
    session_timeout: float | None,
    prompt_stdin: bool,
    verbose: bool,
    bypass_hook_trust: bool,
) -> int:
    """The outer loop: agent sessions one after another, until every feature passes (checked
    at HEAD by `shiftkit check`), all that remain are blocked, a budget is spent, K sessions
    make no progress, the same failure ends two sessions, or --max-sessions.

    Exit codes: 0 all pass at HEAD; 10 all remaining blocked; 11 budget; 12 no progress;
    13 the same failure twice in a row; 14 max sessions; 15 all marked passing but some
    cannot be checked (no verify command); 130 interrupted (Ctrl-C).
    """
    from shiftkit.commands import run as run_mod
    from shiftkit.core import loop

    limits = loop.Limits(max_sessions, budget_tokens, budget_usd, no_progress, session_timeout)
    return run_mod.run(agent, limits, prompt_stdin, _say, verbose, bypass_hook_trust)


@cli.command("merge-features")
@click.argument("base", type=click.Path(path_type=Path))
@click.argument("ours", type=click.Path(path_type=Path))
@click.argument("theirs", type=click.Path(path_type=Path))
def merge_features(base: Path, ours: Path, theirs: Path) -> int:
    """git merge driver for features.json (`%O %A %B`): writes the merge into OURS."""
    from shiftkit.commands import merge as merge_mod

    merge_mod.merge_features(base, ours, theirs)
    return OK


@cli.command("merge-log")
@click.argument("base", type=click.Path(path_type=Path))
@click.argument("ours", type=click.Path(path_type=Path))
@click.argument("theirs", type=click.Path(path_type=Path))
def merge_log(base: Path, ours: Path, theirs: Path) -> int:
    """git merge driver for the progress log (`%O %A %B`): entry by entry, into OURS."""
    from shiftkit.commands import merge as merge_mod

    merge_mod.merge_log(base, ours, theirs)
    return OK


@cli.command(short_help="Set up a clone: the hooks and the merge drivers (only what is missing).")
@click.option(
    "--force", is_flag=True, help="Replace hooks that are not shiftkit's (kept as *.pre-shiftkit)."
)
@click.option(
    "--trust-installation",
    is_flag=True,
    help="A person's: record the running shiftkit installation as this clone's judge (after "
    "an upgrade).",
)
@click.option(
    "--signed",
    is_flag=True,
    help="A person's: switch this project to the `signed` people policy, in one commit signed "
    "with your SSH signing key that lists it in .shiftkit/allowed_signers.",
)
def setup(force: bool, trust_installation: bool, signed: bool) -> int:
    """Set up a clone: the commit hooks, the reference-transaction and pre-push hooks and
    the merge drivers of features.json and the progress log (only what is missing; running
    it again changes nothing). With --signed: switch the project to the `signed` policy."""
    from shiftkit.commands import setup as setup_mod

    if signed:
        from shiftkit.commands import signed as signed_mod

        return signed_mod.switch_cmd(_context(), _say)
    return setup_mod.setup_cmd(force, trust_installation, _say, _warn)


@cli.command("install-hooks")
@click.option(
    "--force", is_flag=True, help="Replace hooks that are not shiftkit's (kept as *.pre-shiftkit)."
)
def install_hooks(force: bool) -> int:
    """Install plain git hook shims (for repositories without the pre-commit framework)."""
    from shiftkit.commands import install

    install.install_cmd(force, _say)
    return OK


@cli.command()
@click.argument("directory", required=False, type=click.Path(path_type=Path))
def demo(directory: Path | None) -> int:
    """Play four shifts of a sample project through `shiftkit run` and the real hooks.

    Scaffolds a small todo project in DIRECTORY (default: a new temporary folder) and runs
    `shiftkit run` with a scripted stand-in for the agent (no model is called): a feature
    finished, a broken attempt refused and reverted, a retry finished; then the hooks refuse
    an edit of a committed feature and a bare "wip" commit, and `shiftkit cost` reports."""
    from shiftkit.commands import demo as demo_mod

    return demo_mod.run(directory)


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
