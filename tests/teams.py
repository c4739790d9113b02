"""A project shared by a team of agents: the scaffold with F000 done and shell features,
its claims shared through a bare remote; and what the remote then holds."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import git_ok, ok, shell_features


def team_project(scaffold: Path, tmp_path: Path, names: list[str]) -> Path:
    """The scaffold with F000 done and ``names`` as features, sharing claims through a bare
    remote it is pushed to; returns the bare remote."""
    ok(scaffold, "claim", "F000")
    ok(scaffold, "finish", "-m", "the environment builds")
    shell_features(scaffold, *names)
    config = scaffold / ".shiftkit.toml"
    config.write_text(config.read_text().replace('remote = ""', 'remote = "origin"'))
    git_ok(scaffold, "commit", "-q", "-am", "Share claims through origin")
    bare = tmp_path / "remote.git"
    git_ok(tmp_path, "init", "-q", "--bare", str(bare))
    git_ok(scaffold, "remote", "add", "origin", str(bare))
    git_ok(scaffold, "push", "-q", "origin", "main")
    return bare


def remote_list(bare: Path) -> list[dict[str, object]]:
    items = json.loads(git_ok(bare, "show", "main:features.json"))["features"]
    assert isinstance(items, list)
    return items


def finished_on_remote(bare: Path) -> list[str]:
    """The features whose finishing commit the remote's branch holds, one per commit: a
    feature done twice shows twice."""
    subjects = git_ok(bare, "log", "--format=%s", "main").splitlines()
    return sorted(
        s.split(":", 1)[0] for s in subjects if s.endswith(" work") and ": make " in s.lower()
    )


def remote_claims(bare: Path) -> list[str]:
    return git_ok(bare, "for-each-ref", "--format=%(refname)", "refs/shiftkit/claims/").split()
