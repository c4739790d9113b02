"""Fresh clones: git carries no hooks and no merge driver; `shiftkit start` says so in its
first line and `shiftkit setup` installs them, once. Real `git clone`, real pre-commit."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from conftest import (
    BIN_DIR,
    FEATURES,
    SHIM_RUNS,
    flip,
    git,
    git_ok,
    ok,
    shiftkit,
    use_shims,
    write,
)

HOOKS = ("pre-commit", "commit-msg", "reference-transaction", "pre-push")


def clone_of(project: Path, tmp_path: Path) -> Path:
    clone = tmp_path / "clone"
    git_ok(tmp_path, "clone", "-q", str(project), str(clone))
    return clone


def hooks_state(repo: Path) -> dict[str, tuple[str, int]]:
    hooks = repo / ".git" / "hooks"
    return {
        path.name: (path.read_text(errors="replace"), path.stat().st_mtime_ns)
        for path in sorted(hooks.iterdir())
        if not path.name.endswith(".sample")
    }


def first_line(repo: Path, *args: str) -> str:
    result = shiftkit(repo, "start", "--no-check", *args)
    assert result.returncode == 0, result.output
    return result.stdout.splitlines()[0]


def test_a_fresh_clone_warns_until_setup_and_setup_runs_once(
    scaffold: Path, tmp_path: Path
) -> None:
    assert "WARNING" not in first_line(scaffold)  # the scaffold itself is set up
    clone = clone_of(scaffold, tmp_path)
    warning = first_line(clone)
    assert warning.startswith("WARNING") and "`shiftkit setup`" in warning
    for name in (*HOOKS, "merge driver"):
        assert name in warning, name
    assert first_line(clone, "--brief").startswith("WARNING")
    as_json = json.loads(shiftkit(clone, "start", "--no-check", "--json").stdout)
    assert "shiftkit setup" in as_json["setup_warning"]

    done = shiftkit(clone, "setup")
    assert done.returncode == 0, done.output
    assert "pre-commit framework" in done.stdout and "merge driver" in done.stdout
    for name in HOOKS:
        assert (clone / ".git" / "hooks" / name).is_file(), name
    driver = git_ok(clone, "config", "merge.shiftkit-features.driver")
    assert driver.strip() == "sh .shiftkit/hook merge-features %O %A %B"
    state = hooks_state(clone)

    again = shiftkit(clone, "setup")
    assert again.returncode == 0 and "nothing to do" in again.stdout
    assert hooks_state(clone) == state
    assert not first_line(clone).startswith("WARNING")
    assert shiftkit(clone, "start", "--no-check", "--json").stdout.count('"setup_warning": null')

    # The hooks now judge the clone's commits.
    write(clone / "notes.txt", "hello\n")
    git_ok(clone, "add", "notes.txt")
    refused = git(clone, "commit", "-m", "wip")
    assert refused.returncode != 0 and "rule 9" in refused.output


def test_one_missing_piece_is_named_and_only_it_is_installed(
    scaffold: Path, tmp_path: Path
) -> None:
    (scaffold / ".git" / "hooks" / "pre-push").unlink()
    git_ok(scaffold, "config", "--unset", "merge.shiftkit-features.driver")
    warning = first_line(scaffold)
    assert "pre-push hook" in warning and "merge driver" in warning
    assert "pre-commit hook" not in warning and "reference-transaction" not in warning
    before = hooks_state(scaffold)
    done = shiftkit(scaffold, "setup")
    assert done.returncode == 0, done.output
    after = hooks_state(scaffold)
    assert set(after) == set(before) | {"pre-push"}
    assert after["pre-commit"] == before["pre-commit"]
    assert not first_line(scaffold).startswith("WARNING")


def test_without_the_framework_setup_installs_the_plain_shims(
    scaffold: Path, tmp_path: Path
) -> None:
    use_shims(scaffold)
    git_ok(scaffold, "rm", "-q", ".pre-commit-config.yaml")
    git_ok(
        scaffold,
        "commit",
        "-q",
        "-m",
        "Use plain git hooks instead of the framework",
        "-m",
        "Shiftkit-Override: a person moves the project to plain git hooks",  # (rule 14)
    )
    clone = clone_of(scaffold, tmp_path)
    done = shiftkit(clone, "setup")
    assert done.returncode == 0, done.output
    assert SHIM_RUNS in (clone / ".git" / "hooks" / "pre-commit").read_text()
    assert not first_line(clone).startswith("WARNING")


def test_setup_leaves_a_foreign_hook_alone_without_force(scaffold: Path, tmp_path: Path) -> None:
    clone = clone_of(scaffold, tmp_path)
    foreign = write(clone / ".git" / "hooks" / "pre-push", "#!/bin/sh\nexit 0\n")
    foreign.chmod(0o755)
    refused = shiftkit(clone, "setup")
    assert refused.returncode == 1
    assert refused.stderr.startswith("shiftkit: ") and "--force" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    forced = shiftkit(clone, "setup", "--force")
    assert forced.returncode == 0, forced.output
    assert (clone / ".git" / "hooks" / "pre-push.pre-shiftkit").read_text() == "#!/bin/sh\nexit 0\n"
    assert not first_line(clone).startswith("WARNING")


def test_install_hooks_still_installs_the_plain_shims(scaffold: Path) -> None:
    for name in ("pre-commit", "commit-msg"):
        (scaffold / ".git" / "hooks" / name).unlink()
    result = shiftkit(scaffold, "install-hooks")
    assert result.returncode == 0, result.output
    assert SHIM_RUNS in (scaffold / ".git" / "hooks" / "commit-msg").read_text()


@pytest.mark.parametrize("shims", [True, False], ids=["plain shims", "pre-commit framework"])
def test_a_fake_shiftkit_on_path_is_not_what_the_hooks_run(
    calc: Path, tmp_path: Path, shims: bool
) -> None:
    """`PATH=/tmp/fake:$PATH git commit` with a `shiftkit` that says yes: the shims run the
    shiftkit recorded at install, so the flip is refused (with the framework, whose entry is
    looked up on PATH, by the reference-transaction hook)."""
    if shims:
        use_shims(calc)
    fake = write(tmp_path / "fake" / "shiftkit", "#!/bin/sh\ncat >/dev/null 2>&1\nexit 0\n")
    fake.chmod(0o755)
    before = git_ok(calc, "rev-parse", "HEAD")
    flip(calc, "F001")
    git_ok(calc, "add", "-A")
    env = {"PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}"}
    result = git(calc, "commit", "-m", "F001: add two numbers", env=env)
    assert result.returncode != 0, result.output
    assert git_ok(calc, "rev-parse", "HEAD") == before


@pytest.mark.parametrize("shims", [True, False], ids=["plain shims", "pre-commit framework"])
def test_a_shiftkit_folder_in_the_work_tree_is_not_what_the_hooks_run(
    calc: Path, shims: bool
) -> None:
    """git runs hooks at the top of the work tree, and `python -m shiftkit` put that folder
    first on Python's path: a `shiftkit/__main__.py` there that exits 0 let a hand flip
    through every hook. The shims and `.shiftkit/hook` run `python -P` (decision 0070)."""
    if shims:
        use_shims(calc)
    write(calc / "shiftkit" / "__init__.py", "")
    write(calc / "shiftkit" / "__main__.py", "import sys\nsys.stdin.read()\nsys.exit(0)\n")
    before = git_ok(calc, "rev-parse", "HEAD")
    flip(calc, "F001")
    git_ok(calc, "add", "features.json", "claude-progress.txt")
    result = git(calc, "commit", "-m", "F001: add two numbers")
    assert result.returncode != 0, result.output
    assert git_ok(calc, "rev-parse", "HEAD") == before


def test_setup_pins_a_shim_that_looks_shiftkit_up_on_path(scaffold: Path) -> None:
    shim = scaffold / ".git" / "hooks" / "reference-transaction"
    shim.write_text(
        "#!/bin/sh\n# shiftkit: an old shim\nexec shiftkit hook reference-transaction\n"
    )
    shim.chmod(0o755)
    assert "reference-transaction hook" in first_line(scaffold)
    done = shiftkit(scaffold, "setup")
    assert done.returncode == 0 and "reference-transaction" in done.output, done.output
    assert f"{SHIM_RUNS} reference-transaction" in shim.read_text()
    again = shiftkit(scaffold, "setup")
    assert again.returncode == 0 and "reference-transaction" not in again.output, again.output


def test_setup_rewrites_a_shim_from_before_python_dash_p(scaffold: Path) -> None:
    shim = scaffold / ".git" / "hooks" / "reference-transaction"
    current = shim.read_text()
    assert f" {SHIM_RUNS} " in current
    shim.write_text(current.replace(f" {SHIM_RUNS} ", " -m shiftkit hook "))  # (as set up before)
    # What such a shim runs: a `shiftkit/` folder at the project root, first on Python's path.
    write(scaffold / "shiftkit" / "__init__.py", "")
    write(scaffold / "shiftkit" / "__main__.py", "open('planted-ran', 'w').close()\n")
    git_ok(scaffold, "update-ref", "refs/heads/probe", "HEAD")
    assert (scaffold / "planted-ran").exists()
    (scaffold / "planted-ran").unlink()
    assert "reference-transaction hook" in first_line(scaffold)
    done = shiftkit(scaffold, "setup")
    assert done.returncode == 0 and "reference-transaction" in done.output, done.output
    assert shim.read_text() == current
    git_ok(scaffold, "update-ref", "-d", "refs/heads/probe")
    assert not (scaffold / "planted-ran").exists()


def test_a_shim_running_dash_m_shiftkit_is_still_set_up(scaffold: Path) -> None:
    """Shims run the entry point by `-c` (decision 0122); one installed before, by
    `-P -m shiftkit`, is as isolated and is left as it is."""
    shim = scaffold / ".git" / "hooks" / "reference-transaction"
    current = shim.read_text()
    shim.write_text(current.replace(f" {SHIM_RUNS} ", " -P -m shiftkit hook "))
    before = shim.read_text()
    assert before != current
    done = shiftkit(scaffold, "setup")
    assert done.returncode == 0 and "reference-transaction" not in done.output, done.output
    assert shim.read_text() == before


PAST_ALL_HOOKS = ("-c", "core.hooksPath=/dev/null/no-hooks")


def path_without_shiftkit() -> str:
    """PATH as a shell without the venv has it: git and sh are found, shiftkit is not."""
    entries = [
        entry
        for entry in os.environ["PATH"].split(os.pathsep)
        if entry and Path(entry) != BIN_DIR and not (Path(entry) / "shiftkit").exists()
    ]
    path = os.pathsep.join(entries)
    assert shutil.which("git", path=path) and shutil.which("sh", path=path)
    assert shutil.which("shiftkit", path=path) is None
    return path


def add_feature_on(repo: Path, branch: str, start: str, feature_id: str, name: str) -> None:
    git_ok(repo, "checkout", "-q", "-b", branch, start)
    ok(repo, "add", "--id", feature_id, "--description", f"{name} exists", "--step", "s")
    git_ok(repo, *PAST_ALL_HOOKS, "commit", "-q", "-am", f"Add the feature {name}")


@pytest.mark.parametrize("where", ["clone, git -C", "linked worktree, a subfolder"])
def test_a_merge_of_the_feature_list_runs_shiftkit_off_path(
    scaffold: Path, tmp_path: Path, where: str
) -> None:
    """Two branches that each append a feature to features.json: a plain text merge
    conflicts, shiftkit's driver merges them. With the venv not on PATH, a driver that
    named `shiftkit` was not found and git said CONFLICT with no markers to resolve."""
    clone = clone_of(scaffold, tmp_path)
    assert shiftkit(clone, "setup").returncode == 0
    start = git_ok(clone, "rev-parse", "HEAD").strip()
    add_feature_on(clone, "side", start, "F010", "side.txt")
    add_feature_on(clone, "other", start, "F020", "other.txt")
    if where.startswith("clone"):
        repo, cwd = clone, tmp_path
        prefix: tuple[str, ...] = ("-C", str(clone))
    else:
        repo = tmp_path / "linked"
        git_ok(clone, "checkout", "-q", start)
        git_ok(clone, "worktree", "add", "-q", str(repo), "other")
        cwd, prefix = write(repo / "sub" / "x", "").parent, ()
    env = {"PATH": path_without_shiftkit()}
    merged = git(cwd, *prefix, *PAST_ALL_HOOKS, "merge", "-q", "--no-edit", "side", env=env)
    assert merged.returncode == 0, merged.output
    descriptions = [
        item["description"] for item in json.loads((repo / FEATURES).read_text())["features"]
    ]
    assert "side.txt exists" in descriptions and "other.txt exists" in descriptions


def test_setup_rewrites_a_driver_that_looks_shiftkit_up_on_path(scaffold: Path) -> None:
    key = "merge.shiftkit-features.driver"
    git_ok(scaffold, "config", key, "shiftkit merge-features %O %A %B")  # (as set up before)
    assert "merge drivers" in first_line(scaffold)
    done = shiftkit(scaffold, "setup")
    assert done.returncode == 0 and "merge drivers" in done.stdout, done.output
    assert git_ok(scaffold, "config", key).strip() == "sh .shiftkit/hook merge-features %O %A %B"
    again = shiftkit(scaffold, "setup")
    assert again.returncode == 0 and "nothing to do" in again.stdout, again.output


def test_without_the_hook_script_the_driver_is_pinned_to_this_interpreter(
    scaffold: Path,
) -> None:
    """A project from before `.shiftkit/hook` (decision 0058): the drivers run this
    interpreter by its absolute path, as the git hooks' shims do; once the script is there,
    `setup` moves them onto it."""
    key = "merge.shiftkit-log.driver"
    (scaffold / ".shiftkit" / "hook").unlink()
    git_ok(scaffold, "config", "--unset", key)
    done = shiftkit(scaffold, "setup")
    assert done.returncode == 0 and "merge drivers" in done.stdout, done.output
    pinned = git_ok(scaffold, "config", key).strip()
    assert pinned == f"{shlex.quote(sys.executable)} -P -m shiftkit merge-log %O %A %B"
    again = shiftkit(scaffold, "setup")
    assert again.returncode == 0 and "nothing to do" in again.stdout, again.output
    git_ok(scaffold, "checkout", "--", ".shiftkit/hook")
    assert "merge drivers" in first_line(scaffold)
    assert shiftkit(scaffold, "setup").returncode == 0
    assert git_ok(scaffold, "config", key).strip() == "sh .shiftkit/hook merge-log %O %A %B"
