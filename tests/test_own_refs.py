"""shiftkit's local refs (`refs/shiftkit/*`: claims, usage refs, the remotes' mirrors) are moved
only by shiftkit: the reference-transaction hook refuses an update there unless shiftkit's own
`git update-ref`/`git fetch` made it (decision record 0091). Issue 35's red team: `git fetch
--prune` erased every live local claim, `git fetch . +HEAD:refs/shiftkit/claims/F000` planted
one only a person could clear."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import git, git_ok, ok, run, shiftkit, write
from test_guard import pre_tool_use

from shiftkit.commands.install import (
    HOOK_SCRIPT,
    SITE_CHECK,
    SITE_RECORD,
    shim_text,
)
from shiftkit.core.own_refs import MARKER
from shiftkit.core.resources import hooks_dir, template_root

CLAIMS = "refs/shiftkit/claims/"


def _claims(project: Path) -> list[str]:
    return git_ok(project, "for-each-ref", "--format=%(refname)", CLAIMS).split()


def test_a_fetch_does_not_plant_a_claim(scaffold: Path) -> None:
    planted = git(scaffold, "fetch", ".", f"+HEAD:{CLAIMS}F000")
    assert planted.returncode != 0, planted.output
    said = [line for line in planted.stderr.splitlines() if line.startswith("shiftkit:")]
    assert len(said) == 1 and f"{CLAIMS}F000" in said[0], planted.stderr
    assert _claims(scaffold) == []


def test_a_pruning_fetch_does_not_erase_live_claims(scaffold: Path) -> None:
    assert "claimed F000" in ok(scaffold, "claim", "F000")
    assert _claims(scaffold) == [f"{CLAIMS}F000"]
    pruned = git(scaffold, "fetch", "--prune", ".", f"+refs/nothing/*:{CLAIMS}*")
    assert pruned.returncode != 0, pruned.output
    assert "refused" in pruned.stderr
    assert _claims(scaffold) == [f"{CLAIMS}F000"]
    deleted = git(scaffold, "update-ref", "-d", f"{CLAIMS}F000")
    assert deleted.returncode != 0, deleted.output
    assert _claims(scaffold) == [f"{CLAIMS}F000"]


def test_shiftkits_own_claim_and_release_move_the_refs(scaffold: Path) -> None:
    assert "claimed F000" in ok(scaffold, "claim", "F000")
    assert _claims(scaffold) == [f"{CLAIMS}F000"]
    assert "released F000" in ok(scaffold, "release")
    assert _claims(scaffold) == []


def test_other_refs_are_not_asked(scaffold: Path) -> None:
    git_ok(scaffold, "fetch", "-q", ".", "+HEAD:refs/remotes/mirror/main")
    git_ok(scaffold, "tag", "v0")
    git_ok(scaffold, "update-ref", "refs/notes/mine", "HEAD")


@pytest.mark.parametrize(
    "command",
    [
        f"{MARKER}=1 git fetch . +HEAD:{CLAIMS}F000",
        f"export {MARKER}=1",
        f"env {MARKER}=1 git update-ref -d {CLAIMS}F000",
        f'python3 -c \'import os; os.environ["{MARKER}"]="1"\'',
    ],
)
def test_the_guard_refuses_shiftkits_marker(scaffold: Path, command: str) -> None:
    result = shiftkit(scaffold, "guard", input=pre_tool_use({"command": command}, cwd=scaffold))
    assert result.returncode == 2, result.output
    assert MARKER in result.output


@pytest.mark.parametrize("command", ["git fetch origin", "git fetch --prune origin", "env | sort"])
def test_the_guard_allows_honest_fetches(scaffold: Path, command: str) -> None:
    result = shiftkit(scaffold, "guard", input=pre_tool_use({"command": command}, cwd=scaffold))
    assert (result.returncode, result.output) == (0, ""), result.output


# -- the site check: every hook, before Python starts --------------------------------------


def _commit(project: Path, name: str) -> tuple[int, str]:
    write(project / name, "a note\n")
    git_ok(project, "add", name)
    made = git(project, "commit", "-q", "-m", f"Add {name}")
    return made.returncode, made.output


def _watch(project: Path, folder: Path) -> None:
    """Record ``folder`` as one more site-packages of shiftkit's interpreter, as `shiftkit
    setup` would (a folder of the test's own: planting a `.pth` in the real one would reach
    every test running beside this one)."""
    record = project / ".git" / "shiftkit" / SITE_RECORD
    if not record.is_file():  # (the site check starts when a person records the site)
        ok(project, "setup", "--trust-installation")
    listed = f"{record.read_text().splitlines()[0]}:{folder}"
    script = (hooks_dir() / SITE_CHECK).read_text()
    summed = subprocess.run(
        ["sh", "-c", f'{script}\nshiftkit_site_sum "$1"', "sh", listed],
        capture_output=True,
        text=True,
    )
    record.write_text(f"{listed}\n{summed.stdout.strip()}\n")


def test_a_new_pth_in_shiftkits_site_packages_stops_every_hook(
    scaffold: Path, tmp_path: Path
) -> None:
    site_packages = tmp_path / "site-packages"
    site_packages.mkdir()
    write(site_packages / "honest.pth", "/somewhere/else\n")
    _watch(scaffold, site_packages)
    assert _commit(scaffold, "before.txt")[0] == 0  # the honest twin: as recorded
    write(site_packages / "zz_planted.pth", "import os; os._exit(0)\n")
    code, output = _commit(scaffold, "after.txt")
    assert code != 0, output
    assert "site-packages changed since `shiftkit setup`" in output
    assert git_ok(scaffold, "log", "-1", "--format=%s").strip() == "Add before.txt"
    guarded = run(
        ["sh", ".shiftkit/hook", "guard"],
        scaffold,
        input=pre_tool_use({"command": "git status"}, cwd=scaffold),
    )
    assert guarded.returncode == 2, guarded.output
    moved = git(scaffold, "commit", "-q", "--no-verify", "-m", "Add after.txt")
    assert moved.returncode != 0, moved.output  # the reference-transaction shim too
    assert "site-packages changed" in moved.stderr
    ok(
        scaffold, "setup", "--trust-installation"
    )  # a person looked, and records the interpreter's site as it is
    made = git(scaffold, "commit", "-q", "-m", "Add after.txt")
    assert made.returncode == 0, made.output


def test_every_hook_runs_the_same_site_check() -> None:
    check = (hooks_dir() / SITE_CHECK).read_text()
    assert "shiftkit_site_sum" in check
    assert check in (template_root() / "template" / HOOK_SCRIPT).read_text()
    for name in ("reference-transaction", "pre-push"):
        assert check in shim_text(name), name
