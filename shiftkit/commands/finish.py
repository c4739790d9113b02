"""`shiftkit finish`: a short pipeline of named steps, each in one module (decision 0054).

    catch up commands/catch_up  only behind the remote: fast-forwarded under the work first
    plan     edge/finish_plan   what the commit will hold, judged by the rules first
    verify   edge/gate          the claimed feature, and beside it (in parallel) every passing
                                feature the change can break and every demoted one it may repair
    commit   edge/finish_commit the verified tree plus the list and the log, through the hooks
    publish  commands/publish   pushed; a lost race caught up by the judged sync, bounded
    release  (here)             the claim's last traces, and the one line that says it all

Refused before the commit: nothing changed; refused at it: everything as it was. A re-run
after a crash past the commit only publishes and releases.
"""

from __future__ import annotations

from collections.abc import Callable

from shiftkit.commands import catch_up, publish
from shiftkit.commands import claims as claiming
from shiftkit.commands.shift import require_claim
from shiftkit.core.claim import LocalClaim
from shiftkit.edge import finish_commit, finish_plan, gate, gitio
from shiftkit.edge.context import Context, head_trailer, short

Say = Callable[[str], None]


def finish(
    ctx: Context, summary: str, extra_note: str | None, say: Say, workers: int | None = None
) -> int:
    held = require_claim(ctx, "finish")
    if _already_committed(ctx, held):
        ending = release(
            ctx, publish.publish(ctx, held, gitio.head_oid(ctx.root) or "", say).ending
        )
        say(f"{held.feature} was already committed at HEAD; {ending}")
        return claiming.exit_when_published(ctx, held, say)
    held = catch_up.under_the_work(ctx, held, say)
    plan = finish_plan.plan(ctx, held, summary, extra_note)
    claiming.confirm_held(ctx, held)  # (with a claims remote: still ours there)
    verdict = gate.verify_change(ctx, plan.feature, plan.committed, held.base, workers, say)
    plan = finish_plan.with_repairs(ctx, plan, verdict.repaired)
    finish_commit.say_unstaged(ctx, say)
    head = finish_commit.commit(ctx, plan, verdict, say)
    published = publish.publish(ctx, held, head, say)
    ending = release(ctx, published.ending)
    if not _still_passes(ctx, plan.feature.id):
        say(
            f"{plan.feature.id} passed on its own tree (committed {short(published.commit)}) "
            f"but fails where it was merged with the remote's commits, so it was demoted there "
            f"(above); {ending} — claim it again to make the combination work"
        )
    else:
        say(_done_line(plan, verdict, published.commit, ending))
    return claiming.exit_when_published(ctx, held, say)  # (1: not on the remote)


def _already_committed(ctx: Context, held: LocalClaim) -> bool:
    return bool(held.oid) and held.oid in head_trailer(ctx, "Shiftkit-Claim")


def _still_passes(ctx: Context, feature_id: str) -> bool:
    """Whether HEAD's list (a merge after a lost race, perhaps) still marks it passing."""
    from shiftkit.core import features
    from shiftkit.edge.project import read_features_at

    listed = read_features_at(ctx.root, "HEAD", ctx.config.features)
    return listed is None or features.passes(listed, feature_id)


def release(ctx: Context, ending: str) -> str:
    """The claim's last local trace (its last failure) goes; returns ``ending``."""
    gate.last_failure_path(ctx).unlink(missing_ok=True)
    return ending


def _done_line(plan: finish_plan.FinishPlan, verdict: gate.Verdict, head: str, ending: str) -> str:
    also = ""
    if verdict.checked:
        verb = "passes" if len(verdict.checked) == 1 else "pass"
        also += f"; {', '.join(verdict.checked)} still {verb} on it"
    if plan.repaired:
        also += f"; re-marked {', '.join(plan.repaired)} passing (repaired by this change)"
    return (
        f"{plan.feature.id} passes: committed {short(head)} {plan.subject!r} (its verifier "
        f"passed on this tree; the commit adds the list and the log){also}; {ending}"
    )
