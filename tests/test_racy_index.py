"""The tree `finish` verifies is the tree it commits, even for a file changed within the same
second as the index was written ("racy git"): `work_tree_id` stages in a copy of the index,
and a copy with a newer mtime made git trust that file's stale stat data — the verified tree
missed the change, and `finish` refused its own honest commit ("the work tree changed after
the verifier ran")."""

from __future__ import annotations

import os
import time
from pathlib import Path

from conftest import git_ok

from shiftkit.edge.context import open_context, work_tree_id


def racy_change(project: Path) -> tuple[str, str]:
    """A committed file rewritten (same size) in the second its index entry was taken, the
    index as git leaves it then: (the real index's tree after `git add -A`, the file)."""
    while time.time() % 1 > 0.5:  # (the add and the rewrite in one second)
        time.sleep(0.05)
    (project / "shared.txt").write_text("line 7\n")
    git_ok(project, "add", "shared.txt")
    git_ok(project, "commit", "-q", "-m", "A file")
    (project / "shared.txt").write_text("LINE 7\n")
    entry = (project / "shared.txt").stat()
    index = project / ".git" / "index"
    os.utime(index, ns=(entry.st_atime_ns, entry.st_mtime_ns))  # (racily clean)
    time.sleep(1.1)  # (a copy taken now is a second newer)
    return "shared.txt", git_ok(project, "hash-object", "shared.txt").strip()


def test_the_verified_tree_holds_a_racily_clean_change(scaffold: Path) -> None:
    name, blob = racy_change(scaffold)
    tree = work_tree_id(open_context(scaffold))
    assert git_ok(scaffold, "rev-parse", f"{tree}:{name}").strip() == blob


def test_an_unchanged_file_stays_as_committed(scaffold: Path) -> None:
    name, _ = racy_change(scaffold)
    git_ok(scaffold, "checkout", "--", name)
    tree = work_tree_id(open_context(scaffold))
    committed = git_ok(scaffold, "rev-parse", f"HEAD:{name}").strip()
    assert git_ok(scaffold, "rev-parse", f"{tree}:{name}").strip() == committed
