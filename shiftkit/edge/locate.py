"""The project as the guard finds it before every tool call (decision 0070): its root read
from the `.git` entries on the way up (no process), and what it needs of HEAD's
`.shiftkit.toml` parsed once per version of the file and kept in the git dir by its blob id
and by HEAD's commit (so neither TOML nor the settings' types are imported again, and at a
commit seen before no git runs). `project.find` gives the same answer for every other
command."""

from __future__ import annotations

import json
import os

from shiftkit.edge import gitio

TYPE_CHECKING = False  # (typing is not imported on the guard's path)
if TYPE_CHECKING:
    from shiftkit.core.config import Config

CONFIG_FILE = ".shiftkit.toml"  # (core.config.CONFIG_FILE)

# What changes where git looks for the repository: with any of these set, git is asked.
GIT_DISCOVERY = ("GIT_DIR", "GIT_WORK_TREE", "GIT_CEILING_DIRECTORIES", "GIT_COMMON_DIR")
# What a `.git` folder holds for git to take it for a repository.
REPOSITORY = ("HEAD", "objects", "refs")


def worktree_root(cwd: str) -> str | None:
    """The top of the work tree ``cwd`` lies in, as `git rev-parse --show-toplevel` gives
    it (None: no work tree). The first folder on the way up that holds a `.git` folder
    with a repository's entries, or a `.git` file naming a git dir, is it; anything else
    (a `.git` that is neither, GIT_DIR and the like) asks git."""
    here = os.path.realpath(cwd)
    if not any(name in os.environ for name in GIT_DISCOVERY):
        while True:
            dot = os.path.join(here, ".git")
            if os.path.isdir(dot):
                if all(os.path.exists(os.path.join(dot, name)) for name in REPOSITORY):
                    return here
                break  # (a `.git` folder git may not take for a repository: ask git)
            if os.path.isfile(dot):
                try:
                    with open(dot, encoding="utf-8") as handle:
                        linked = handle.read(8) == "gitdir: "
                except (OSError, UnicodeDecodeError):
                    linked = False
                if linked:
                    return here
                break  # (not a link git can read: let git say what it is)
            parent = os.path.dirname(here)
            if parent == here:
                return None
            here = parent
    code, out, _ = gitio.plumb(["rev-parse", "--show-toplevel"], cwd)
    top = out.decode("utf-8", "surrogateescape").strip()
    return top if code == 0 and top else None


class Settings:
    """What the guard reads of the settings: the protected names and where claims live."""

    __slots__ = ("archive", "claims_enabled", "features", "progress", "ref_prefix", "remote")

    def __init__(self, values: list[object]) -> None:
        self.features, self.progress, self.archive, self.ref_prefix, self.remote = (
            str(value) for value in values[:5]
        )
        self.claims_enabled = values[5] is True

    @staticmethod
    def of(cfg: Config) -> list[object]:
        claims = cfg.claims
        return [
            cfg.features,
            cfg.progress,
            cfg.log.archive,
            claims.ref_prefix,
            claims.remote,
            claims.enabled,
        ]


SETTINGS_CACHE = "guard-settings"  # under the common git dir's shiftkit/
KEPT_SETTINGS = 16  # (entries by blob and by commit: the newest few of each)


def committed_config(root: str) -> tuple[Config, str | None]:
    """HEAD's settings, the judge's (`project.committed_config` reads the same blob), and
    their text; the work tree's settings (and None) before a commit holds them."""
    text = _committed_text(root)[1]
    return (_working(root), None) if text is None else (_parse(text), text)


def guard_settings(root: str, git_dir: str, common: str) -> tuple[Settings, str | None]:
    """What the guard needs of HEAD's settings, and their text (None: no commit holds
    them, the work tree's apply). Kept in the git dir by the blob id of each version of the
    file (parsed by `core.config` once, as every command parses it), and by HEAD's commit
    when it can be read from the git dir's files: then no git runs at all."""
    folder = os.path.join(common, "shiftkit", SETTINGS_CACHE)
    commit = head_commit(git_dir, common)
    if commit is not None:
        kept = _read(os.path.join(folder, commit))
        if isinstance(kept, list) and len(kept) == 7 and isinstance(kept[6], str):
            return Settings(kept), kept[6]
    oid, text = _committed_text(root, commit or "HEAD")
    if oid is None or text is None:
        return Settings(Settings.of(_working(root))), None
    values = _read(os.path.join(folder, oid))
    if not (isinstance(values, list) and len(values) == 6):
        values = Settings.of(_parse(text))
        _keep(os.path.join(folder, oid), json.dumps(values))
    if commit is not None:
        _keep(os.path.join(folder, commit), json.dumps([*values, text]))
    return Settings(values), text


def head_commit(git_dir: str, common: str) -> str | None:
    """HEAD's commit id read from the git dir's files, as git reads a loose or packed branch
    (None whenever it is anything else: unborn, a reftable, a symbolic chain)."""
    try:
        with open(os.path.join(git_dir, "HEAD"), encoding="utf-8") as handle:
            head = handle.read().strip()
        if not head.startswith("ref: refs/heads/"):
            return head if _is_oid(head) else None
        ref = head[len("ref: ") :]
        if os.path.exists(os.path.join(common, "reftable")):
            return None
        try:
            with open(os.path.join(common, *ref.split("/")), encoding="utf-8") as handle:
                loose = handle.read().strip()
            return loose if _is_oid(loose) else None
        except FileNotFoundError:
            pass
        with open(os.path.join(common, "packed-refs"), encoding="utf-8") as handle:
            for line in handle:
                oid, _, name = line.rstrip("\n").partition(" ")
                if name == ref:
                    return oid if _is_oid(oid) else None
    except (OSError, UnicodeDecodeError):
        return None
    return None


_HEX = frozenset("0123456789abcdef")


def _is_oid(text: str) -> bool:
    return len(text) in (40, 64) and _HEX.issuperset(text)


def _read(place: str) -> object:
    try:
        with open(place, encoding="utf-8") as handle:
            return json.loads(handle.read())
    except (OSError, ValueError, RecursionError):  # (a corrupt entry: read the settings again)
        return None


def _working(root: str) -> Config:
    from pathlib import Path

    from shiftkit.edge import project

    return project.load_config(Path(root))


def _parse(text: str) -> Config:
    from shiftkit.core import config as config_mod

    return config_mod.parse(text, f"{CONFIG_FILE} (as committed at HEAD)")


def _committed_text(root: str, rev: str = "HEAD") -> tuple[str | None, str | None]:
    """(blob id, text) of ``rev``'s `.shiftkit.toml`, (None, None) when it holds none."""
    code, out, _ = gitio.plumb(["cat-file", "--batch"], root, f"{rev}:{CONFIG_FILE}\n".encode())
    header, _, rest = out.partition(b"\n")
    fields = header.split()
    if code != 0 or len(fields) != 3 or fields[1] != b"blob" or not fields[2].isdigit():
        return None, None
    content = rest[: int(fields[2])]
    return fields[0].decode("ascii"), content.decode("utf-8", "surrogateescape")


def _keep(place: str, data: str) -> None:
    """Write the cache entry whole (a reader sees the old file or the new), keeping the
    newest few; a git dir that cannot be written is no error: parsed again next time."""
    folder = os.path.dirname(place)
    try:
        os.makedirs(folder, exist_ok=True)
        temporary = f"{place}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(data)
        os.replace(temporary, place)
        names = os.listdir(folder)
        if len(names) > KEPT_SETTINGS:
            paths = sorted((os.path.join(folder, n) for n in names), key=os.path.getmtime)
            for old in paths[: len(paths) - KEPT_SETTINGS]:
                os.unlink(old)
    except OSError:
        pass
