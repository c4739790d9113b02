"""The guard's project lookup (`edge.locate`, decision 0070): the root git itself gives, found
without running git where the `.git` entries say it, in every layout a harness may start in."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import git, git_ok, write

from shiftkit.edge import locate


def toplevel(cwd: Path) -> str | None:
    result = git(cwd, "rev-parse", "--show-toplevel")
    return result.stdout.strip() if result.returncode == 0 else None


def repository(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git_ok(path, "init", "-q")
    return path


def test_the_root_is_the_one_git_gives(tmp_path: Path) -> None:
    main = repository(tmp_path / "main")
    write(main / "src" / "deep" / "x.txt", "x\n")
    git_ok(main, "add", "-A")
    git_ok(main, "commit", "-q", "-m", "First")
    git_ok(main, "worktree", "add", "-q", str(tmp_path / "linked"))
    sub = repository(main / "vendor" / "lib")  # a repository inside another
    (tmp_path / "plain").mkdir()
    fake = tmp_path / "fake"
    (fake / ".git").mkdir(parents=True)  # a `.git` folder that is no repository
    (fake / "inside").mkdir()
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / ".git").write_text("not a link\n")
    os.symlink(main / "src", tmp_path / "link")
    places = [
        main,
        main / "src" / "deep",
        main / ".git",
        tmp_path / "linked",
        tmp_path / "linked" / "src",
        sub,
        tmp_path / "plain",
        fake / "inside",
        broken,
        tmp_path / "link",
    ]
    for place in places:
        assert locate.worktree_root(str(place)) == toplevel(place) or place == main / ".git", place
    assert locate.worktree_root(str(main / ".git")) in (None, str(main))


@pytest.mark.parametrize("variable", ["GIT_DIR", "GIT_WORK_TREE"])
def test_git_is_asked_when_the_environment_points_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    here = repository(tmp_path / "here")
    other = repository(tmp_path / "other")
    if variable == "GIT_DIR":
        monkeypatch.setenv("GIT_DIR", str(other / ".git"))
        monkeypatch.setenv("GIT_WORK_TREE", str(other))
    else:
        monkeypatch.setenv("GIT_WORK_TREE", str(other))
    assert locate.worktree_root(str(here)) == toplevel(here)


def test_the_committed_settings_are_the_judges(tmp_path: Path) -> None:
    project = repository(tmp_path / "p")
    config = write(project / ".shiftkit.toml", '[shiftkit]\nfeatures = "list.json"\n')
    cfg, text = locate.committed_config(str(project))
    assert (cfg.features, text) == ("list.json", None)  # no commit yet: the work tree's
    git_ok(project, "add", ".shiftkit.toml")
    git_ok(project, "commit", "-q", "-m", "Settings")
    config.write_text('[shiftkit]\nfeatures = "other.json"\n')
    cfg, text = locate.committed_config(str(project))
    assert cfg.features == "list.json" and text == '[shiftkit]\nfeatures = "list.json"\n'


def test_the_settings_are_parsed_once_per_version(tmp_path: Path) -> None:
    """The guard parses HEAD's `.shiftkit.toml` once per blob (TOML and the settings' types
    cost a fifth of its process) and reads the rest from the git dir."""
    project = repository(tmp_path / "p")
    common = str(project / ".git")
    write(project / ".shiftkit.toml", '[shiftkit]\nfeatures = "a.json"\n')
    git_ok(project, "add", ".shiftkit.toml")
    git_ok(project, "commit", "-q", "-m", "Settings")
    first, text = locate.guard_settings(str(project), common, common)
    assert (first.features, first.ref_prefix, first.remote) == (
        "a.json",
        "refs/shiftkit/claims/",
        "",
    )
    oid = git_ok(project, "rev-parse", "HEAD:.shiftkit.toml").strip()
    kept = project / ".git" / "shiftkit" / locate.SETTINGS_CACHE / oid
    assert kept.is_file() and text == '[shiftkit]\nfeatures = "a.json"\n'
    kept.write_text("not json")  # a damaged entry is parsed again, not trusted
    assert locate.guard_settings(str(project), common, common)[0].features == "a.json"
    write(
        project / ".shiftkit.toml",
        '[shiftkit]\nfeatures = "b.json"\n[shiftkit.claims]\nref_prefix = "refs/heads/c/"\n',
    )
    git_ok(project, "commit", "-q", "-am", "Other settings")
    second = locate.guard_settings(str(project), common, common)[0]
    assert (second.features, second.ref_prefix) == ("b.json", "refs/heads/c/")


def test_at_a_commit_seen_before_no_git_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = repository(tmp_path / "p")
    common = str(project / ".git")
    write(project / ".shiftkit.toml", '[shiftkit]\nfeatures = "a.json"\n')
    git_ok(project, "add", ".shiftkit.toml")
    git_ok(project, "commit", "-q", "-m", "Settings")
    first = locate.guard_settings(str(project), common, common)
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    again = locate.guard_settings(str(project), common, common)
    assert (again[0].features, again[1]) == ("a.json", first[1])


def test_head_is_read_as_git_reads_it(tmp_path: Path) -> None:
    project = repository(tmp_path / "p")
    common = str(project / ".git")
    assert locate.head_commit(common, common) is None  # unborn
    write(project / "a.txt", "a\n")
    git_ok(project, "add", "a.txt")
    git_ok(project, "commit", "-q", "-m", "First")

    def head() -> str:
        return git_ok(project, "rev-parse", "HEAD").strip()

    assert locate.head_commit(common, common) == head()  # a loose branch
    git_ok(project, "pack-refs", "--all")
    assert not (project / ".git" / "refs" / "heads" / "main").exists()
    assert locate.head_commit(common, common) == head()  # a packed one
    git_ok(project, "checkout", "-q", "--detach")
    assert locate.head_commit(common, common) == head()  # detached
    git_ok(project, "worktree", "add", "-q", "-b", "side", str(tmp_path / "linked"))
    linked = tmp_path / "linked"
    own = git_ok(linked, "rev-parse", "--absolute-git-dir").strip()
    assert locate.head_commit(own, common) == git_ok(linked, "rev-parse", "HEAD").strip()
