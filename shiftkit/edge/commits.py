"""Judging a commit that exists: every rule against its real parents, with the settings of
its parents. `audit` and the reference-transaction hook both call `judge_commit`; they differ
only in where rule 4's evidence and rule 6's claim come from."""

from __future__ import annotations

from shiftkit.edge.revisions import Commit, decisions_and_ledger

TYPE_CHECKING = False  # the reference-transaction hook imports this on every branch update
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from shiftkit.core import features, rules
    from shiftkit.edge.history import History

    # (the parent's feature, its verify command, verify_in) -> None when verified on this
    # commit, else why not
    Evidence = Callable[[features.Feature, str, str], "str | None"]
    # (feature id, the claim object the commit names) -> None when that claim stands, else why
    ClaimCheck = Callable[[str, str], "str | None"]


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
    from shiftkit.edge import judge, protection, snapshot

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
    if history is None:
        rows, pairs = protection.commit_rows(root, commit.oid, commit.parents)
        change = protection.changed(root, settings.parent, rows, pairs)
    else:
        change = history.changed(commit, settings.parent)
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
        judge=settings.judge._replace(changed=change),
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
