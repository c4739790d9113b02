"""The verdict cache: the commits a judge on this machine has passed (decision record 0043).

A verdict vouches for the commit and for everything it reaches: a commit is recorded only
when every commit it reaches is on a local branch, has a verdict, or passed in the same
judging (or lies outside protocol history, which no rule judges). So a branch moving onto a
commit with a verdict needs no walk at all.

"Judged" is a record, not a guess from reachability: a commit fetched into
``refs/remotes/*``, a tag or any other namespace is new to this machine's judges until one of
them passes it. The reference-transaction hook records every commit it passes; `sync` and
`audit --reverify` record the commits they re-verified. One empty file per commit under the
common git dir (shared by every worktree, as branches are), so a check is a stat and a
record a create — on the reference-transaction hook's path, hence plain `os` and no pathlib.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

FOLDER = ("shiftkit", "judged")


def common_of(git_dir: str) -> str:
    """The common git dir of a worktree's git dir (a linked worktree names it in
    ``commondir``)."""
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
            named = handle.read().strip()
    except OSError:
        return git_dir
    return os.path.normpath(os.path.join(git_dir, named)) if named else git_dir


def branch_evidence(root: str) -> list[str]:
    """``--not`` these, not ``--branches``: the commits local branches point at, as evidence
    that a judge here passed all they reach — symbolic refs left out. `git symbolic-ref
    refs/heads/x refs/remotes/origin/wip` makes a "branch" that never met the
    reference-transaction hook and follows every fetch (issue 19's red team); a symbolic
    ref to a real branch adds nothing that branch does not. Git failing: nothing is evidence."""
    from shiftkit.edge import gitio

    code, out, _ = gitio.plumb(
        [
            "for-each-ref",
            "--format=%(if)%(symref)%(then)%(else)%(objectname)%(end)",
            "refs/heads/",
        ],
        root,
    )
    if code != 0:
        return []
    return sorted(set(out.decode("ascii", "replace").split()))


def _path(common: str, oid: str) -> str:
    return os.path.join(common, *FOLDER, oid[:2], oid[2:])


def judged(common: str, oids: Iterable[str]) -> set[str]:
    """Those of ``oids`` a judge here has passed."""
    # (a file, as `record` makes it: a folder in its place is no verdict)
    return {oid for oid in oids if len(oid) > 2 and os.path.isfile(_path(common, oid))}


def record(common: str, oids: Iterable[str]) -> None:
    """Remember that a judge here passed each of ``oids`` and all they reach (an empty file
    each: present or absent, never half-written). A failure to write loses a verdict, never
    invents one."""
    made: set[str] = set()
    for oid in oids:
        if len(oid) <= 2:
            continue
        path = _path(common, oid)
        folder = os.path.dirname(path)
        try:
            if folder not in made:
                os.makedirs(folder, exist_ok=True)
                made.add(folder)
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))
        except OSError:
            continue
