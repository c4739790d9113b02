"""The guard on git: global options (`-c`, `--config-env`), each subcommand's options, and
what they do around the commit hooks (`--no-verify`, history moved without hooks, config that
redirects the hooks, protected files removed)."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable

from shiftkit.core import guard_install
from shiftkit.core.guard_options import Options, abbreviates, parse_options
from shiftkit.core.guard_paths import INSTEAD, LABELS, USE_SHIFTKIT, Site, path_kind, path_reason
from shiftkit.core.guard_trailers import config_reason, message_reason

# Checks a shell line (text, the project, depth): the alias check reads its body.
LineCheck = Callable[[str, Site, int], str | None]

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
    "notes": ("mFcC", "", ("--message", "--file", "--reuse-message", "--reedit-message")),
    "restore": ("s", "", ("--source", "--pathspec-from-file", "--conflict")),
    "checkout": ("bB", "", ("--conflict", "--pathspec-from-file", "--orphan")),
    "worktree": ("bB", "", ("--reason", "--orphan", "--expire")),
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


def check_git(
    args: list[str], site: Site, depth: int, line: LineCheck, env: dict[str, str]
) -> str | None:
    """Why this git command (its arguments, the environment set for it) must not run."""
    index, settings = 0, []
    while index < len(args) and args[index].startswith("-"):
        name, equals, value = args[index].partition("=")
        index += 1
        if name in GIT_GLOBAL_VALUES and not equals and index < len(args):
            value, index = args[index], index + 1
        if name in {"-c", "--config-env"}:
            settings.append((name, value))
        elif name == "-C":
            place = site.place(value)
            site = site if place is None else site.at(place)
        elif name == "--git-dir":
            site = _by_git_dir(value, site)
    if "GIT_DIR" in env:
        site = _by_git_dir(env["GIT_DIR"], site)
    if site.outside():
        return None  # another repository: its hooks are not this project's
    for name, value in settings:
        key, _, setting = value.partition("=")
        reason = _git_setting(key, setting, f"`git {name} {key}=...`", site, depth, line)
        if reason:
            return reason
    if index >= len(args) or args[index + 1 : index + 2] in (["-h"], ["--help"]):
        return None
    sub, rest = args[index], args[index + 1 :]
    values, optional, long_values = GIT_OPTIONS.get(sub, ("", "", ()))
    options = parse_options(rest, values, optional, long_values)
    reason = redirect_reason(env, "git", sub if not reads(sub, options) else "")
    if reason:
        return reason
    for name, value in settings if not reads(sub, options) else ():
        key = value.partition("=")[0]
        reason = guard_install.config_reason(key, f"`git {name} {key}=...` for `git {sub}`")
        if reason:
            return reason
    if sub in MOVES_HISTORY:
        return _check_history(sub, options)
    reason = _check_no_verify(sub, options) or message_reason(sub, options, env, _merging(site))
    reason = reason or _check_sharing(sub, options, site)
    reason = reason or _check_source(sub, rest, options, site)
    return reason or _check_git_write(sub, options, site, depth, line)


def _merging(site: Site) -> Callable[[], bool] | None:
    """Whether a merge is in progress where the command runs: known for the project's root
    work tree only (a command elsewhere may be in another worktree's merge)."""
    inside = site.cwd is None or not site.cwd.startswith("/")
    return site.merging if inside and not site.outside() else None


def subcommand(args: list[str]) -> str:
    """The git subcommand of these arguments (after git's global options), or ""."""
    index = _subcommand_at(args)
    return args[index] if index < len(args) else ""


def subcommand_options(args: list[str]) -> tuple[str, Options]:
    """The git subcommand of these arguments and its options, parsed as `check_git` does."""
    index = _subcommand_at(args)
    sub = args[index] if index < len(args) else ""
    return sub, parse_options(args[index + 1 :], *GIT_OPTIONS.get(sub, ("", "", ())))


def _subcommand_at(args: list[str]) -> int:
    index = 0
    while index < len(args) and args[index].startswith("-"):
        name, equals, _ = args[index].partition("=")
        index += 2 if name in GIT_GLOBAL_VALUES and not equals else 1
    return index


def _by_git_dir(git_dir: str, site: Site) -> Site:
    """`--git-dir`/`GIT_DIR`: this project's .git keeps the place, another one leaves it."""
    if path_kind(git_dir, site) == "gitdir":
        return site.at("") if site.outside() else site
    place = site.place(git_dir)
    if place is None:
        return site  # not known: judged as this project's
    return site.at(place if place.startswith("/") else "/" + place)


# Variables that point git at other config (where core.hooksPath can be set), another
# repository, index, object store or programs: set for a command that writes, they step
# around the hooks; for one that only reads they are harmless.
REDIRECTS = {
    "HOME",
    "XDG_CONFIG_HOME",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_EXEC_PATH",
    "GIT_NAMESPACE",
    "GIT_REPLACE_REF_BASE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_SHALLOW_FILE",
    "GIT_GRAFT_FILE",
    "GIT_TEMPLATE_DIR",
}
GIT_READS = {
    "log",
    "show",
    "status",
    "diff",
    "blame",
    "annotate",
    "rev-parse",
    "rev-list",
    "ls-files",
    "ls-tree",
    "ls-remote",
    "cat-file",
    "grep",
    "describe",
    "shortlog",
    "whatchanged",
    "name-rev",
    "merge-base",
    "for-each-ref",
    "show-ref",
    "show-branch",
    "count-objects",
    "var",
    "version",
    "help",
    "check-ignore",
    "check-attr",
    "diff-tree",
    "diff-files",
    "diff-index",
    "range-diff",
    "verify-commit",
    "verify-tag",
    "archive",
    "--version",
}


def redirects(name: str) -> bool:
    """Whether setting this variable can point git away from this project's hooks."""
    return name in REDIRECTS or (name.startswith("GIT_CONFIG") and name != "GIT_CONFIG_NOSYSTEM")


def reads(sub: str, options: Options) -> bool:
    """Whether this git subcommand only reads (config: its read forms)."""
    if sub == "config":
        names, words = set(options.names()), options.positional
        return (
            bool(names & CONFIG_READS)
            or words[:1] in (["get"], ["list"])
            or (len(words) == 1 and not names & CONFIG_WRITES and words[0] not in CONFIG_ACTIONS)
        )
    return sub in GIT_READS


def redirect_reason(env: dict[str, str], program: str, writes: str) -> str | None:
    """Why a command that writes (`writes` names it; "" when it only reads) must not run with
    this environment."""
    name = next((name for name in env if redirects(name)), None)
    if name is None or not writes:
        return None
    return (
        f"setting {name} for `{program} {writes}` points git at other config (where "
        f"core.hooksPath can be set), another repository or other programs, stepping around "
        f"the commit hooks; run it without {name}: {USE_SHIFTKIT}"
    )


# Where git copies files from another commit into the work tree: `checkout REV -- PATH`,
# `restore --source=REV PATH`. The feature list and the records rewritten so are denied.
SAME_COMMIT = {"HEAD", "@"}


def _check_source(sub: str, rest: list[str], options: Options, site: Site) -> str | None:
    if sub == "checkout":
        if "--" in rest:
            before = [w for w in rest[: rest.index("--")] if not w.startswith("-")]
            source, paths = (before[:1] or [""])[0], rest[rest.index("--") + 1 :]
        else:
            words = options.positional
            source, paths = (words[0], words[1:]) if len(words) > 1 else ("", [])
    elif sub == "restore":
        source = options.value("-s", "--source") or ""
        paths = options.positional
    else:
        return None
    if not source or source in SAME_COMMIT or not paths:
        return None
    for path in paths:
        if path_kind(path, site) == "protected":
            return path_reason([path], f"`git {sub}` from {source}", site)
        name = _protected_under(path, site)
        if name:
            return (
                f"`git {sub}` of {name} from {source} rewrites it from another commit by "
                f"hand; {INSTEAD['features']}; the progress log, its archive and the ledger "
                f"only grow, through shiftkit"
            )
    return None


def _protected_under(pathspec: str, site: Site) -> str | None:
    """The feature list or record a pathspec covers: the file, a folder above it, a glob."""
    spec = pathspec.removeprefix(":/").removeprefix(":(top)")
    for name in (site.features, *site.records):
        target = os.path.normpath(name)
        place = site.place(spec) if spec not in ("", ".") else site.cwd or ""
        if place is None:
            place = os.path.normpath(spec)
        if place.startswith("/"):
            continue
        if (
            place in ("", ".")
            or target == place
            or target.startswith(place + "/")
            or (re.search(r"[*?\[]", spec) and fnmatch.fnmatch(target, place))
        ):
            return name
    return None


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
            f"`git pull --rebase` replays commits without the commit hooks and brings commits "
            f"this machine has not judged; {SYNC_INSTEAD}"
        )
    return None


SYNC_INSTEAD = (
    "use `shiftkit sync`: it judges the remote's new commits here first (re-running each "
    "flip's verifier), then fast-forwards or merges, and pushes"
)
# What names the remote's commits as fetched, without naming the remote.
FETCHED = {"FETCH_HEAD", "@{u}", "@{upstream}", "@{push}"}


def _check_sharing(sub: str, options: Options, site: Site) -> str | None:
    """Work crosses clones through `shiftkit sync` (decision record 0043): a pull brings
    commits no judge here has passed, and git stages their files before the hooks refuse
    to move the branch; a force push or a deletion drops commits other clones hold."""
    if sub == "pull":
        return f"`git pull` brings commits this machine has not judged; {SYNC_INSTEAD}"
    if sub == "merge" and any(
        p in FETCHED or p.endswith(("@{u}", "@{upstream}")) for p in options.positional
    ):
        return (
            f"`git merge` of the fetched branch brings commits this machine has not judged; "
            f"{SYNC_INSTEAD}"
        )
    if sub != "push":
        return None
    names = options.names()
    forced = any(
        name == "-f"
        or name.startswith("--force")
        or abbreviates(name, "--force", 5)
        or abbreviates(name, "--mirror", 4)
        or abbreviates(name, "--delete", 5)
        or abbreviates(name, "--prune", 5)
        or name == "-d"
        for name in names
    )
    claims = [spec for spec in options.positional[1:] if claim_ref(spec, site.claims)]
    if claims:
        return (
            f"`git push {claims[0]}` writes a claim ref by hand; claims change only through "
            f"shiftkit (`shiftkit claim`, `shiftkit release`), which writes a record other "
            f"clones can read; a planted or foreign claim is a person's to release with "
            f"`shiftkit release ID --steal`"
        )
    dropping = [spec for spec in options.positional[1:] if spec.startswith(("+", ":"))]
    if forced or dropping:
        return (
            "a force push (or a deletion) drops commits from the remote that other clones "
            "may hold: a person's to do; share work with `shiftkit sync` or a plain `git push`"
        )
    return None


CLAIM_REF = re.compile(r"^refs/shiftkit/|^refs/.*\bshiftkit-claims/")


def claim_ref(spec: str, prefix: str) -> bool:
    """Whether a push refspec's destination is (or, as a pattern, covers) a claim ref: under
    the project's `ref_prefix`, under `refs/shiftkit/` (the default) or in a
    `shiftkit-claims/` folder (the prefix the README suggests for a host that allows only
    branches). A destination without `refs/` is the branch or tag git takes it for."""
    destination = spec.lstrip("+").rpartition(":")[2] or spec.lstrip("+")
    named = [destination] if destination.startswith("refs/") else []
    named = named or [f"refs/heads/{destination}", f"refs/tags/{destination}"]
    return any(is_claim_ref(name, prefix) for name in named)


def is_claim_ref(ref: str, prefix: str) -> bool:
    """Whether ``ref`` is a claim ref, or a pattern (`refs/*`) that covers some."""
    if "*" in ref:
        stem = ref.partition("*")[0]
        return any(p.startswith(stem) or stem.startswith(p) for p in (prefix, "refs/shiftkit/"))
    return ref.startswith(prefix) or CLAIM_REF.search(ref) is not None


def _check_history(sub: str, options: Options) -> str | None:
    names = options.names()
    if sub in {"rebase", "cherry-pick"} and names and set(names) <= {"--abort", "--quit"}:
        return None  # leaving a rebase or cherry-pick in progress changes no history
    if sub == "cherry-pick" and any(n == "-n" or abbreviates(n, "--no-commit", 6) for n in names):
        return None  # changes the work tree and index only: the commit after it runs the hooks
    if sub == "replace" and not options.positional and set(names) <= {"-l", "--list", "--format"}:
        return None
    return f"`git {sub}` {MOVES_HISTORY[sub]}; {USE_SHIFTKIT}" + (
        " (`--abort` is allowed)" if sub in {"rebase", "cherry-pick"} else ""
    )


def _check_git_write(
    sub: str, options: Options, site: Site, depth: int, line: LineCheck
) -> str | None:
    names = options.names()
    if sub == "config":
        return _check_git_config(options, site, depth, line)
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
        claim = bool(refs) and is_claim_ref(refs[0], site.claims)
        if "--stdin" in names or claim or (refs and not refs[0].startswith(SAFE_REFS)):
            where = "a claim" if claim else "a branch"
            return (
                f"`git update-ref` moves {where} without the hooks or shiftkit; claims change "
                f"through `shiftkit claim`/`shiftkit release`, branches through commits: "
                f"{USE_SHIFTKIT}"
            )
    if sub == "worktree":
        return _check_worktree(options.positional, site)
    if sub in {"rm", "mv"} and not {"-n", "--dry-run"} & set(names):
        return path_reason(options.positional, f"`git {sub}`", site, removing=True)
    return None


def worktree_target(args: list[str], site: Site) -> str | None:
    """The absolute place a `git worktree add`/`move` (its arguments after `worktree`) puts
    a checkout of this repository, when outside the project and known."""
    words = parse_options(args, *GIT_OPTIONS["worktree"]).positional
    action = words[:1]
    target = words[1:2] if action == ["add"] else words[2:3] if action == ["move"] else []
    place = site.place(target[0]) if target else None
    return place if place is not None and place.startswith("/") else None


def _check_worktree(words: list[str], site: Site) -> str | None:
    """A worktree outside the project is this repository — its config, hooks and refs — in a
    place the guard took for another repository: `git worktree add /tmp/w && cd /tmp/w &&
    git config core.hooksPath ...` went through (decision record 0045). The guard now knows
    this repository's worktrees (`guard_worktrees`: the registered ones, and those a `git
    worktree add` earlier on the line makes), so a sibling worktree is allowed; only a place
    the guard cannot resolve is still denied."""
    action = words[:1]
    target = words[1:2] if action == ["add"] else words[2:3] if action == ["move"] else []
    if not target:
        return None
    place = site.place(target[0])
    if place is not None:
        return None
    return (
        f"`git worktree {action[0]}` to {target[0]} puts a checkout of this repository (its "
        f"config, hooks and branches) outside the project, where commands are taken for "
        f"another repository's; work on a branch here instead: {USE_SHIFTKIT}"
    )


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


def _check_git_config(options: Options, site: Site, depth: int, line: LineCheck) -> str | None:
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
    how = f"`git config {key}`"
    return guard_install.config_reason(key, how) or _git_setting(key, value, how, site, depth, line)


def _git_setting(
    key: str, value: str, how: str, site: Site, depth: int, line: LineCheck
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
    reason = config_reason(key, value, how)
    if reason:
        return reason
    if lowered.startswith("alias.") and value:
        body = value[1:] if value.startswith("!") else "git " + value
        reason = line(body, site, depth + 1)
        if reason:
            return f"{how} defines an alias that would do what is denied here: {reason}"
    return None
