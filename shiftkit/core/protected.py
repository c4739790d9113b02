"""Rule 14's ground: what only a person changes (decision records 0048-0050).

The oracles of the committed features (`core.oracle`), shiftkit's enforcement files (whole, or
shiftkit's part of a file merged into the user's), and the committed decision records with
their index lines. `ground` builds it from the parent's list and settings; `changes` says which
rows of a change (status, path) touch it. A few rows need the old and new texts to be judged
(`texts_needed`): shiftkit's part of a merged file, the pytest section of a shared settings
file, a decision record renumbered, the index.

Pure: values in, values out. `dump`/`load` keep a ground as text, so the commit hooks read it
without parsing the list (or JSON) on the common commit.
"""

from __future__ import annotations

import posixpath

# The commit-msg and reference-transaction hooks ask `may_touch` (and read a ground) on every
# commit: `re`, with the `enum` it imports, would be a third of their start-up, so it is
# imported where a pattern is matched, and `messages` (its `Rule` an enum) where a violation is
# made.
TYPE_CHECKING = False  # (no typing import either)
if TYPE_CHECKING:
    import re
    from collections.abc import Collection, Mapping, Sequence
    from typing import Any, TypeAlias

    from shiftkit.core.messages import Violation

    Texts: TypeAlias = Mapping[str, tuple[str | None, str | None]]

# Runner settings files pytest reads (in the folders of its paths and above them). pytest.ini
# and pytest.toml (pytest 9 reads it first; found by a red team, issue 35 A1) are wholly
# pytest's; the other three hold other tools' settings too: only their pytest section counts
# (`pytest_section`).
PYTEST_SETTINGS = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
)
SHARED_SETTINGS = ("tox.ini", "setup.cfg", "pyproject.toml")
# What at the root shadows the runner for `python -m pytest` (the root is sys.path[0]).
SHADOWS = ("pytest", "_pytest", "py", "pluggy", "iniconfig")
# What else pytest imports that a new module can shadow: the standard library (a root
# `pdb.py` that pytest imports at start can stub out every test), and the runner's own
# dependencies. A new `NAME.py`, `NAME/__init__.py` or extension module with such a name, at
# the root or in a folder pytest puts first on sys.path (a test's folder), is a change of
# every pytest feature's oracle (found by an agent trial, issue 26).
RUNNER_IMPORTS = ("packaging", "pygments", "colorama", "exceptiongroup", "tomli")

# Whole files of shiftkit's. (The config and the allowed signers are person actions already:
# rule 10's enforcement keys and rule 11's signers, listed and signed under "signed".)
ENFORCEMENT_FILES = (
    ".shiftkit/features.schema.json",
    ".github/workflows/shiftkit-audit.yml",
)
ENFORCEMENT_PREFIX = ".shiftkit/hook"  # the harness hook scripts: `.shiftkit/hook*`
# Files shared with the user: only shiftkit's part counts (`shiftkit_part`).
MERGED_FILES = (
    ".claude/settings.json",
    ".codex/hooks.json",
    ".pre-commit-config.yaml",
    ".gitattributes",
)
DECISION_INDEX = "README.md"
_RECORD = r"^(\d{4})-(.+\.md)$"  # a decision record's file name (`re` caches it compiled)


def _whose(hit: Hit) -> str:
    return f" (part of {hit.feature}'s oracle)" if hit.feature else ""


class Hit:
    """One protected change: the path, what it is, and the feature whose oracle it is."""

    __slots__ = ("feature", "path", "what")

    def __init__(self, path: str, what: str, feature: str | None = None) -> None:
        self.path, self.what, self.feature = path, what, feature

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hit) and (self.path, self.what, self.feature) == (
            other.path,
            other.what,
            other.feature,
        )

    def __hash__(self) -> int:
        return hash((self.path, self.what, self.feature))

    def __repr__(self) -> str:
        return f"Hit({self.path!r}, {self.what!r}, {self.feature!r})"


class Ground:
    """What a change may not touch but as a person's action (the parent's)."""

    __slots__ = ("conftest", "decisions", "exact", "globs", "settings", "shadow", "skip", "within")

    def __init__(
        self,
        exact: Mapping[str, str],  # a path (file or folder) -> the first feature it is oracle of
        globs: tuple[tuple[str, str], ...],  # (glob, feature)
        conftest: Mapping[str, str],  # folder -> feature: a conftest.py right in it counts
        within: Mapping[str, str],  # folder -> feature: a conftest.py anywhere under it counts
        settings: Mapping[str, str],  # folder -> feature: runner settings files in it count
        shadow: str | None,  # a feature whose verifier runs pytest (root shadows count)
        decisions: str,  # the decision records' folder
        skip: frozenset[str],  # the protocol's own files (their rules are 1-8 and 12)
    ) -> None:
        self.exact, self.globs, self.conftest, self.within = exact, globs, conftest, within
        self.settings, self.shadow, self.decisions, self.skip = settings, shadow, decisions, skip

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Ground) and dump(self) == dump(other)

    __hash__ = None  # type: ignore[assignment]


def ground(
    items: Sequence[tuple[str, str | None, Sequence[str]]],
    default: Sequence[str],
    decisions: str,
    skip: Sequence[str],
) -> Ground:
    """From each committed feature's (id, effective verify command, declared oracle), the
    project's default oracle, the decision folder and the protocol's files."""
    exact: dict[str, str] = {}
    globs: dict[str, str] = {}
    conftest: dict[str, str] = {}
    within: dict[str, str] = {}
    settings: dict[str, str] = {}
    shadow: str | None = None
    seen: dict[tuple[str | None, tuple[str, ...]], None] = {}
    for feature_id, verify, declared in items:
        key = (verify, tuple(declared))
        if key in seen:
            continue  # (the first feature with this oracle is the one named)
        seen[key] = None
        found = _oracle_of(verify, tuple(declared), tuple(default))
        for pattern in found.patterns:
            if _is_glob(pattern):
                globs.setdefault(pattern, feature_id)
            else:
                exact.setdefault(pattern, feature_id)
        for folder in found.folders:
            conftest.setdefault(folder, feature_id)
            settings.setdefault(folder, feature_id)
        for folder in found.within:
            within.setdefault(folder, feature_id)
        if found.pytest and shadow is None:
            shadow = feature_id
    return Ground(
        exact,
        tuple(globs.items()),
        conftest,
        within,
        settings,
        shadow,
        posixpath.normpath(decisions),
        frozenset(posixpath.normpath(s) for s in skip if s),
    )


_ORACLES: dict[Any, Any] = {}


def _oracle_of(verify: str | None, declared: tuple[str, ...], default: tuple[str, ...]) -> Any:
    """`oracle.oracle_of`, once per (command, declared, default): 5,000 features share few."""
    from shiftkit.core import oracle

    key = (verify, declared, default)
    found = _ORACLES.get(key)
    if found is None:
        if len(_ORACLES) > 4096:
            _ORACLES.clear()
        found = _ORACLES[key] = oracle.oracle_of(verify, declared, default)
    return found


# -- judging rows ----------------------------------------------------------------------------


def _is_glob(pattern: str) -> bool:
    return any(char in pattern for char in "*?[")


def _record(path: str, folder: str) -> re.Match[str] | None:
    head, _, name = path.rpartition("/")
    if head != folder and (head or folder != "."):
        return None
    import re

    return re.match(_RECORD, name)


def _index(folder: str) -> str:
    return DECISION_INDEX if folder == "." else f"{folder}/{DECISION_INDEX}"


def shadowed_module(path: str) -> tuple[str, str] | None:
    """(its folder, the module) when ``path`` is a module file named for a module of the
    standard library or the runner (`RUNNER_IMPORTS`): `NAME.py`, `NAME/__init__.py`,
    `NAME.*.so`. A folder without `__init__.py` is no shadow: a regular module later on
    sys.path wins over a namespace package."""
    import sys

    folder, _, name = path.rpartition("/")
    if name == "__init__.py":
        folder, _, module = folder.rpartition("/")
    elif name.endswith(".py"):
        module = name[:-3]
    elif name.endswith((".so", ".pyd")):
        module = name.split(".", 1)[0]
    else:
        return None
    if module in sys.stdlib_module_names or module in RUNNER_IMPORTS or module in SHADOWS:
        return folder, module
    return None


def may_touch(rows: Sequence[tuple[str, str]], skip: Collection[str]) -> bool:
    """Whether any row can touch a ground, told without one: a change or a deletion of a file
    that is not the protocol's own, or an addition where an addition counts (a conftest, a
    runner's settings or shadow, an enforcement file, a merged file, the decision index)."""
    for status, path in rows:
        if path in skip:
            continue
        if status != "A":
            return True
        name = path.rpartition("/")[2]
        top = path.split("/", 1)[0]
        if (
            name in ("conftest.py", *PYTEST_SETTINGS, DECISION_INDEX)
            or top.removesuffix(".py") in SHADOWS
            or shadowed_module(path) is not None
            or path in MERGED_FILES
            or path in ENFORCEMENT_FILES
            or path.startswith(ENFORCEMENT_PREFIX)
        ):
            return True
    return False


def texts_needed(rows: Sequence[tuple[str, str]], decisions: str) -> list[str]:
    """The paths of ``rows`` whose old and new texts `changes` needs (``decisions``: the
    parent's decision folder)."""
    folder = posixpath.normpath(decisions)
    needed = []
    added = {path for status, path in rows if status == "A"}
    for status, path in rows:
        name = path.rpartition("/")[2]
        if path in MERGED_FILES or path == _index(folder) or name in SHARED_SETTINGS:
            needed.append(path)
        elif status == "D" and _record(path, folder):
            needed.append(path)
            needed += [p for p in added if _renumbered_name(path, p, folder)]
    return list(dict.fromkeys(needed))


def _renumbered_name(old: str, new: str, folder: str) -> bool:
    a, b = _record(old, folder), _record(new, folder)
    return bool(a and b and a[2] == b[2] and a[1] != b[1])


def changes(
    found: Ground,
    rows: Sequence[tuple[str, str]],
    texts: Texts | None = None,
) -> list[Hit]:
    """The protected changes among ``rows``: (status, path), status "A" (added), "M"
    (changed, or its type) or "D" (deleted) — a rename is its deletion and its addition.
    ``texts``: (old, new) of the paths `texts_needed` names (a missing one counts as
    changed)."""
    texts = texts or {}
    hits: list[Hit] = []
    renumbered = _renumbers(found, rows, texts)
    for status, path in rows:
        if path in found.skip:
            continue
        hit = _enforcement(path, texts)
        if hit is None:
            hit = _decision(found, status, path, texts, renumbered)
        if hit is None:
            hit = _oracle_hit(found, status, path, texts)
        if hit is not None:
            hits.append(hit)
    return hits


def violations(
    found: Ground, rows: Sequence[tuple[str, str]], texts: Texts | None = None
) -> list[Violation]:
    """Rule 14: a committed feature's oracle, shiftkit's enforcement files and the committed
    decision records change only as a person's action (decision records 0048 and 0049). The
    commit hooks, the reference-transaction hook and `audit` all ask this (through
    `rules.evaluate`, or directly on a commit that stages no protocol file)."""
    from shiftkit.core.messages import Rule, Violation

    return [
        Violation(
            Rule.PROTECTED,
            f"{hit.path}: {hit.what}{_whose(hit)} changes only "
            f"as a person's action; ask a person (a commit with a `Shiftkit-Override: "
            f"<reason>` trailer, or `shiftkit override`), or fix the code instead",
            hit.feature,
        )
        for hit in changes(found, rows, texts)
    ]


def _enforcement(path: str, texts: Texts) -> Hit | None:
    if path in ENFORCEMENT_FILES or path.startswith(ENFORCEMENT_PREFIX):
        return Hit(path, "shiftkit's enforcement file")
    if path in MERGED_FILES:
        if path in texts and shiftkit_part(path, texts[path][0]) == shiftkit_part(
            path, texts[path][1]
        ):
            return None
        return Hit(path, "shiftkit's part of this file (its hooks, which enforce the rules)")
    return None


def _decision(
    found: Ground,
    status: str,
    path: str,
    texts: Texts,
    renumbered: set[str],
) -> Hit | None:
    folder = found.decisions
    if path == _index(folder):
        old, new = texts.get(path, ("", None))
        if old is None or _index_kept(old, new, texts, renumbered, folder):
            return None
        return Hit(path, "the decision index, whose lines only grow (a record is superseded)")
    if status == "A" or not _record(path, folder) or path in renumbered:
        return None
    return Hit(path, "a committed decision record (supersede it with a new record instead)")


def _renumbers(
    found: Ground,
    rows: Sequence[tuple[str, str]],
    texts: Texts,
) -> set[str]:
    """Records deleted and added again under a new number, unchanged but for the number in
    their heading (`shiftkit renumber-decisions` after two branches took one number)."""
    folder = found.decisions
    added = [path for status, path in rows if status == "A" and _record(path, folder)]
    moved = set()
    for status, path in rows:
        if status != "D" or not _record(path, folder):
            continue
        old_text = texts.get(path, (None, None))[0]
        for new in added:
            if old_text is None or not _renumbered_name(path, new, folder):
                continue
            a, b = _record(path, folder), _record(new, folder)
            assert a is not None and b is not None
            import re

            expected = re.sub(rf"^# {int(a[1])}\.", f"# {int(b[1])}.", old_text, count=1)
            if texts.get(new, (None, None))[1] == expected:
                moved.add(path)
    return moved


def _index_kept(
    old: str,
    new: str | None,
    texts: Texts,
    renumbered: set[str],
    folder: str,
) -> bool:
    """Every line of the old index is in the new one (a renumbered record's line with its new
    number): lines are only added."""
    if new is None:
        return False
    for path in renumbered:
        name = path.rpartition("/")[2]
        for candidate in texts:
            other = candidate.rpartition("/")[2]
            if _renumbered_name(path, candidate, folder):
                old = old.replace(f"[{name[:4]}]({name})", f"[{other[:4]}]({other})")
    kept = {line.rstrip() for line in new.splitlines()}
    return all(line.rstrip() in kept for line in old.splitlines() if line.strip())


def _oracle_hit(found: Ground, status: str, path: str, texts: Texts) -> Hit | None:
    folder, _, name = path.rpartition("/")
    if name in PYTEST_SETTINGS and folder in found.settings:
        feature = found.settings[folder]
        if name in SHARED_SETTINGS and path in texts:
            old, new = texts[path]
            if pytest_section(name, old) == pytest_section(name, new):
                return None
        return Hit(path, "runner settings its verifier reads", feature)
    if name == "conftest.py":
        loader = found.conftest.get(folder) or next(
            (f for base, f in found.within.items() if _under(folder, base)), None
        )
        if loader is not None:
            return Hit(path, "a conftest.py its verifier loads", loader)
    top = path.split("/", 1)[0]
    if found.shadow is not None and top.removesuffix(".py") in SHADOWS:
        return Hit(path, "a module that shadows its test runner", found.shadow)
    if found.shadow is not None and status == "A":
        shadowed = shadowed_module(path)
        if shadowed is not None and (shadowed[0] == "" or shadowed[0] in found.conftest):
            return Hit(
                path,
                f"a new module that shadows `{shadowed[1]}`, which pytest imports",
                found.shadow,
            )
    if status == "A":
        return None  # (a new file the oracle names: the verifier could not pass without it)
    owner = _exact(found, path)
    if owner is None:
        owner = next((f for glob, f in found.globs if _matches(glob, path)), None)
    if owner is None:
        return None
    return Hit(path, "a file its verifier judges by", owner)


def _under(folder: str, base: str) -> bool:
    return not base or folder == base or folder.startswith(base + "/")


def _exact(found: Ground, path: str) -> str | None:
    """The feature an exact oracle path (the file, or a folder above it) belongs to."""
    candidate = path
    while candidate:
        if candidate in found.exact:
            return found.exact[candidate]
        candidate = candidate.rpartition("/")[0]
    return None


_REGEXES: dict[str, re.Pattern[str]] = {}


def _matches(glob: str, path: str) -> bool:
    pattern = _REGEXES.get(glob)
    if pattern is None:
        import re

        pattern = _REGEXES[glob] = re.compile(glob_regex(glob))
    return pattern.fullmatch(path) is not None


def matches(found: Ground, path: str, exists: bool = True) -> Hit | None:
    """Whether writing ``path`` (``exists``: a change, else an addition) touches the ground —
    the guard's question, without the texts (a merged file counts whole)."""
    hits = changes(found, [("M" if exists else "A", path)])
    return hits[0] if hits else None


# -- globs and settings sections -------------------------------------------------------------------


def glob_regex(pattern: str) -> str:
    """A glob as a regular expression over a slash-separated path: `**` any number of folders,
    `*` and `?` within one name; a pattern without wildcards names a file or a folder."""
    import re

    if not _is_glob(pattern):
        return re.escape(pattern) + "(?:/.*)?"
    out = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
            continue
        if pattern.startswith("**", index):
            out.append(".*")
            index += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.find("]", index + 1)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = pattern[index + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                index = end
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


def pytest_section(name: str, text: str | None) -> object:
    """What pytest reads of a shared settings file (its section), comparable between two
    versions; a text that does not parse counts as wholly pytest's (it breaks pytest)."""
    if text is None:
        return None
    if posixpath.basename(name) == "pyproject.toml":
        import tomllib

        try:
            tool = tomllib.loads(text).get("tool", {})
        except (tomllib.TOMLDecodeError, RecursionError, ValueError):
            return ("unreadable", text)
        return repr(tool.get("pytest")) if isinstance(tool, dict) else None
    header = "[tool:pytest]" if posixpath.basename(name) == "setup.cfg" else "[pytest]"
    lines, inside = [], False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            inside = stripped.replace(" ", "") == header
            continue
        if inside and stripped and not stripped.startswith(("#", ";")):
            lines.append(line.rstrip())
    return tuple(lines) if lines else None


# -- shiftkit's part of a merged file ----------------------------------------------------------


def shiftkit_part(path: str, text: str | None) -> object:
    """What of ``text`` is shiftkit's (comparable between versions): its hook entries in
    the harness files (and what disables every hook), its hooks in the pre-commit config,
    its lines in .gitattributes. A text that does not parse is wholly shiftkit's part."""
    if text is None:
        text = "{}" if path.endswith(".json") else ""
    if path == ".gitattributes":
        return tuple(
            " ".join(line.split())
            for line in text.splitlines()
            if "shiftkit" in line or "merge=union" in line
        )
    if path == ".pre-commit-config.yaml":
        return _pre_commit_part(text)
    import json

    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return ("unreadable", text)
    if not isinstance(document, dict):
        return ("not an object", text)
    from shiftkit.core.adopt_merge import _is_shiftkit_hook

    hooks = document.get("hooks")
    part: list[Any] = [document.get("disableAllHooks")]
    if isinstance(hooks, dict):
        for event, groups in sorted(hooks.items()):
            if not isinstance(groups, list):
                continue
            for group in groups:
                if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                    continue
                ours = [h for h in group["hooks"] if _is_shiftkit_hook(h)]
                if ours:
                    part.append((event, repr(group.get("matcher")), repr(ours)))
    elif hooks is not None:
        part.append(repr(hooks))
    return tuple(part)


HANDLED_EVENTS = ("SessionStart", "PreToolUse", "Stop")  # the brief, the guard, the stop check
PRE_COMMIT_IDS = ("shiftkit-pre-commit", "shiftkit-commit-msg")


def missing_handlers(path: str, text: str | None) -> list[str]:
    """What of shiftkit's handlers the committed hook file ``path`` lacks: the harness
    events (`HANDLED_EVENTS`) with no shiftkit hook in `.claude/settings.json` or
    `.codex/hooks.json` (every one when the file is gone, does not parse, or disables all
    hooks), or the shiftkit hook ids missing from `.pre-commit-config.yaml`."""
    if path == ".pre-commit-config.yaml":
        part = _pre_commit_part(text or "")
        listed = " ".join(str(item) for item in part) if isinstance(part, tuple) else ""
        return [name for name in PRE_COMMIT_IDS if f"'id': '{name}'" not in listed]
    part = shiftkit_part(path, text)
    if not isinstance(part, tuple) or not part or part[0] not in (None, False):
        return list(HANDLED_EVENTS)
    present = {entry[0] for entry in part[1:] if isinstance(entry, tuple) and len(entry) == 3}
    return [event for event in HANDLED_EVENTS if event not in present]


def _pre_commit_part(text: str) -> object:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        document = YAML(typ="safe", pure=True).load(text)
    except (YAMLError, RecursionError, ValueError):
        return ("unreadable", text)
    if document is None:
        document = {}
    if not isinstance(document, dict):
        return ("not a mapping", text)
    part: list[Any] = [repr(document.get("default_install_hook_types"))]
    repos = document.get("repos")
    for repo in repos if isinstance(repos, list) else []:
        if not isinstance(repo, dict) or not isinstance(repo.get("hooks"), list):
            continue
        for hook in repo["hooks"]:
            if isinstance(hook, dict) and str(hook.get("id", "")).startswith("shiftkit"):
                part.append((repr(repo.get("repo")), repr(repo.get("rev")), repr(hook)))
    return tuple(part)


# -- a ground as text (the hooks' cache) ---------------------------------------------------------


def dump(found: Ground) -> str:
    """One line per entry, tab-separated: kind, key, feature."""
    lines = [f"decisions\t{found.decisions}\t", f"shadow\t\t{found.shadow or ''}"]
    lines += [f"skip\t{name}\t" for name in sorted(found.skip)]
    for kind, table in (
        ("exact", found.exact),
        ("conftest", found.conftest),
        ("within", found.within),
        ("settings", found.settings),
        ("glob", dict(found.globs)),
    ):
        lines += [f"{kind}\t{key}\t{feature}" for key, feature in table.items()]
    return "".join(f"{line}\n" for line in lines)


def load(text: str) -> Ground | None:
    """A dumped ground (None: not one)."""
    tables: dict[str, dict[str, str]] = {
        k: {} for k in ("exact", "conftest", "within", "settings", "glob", "skip", "decisions")
    }
    shadow = None
    for line in text.splitlines():
        kind, tab, rest = line.partition("\t")
        key, tab2, feature = rest.partition("\t")
        if not tab or not tab2:
            return None
        if kind == "shadow":
            shadow = feature or None
        elif kind in tables:
            tables[kind].setdefault(key, feature)
        else:
            return None
    if len(tables["decisions"]) != 1:
        return None
    return Ground(
        tables["exact"],
        tuple(tables["glob"].items()),
        tables["conftest"],
        tables["within"],
        tables["settings"],
        shadow,
        next(iter(tables["decisions"])),
        frozenset(tables["skip"]),
    )


def protocol_files(
    features_name: str, progress: str, archive: str, ledger: str = ".shiftkit/ledger.jsonl"
) -> tuple[str, ...]:
    return (features_name, progress, archive, ledger, ".shiftkit.toml", ".shiftkit/allowed_signers")
