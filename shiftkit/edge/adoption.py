"""Where the protocol starts in a repository's history (decision record 0013).

A commit *adopts* shiftkit when it adds `.shiftkit.toml` and none of its parents holds the file
(a fresh scaffold's first commit, or the commit that brought shiftkit into a repository with
years of history). The commits under the protocol are the adopting commits and their
descendants: earlier history, and branches forked before the adoption, were never written
under the rules and are not judged by them. A repository whose history never added the
config file (the hooks installed without a scaffold) starts at the commit that added its
feature list instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from shiftkit.core.config import CONFIG_FILE
from shiftkit.edge import gitio


class Scope(NamedTuple):
    """The commits under the protocol among those reachable from some tips."""

    adopting: tuple[str, ...]  # the commits that brought shiftkit in
    commits: frozenset[str]  # the adopting commits and their descendants
    boundary: tuple[str, ...]  # the adopting commits' parents: history before the protocol


def adopting_commits(root: Path, tips: Sequence[str], marker: str) -> dict[str, tuple[str, ...]]:
    """The commits reachable from ``tips`` that add ``marker`` while no parent holds it, with
    their parents, oldest first."""
    listing = gitio.out(
        [
            "log",
            "--full-history",
            "-m",  # a merge is compared with each parent: one may lack the file
            "--root",
            "--reverse",
            "--diff-filter=A",
            "--format=%H %P",
            *tips,
            "--",
            marker,
        ],
        root,
    )
    candidates: dict[str, tuple[str, ...]] = {}
    for line in listing.splitlines():
        oid, *parents = line.split()
        candidates.setdefault(oid, tuple(parents))
    specs = [f"{parent}:{marker}" for parents in candidates.values() for parent in parents]
    held = dict(zip(specs, gitio.read_blobs(root, specs), strict=True))
    return {
        oid: parents
        for oid, parents in candidates.items()
        if all(held[f"{parent}:{marker}"] is None for parent in parents)
    }


def scope(root: Path, tips: Sequence[str], features_file: str) -> Scope:
    """The protocol's part of the history reachable from ``tips``."""
    adopting = adopting_commits(root, tips, CONFIG_FILE) or adopting_commits(
        root, tips, features_file
    )
    commits = set(adopting)
    for oid in adopting:
        commits.update(gitio.out(["rev-list", "--ancestry-path", *tips, f"^{oid}"], root).split())
    boundary = {parent for parents in adopting.values() for parent in parents} - commits
    return Scope(tuple(adopting), frozenset(commits), tuple(sorted(boundary)))
