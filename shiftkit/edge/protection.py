"""Rule 14's inputs, as each judge reads them: the (status, path) rows a change touches, the
texts the rule needs of a few of them, and the parent's ground (`core.protected`).

The commit hooks read the rows from `git diff --cached --raw`, the reference-transaction hook
from `git diff-tree --raw`, `audit` from its one bulk `git diff-tree` (`edge.history`). On a
commit that stages no protocol file the commit-msg hook reads the parent's ground from a
cache keyed by the blobs it is built from, so it parses neither the list nor the settings.
"""

from __future__ import annotations

import os

from shiftkit.core import protected
from shiftkit.edge import gitio

TYPE_CHECKING = False  # the commit-msg hook imports this on every commit
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from shiftkit.core import rules
    from shiftkit.core.config import Config

    Rows = list[tuple[str, str]]
    Pairs = dict[str, tuple[str | None, str | None]]

ZERO = "0" * 40
CONFIG_FILE = ".shiftkit.toml"
DEFAULT_FEATURES = "features.json"


def _oid(text: str) -> str | None:
    return None if not text.strip("0") else text


def staged_rows(staged: Mapping[str, tuple[str, str]]) -> tuple[Rows, Pairs]:
    """The rows and (old, new) blob ids of the hooks' `staged_entries`."""
    rows, pairs = [], {}
    for path, (head_blob, staged_blob) in staged.items():
        old, new = _oid(head_blob), _oid(staged_blob)
        rows.append(("A" if old is None else "D" if new is None else "M", path))
        pairs[path] = (old, new)
    return rows, pairs


def raw_rows(output: bytes) -> tuple[Rows, Pairs]:
    """The rows and blob ids of one `git diff-tree -r --raw -z --no-renames` (or `git diff
    --raw`) output."""
    fields = output.decode("utf-8", "surrogateescape").split("\0")
    rows, pairs = [], {}
    index = 0
    while index < len(fields) - 1:
        meta = fields[index]
        if not meta.startswith(":"):
            index += 1
            continue
        _, _, old_oid, new_oid, status = meta[1:].split(" ", 4)
        path = fields[index + 1]
        old, new = _oid(old_oid), _oid(new_oid)
        rows.append(("A" if status == "A" else "D" if status == "D" else "M", path))
        pairs[path] = (old, new)
        index += 2
    return rows, pairs


def commit_rows(root: Path | str, commit: str, parents: Sequence[str]) -> tuple[Rows, Pairs]:
    """What a commit changes: against its parent; for a merge, the paths it changes against
    every parent (what the merge itself made; the rest was judged on its side)."""
    if not parents:
        return [], {}
    found = []
    for parent in parents:
        args = ["diff-tree", "-r", "--raw", "-z", "--no-renames", "--no-abbrev", parent, commit]
        code, out, err = gitio.plumb(args, root)
        if code != 0:
            raise gitio.GitFailed(args, code, err.decode("utf-8", "replace"))
        found.append(raw_rows(out))
    rows, pairs = found[0]
    for other_rows, _ in found[1:]:
        kept = {path for _, path in other_rows}
        rows = [row for row in rows if row[1] in kept]
    return rows, {path: pairs[path] for _, path in rows}


def work_tree_rows(root: Path | str, git_dir: Path | str) -> tuple[Rows, Pairs]:
    """What `git add -A` would stage against HEAD — `finish`'s commit, before it is made —
    read through a temporary copy of the index (the real one untouched)."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="shiftkit-index-") as folder:
        index = os.path.join(folder, "index")
        real = os.path.join(str(git_dir), "index")
        if os.path.exists(real):
            shutil.copyfile(real, index)
        env = {"GIT_INDEX_FILE": index}
        gitio.run(["add", "-A"], root, env=env)
        listing = gitio.run(
            ["diff-index", "--cached", "--raw", "-z", "--no-renames", "--no-abbrev", "HEAD"],
            root,
            env=env,
        ).stdout
    return raw_rows(listing.encode("utf-8", "surrogateescape"))


def texts(
    root: Path | str, rows: Rows, pairs: Pairs, decisions: str
) -> dict[str, tuple[str | None, str | None]]:
    """The (old, new) texts of the rows rule 14 reads whole (`protected.texts_needed`)."""
    needed = protected.texts_needed(rows, decisions)
    if not needed:
        return {}
    oids = [oid for path in needed for oid in pairs.get(path, (None, None))]
    read = gitio.read_blobs(root, [oid for oid in oids if oid is not None])
    it = iter(read)
    values = [None if oid is None else next(it) for oid in oids]
    return {path: (values[2 * i], values[2 * i + 1]) for i, path in enumerate(needed)}


def changed(
    root: Path | str,
    cfg: Config,
    rows: Rows,
    pairs: Pairs,
    ground: protected.Ground | None = None,
) -> rules.Changed:
    """`rules.Changed` for a change judged by ``cfg`` (the parent's settings)."""
    from shiftkit.core import rules

    return rules.Changed(
        tuple(rows),
        texts(root, rows, pairs, cfg.decisions),
        cfg.oracle,
        cfg.verify,
        cfg.decisions,
        ground,
    )


# -- the parent's ground, cached ---------------------------------------------------------------


def features_name(config_text: str | None) -> str | None:
    """The feature list's name in a config text, without parsing TOML when it is the default
    (None: ask the parser)."""
    if config_text is None or "features" not in config_text:
        return DEFAULT_FEATURES
    import re

    # (the template's own line; anything else that mentions the key is parsed)
    found: list[str] = re.findall(
        r'(?m)^features[ \t]*=[ \t]*"([^"\\\n]*)"[ \t]*(?:#.*)?$', config_text
    )
    if len(found) == 1 and config_text.count("features") == 1 + found[0].count("features"):
        return found[0]
    return None


def cached_ground(
    root: Path | str,
    common: Path | str,
    rev: str,
    config_text: str | None,
    features: str | None = None,
) -> protected.Ground | None:
    """The ground at ``rev`` (a commit): read from the git dir when it was built from the same
    settings and list blobs before, else built and kept there. None: ``rev`` holds no list
    (a change on it establishes one: rule 14 does not apply, as `rules.evaluate` says).
    ``features``: the list's name in ``config_text``, when the caller parsed it already."""
    name = features or features_name(config_text)
    cfg = None
    if name is None:
        cfg = _parse(config_text)
        name = cfg.features
    config_oid, list_oid = gitio.object_ids(root, [f"{rev}:{CONFIG_FILE}", f"{rev}:{name}"])
    if list_oid is None:
        return None
    folder = os.path.join(str(common), "shiftkit", "grounds")
    path = os.path.join(folder, f"{config_oid or 'none'}-{list_oid or 'none'}")
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            found = protected.load(handle.read())
    except OSError:
        found = None
    if found is not None:
        return found
    found = build_ground(root, rev, cfg or _parse(config_text), list_oid)
    from pathlib import Path

    from shiftkit.edge.atomic import atomic_write

    try:
        os.makedirs(folder, exist_ok=True)
        atomic_write(Path(path), protected.dump(found))
        _prune(folder)
    except OSError:
        pass  # (a read-only git dir: built again next time)
    return found


KEPT_GROUNDS = 16  # each list version has its ground: keep the newest few


def _prune(folder: str) -> None:
    names = os.listdir(folder)
    if len(names) <= KEPT_GROUNDS:
        return
    paths = sorted((os.path.join(folder, n) for n in names), key=os.path.getmtime)
    for old in paths[: len(paths) - KEPT_GROUNDS]:
        os.unlink(old)


def _parse(config_text: str | None) -> Config:
    from shiftkit.core.config import Config, parse_or_default
    from shiftkit.core.errors import BadInput

    try:
        return parse_or_default(config_text)
    except BadInput:
        return Config()  # (as the judge does: a parent config that does not parse)


def build_ground(root: Path | str, rev: str, cfg: Config, list_oid: str | None) -> protected.Ground:
    """The ground of the list blob ``list_oid`` under ``cfg``: the same function `evaluate`
    builds it with (`rules.ground_of`)."""
    import json

    from shiftkit.core import features, rules

    feature_list = None
    if list_oid is not None:
        text = gitio.read_blobs(root, [list_oid])[0]
        try:
            # (committed through the hooks, so checked then; one committed past them that
            # does not read is no list: it has no committed features)
            feature_list = features.from_document(json.loads(text or ""))
            feature_list.features  # noqa: B018 (read now: a malformed item raises here)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            feature_list = None
    side = rules.Side(feature_list, None, None)
    change = rules.Changed(default=cfg.oracle, verify=cfg.verify, decisions=cfg.decisions)
    return rules.ground_of([side], change, (cfg.features, cfg.progress, cfg.log.archive))


def head_ground(
    root: Path | str,
    config_text: str | None = None,
    features: str | None = None,
    *,
    read: bool = True,
) -> protected.Ground | None:
    """HEAD's ground, for the guard (None: no commit, no list, or git cannot say); with
    ``read`` False, ``config_text`` is HEAD's `.shiftkit.toml` as the caller read it (and
    ``features`` the list's name it gives)."""
    from pathlib import Path

    try:
        if read:
            found = gitio.read_blobs_with_ids(root, [f"HEAD:{CONFIG_FILE}"])[0]
            config_text = found[1] if found else None
        _, common = gitio.git_dirs(Path(root))
        return cached_ground(root, common, "HEAD", config_text, None if read else features)
    except (gitio.GitFailed, OSError, ValueError):
        return None


def committed(root: Path | str, path: str) -> bool:
    """Whether ``path`` is a file at HEAD."""
    try:
        return gitio.object_ids(root, [f"HEAD:{path}"])[0] is not None
    except (gitio.GitFailed, OSError, ValueError):
        return True  # (cannot say: count it as committed)
