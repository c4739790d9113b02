"""`finish`'s plan: what its commit will hold — the flipped list, the log with its entry (and
the re-marks of what the change repaired), the message — judged by the hooks' rules before
anything is written."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

from shiftkit.core import features, progress, rules
from shiftkit.core.claim import LocalClaim
from shiftkit.core.errors import BadInput, Refused
from shiftkit.edge import claims, gitio, snapshot
from shiftkit.edge.context import Context, log_time, pending_note_path, plan_log, short
from shiftkit.edge.files import read_optional
from shiftkit.edge.project import read_features, read_features_at

SUBJECT_LIMIT = 72  # rule 9's, for the whole subject `ID: SUMMARY`


class FinishPlan(NamedTuple):
    """What `finish` will commit, planned and checked before anything is written."""

    held: LocalClaim
    feature: features.Feature
    subject: str
    summary: str
    extra_note: str | None
    committed: features.FeatureList  # HEAD's list: what passes now
    flipped: features.FeatureList
    log: str
    archive: str | None  # the new archive when a prune is due
    message: str  # with TREE where the committed tree's id goes
    repaired: tuple[str, ...] = ()  # demoted features re-marked in the same commit


def summary_room(feature_id: str) -> int:
    """How long `finish -m` may be for ``feature_id``: the subject is `ID: SUMMARY`."""
    return SUBJECT_LIMIT - len(f"{feature_id}: ")


def finish_subject(feature_id: str, summary: str) -> str:
    """`ID: SUMMARY`, within rule 9 (72 characters, says something)."""
    room = summary_room(feature_id)
    if len(summary.strip()) > room:
        raise BadInput(
            f"-m is {len(summary.strip())} characters; the subject is `{feature_id}: ` and "
            f"the summary, at most {SUBJECT_LIMIT} in all: keep -m to {room} and put the "
            f"detail in --note"
        )
    subject = f"{feature_id}: {summary.strip()}"
    problems = rules.check_message(subject)
    if problems:
        raise BadInput(f"-m: {problems[0].message}")
    return subject


def plan(ctx: Context, held: LocalClaim, summary: str, extra_note: str | None) -> FinishPlan:
    """The plan for the claimed feature alone, judged (`precheck`): refused, nothing
    written, when the claim is no longer this worktree's, HEAD already passes the feature,
    or a rule refuses the commit."""
    subject = finish_subject(held.feature, summary)
    problem = claims.current_problem(ctx.root, held) if ctx.config.claims.enabled else None
    if problem is not None:
        raise Refused(f"{problem}; nothing was committed")
    feature = features.require(read_features(ctx.project), held.feature, ctx.config.features)
    committed = _committed(ctx)
    if committed is not None and features.passes(committed, held.feature):
        raise Refused(
            f"{held.feature} already passes; nothing was committed (`shiftkit release` "
            f"hands the claim back)"
        )
    planned = _planned(
        ctx, held, feature, subject, summary, extra_note, committed or read_features(ctx.project)
    )
    precheck(ctx, planned)
    return planned


def with_repairs(ctx: Context, planned: FinishPlan, repaired: Sequence[str]) -> FinishPlan:
    """The plan with ``repaired`` (demoted features whose verifiers pass on the tree) re-marked
    passing, each with its log entry and named in the message; judged again."""
    if not repaired:
        return planned
    again = _planned(
        ctx,
        planned.held,
        planned.feature,
        planned.subject,
        planned.summary,
        planned.extra_note,
        planned.committed,
        tuple(repaired),
    )
    precheck(ctx, again)
    return again


def _committed(ctx: Context) -> features.FeatureList | None:
    try:
        return read_features_at(ctx.root, "HEAD", ctx.config.features)
    except BadInput:
        return None


def _planned(
    ctx: Context,
    held: LocalClaim,
    feature: features.Feature,
    subject: str,
    summary: str,
    extra_note: str | None,
    committed: features.FeatureList,
    repaired: tuple[str, ...] = (),
) -> FinishPlan:
    base = short(held.base)
    flipped = read_features(ctx.project).replace_feature(feature._replace(passes=True))
    for feature_id in repaired:
        flipped = flipped.replace_feature(
            features.require(flipped, feature_id, ctx.config.features)._replace(passes=True)
        )
    mine = {feature.id}
    log_text = without_crashed_entries(
        read_optional(ctx.project.progress_path),
        base,
        lambda e: (
            (e.feature in mine and e.outcome.startswith("passed"))
            or e.outcome.startswith(rules.REMARKED)
        ),
    )
    entry = progress.format_entry(
        log_time(), feature.id, "passed", base, entry_body(ctx, summary, extra_note)
    )
    log_text = with_remark_entries(progress.append(log_text, entry), repaired, base, feature.id)
    new_log, new_archive = plan_log(ctx, log_text, features.blocked_ids(flipped))
    again = remark_paragraph(repaired)
    message = (
        f"{subject}\n\n{again}Shiftkit-Feature: {feature.id}\nShiftkit-Verified: TREE\n"
        f"Shiftkit-Claim: {held.oid or '-'}\n"
    )
    return FinishPlan(
        held,
        feature,
        subject,
        summary,
        extra_note,
        committed,
        flipped,
        new_log,
        new_archive,
        message,
        repaired,
    )


def with_remark_entries(log_text: str, repaired: Sequence[str], base: str, by: str) -> str:
    """The log with a re-mark entry for each of ``repaired``, re-marked in ``by``'s commit."""
    for feature_id in repaired:
        log_text = progress.append(
            log_text,
            progress.format_entry(
                log_time(),
                feature_id,
                f"{rules.REMARKED} passing (repaired)",
                base,
                f"demoted by a regression after it had passed; its verifier passes again on "
                f"the tree {by}'s finish commits, so it is re-marked in that commit",
            ),
        )
    return log_text


def remark_paragraph(repaired: Sequence[str]) -> str:
    """The message's paragraph naming the re-marks ('' for none)."""
    if not repaired:
        return ""
    return (
        f"Re-marks {', '.join(repaired)} passing: demoted before, repaired by this change "
        f"(each verifier passed on this tree).\n\n"
    )


def without_crashed_entries(
    log_text: str, base: str, ours: Callable[[progress.Entry], bool]
) -> str:
    """The entries a crashed run of this claim wrote at the end of the log (``ours``, at
    ``base``) dropped, so a re-run writes them once."""
    log = progress.parse(log_text)
    entries = list(log.entries)
    kept = len(entries)
    while kept and entries[kept - 1].base == base and ours(entries[kept - 1]):
        kept -= 1
    if kept == len(entries):
        return log_text
    return log.head + "".join(e.text for e in entries[:kept])


def entry_body(ctx: Context, first: str, extra: str | None) -> str:
    parts = [first.strip()]
    pending = read_optional(pending_note_path(ctx)).strip()
    if pending:
        parts.append(pending)
    if extra and extra.strip():
        parts.append(extra.strip())
    return "\n".join(parts)


def precheck(ctx: Context, planned: FinishPlan) -> None:
    """The hooks' rules (bar the verifier, which runs next) over the planned commit, judged
    by HEAD's settings, so a refusal comes before anything is written."""
    from shiftkit.edge import judge, protection

    cfg = ctx.config
    names = (cfg.features, cfg.progress, cfg.log.archive)
    parents, blobs = snapshot.read_sides(ctx.root, ["HEAD"], names, ctx.common_dir)
    archive = planned.archive if planned.archive is not None else parents[0].archive
    proposed = rules.Proposed(features.dumps(planned.flipped), planned.log, archive)
    settings = judge.judging(
        gitio.read_blobs(ctx.root, [f"HEAD:{n}" for n in judge.SETTINGS_FILES]),
        [_read_or_none(ctx.root / n) for n in judge.SETTINGS_FILES],
        has_parent=True,
    )
    # Rule 14 on the whole change the commit will hold (an oracle edited beside the work is
    # refused here, before a verifier runs, as the commit hook would refuse it after).
    rows, pairs = protection.work_tree_rows(ctx.root, ctx.git_dir)
    change = protection.changed(ctx.root, settings.parent, rows, pairs)
    report = rules.evaluate(
        parents,
        proposed,
        rules_to_check=rules.ALL - {rules.Rule.VERIFIED},
        names=names,
        message=planned.message,
        claimed=planned.feature.id,
        claims_enabled=cfg.claims.enabled,
        **snapshot.trust(parents, blobs, ctx.common_dir),
        checked=planned.flipped if planned.flipped.checked else None,  # (each change checked)
        judge=settings.judge._replace(changed=change),
    )
    if report.violations:
        raise Refused(f"{report.violations[0]}; nothing was changed")


def _read_or_none(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return None
