"""What git says of commits: reading them (`git log`), and where a commit changes the decision
records (rule 13) and the ledger (rule 12). Shared by the judge of one commit
(`edge.commits`), the bulk reader of `audit` (`edge.history`) and the commit hooks; imported
on the reference-transaction hook's path, so it imports no typing."""

from __future__ import annotations

from shiftkit.edge import gitio

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from shiftkit.core import rules


class Commit:
    """A commit as `git log` shows it (a plain class: no typing import on the hook's path)."""

    __slots__ = ("message", "oid", "parents", "tree")

    def __init__(self, oid: str, parents: tuple[str, ...], tree: str, message: str) -> None:
        self.oid, self.parents, self.tree, self.message = oid, parents, tree, message

    @property
    def subject(self) -> str:
        return self.message.splitlines()[0] if self.message else ""


def read_commits(root: Path | str, revisions: Sequence[str]) -> list[Commit]:
    """The commits ``git rev-list`` selects with ``revisions``, oldest first."""
    args = [
        "log",
        "--reverse",
        "--topo-order",
        "--format=%H%x00%P%x00%T%x00%B%x00%x01",
        *revisions,
        "--",
    ]
    code, out, err = gitio.plumb(args, root)  # (no subprocess import: the hook's path)
    if code != 0:
        raise gitio.GitFailed(args, code, err.decode("utf-8", "replace"))
    raw = out.decode("utf-8", "surrogateescape")
    result = []
    for record in raw.split("\x01"):
        record = record.lstrip("\n")
        if not record:
            continue
        oid, parents, tree, message, _ = record.split("\x00")
        result.append(Commit(oid, tuple(parents.split()), tree, message))
    return result


LEDGER_FILE = ".shiftkit/ledger.jsonl"  # (core.ledger.LEDGER_FILE: not imported on this path)


def decisions_and_ledger(root: Path, commit: Commit, folder: str) -> list[rules.Violation]:
    """Rules 13 and 12, each read only where the commit's decision folder or ledger differs
    from a parent's: the ids of both, at the commit and its parents, in one `git cat-file`."""
    import posixpath

    revs = [commit.oid, *commit.parents]
    name = posixpath.normpath(folder)
    ids = gitio.object_ids(root, [f"{rev}:{path}" for path in (name, LEDGER_FILE) for rev in revs])
    numbers = decision_numbers(root, commit.oid, commit.parents, name, ids[: len(revs)])
    return numbers + ledger_problems(root, commit, ids[len(revs) :])


def decision_numbers(
    root: Path | str,
    proposed: str,
    parents: Sequence[str],
    folder: str,
    ids: Sequence[str | None] | None = None,
) -> list[rules.Violation]:
    """Rule 13 at ``proposed`` (a commit, or the tree a commit will have) against its
    ``parents``, read only when the decision folder differs from a parent's (``ids``: the
    folder's object at ``proposed`` and at each parent, when known). The hooks, `audit` and
    the reference-transaction hook all read it here."""
    import posixpath

    from shiftkit.core import rules

    folder = posixpath.normpath(folder)
    revs = [proposed, *parents]
    if ids is None:
        ids = gitio.object_ids(root, [f"{rev}:{folder}" for rev in revs])
    if (len(set(ids)) == 1 and parents) or ids[0] is None:
        return []  # the folder is the same as in every parent, or there is none
    kind = gitio.object_type(root, f"{proposed}:{folder}")
    if kind != "tree":
        return rules.rule13_not_a_folder(folder, kind)

    def listing(rev: str) -> list[str]:
        # (-z: names as they are, not quoted as ls-tree quotes names it would escape)
        code, out, _ = gitio.plumb(["ls-tree", "-z", "--name-only", f"{rev}:{folder}"], root)
        return out.decode("utf-8", "surrogateescape").split("\0") if code == 0 else []

    return rules.rule13_decisions(
        [listing(parent) for parent in parents], listing(proposed), folder
    )


def ledger_changed(commit: Commit, ids: Sequence[str | None]) -> bool:
    """Whether the ledger (its blob at the commit, then at each parent) differs from a
    parent's, or a root commit has one."""
    return len(set(ids)) > 1 or (not commit.parents and ids[0] is not None)


def ledger_problems(
    root: Path, commit: Commit, ids: Sequence[str | None] | None = None
) -> list[rules.Violation]:
    """Rule 12 on a commit that exists: what the commit hooks ask of a staged ledger, asked
    of the commit against its real parents (``ids``: the ledger's blob at the commit and at
    each parent, when known)."""
    from shiftkit.core import rules

    revs = [commit.oid, *commit.parents]
    if ids is None:
        ids = gitio.object_ids(root, [f"{rev}:{LEDGER_FILE}" for rev in revs])
    if not ledger_changed(commit, ids):
        return []
    texts = gitio.read_blobs(root, [f"{rev}:{LEDGER_FILE}" for rev in revs])
    return rules.rule12_ledger(texts[1:], texts[0])
