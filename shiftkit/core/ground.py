"""The agent's ground (`code`, decision record 0086): which paths of a judged tree a verdict
reads from the judged commit, and which from the person's state.

A verdict is a function of two inputs: the judged commit's files where the agent may work
(`code`, an allowlist of globs) and what a person set (everything else, as a person last left
it). Inside `code`, what runs before the tests stays the person's too: every `conftest.py`,
the `__init__.py` files on the way from the person's tests to the root, runner settings files,
and what Python's import system runs or reads as installed metadata (`*.pth`,
`sitecustomize.py`, `usercustomize.py`, `*.dist-info/`, `*.egg-info/`). The protocol's own
files (the list, the log, its archive, the ledger) are the judged commit's: rules 1-8 judge
them, no verifier may depend on them.

Pure: values in, values out.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection, Iterable, Sequence
from functools import lru_cache
from typing import NamedTuple

# Files pytest (8 and 9) reads as its settings, wherever they lie on the way to the root.
RUNNER_SETTINGS = frozenset(
    {"pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "tox.ini", "setup.cfg"}
)
# Files Python's import system runs or reads before any test: wherever they are in `code`.
IMPORT_HOOKS = frozenset({"sitecustomize.py", "usercustomize.py", "conftest.py"})
_METADATA_FOLDER = re.compile(r"[^/]*\.(dist-info|egg-info)(/|$)")
_TEST_FILE = re.compile(r"(test_[^/]*|[^/]*_test)\.py")


class Entry(NamedTuple):
    """One file of a tree, as `git ls-tree -r` lists it."""

    mode: str
    oid: str
    path: str


@lru_cache(maxsize=256)
def _pattern(glob: str) -> re.Pattern[str]:
    """A `code` glob as a regular expression: `**` any folders (or none), `*` and `?` within
    one name, a trailing `/` or a folder name alone meaning everything under it."""
    glob = glob.strip("/")
    out = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    # (a glob naming a folder covers what is under it: "src" is "src/**")
    return re.compile("".join(out) + "(?:/.*)?")


def in_code(path: str, code: Sequence[str]) -> bool:
    """Whether ``path`` lies where the agent may work."""
    return any(_pattern(glob).fullmatch(path) for glob in code)


def test_folders(paths: Iterable[str]) -> frozenset[str]:
    """Every folder that holds a test file (`test_*.py`, `*_test.py`) and every folder above
    it, the root ("") included: where `conftest.py` and `__init__.py` run before the tests."""
    found: set[str] = {""}
    for path in paths:
        folder, name = posixpath.split(path)
        if _TEST_FILE.fullmatch(name):
            while folder and folder not in found:
                found.add(folder)
                folder = posixpath.dirname(folder)
    return frozenset(found)


def persons_inside_code(path: str, test_dirs: Collection[str]) -> bool:
    """Whether ``path``, though inside `code`, stays the person's: it runs or configures the
    runner before the tests, or is installed metadata."""
    folder, name = posixpath.split(path)
    if name in IMPORT_HOOKS or name in RUNNER_SETTINGS or name.endswith(".pth"):
        return True
    if name == "__init__.py" and folder in test_dirs:
        return True
    return any(_METADATA_FOLDER.match(part + "/") for part in path.split("/")[:-1])


def judged_from_commit(
    path: str, code: Sequence[str], protocol: Collection[str], test_dirs: Collection[str]
) -> bool:
    """Whether a verdict reads ``path`` from the judged commit (else from the person's
    state)."""
    if path in protocol:
        return True
    return in_code(path, code) and not persons_inside_code(path, test_dirs)


def assemble(
    judged: Iterable[Entry],
    person: Iterable[Entry],
    code: Sequence[str],
    protocol: Collection[str],
) -> list[Entry]:
    """The tree a verdict runs on: the entries of ``judged`` it reads from the judged commit,
    and the rest from ``person`` (the person's state). The folders whose `__init__.py` is the
    person's are those of the person's test files."""
    person = list(person)
    test_dirs = test_folders(entry.path for entry in person)
    kept = [e for e in judged if judged_from_commit(e.path, code, protocol, test_dirs)]
    kept += [e for e in person if not judged_from_commit(e.path, code, protocol, test_dirs)]
    return sorted(kept, key=lambda entry: entry.path)


def not_judged(paths: Iterable[str], code: Sequence[str], protocol: Collection[str]) -> list[str]:
    """The paths of a change that no verdict reads from the commit that made it (outside
    `code`, and not the protocol's files): `audit` lists them."""
    return [path for path in paths if path not in protocol and not in_code(path, code)]


def describe(code: Sequence[str]) -> str:
    """One clause for `start` and `audit`: where the agent works, or that the boundary is a
    list."""
    if not code:
        return (
            "the agent's ground is a list, not an allowlist: set `code` in .shiftkit.toml "
            "(globs of what the agent's work may change) so a verdict reads only those files "
            "from the judged commit"
        )
    return f"the agent's work is judged from {', '.join(code)}; everything else is the person's"


AUTO_LINE = '# code = ["src/**", "tests/**"]   # set it once the project has its first package'
_NOT_PACKAGES = frozenset({"docs", "doc", "examples", "example", "benchmarks", "bench", "scripts"})
_NOT_MODULES = frozenset({"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "tasks.py"})
TEST_FOLDERS = ("tests", "test", "testing")


def infer(paths: Iterable[str]) -> list[str]:
    """`code` for an adopted repository from its tracked files: `src/`, each top-level
    package (a folder with an `__init__.py`), each top-level module but the tooling ones,
    and the test folders. Empty when it holds none of these."""
    found: list[str] = []
    packages: set[str] = set()
    modules: set[str] = set()
    folders: set[str] = set()
    for path in paths:
        head, _, rest = path.partition("/")
        if not rest:
            if head.endswith(".py") and head not in _NOT_MODULES:
                modules.add(head)
            continue
        folders.add(head)
        if rest == "__init__.py" and head not in _NOT_PACKAGES and not head.startswith("."):
            packages.add(head)
    if "src" in folders:
        found.append("src/**")
    found += [f"{name}/**" for name in sorted(packages - set(TEST_FOLDERS) - {"src"})]
    found += sorted(modules)
    found += [f"{name}/**" for name in TEST_FOLDERS if name in folders]
    return found if any(not g.startswith(TEST_FOLDERS) for g in found) else []
