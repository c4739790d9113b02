"""Where a repository's documentation tool reads its pages, and where decision records go so
that no tool publishes them or trips on them (decision record 0107). Pure: the caller reads
the files (shiftkit.edge.doctree)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

DEFAULT = "docs/decisions"  # (core.config's default of `decisions`)
OUTSIDE = ".shiftkit/decisions"  # shiftkit's own folder: no doc tool publishes a dot folder
AUTO = "auto"  # the template's answer: detect, at the repository being adopted
SPHINX_ROOTS = ("docs", "doc")  # where a Sphinx `conf.py` is looked for, at most one level down
MKDOCS_FILES = ("mkdocs.yml", "mkdocs.yaml")


class Tree(NamedTuple):
    tool: str  # "sphinx" or "mkdocs"
    folder: str  # the folder its pages are read from, relative to the root ("." for the root)


_DOCS_DIR = re.compile(r"""^docs_dir[ \t]*:[ \t]*(?P<value>"[^"]*"|'[^']*'|[^#\r\n]*)""", re.M)


def mkdocs_docs_dir(text: str) -> str:
    """The top-level `docs_dir` of an mkdocs.yml (MkDocs' default: docs). Read by its line,
    not parsed: the file may hold tags only MkDocs' own loader knows (`!ENV`,
    `!!python/name:`)."""
    match = _DOCS_DIR.search(text)
    value = match.group("value").strip() if match else ""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    return normalise(value) if value.strip() else "docs"


def normalise(path: str) -> str:
    """A relative folder as a POSIX path without `./` or a trailing slash ("." for the root)."""
    return posixpath.normpath(path.strip().replace("\\", "/")) or "."


def trees(sphinx_confs: Iterable[str], mkdocs_text: str | None) -> tuple[Tree, ...]:
    """The documentation trees: one per Sphinx `conf.py` (its folder is the source folder),
    and MkDocs' docs_dir when the repository has an mkdocs.yml (``mkdocs_text``)."""
    found = [Tree("sphinx", normalise(posixpath.dirname(conf) or ".")) for conf in sphinx_confs]
    if mkdocs_text is not None:
        found.append(Tree("mkdocs", mkdocs_docs_dir(mkdocs_text)))
    return tuple(found)


def inside(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or lies under it (both relative to the root)."""
    path, folder = normalise(path), normalise(folder)
    return folder == "." or path == folder or path.startswith(folder + "/")


def owner(path: str, found: Sequence[Tree]) -> Tree | None:
    """The first documentation tree that would read ``path``, if any."""
    return next((tree for tree in found if inside(path, tree.folder)), None)


def choose(found: Sequence[Tree]) -> str:
    """docs/decisions where no documentation tool reads it, else .shiftkit/decisions (a dot
    folder, which MkDocs leaves out and no Sphinx source folder under docs/ or doc/ holds)."""
    for candidate in (DEFAULT, OUTSIDE):
        if owner(candidate, found) is None:
            return candidate
    return OUTSIDE


def why(found: Sequence[Tree]) -> str:
    """One line for the person when the records do not go to docs/decisions, else ""."""
    tree = owner(DEFAULT, found)
    if tree is None:
        return ""
    tool = {"sphinx": "Sphinx", "mkdocs": "MkDocs"}.get(tree.tool, tree.tool)
    return (
        f"decision records go to {choose(found)}/: {tool} builds the pages under "
        f"{tree.folder}/ (answer `decisions` to choose another folder)"
    )
