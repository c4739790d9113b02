"""The guard on git: global options (`-c`, `--config-env`), each subcommand's options, and
what they do around the commit hooks (`--no-verify`, history moved without hooks, config that
redirects the hooks, protected files removed)."""

from __future__ import annotations

from collections.abc import Callable

from shiftkit.core.guard_options import Options, abbreviates, parse_options
from shiftkit.core.guard_paths import INSTEAD, LABELS, USE_SHIFTKIT, path_reason

# Checks a shell line (text, feature list name, depth): the alias check reads its body.
LineCheck = Callable[[str, str, int], str | None]

GIT_GLOBAL_VALUES = {
    "-C",
    "-c",
    "--config-env",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--attr-source",
    "--list-cmds",
}
# Per subcommand: short options taking a value, optional-attached ones, long ones taking one.
GIT_OPTIONS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "commit": (
        "mFcCt",
        "Su",
        (
            "--message",
            "--file",
            "--reuse-message",
            "--reedit-message",
            "--fixup",
            "--squash",
            "--author",
            "--date",
            "--template",
            "--cleanup",
            "--trailer",
            "--pathspec-from-file",
        ),
    ),
    "merge": (
        "mFsX",
        "S",
        ("--message", "--file", "--strategy", "--strategy-option", "--cleanup", "--into-name"),
    ),
    "pull": (
        "sXo",
        "S",
        (
            "--strategy",
            "--strategy-option",
            "--upload-pack",
            "--depth",
            "--deepen",
            "--shallow-since",
            "--shallow-exclude",
            "--server-option",
            "--recurse-submodules",
        ),
    ),
    "push": ("o", "", ("--push-option", "--repo", "--receive-pack", "--exec")),
    "am": (
        "pC",
        "S",
        (
            "--directory",
            "--exclude",
            "--include",
            "--patch-format",
            "--resolvemsg",
            "--quoted-cr",
            "--empty",
        ),
    ),
    "revert": ("m", "S", ("--mainline", "--strategy", "--strategy-option", "--cleanup")),
    "config": ("f", "", ("--file", "--blob", "--type", "--default", "--comment", "--value")),
    "update-ref": ("m", "", ("--message",)),
}
NO_VERIFY = {"commit", "merge", "am", "cherry-pick", "revert", "pull", "push"}
MOVES_HISTORY = {
    "rebase": "replays commits without the commit hooks",
    "cherry-pick": "commits without the pre-commit hook",
    "commit-tree": "makes commits without any hook",
    "filter-branch": "rewrites history without the commit hooks",
    "filter-repo": "rewrites history without the commit hooks",
    "replace": "swaps commits for others behind the hooks' back",
}


def check_git(args: list[str], features_name: str, depth: int, line: LineCheck) -> str | None:
    index = 0
    while index < len(args) and args[index].startswith("-"):
        name, equals, value = args[index].partition("=")
        index += 1
        if name in GIT_GLOBAL_VALUES and not equals and index < len(args):
            value, index = args[index], index + 1
        if name in {"-c", "--config-env"}:
            key, _, setting = value.partition("=")
            how = f"`git {name} {key}=...`"
            reason = _git_setting(key, setting, how, features_name, depth, line)
            if reason:
                return reason
    if index >= len(args) or args[index + 1 : index + 2] in (["-h"], ["--help"]):
        return None
    sub, rest = args[index], args[index + 1 :]
    values, optional, long_values = GIT_OPTIONS.get(sub, ("", "", ()))
    options = parse_options(rest, values, optional, long_values)
    if sub in MOVES_HISTORY:
        return _check_history(sub, options)
    reason = _check_no_verify(sub, options)
    return reason or _check_git_write(sub, options, features_name, depth, line)


def _check_no_verify(sub: str, options: Options) -> str | None:
    names = options.names()
    if sub in NO_VERIFY and any(abbreviates(n, "--no-verify", 6) for n in names):
        return f"`git {sub} --no-verify` skips the commit hooks; {USE_SHIFTKIT}"
    if sub in {"commit", "am"} and "-n" in names:
        return f"`git {sub} -n` (--no-verify) skips the commit hooks; {USE_SHIFTKIT}"
    if sub == "commit" and any(abbreviates(n, "--amend", 4) for n in names):
        return (
            f"`git commit --amend` rewrites a commit the hooks already judged; make a new "
            f"commit instead: {USE_SHIFTKIT}"
        )
    rebasing = [v for n, v in options.given if n == "-r" or abbreviates(n, "--rebase", 5)]
    if sub == "pull" and rebasing and rebasing[-1] not in {"false", "no"}:
        return (
            f"`git pull --rebase` replays commits without the commit hooks; use "
            f"`git pull --no-rebase` (a merge) instead; {USE_SHIFTKIT}"
        )
    return None


def _check_history(sub: str, options: Options) -> str | None:
    names = options.names()
    if sub in {"rebase", "cherry-pick"} and names and set(names) <= {"--abort", "--quit"}:
        return None  # leaving a rebase or cherry-pick in progress changes no history
    if sub == "replace" and not options.positional and set(names) <= {"-l", "--list", "--format"}:
        return None
    return f"`git {sub}` {MOVES_HISTORY[sub]}; {USE_SHIFTKIT}" + (
        " (`--abort` is allowed)" if sub in {"rebase", "cherry-pick"} else ""
    )


def _check_git_write(
    sub: str, options: Options, features_name: str, depth: int, line: LineCheck
) -> str | None:
    names = options.names()
    if sub == "config":
        return _check_git_config(options, features_name, depth, line)
    if sub == "update-index" and any(
        abbreviates(n, "--skip-worktree", 4) or abbreviates(n, "--assume-unchanged", 4)
        for n in names
    ):
        return (
            f"`git update-index --skip-worktree/--assume-unchanged` hides changes from the "
            f"commit hooks; {USE_SHIFTKIT}"
        )
    if sub == "update-ref":
        refs = options.positional[:1]
        if "--stdin" in names or (refs and not refs[0].startswith(SAFE_REFS)):
            where = "a claim" if refs and refs[0].startswith("refs/shiftkit/") else "a branch"
            return (
                f"`git update-ref` moves {where} without the hooks or shiftkit; claims change "
                f"through `shiftkit claim`/`shiftkit release`, branches through commits: "
                f"{USE_SHIFTKIT}"
            )
    if sub in {"rm", "mv"} and not {"-n", "--dry-run"} & set(names):
        return path_reason(options.positional, f"`git {sub}`", features_name, removing=True)
    return None


SAFE_REFS = ("refs/tags/", "refs/remotes/", "refs/notes/")
CONFIG_READS = {
    "--get",
    "--get-all",
    "--get-regexp",
    "--get-urlmatch",
    "--list",
    "-l",
    "--get-color",
    "--get-colorbool",
}
CONFIG_WRITES = {
    "--add",
    "--replace-all",
    "--unset",
    "--unset-all",
    "--rename-section",
    "--remove-section",
    "--edit",
    "-e",
}
CONFIG_ACTIONS = {"get", "list", "set", "unset", "rename-section", "remove-section", "edit"}


def _check_git_config(
    options: Options, features_name: str, depth: int, line: LineCheck
) -> str | None:
    names, words = set(options.names()), list(options.positional)
    action = words.pop(0) if words and words[0] in CONFIG_ACTIONS else ""
    if names & CONFIG_READS or action in {"get", "list"}:
        return None
    editing = action == "edit" or bool(names & {"--edit", "-e"})
    if not (editing or names & CONFIG_WRITES or action or len(words) >= 2):
        return None  # `git config KEY` reads
    if editing:
        return (
            f"`git config --edit` changes git's config by hand ({LABELS['gitconfig']}); "
            f"{INSTEAD['gitconfig']}"
        )
    key = words[0] if words else ""
    if names & {"--remove-section", "--rename-section"} or "section" in action:
        key += ".hookspath" if key.lower() == "core" else ".path"
    value = words[1] if len(words) > 1 else "true"
    return _git_setting(key, value, f"`git config {key}`", features_name, depth, line)


def _git_setting(
    key: str, value: str, how: str, features_name: str, depth: int, line: LineCheck
) -> str | None:
    lowered = key.lower()
    if lowered == "core.hookspath":
        return (
            f"{how} sets core.hooksPath and points git away from the commit hooks; {USE_SHIFTKIT}"
        )
    if lowered.startswith(("include.", "includeif.")):
        return (
            f"{how} sets {key}, pulling in config that can redirect the hooks "
            f"(core.hooksPath); {INSTEAD['gitconfig']}"
        )
    if lowered.startswith("merge.shiftkit"):
        return f"{how} changes the features.json merge driver; {INSTEAD['gitconfig']}"
    if lowered.startswith("alias.") and value:
        body = value[1:] if value.startswith("!") else "git " + value
        reason = line(body, features_name, depth + 1)
        if reason:
            return f"{how} defines an alias that would do what is denied here: {reason}"
    return None
