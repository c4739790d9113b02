"""A plain commit publishes in one command (issue 36 item 4): `shiftkit sync` takes a branch
with plain commits, catches up with a teammate's finished work, judges it and pushes; and the
hand route — the refused push, `git fetch` + `git merge` — leads to the same place: the merge
is refused in one line naming `sync` (not rule lines about the teammate's verified commits),
and `sync` then puts back what git staged and finishes the job. Real git, one bare remote."""

from __future__ import annotations

from pathlib import Path

from conftest import git, git_ok, ok, shiftkit
from test_parallel import _machines, _work


def _teammate_finished_and_a_plain_commit_here(scaffold: Path, tmp_path: Path) -> tuple[Path, Path]:
    bare, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    ok(two, "claim", "F000")
    _work(two, "two")
    git_ok(two, "add", "two.txt")
    ok(two, "finish", "-m", "part zero works")  # (on the remote)
    (one / "notes.md").write_text("a plain commit of one's own\n")
    git_ok(one, "add", "notes.md")
    git_ok(one, "commit", "-q", "-m", "Notes of one's own")
    return bare, one


def _on_remote(bare: Path, path: str) -> bool:
    return git(bare, "cat-file", "-e", f"HEAD:{path}").returncode == 0


def test_a_plain_commit_publishes_with_one_sync(scaffold: Path, tmp_path: Path) -> None:
    bare, one = _teammate_finished_and_a_plain_commit_here(scaffold, tmp_path)
    synced = shiftkit(one, "sync")
    assert synced.returncode == 0, synced.output
    assert _on_remote(bare, "notes.md") and _on_remote(bare, "two.txt")


def test_the_hand_route_is_told_sync_once_and_sync_finishes_it(
    scaffold: Path, tmp_path: Path
) -> None:
    bare, one = _teammate_finished_and_a_plain_commit_here(scaffold, tmp_path)
    pushed = git(one, "push", "origin", "HEAD")
    assert pushed.returncode != 0 and "`shiftkit sync`" in pushed.stderr, pushed.output
    git_ok(one, "fetch", "-q", "origin")
    merged = git(one, "merge", "--no-edit", "origin/HEAD")
    assert merged.returncode != 0, merged.output
    said = [line for line in merged.stderr.splitlines() if line.startswith("shiftkit:")]
    # Before: "rule 4 [F000] …", "rule 6 [F000] …" about the teammate's commit, then "make the
    # change through the hooks (`shiftkit finish`, a plain `git commit`)".
    assert len(said) == 1 and "`shiftkit sync`" in said[0], merged.stderr
    assert "rule 4" not in merged.stderr
    synced = shiftkit(one, "sync")
    # Before: "the work tree is not clean" (the refused merge's files and MERGE_HEAD).
    assert synced.returncode == 0, synced.output
    assert "put back the files" in synced.stdout
    assert _on_remote(bare, "notes.md") and _on_remote(bare, "two.txt")
    assert git(one, "status", "--porcelain").stdout == ""
