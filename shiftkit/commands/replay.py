"""A lost push race, caught up without a merge (decision record 0114): the unit's commit — a
`finish` or a `revert`, the only commit here the remote lacks — is replayed onto the remote's
tip (the incoming commits judged first, as any catch-up), the claimed feature and every passing
feature the change can break verified again on the replayed tree, and committed through the
hooks with its own message. The remote's history stays linear: a race costs no commit.

Anything short of that — other commits here, a dirty tree, a conflict, a verifier failing on
the combination — puts the branch back on the unit's commit exactly, and the caller merges
through the judged `sync` as before (its gate demotes what the combination breaks)."""

from __future__ import annotations

from collections.abc import Callable

from shiftkit.commands import catch_up
from shiftkit.core import features
from shiftkit.core.claim import LocalClaim
from shiftkit.core.errors import ShiftkitError
from shiftkit.core.features import FeatureList
from shiftkit.edge import gitio, parking, state
from shiftkit.edge.context import Context, short

Say = Callable[[str], None]

VERIFIED = "Shiftkit-Verified"


def onto_tip(ctx: Context, held: LocalClaim, name: str, branch: str, say: Say) -> str | None:
    """Replay HEAD, ``held``'s unit commit, onto ``name``/``branch`` as last fetched: the new
    commit, or None with the branch, index and work tree as they were."""
    tracking = f"refs/remotes/{name}/{branch}"
    unit = gitio.head_oid(ctx.root)
    if unit is None or not _alone(ctx, tracking, unit) or gitio.status_lines(ctx.root):
        return None
    try:
        catch_up.judge_incoming(ctx, name, branch, tracking, say)
    except ShiftkitError:
        return None  # (the merge's own catch-up says why, with what to do)
    message = gitio.out(["log", "-1", "--format=%B", unit], ctx.root)
    if not _moved_onto(ctx, tracking, unit):
        return None
    state.save_local_claim(ctx.git_dir, held)  # (the hooks' rule 6: the flip's claim is here)
    try:
        made = _verified_commit(ctx, held, unit, message, say)
    except ShiftkitError as exc:
        reason = exc.message.removeprefix("shiftkit: ").split(". ", 1)[0].split("; nothing", 1)[0]
        say(
            f"{held.feature}'s commit {short(unit)} does not hold on {name}/{branch}'s tip "
            f"({reason}): put back as it was, to be merged instead"
        )
        made = None
    finally:
        state.drop_local_claim(ctx.git_dir)  # (parked again, as `claims.let_go` left it)
    if made is None:
        gitio.run(["reset", "--quiet", "--hard", unit], ctx.root, check=False)
        return None
    parking.remap(ctx.git_dir, {unit: made})
    say(
        f"replayed {held.feature}'s commit onto {name}/{branch} as {short(made)} (verified "
        f"again there), so the remote's history stays linear"
    )
    return made


def _alone(ctx: Context, tracking: str, unit: str) -> bool:
    """Whether ``unit`` is the one commit here that ``tracking`` lacks, with one parent."""
    ahead = gitio.out(["rev-list", f"{tracking}..{unit}"], ctx.root).split()
    parents = gitio.out(["log", "-1", "--format=%P", unit], ctx.root).split()
    return ahead == [unit] and len(parents) == 1


def _moved_onto(ctx: Context, tracking: str, unit: str) -> bool:
    """The branch on ``tracking`` with ``unit``'s change applied (the list's and the log's
    merge drivers doing their part) and staged; False, everything back on ``unit``, where git
    will not."""
    moved = gitio.run(["reset", "--quiet", "--keep", tracking], ctx.root, check=False)
    if moved.returncode != 0:
        return False
    picked = gitio.run(["cherry-pick", "--no-commit", unit], ctx.root, check=False)
    if picked.returncode != 0:
        gitio.run(["reset", "--quiet", "--hard", unit], ctx.root, check=False)
        return False
    return True


def _verified_commit(
    ctx: Context, held: LocalClaim, unit: str, message: str, say: Say
) -> str | None:
    """The staged replay committed through the hooks with ``message``; a `finish` commit
    (it names its verified tree) only after the feature, and what the change can break,
    pass on the replayed tree, which the message then names."""
    from shiftkit.edge import finish_commit, gate
    from shiftkit.edge.committing import commit
    from shiftkit.edge.project import read_features, read_features_at

    if not _trailer(ctx, unit, f"%(trailers:key={VERIFIED})"):
        return commit(ctx, message, [])  # (a `revert`'s record: no feature flips)
    current = read_features(ctx.project)
    feature = current.get(held.feature)
    if feature is None:
        return None
    committed = read_features_at(ctx.root, "HEAD", ctx.config.features) or current
    base = gitio.head_oid(ctx.root) or unit
    verdict = gate.verify_change(ctx, feature, committed, base, None, say)
    repaired = [i for i in verdict.repaired if not features.passes(current, i)]
    if repaired:
        message = _with_remarks(ctx, current, repaired, base, message)
        say(f"re-marked {', '.join(repaired)} passing in the replayed commit (repaired there)")
    tree = gitio.write_tree(ctx.root)
    finish_commit.require_verified_tree(ctx, verdict.tree, tree)
    finish_commit.record_evidence(ctx, current, [feature.id, *repaired], verdict.checked, tree)
    old = _trailer(ctx, unit, f"%(trailers:key={VERIFIED},valueonly)")
    return commit(ctx, message.replace(old, tree) if old else message, [])


def _with_remarks(
    ctx: Context, current: FeatureList, repaired: list[str], base: str, message: str
) -> str:
    """``repaired`` (demoted on the tip, passing on the replayed tree) re-marked in the
    replayed commit, as `finish` re-marks what its change repaired: the list, the log
    entries, a paragraph of the message; staged. Returns the message."""
    from shiftkit.edge.context import plan_log, write_features, write_planned_log
    from shiftkit.edge.files import read_optional
    from shiftkit.edge.finish_plan import remark_paragraph, with_remark_entries

    marked = current
    for feature_id in repaired:
        found = marked.get(feature_id)
        if found is not None:
            marked = marked.replace_feature(found._replace(passes=True))
    log_text = read_optional(ctx.project.progress_path)
    claimed = message.split(":", 1)[0]
    log_text = with_remark_entries(log_text, repaired, short(base), claimed)
    new_log, new_archive = plan_log(ctx, log_text, features.blocked_ids(marked))
    write_features(ctx, marked)
    write_planned_log(ctx, new_log, new_archive)
    gitio.run(["add", "-A"], ctx.root)
    subject, _, rest = message.partition("\n\n")
    return f"{subject}\n\n{remark_paragraph(repaired)}{rest}"


def _trailer(ctx: Context, unit: str, spec: str) -> str:
    return gitio.out(["log", "-1", f"--format={spec}", unit], ctx.root).strip()
