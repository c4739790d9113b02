"""The read-set map on a real project: python-slugify's sdist (vendored) adopted with shiftkit,
features whose verifiers are pytest runs of groups of its own tests, each passed through
`finish` and CI's `check` (which record the read sets), then seeded breaks of its source: every
feature whose verifier fails on a seeded tree is one the map selects (decision record 0071).
`python bench/readset.py` measures the same over all the seeds and all ten groups."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import needs
import pytest
import slugify_project as slug
from conftest import run

from shiftkit.core import affected
from shiftkit.edge import readsets

needs_strace = needs.strace()

GROUPS = ("truncation to a length, on word boundaries, in order", "stopwords removed")
SEEDS = (
    "smart_truncate: short strings cut",  # (same size: python reads it from its bytecode)
    "slugify: stopwords kept",
    "a failing root conftest.py",
    "README edited",
)


@needs_strace
def test_every_seeded_break_of_python_slugify_is_selected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)  # (a user's default)
    project, site = slug.unpack(tmp_path)

    def in_project(argv: Sequence[str]) -> str:
        done = run(list(argv), project)
        assert done.returncode == 0, (argv, done.output)
        return done.stdout

    commands = slug.adopt(project, site, in_project, {g: slug.GROUPS[g] for g in GROUPS})
    sets = readsets.load(project / ".git", commands)
    assert all(sets.values()), sets  # (every feature's set measured)
    seeds = [seed for seed in slug.SEEDS if seed.name in SEEDS]
    outcomes = slug.measure(project, commands, seeds, site=site)
    truth = {one.seed.name: sorted(one.failing) for one in outcomes}
    assert truth == {
        "smart_truncate: short strings cut": ["F001"],
        "slugify: stopwords kept": ["F002"],
        "a failing root conftest.py": ["F001", "F002"],
        "README edited": [],
    }
    found = slug.figures(outcomes)
    assert found.missed == () and found.recall == 1.0, found
    assert {one.seed.name: sorted(one.selected) for one in outcomes}["README edited"] == []

    # The same measurement notices a map that misses a file: the sets without the module
    # every verifier imports do not select its break.
    def truncated(tree: str) -> list[str]:
        base = git_tree(project)
        change = readsets.change(project, base, tree)
        blind = {
            feature_id: one._replace(
                files=one.files - {"slugify/slugify.py"}, stats=one.stats - {"slugify/slugify.py"}
            )
            for feature_id, one in sets.items()
            if one is not None
        }
        return affected.affected(list(commands), blind, change.paths, change.added, change.resized)

    blind = slug.figures(slug.measure(project, commands, seeds[:1], truncated, site))
    assert blind.recall == 0.0 and blind.missed == ((SEEDS[0], "F001"),), blind


def git_tree(project: Path) -> str:
    return slug.git(project, "rev-parse", "HEAD^{tree}").strip()
