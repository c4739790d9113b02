"""The command line, a person's commands: scaffold and adopt, set up a clone, define
features, let a commit stand, run the agents (a thin click layer over `shiftkit.commands`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from shiftkit import __version__
from shiftkit.cli_commands.base import (
    _complete_ids,
    _context,
    _say,
    _warn,
    _write,
    cli,
)
from shiftkit.core.errors import OK

if TYPE_CHECKING:
    pass


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


@cli.command(
    "run",
    short_help="The outer loop: agent sessions one after another until a stop reason "
    "(exit 0, 10-16).",
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
@click.option(
    "--parallel",
    type=click.IntRange(min=1),
    help="Run N agent loops at once, each in its own clone of the claims remote, with one "
    "combined view (budgets are the team's; --max-sessions is each agent's).",
)
@click.option(
    "--clones",
    type=click.Path(file_okay=False, path_type=Path),
    help="--parallel: the folder of the agents' clones (default: ../<project>-agents).",
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
    parallel: int | None,
    clones: Path | None,
) -> int:
    """The outer loop: agent sessions one after another, until every feature passes (checked
    at HEAD by `shiftkit check`), all that remain are blocked, a budget is spent, K sessions
    make no progress, the same failure ends two sessions, or --max-sessions. With
    --parallel N, N such loops at once, each in its own clone of the claims remote.

    Exit codes: 0 all pass at HEAD; 10 all remaining blocked; 11 budget; 12 no progress;
    13 the same failure twice in a row; 14 max sessions; 15 all marked passing but some
    cannot be checked (no verify command); 16 everything left is claimed elsewhere; 130
    interrupted (Ctrl-C).
    """
    from shiftkit.core import loop

    limits = loop.Limits(max_sessions, budget_tokens, budget_usd, no_progress, session_timeout)
    if parallel is None:
        if clones is not None:
            raise click.UsageError("--clones is for --parallel N")
        from shiftkit.commands import run as run_mod

        return run_mod.run(agent, limits, prompt_stdin, _say, verbose, bypass_hook_trust)
    from shiftkit.commands import team

    passed_on = ["--no-progress", str(no_progress)]
    passed_on += ["--session-timeout", str(session_timeout)] if session_timeout else []
    passed_on += ["--prompt-stdin"] * prompt_stdin + ["--verbose"] * verbose
    passed_on += ["--dangerously-bypass-hook-trust"] * bypass_hook_trust
    return team.run_team(agent, parallel, limits, clones, passed_on, _say)


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
