"""The next feature, as every view and `claim` see it (decision record 0064): the one `claim`
would take now, counting the claims held on the remote and the remote's branch.

`start` (and the SessionStart brief), `next`, `status` and `claims` read `outlook`; `claim`
chooses with `choose` from the same inputs after catching up, so what a view names next is
what `claim` takes (unless someone takes it in between, which `claim` then says).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import NamedTuple

from shiftkit.core import features
from shiftkit.core.errors import BadInput
from shiftkit.edge import claims, gitio, remote, state
from shiftkit.edge.context import Context

Say = Callable[[str], None]


def choose(
    feature_list: features.FeatureList,
    taken: dict[str, claims.Claim] | set[str],
    done_there: set[str],
    repair: list[str],
    limit: int | None = 1,
) -> list[features.Feature]:
    """The features a session may take now, best first: not claimed anywhere, not passing on
    the remote's branch, repair first. The one rule `next`, `status`, `start` and `claim`
    share."""
    return features.candidates(feature_list, {*taken, *done_there}, repair, limit=limit)


def short_holder(held: claims.Claim) -> str:
    """A claim's holder in a few words: session, clone, how long held."""
    from shiftkit.core.claim import age
    from shiftkit.edge import session

    if held.record is None:
        return f"nobody (a broken claim: {held.broken})"
    record = held.record
    held_for = age(record.taken, session.now())
    return f"session {record.session} of clone {record.clone or '?'}, {held_for}"


def blockers(
    feature_list: features.FeatureList,
    claimed: Mapping[str, claims.Claim],
    done_there: Collection[str] = (),
) -> str:
    """What keeps each open feature from being taken, when none can be: each claim's holder
    and age, those passing on the remote's branch (``done_there``), the blocked ones, those
    waiting on a dependency — the one account `claim`'s refusal and `next` give."""
    open_ones = [f for f in feature_list.features if features.is_open(f)]
    held = [f"{f.id} ({short_holder(claimed[f.id])})" for f in open_ones if f.id in claimed]
    there = [f.id for f in open_ones if f.id in done_there and f.id not in claimed]
    blocked = [f.id for f in features.blocked_open(feature_list)]
    waiting = [
        f.id
        for f in open_ones
        if f.id not in claimed
        and f.id not in done_there
        and f.blocked is None
        and any(not features.passes(feature_list, dep) for dep in f.depends_on)
    ]
    parts = [
        *([f"claimed: {', '.join(held)}"] if held else []),
        *([f"passing on the remote's branch: {', '.join(there)} (sync)"] if there else []),
        *([f"blocked: {', '.join(blocked)}"] if blocked else []),
        *([f"waiting on a dependency: {', '.join(waiting)}"] if waiting else []),
    ]
    return "; ".join(parts) or "nothing is open"


class Outlook(NamedTuple):
    """What a view counts: the feature list `claim` would choose from (the remote's branch's
    when this one is only behind it: `claim` fast-forwards first), every claim held (here
    and on the remote), the features passing there and not here (when diverged), the repair
    list, and the lines to say first (remote not reachable; behind)."""

    feature_list: features.FeatureList
    taken: dict[str, claims.Claim]
    done_there: set[str]
    repair: list[str]
    lines: tuple[str, ...]
    behind: bool
    counted_on: str | None = None  # the remote's branch, when ``feature_list`` is its list
    counted_ref: str | None = None  # its remote-tracking ref then: the brief reads it all there
    diverged_from: str | None = None  # the remote's branch, when this one diverged from it

    def where(self) -> str:
        """Where the counts are counted, said after them (decision record 0079)."""
        return features.where_counted(self.counted_on, self.diverged_from)

    def next(self, limit: int | None = 1) -> list[features.Feature]:
        return choose(self.feature_list, self.taken, self.done_there, self.repair, limit)

    def elsewhere(self, ctx: Context) -> list[claims.Claim]:
        """The claims held by anyone but this worktree (or this clone for a gone one:
        decision record 0096), oldest first."""
        from shiftkit.edge import ownership

        return sorted(
            (
                c
                for c in self.taken.values()
                if not ownership.is_ours(ctx.root, ctx.common_dir, c.record)
            ),
            key=lambda c: c.record.taken if c.record else "",
        )


def repair_list(ctx: Context, feature_list: features.FeatureList) -> list[str]:
    return [
        i
        for i in state.demoted(ctx.git_dir)
        if (f := feature_list.get(i)) is not None and features.is_open(f)
    ]


def outlook(ctx: Context, feature_list: features.FeatureList, fresh: bool = False) -> Outlook:
    """The views' outlook on ``feature_list`` (the list at HEAD): one look at the remote
    (cached briefly, `remote.seen`), its branch compared with HEAD as just fetched."""
    settings = ctx.config.claims
    local = claims.list_claims(ctx.root)
    if not settings.remote:
        return Outlook(feature_list, local, set(), repair_list(ctx, feature_list), (), False)
    remote.require_remote(ctx.root, settings.remote)
    branch = gitio.branch(ctx.root)
    look = remote.seen(ctx.root, ctx.common_dir, settings, branch, fresh)
    lines: tuple[str, ...] = (look.line,) if look.line else ()
    taken = {**local, **look.claims}
    chosen_from, done_there, behind = feature_list, set[str](), False
    counted_on: str | None = None
    counted_ref: str | None = None
    diverged_from: str | None = None
    if branch is not None and settings.enabled:
        counts = remote.divergence(ctx.root, settings.remote, branch, fetch=False)
        if counts is not None and counts[1]:
            behind = True
            tracking = remote.tracking_ref(settings.remote, branch)
            there = _list_at(ctx, tracking)
            ahead, count = counts
            where = f"{settings.remote}/{branch}"
            if ahead == 0 and there is not None:
                chosen_from = there  # (`claim` fast-forwards first: it chooses from there)
                counted_on, counted_ref = where, tracking
                lines += (
                    f"{branch} is {count} commit{'s' if count != 1 else ''} behind {where}: "
                    f"`shiftkit claim` catches up first (as `shiftkit sync` does); counts, "
                    f"next and the log are {where}'s",
                )
            else:
                from shiftkit.edge.elsewhere import passing_on_remote

                done_there = passing_on_remote(ctx, feature_list, tracking)
                diverged_from = where
                lines += (
                    f"{branch} and {where} diverged ({ahead} and {count} commits): "
                    f"`shiftkit sync` first",
                )
    repair = repair_list(ctx, chosen_from)
    return Outlook(
        chosen_from,
        taken,
        done_there,
        repair,
        lines,
        behind,
        counted_on,
        counted_ref,
        diverged_from,
    )


def _list_at(ctx: Context, rev: str) -> features.FeatureList | None:
    from shiftkit.edge.project import read_features_at

    try:
        return read_features_at(ctx.root, rev, ctx.config.features)
    except BadInput:
        return None


def status_cmd(ctx: Context, as_json: bool, terminal: bool, say: Say) -> None:
    """`shiftkit status` of the list committed at HEAD: counts (a bar on a `terminal`), the
    blocked and claimed features, what is next, and the cost line."""
    import json

    from shiftkit.commands import cost as cost_mod
    from shiftkit.commands import own_claims, views
    from shiftkit.edge import regression, session

    released = own_claims.release_orphans(ctx)
    if not as_json:
        for said in released:
            say(said)
    listing = regression.committed_listing(ctx)
    view = outlook(ctx, listing.features)
    options = view.next(1)
    data = views.status_data(
        listing,
        view.taken,
        options[0] if options else None,
        view.lines,
        session.now(),
        view.feature_list if view.counted_on else None,
        view.counted_on,
        view.diverged_from,
    )
    line = cost_mod.status_line(ctx)
    if as_json:
        released_json = {"released": released} if released else {}
        say(json.dumps({**data, "cost": line, **released_json}, indent=2, ensure_ascii=False))
    else:
        say(views.status_text(data, terminal=terminal))
        if line:
            say(line)


def next_cmd(ctx: Context, as_json: bool, say: Say) -> int:
    """`shiftkit next`: the feature the protocol picks now (from the list committed at HEAD);
    1 when none can be picked and not all are marked passing."""
    import json

    from shiftkit.commands import cost as cost_mod
    from shiftkit.commands import views
    from shiftkit.core.errors import OK, REFUSED
    from shiftkit.edge import regression

    listing = regression.committed_listing(ctx)
    view = outlook(ctx, listing.features)
    feature_list, claimed = view.feature_list, view.taken
    options = view.next(1)
    chosen = options[0] if options else None
    marked = features.all_pass(feature_list)
    if as_json:
        data = {
            "next": features.feature_to_dict(chosen) if chosen else None,
            "all_pass": marked and listing.checked and not view.counted_on,
            "all_marked_passing": marked,
            "uncommitted_edit": listing.edited is not None,
            "notes": list(view.lines),
        }
        say(json.dumps(data, indent=2, ensure_ascii=False))
        return OK if chosen is not None or marked else REFUSED
    for note in view.lines:
        say(note)
    if listing.edited:
        say(listing.edited)
    if chosen is not None:
        say(views.feature_text(chosen, ctx.config.verify, cost_mod.attempts_of(ctx, chosen.id)))
    elif marked:  # (said where it is counted: the remote's branch when only behind it)
        say(
            features.all_pass_message(
                feature_list, listing.checked, view.behind, view.counted_on, listing.features
            )
        )
    else:
        why = blockers(feature_list, claimed, view.done_there)
        say(f"no feature can be picked now — {why}")
    if chosen is None and not marked:
        return REFUSED
    return OK
