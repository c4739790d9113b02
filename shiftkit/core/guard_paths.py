"""Which protected file a shell word names (the feature list, the commit hooks, git's
config, shiftkit's state, the person-owned files), and the reason line for writing it."""

from __future__ import annotations

import os

from shiftkit.core.guard_shell import SUBSTITUTION

STATUS_FIELDS = ("passes", "attempts", "blocked")
USE_SHIFTKIT = (
    "commit with `shiftkit finish` (verifies and commits) or a plain `git commit` "
    "so the hooks run; give up an attempt with `shiftkit revert`"
)
PERSON = "stop and ask a person"
INSTEAD = {
    "features": "status fields change only through `shiftkit finish`, `shiftkit revert` or a "
    "person's `shiftkit unblock`; new features are appended with `shiftkit add`",
    "hooks": f"the commit hooks are what make a shift's work count; {USE_SHIFTKIT}",
    "gitdir": f"it holds the commit hooks and the history; {USE_SHIFTKIT}",
    "gitconfig": f"git's config decides which hooks run, and changing it is a person's action; "
    f"{USE_SHIFTKIT}",
    "state": "shiftkit's local state (verify cache, claims) is written only by shiftkit: "
    "`shiftkit verify`, `shiftkit claim`, `shiftkit release`, `shiftkit finish`",
    "config": f"changing the configuration is a person's action; {PERSON}",
    "signers": f"it lists who may take person actions; changing it is a person's action; {PERSON}",
}
LABELS = {
    "hooks": ".git/hooks (the commit hooks)",
    "gitdir": ".git",
    "gitconfig": ".git/config",
    "state": ".git/shiftkit (shiftkit's local state)",
    "config": ".shiftkit.toml",
    "signers": ".shiftkit/allowed_signers",
}
TEMP_DIRS = ("/tmp/", "/var/tmp/", "/private/tmp/", "/dev/shm/", "/dev/null")


def _git_kind(parts: list[str]) -> str | None:
    if len(parts) >= 2 and parts[0] == "worktrees":
        parts = parts[2:]
    if not parts:
        return "gitdir"
    if parts[0] in {"hooks", "shiftkit"}:
        return "hooks" if parts[0] == "hooks" else "state"
    if parts in (["config"], ["config.worktree"]):
        return "gitconfig"
    return None


def path_kind(path: str, features_name: str) -> str | None:
    """Which protected file this shell word names, if any: 'features', 'hooks', 'gitdir',
    'gitconfig', 'state', 'config' or 'signers'. Relative paths count from the project root
    (or a subfolder: `../`); absolute paths by their ending, except in temporary folders."""
    text = path.strip()
    if not text or text.startswith(SUBSTITUTION):
        return None
    absolute = text.startswith(("/", "~", "$"))
    parts = [part for part in os.path.normpath(text).split("/") if part not in ("", ".")]
    while parts and parts[0] == ".." and not absolute:
        parts.pop(0)
    if ".git" in parts and (absolute or parts[0] == ".git"):
        kind = _git_kind(parts[parts.index(".git") + 1 :])
        if kind:
            return kind
    if absolute and (text + "/").startswith(TEMP_DIRS):
        return None
    if not absolute or len(parts) > 1:
        features = [p for p in os.path.normpath(features_name).split("/") if p not in ("", ".")]
        for kind, ending in (
            ("features", features),
            ("config", [".shiftkit.toml"]),
            ("signers", [".shiftkit", "allowed_signers"]),
            ("signers", [".shiftkit"]),
        ):
            if ending and parts[-len(ending) :] == ending and (absolute or parts == ending):
                return kind
    return None


def label(kind: str, features_name: str) -> str:
    return features_name if kind == "features" else LABELS[kind]


def path_reason(
    paths: list[str], how: str, features_name: str, removing: bool = False
) -> str | None:
    for path in paths:
        kind = path_kind(path, features_name)
        if kind is None or (kind == "gitdir" and not removing):
            continue
        verb = "removes" if removing else "writes"
        named_as = label(kind, features_name)
        named = path if os.path.normpath(path) == named_as else f"{path} ({named_as})"
        return f"{how} {verb} {named} by hand; {INSTEAD[kind]}"
    return None


def into(target: str, sources: list[str]) -> list[str]:
    """What a copy, move or link writes: the target, and when it is a folder, each source's
    name inside it."""
    folder = target.endswith("/") or target.rstrip("/") in ("", ".", "..")
    folder = folder or path_kind(target, "") in {"hooks", "gitdir", "state"}
    if not folder:
        return [target]
    return [target] + [os.path.join(target, os.path.basename(s.rstrip("/"))) for s in sources]
