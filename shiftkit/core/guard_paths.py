"""Which protected file a shell word names (the feature list, the commit hooks, git's
config, shiftkit's state, the person-owned files), and the reason line for writing it."""

from __future__ import annotations

import os

from shiftkit.core import guard_install, guard_worktrees
from shiftkit.core.guard_shell import SUBSTITUTION

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from shiftkit.core.protected import Ground

STATUS_FIELDS = ("passes", "attempts", "blocked")
USE_SHIFTKIT = (
    "commit with `shiftkit finish` (verifies and commits) or a plain `git commit` "
    "so the hooks run; give up an attempt with `shiftkit revert`"
)
PERSON = "stop and ask a person"
CLAIMS_PREFIX = "refs/shiftkit/claims/"  # (core.config's default ref_prefix)
INSTEAD = {
    "features": "status fields change only through `shiftkit finish`, `shiftkit revert` or a "
    "person's `shiftkit unblock`; a new feature is a person's to append",
    "hooks": f"the commit hooks are what make a shift's work count; {USE_SHIFTKIT}",
    "gitdir": f"it holds the commit hooks and the history; {USE_SHIFTKIT}",
    "gitconfig": f"git's config decides which hooks run, and changing it is a person's action; "
    f"{USE_SHIFTKIT}",
    "state": "shiftkit's local state (verify cache, claims) is written only by shiftkit: "
    "`shiftkit verify`, `shiftkit claim`, `shiftkit release`, `shiftkit finish`",
    "config": f"changing the configuration is a person's action; {PERSON}",
    "signers": f"it lists who may take person actions; changing it is a person's action; {PERSON}",
    "gitstore": "it decides which commits git sees and where branches point, behind the hooks' "
    f"back; {USE_SHIFTKIT}",
    "gitfolder": "what lands there decides which commits git sees (grafts, alternates, refs), "
    f"behind the hooks' back; {USE_SHIFTKIT}",
    "gitmessage": "git prepares it for the commit that ends a merge (`git commit --no-edit` "
    "uses it as it is), so a trailer written there would pass unread; write the message "
    "with `git commit -m` or commit with `shiftkit finish -m`",
    "install": "it is shiftkit's own installation, which judges the work and is a person's to "
    "change: stop and ask a person",
    "records": "shiftkit writes the progress log (`shiftkit finish`, `shiftkit revert`; "
    "`shiftkit note` for your notes), its archive (`shiftkit log --prune`) and the ledger, "
    "and the commit hooks keep them append-only",
    "protected": "it changes only as a person's action (rule 14): ask a person, or fix the "
    "code instead",
}
LABELS = {
    "hooks": ".git/hooks (the commit hooks)",
    "gitdir": ".git",
    "gitconfig": ".git/config",
    "state": ".git/shiftkit (shiftkit's local state)",
    "config": ".shiftkit.toml",
    "signers": ".shiftkit/allowed_signers",
    "gitstore": ".git's grafts, alternates, shallow list or refs",
    "gitfolder": "a folder of .git's grafts, alternates or refs",
    "records": "a record only shiftkit writes",
    "install": "shiftkit's installation",
    "gitmessage": "the message git prepared for a merge's commit",
    "protected": "a feature's oracle, an enforcement file or a decision record",
}
TEMP_DIRS = ("/tmp/", "/var/tmp/", "/private/tmp/", "/dev/shm/", "/dev/null")


class Site:
    """The project as the guard sees it: the feature list's name, the records a commit must
    keep (progress log, archive, ledger), the root when known, and where a command runs
    (`cwd`: project-relative, "" the root; an absolute path: outside the project; None: not
    known, so relative paths count from the root with any leading `../` dropped)."""

    __slots__ = (
        "claims",
        "committed",
        "cwd",
        "features",
        "grounds",
        "merging",
        "records",
        "root",
    )

    def __init__(
        self,
        features: str = "features.json",
        records: tuple[str, ...] = (),
        root: str | None = None,
        cwd: str | None = None,
        grounds: Grounds | None = None,
        committed: Callable[[str], bool] | None = None,
        claims: str = CLAIMS_PREFIX,
        merging: Callable[[], bool] | None = None,
    ) -> None:
        self.features = features
        self.records = records
        self.root = root.rstrip("/") or "/" if root else None
        self.cwd = cwd
        # rule 14's ground at HEAD, read when a path is first judged, and whether a path is
        # committed at HEAD (decision record 0048); None: not known, nothing is protected
        self.grounds = grounds
        self.committed = committed
        self.claims = claims  # where the remote keeps claims ([shiftkit.claims] ref_prefix)
        # whether the root's work tree is in a merge (MERGE_HEAD, no cherry-pick or revert),
        # read when first needed; None: not known
        self.merging = merging

    def at(self, cwd: str | None) -> Site:
        return self.moved(self.root, cwd)

    def moved(self, root: str | None, cwd: str | None) -> Site:
        """This site at another root and place, with the same names and ground."""
        return Site(
            self.features,
            self.records,
            root,
            cwd,
            self.grounds,
            self.committed,
            self.claims,
            self.merging,
        )

    def inside(self, absolute: str) -> str | None:
        """The project-relative form of an absolute path under the root ("" the root)."""
        path = os.path.normpath(absolute)
        if self.root is None or not (path + "/").startswith(self.root.rstrip("/") + "/"):
            return None
        relative = os.path.relpath(path, self.root)
        return "" if relative == "." else relative

    def place(self, path: str) -> str | None:
        """Where a path (a folder `cd` goes to) is, in the form of `cwd`; None: not known."""
        text = path.strip()
        if not text or text.startswith(("~", "$", "-", SUBSTITUTION)):
            return None
        if text.startswith("/"):
            inside = self.inside(text)
            if inside is not None:
                return inside
            known_outside = self.root is not None or (text + "/").startswith(TEMP_DIRS)
            return os.path.normpath(text) if known_outside else None
        if self.cwd is not None and self.cwd.startswith("/"):
            return self.at(None).place(os.path.join(self.cwd, text))
        joined = os.path.normpath(os.path.join(self.cwd or "", text))
        if joined.startswith("..") and self.root is not None and self.cwd is not None:
            return self.place(os.path.join(self.root, joined))
        parts = [part for part in joined.split("/") if part not in ("", ".", "..")]
        return "/".join(parts)

    def outside(self) -> bool:
        """Whether commands run in another place than this project (another repository; a
        linked worktree of this one is this project: `guard_worktrees`)."""
        return (
            self.cwd is not None
            and self.cwd.startswith("/")
            and not guard_worktrees.is_worktree(self.cwd)
        )


class Grounds:
    """Rule 14's ground, read once, when first asked for (most tool calls write nothing)."""

    __slots__ = ("_found", "_read", "_source")

    def __init__(self, source: Callable[[], Ground | None]) -> None:
        self._source = source
        self._read = False
        self._found: Ground | None = None

    def get(self) -> Ground | None:
        if not self._read:
            self._read, self._found = True, self._source()
        return self._found


def protected_kind(relative: str, site: Site) -> str | None:
    """'protected' when writing this project-relative path changes rule 14's ground: a
    committed feature's oracle, shiftkit's enforcement files, a committed decision record —
    the one rule the commit hooks apply to the same file (the index, whose lines may grow,
    is left to them)."""
    ground = site.grounds.get() if site.grounds is not None else None
    if ground is None or not relative or relative.startswith("../"):
        return None
    from shiftkit.core import protected

    as_new = protected.matches(ground, relative, exists=False)
    if as_new is not None and not as_new.what.startswith("the decision index"):
        return "protected"  # (where even a new file counts: a conftest, a shadow, settings)
    as_change = protected.matches(ground, relative)
    if as_change is None or as_change.what.startswith("the decision index"):
        return None
    return "protected" if site.committed is None or site.committed(relative) else None


# Files in .git that decide which commits git sees or where refs point: written by hand they
# move history behind the hooks' back (grafts, alternates, shallow, refs).
GIT_STORE = (
    ["info", "grafts"],
    ["info", "alternates"],
    ["objects", "info", "alternates"],
    ["objects", "info", "http-alternates"],
    ["shallow"],
    ["packed-refs"],
    ["commondir"],
    ["HEAD"],
)
GIT_STORE_FOLDERS = (["info"], ["objects"], ["objects", "info"], ["refs"])


GIT_HOOK_NAMES = frozenset(
    [
        "applypatch-msg",
        "pre-applypatch",
        "post-applypatch",
        "pre-commit",
        "pre-merge-commit",
        "prepare-commit-msg",
        "commit-msg",
        "post-commit",
        "pre-rebase",
        "post-checkout",
        "post-merge",
        "pre-push",
        "pre-receive",
        "update",
        "proc-receive",
        "post-receive",
        "post-update",
        "reference-transaction",
        "push-to-checkout",
        "pre-auto-gc",
        "post-rewrite",
        "sendemail-validate",
        "fsmonitor-watchman",
        "p4-changelist",
        "p4-prepare-changelist",
        "p4-post-changelist",
        "p4-pre-submit",
        "post-index-change",
    ]
)
GIT_KINDS = {"hooks", "gitdir", "gitconfig", "state", "gitstore", "gitfolder", "gitmessage"}


def _git_kind(parts: list[str]) -> str | None:
    if len(parts) >= 2 and parts[0] == "worktrees":
        parts = parts[2:]
    if not parts:
        return "gitdir"
    if parts[0] in {"hooks", "shiftkit"}:
        return "hooks" if parts[0] == "hooks" else "state"
    if parts in (["config"], ["config.worktree"]):
        return "gitconfig"
    if parts in (["MERGE_MSG"], ["SQUASH_MSG"]):
        return "gitmessage"
    if parts in GIT_STORE or parts[0] == "refs":
        return "gitstore"
    if parts in GIT_STORE_FOLDERS:
        return "gitfolder"
    return None


def _kind_of_parts(parts: list[str], absolute: bool, site: Site) -> str | None:
    if ".git" in parts and (absolute or parts[0] == ".git"):
        kind = _git_kind(parts[parts.index(".git") + 1 :])
        if kind:
            return kind
    if not absolute and parts and record_kind("/".join(parts), site):
        return "records"  # the same rule as a file tool's (decision 0063)
    if not absolute or len(parts) > 1:
        features = [p for p in os.path.normpath(site.features).split("/") if p not in ("", ".")]
        for kind, ending in (
            ("features", features),
            ("config", [".shiftkit.toml"]),
            ("signers", [".shiftkit", "allowed_signers"]),
            ("signers", [".shiftkit"]),
        ):
            if ending and parts[-len(ending) :] == ending and (absolute or parts == ending):
                return kind
    if not absolute and site.grounds is not None:
        return protected_kind("/".join(parts), site)
    return None


def path_kind(path: str, site: Site) -> str | None:
    """Which protected file this shell word names, if any: 'features', 'hooks', 'gitdir',
    'gitconfig', 'gitstore', 'gitfolder', 'gitmessage', 'state', 'config' or 'signers'.
    Relative paths count from where the command runs (`site.cwd`); absolute paths under the
    root as relative ones, others by their ending, except in temporary folders and, once the
    root is known, outside it in another place (another repository's .git is not this
    project's)."""
    text = path.strip()
    if not text:
        return None
    if text.startswith((SUBSTITUTION, "$")):
        # The head is what the shell makes when it runs (`$(python3 -c 'import site…')/x.pth`,
        # `$D/hooks/pre-commit`): it may be any folder, so the path is judged by its ending
        # alone, as if the unknown part were the worst place (decision record 0091).
        parts = _parts(text)
        if guard_install.unknown_folder_installation(parts):
            return "install"
        # `<git dir>/hooks`, a hook in it (git's hooks have no dot: a `$PWD/hooks/x.ts` goes),
        # or a file named as git's hooks are in a folder unknown (`$(git rev-parse --git-path
        # hooks)/pre-commit`)
        hook = len(parts) == 3 and parts[1] == "hooks" and "." not in parts[2]
        if parts[1:] == ["hooks"] or hook or (len(parts) == 2 and parts[1] in GIT_HOOK_NAMES):
            return "hooks"
        return _kind_of_parts(parts, True, site) if len(parts) > 1 else None
    if _installation(text, site):
        return "install"
    if text.startswith("/"):
        inside = site.inside(text)
        if inside is not None:
            return _kind_of_parts(_parts(inside), False, site)
        temporary = (text + "/").startswith(TEMP_DIRS)
        if temporary and site.root is not None:
            return None  # another repository's .git, a scratch copy
        kind = _kind_of_parts(_parts(text), True, site)
        return None if temporary and kind not in GIT_KINDS else kind
    if text.startswith(("~", "$")):
        return _kind_of_parts(_parts(text), True, site)
    if site.cwd is not None and site.cwd.startswith("/"):
        return path_kind(os.path.join(site.cwd, text), site.at(None))
    joined = os.path.normpath(os.path.join(site.cwd or "", text))
    if joined.startswith("..") and site.root is not None and site.cwd is not None:
        return path_kind(os.path.join(site.root, joined), site.at(None))
    parts = _parts(joined)
    while parts and parts[0] == "..":
        parts.pop(0)
    return _kind_of_parts(parts, False, site)


def _installation(text: str, site: Site) -> bool:
    """A file of shiftkit's own installation (decision 0063; `guard_install`)."""
    absolute = text if text.startswith("/") else None
    if absolute is None and site.root is not None and not text.startswith(("~", "$")):
        if site.cwd is None or not site.cwd.startswith("/"):
            absolute = os.path.join(site.root, site.cwd or "", text)
        else:
            absolute = os.path.join(site.cwd, text)
    return guard_install.is_installation(text, absolute)


def _parts(path: str) -> list[str]:
    return [part for part in os.path.normpath(path).split("/") if part not in ("", ".")]


def record_kind(relative: str, site: Site) -> str | None:
    """'records' when this project-relative path is the progress log, its archive or the
    ledger (what a file tool or a patch may not write by hand), else None."""
    path = os.path.normpath(relative)
    return "records" if any(path == os.path.normpath(r) for r in site.records if r) else None


def label(kind: str, site: Site) -> str:
    return site.features if kind == "features" else LABELS[kind]


def path_reason(
    paths: list[str], how: str, site: Site, removing: bool = False, unseen: bool = False
) -> str | None:
    """The reason line for the first protected path written (or removed); `unseen`: the tool
    writes names the command does not show (an archive, a folder's contents), so .git itself
    counts as written too."""
    for path in paths:
        kind = path_kind(path, site)
        if kind is None or (kind == "gitdir" and not removing and not unseen):
            continue
        verb = "removes" if removing else "writes into" if unseen else "writes"
        named_as = label(kind, site)
        shown = path.replace(SUBSTITUTION, "$(...)")
        named = shown if os.path.normpath(path) == named_as else f"{shown} ({named_as})"
        return f"{how} {verb} {named} by hand; {INSTEAD[kind]}"
    return None


def into(target: str, sources: list[str], site: Site) -> list[str]:
    """What a copy, move or link writes: the target, and when it is a folder, each source's
    name inside it."""
    folder = target.endswith("/") or target.rstrip("/") in ("", ".", "..")
    folders = {"hooks", "gitdir", "state", "gitfolder"}
    folder = folder or path_kind(target, Site("", (), site.root, site.cwd)) in folders
    if not folder:
        return [target]
    return [target] + [os.path.join(target, os.path.basename(s.rstrip("/"))) for s in sources]
