"""Judging a commit that exists: every rule against its real parents, with the settings of
its parents. `audit` and the reference-transaction hook both call `judge_commit`; they differ
only in where rule 4's evidence and rule 6's claim come from."""

from __future__ import annotations

from shiftkit.edge import gitio

TYPE_CHECKING = False  # the reference-transaction hook imports this on every branch update
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from shiftkit.core import features, rules
    from shiftkit.edge.history import History

    # (the parent's feature, its verify command, verify_in) -> None when verified on this
    # commit, else why not
    Evidence = Callable[[features.Feature, str, str], "str | None"]
    # (feature id, the claim object the commit names) -> None when that claim stands, else why
    ClaimCheck = Callable[[str, str], "str | None"]


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


NO_CLAIM_TRAILER = (
    "the commit names no claim on it (no Shiftkit-Claim and Shiftkit-Feature trailers, which "
    "`shiftkit finish` and the commit-msg hook write; a commit made past them has none): "
    "finish the claimed feature with `shiftkit finish`"
)


def judge_commit(
    root: Path,
    common_dir: Path,
    commit: Commit,
    evidence: Evidence,
    claim_check: ClaimCheck | None = None,
    history: History | None = None,
) -> rules.Report:
    """``history``: what `audit` has read of the commits it judges (`edge.history`); without
    it, the commit's files are read here."""
    from shiftkit.core import features, rules
    from shiftkit.edge import judge, snapshot

    checked, trust = None, None
    if history is None:
        first = commit.parents[0] if commit.parents else None
        settings = judge.at_revisions(root, first, f"{commit.oid}:", commit.parents[1:])
        names = judge.names(settings.parent)
        sides, blobs = snapshot.read_sides(root, list(commit.parents), names, common_dir)
        if not commit.parents:
            sides = [rules.Side(None, None, None)]
        proposed, features_blob = snapshot.read_proposed(
            root, [f"{commit.oid}:{name}" for name in judge.names(settings.proposed)]
        )
    else:
        settings, sides, blobs, proposed, features_blob, result = history.read(commit)
        # (a list the history found invalid is checked again by `evaluate`, which words it)
        checked = result[0] if result is not None and not result[1] else None
        names = judge.names(settings.parent)
    if checked is None:
        trust = snapshot.trust(sides, blobs, common_dir)
    base = None
    if len(commit.parents) > 1:
        base = (
            snapshot.merge_base(root, commit.parents, names[0], common_dir)
            if history is None
            else history.merge_base(commit, names[0])
        )
    cfg = settings.parent
    present = rules.trailers(commit.message)
    # Rule 6 in history: a flip carries the claim it was finished under.
    under_claim = [v for v in present.get("Shiftkit-Claim", []) if v and v != "-"]
    named = present.get("Shiftkit-Feature", [])
    claimed = named[0] if under_claim and named else None
    claim_problem = None
    if claimed is not None and claim_check is not None and cfg.claims.enabled:
        claim_problem = claim_check(claimed, under_claim[0])
    elif claimed is None:
        # In history the claim is read from the commit, not from a worktree: say so.
        claim_problem = NO_CLAIM_TRAILER

    def verification(feature: features.Feature | None) -> str | None:
        command = features.effective_verify(feature, cfg.verify) if feature else None
        if feature is None or command is None:
            return "it has no verify command (and no project-wide 'verify' is set)"
        return evidence(feature, command, cfg.verify_in)

    report = rules.evaluate(
        sides,
        proposed,
        rules_to_check=rules.ALL,
        names=names,
        message=commit.message,
        claimed=claimed,
        claims_enabled=cfg.claims.enabled,
        claim_problem=claim_problem,
        verification=verification,
        **(trust or {}),
        judge=settings.judge,
        merge_base=base,
        signature=lambda: judge.signatures_problem(root, commit.oid, settings),
        checked=checked
        if checked is not None
        else snapshot.checked_list(common_dir, features_blob),
    )
    if history is None:
        report.violations.extend(decisions_and_ledger(root, commit, cfg.decisions))
        snapshot.record(common_dir, features_blob, report)
    else:  # (`audit` keeps what it checked in memory: see `edge.history`)
        report.violations.extend(history.decision_numbers(commit, cfg.decisions))
        report.violations.extend(history.ledger_problems(commit))
    return report


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
