"""Putting back what a refused update of the branch left staged.

git moves the index and the work tree before the branch: a `git pull` (any of its flags), a
`git merge` of the remote-tracking branch or of FETCH_HEAD, that the reference-transaction
hook refuses leaves HEAD where it was and the incoming commit's files staged. `sync` puts
them back first, so its "the work tree is not clean" speaks only of the clone's own changes.

The commit whose files were staged is found among the fetched commits this branch lacks
(every remote-tracking branch and FETCH_HEAD: a pull from a URL updates no tracking ref, and
a fetch after the refusal may have moved the tracking ref past it). It is the one whose
changes from HEAD the index holds exactly; the clone's own changes elsewhere (staged or not)
stay, through git's two-tree merge.
"""

from __future__ import annotations

from pathlib import Path

from shiftkit.edge import gitio

LOOKED_AT = 200  # fetched commits this branch lacks, newest first: a refused pull is recent


def staged(root: Path) -> str | None:
    """The fetched commit whose changes from HEAD the index holds — what a refused update
    left staged — else None. Asked by `undo`, and by a commit hook on its way to a refusal:
    committing that index would commit the remote's files as one's own."""
    found = _staged_from(root)
    return found[0] if found is not None else None


def _staged_from(root: Path) -> tuple[str, str] | None:
    """(the fetched commit a refused update staged, the tree the index then holds) — a
    fast-forward's files, or a true merge's result (HEAD and the fetched tip merged: a
    `git merge origin/main` of a branch with commits of its own) — else None."""
    if _index_is_head(root):
        return None
    for commit in _fetched_commits(root):
        if _index_holds_changes_of(root, commit):
            return commit, commit
    return _merge_staged(root)


def _merge_staged(root: Path) -> tuple[str, str] | None:
    """A refused merge of a fetched tip: the index is exactly the tree git's merge of HEAD
    and that tip makes (`git merge-tree --write-tree`)."""
    index = gitio.run(["write-tree"], root, check=False)
    if index.returncode != 0:
        return None  # (conflicts staged: not a merge git finished)
    tree = index.stdout.strip()
    for tip in _fetched_tips(root):
        merged = gitio.run(["merge-tree", "--write-tree", "HEAD", tip], root, check=False)
        if merged.returncode == 0 and merged.stdout.split("\n", 1)[0].strip() == tree:
            return tip, tree
    return None


def _fetched_tips(root: Path) -> list[str]:
    listed = gitio.run(
        ["for-each-ref", "--format=%(objectname)", "refs/remotes/"], root, check=False
    ).stdout.split()
    fetch_head = gitio.run(
        ["rev-parse", "-q", "--verify", "FETCH_HEAD^{commit}"], root, check=False
    ).stdout.strip()
    return list(dict.fromkeys([*listed, *([fetch_head] if fetch_head else [])]))


def undo(root: Path) -> str | None:
    """Put back the files a refused update staged; the commit they came from, else None
    (nothing of the kind staged, or git's two-tree merge would lose a change: then as it
    was)."""
    found = _staged_from(root)
    if found is None:
        return None
    commit, tree = found
    undone = gitio.run(["read-tree", "-m", "-u", tree, "HEAD"], root, check=False)
    if undone.returncode != 0:
        return None
    # (a refused merge leaves its state — MERGE_HEAD — behind: forgotten, files as they are)
    gitio.run(["merge", "--quit"], root, check=False)
    return commit


def _index_is_head(root: Path) -> bool:
    staged = gitio.run(["diff-index", "--cached", "--quiet", "HEAD", "--"], root, check=False)
    return staged.returncode == 0


def _fetched_commits(root: Path) -> list[str]:
    tips = ["--remotes"]
    fetch_head = gitio.run(
        ["rev-parse", "-q", "--verify", "FETCH_HEAD^{commit}"], root, check=False
    ).stdout.strip()
    if fetch_head:
        tips.append(fetch_head)
    listed = gitio.run(
        ["rev-list", f"--max-count={LOOKED_AT}", *tips, "--not", "HEAD"], root, check=False
    )
    return listed.stdout.split() if listed.returncode == 0 else []


def _index_holds_changes_of(root: Path, commit: str) -> bool:
    """Every path ``commit`` changes from HEAD is staged as ``commit`` has it."""
    changed = _paths(root, ["diff-tree", "-r", "--no-renames", "HEAD", commit])
    if changed is None or not changed:
        return False
    differing = _paths(root, ["diff-index", "--cached", "--no-renames", commit])
    return differing is not None and not changed & differing


def _paths(root: Path, diff: list[str]) -> set[str] | None:
    listed = gitio.run([*diff, "-z", "--name-only", "--"], root, check=False)
    if listed.returncode != 0:
        return None
    return {path for path in listed.stdout.split("\0") if path}
