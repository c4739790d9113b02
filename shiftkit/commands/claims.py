"""`shiftkit claim`, `release`, `claims` and `sync`: the lock on parallel work.

Within one repository the claim refs are the lock (`edge/claims.py`); with
`[shiftkit.claims] remote`, the remote's refs are (`edge/remote.py`), and a claim is let go
only once its finishing commit is on the remote's branch.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from shiftkit.core import features
from shiftkit.core.claim import ClaimRecord, LocalClaim
from shiftkit.core.errors import CLAIM_HELD, BadInput, Refused, ShiftkitError
from shiftkit.edge import claims, gitio, ledger, remote, state
from shiftkit.edge.context import Context, add_note, clear_note, short
from shiftkit.edge.project import read_features

Say = Callable[[str], None]

# A claim without an id that loses a race moves on to the next eligible feature; each lost
# race means another session took one, so the bound only guards against a livelock.
CLAIM_TRIES = 16


def taken(ctx: Context) -> dict[str, claims.Claim]:
    """Every claim that holds now: this repository's, and the remote's when there is one
    (the remote's word wins)."""
    local = claims.list_claims(ctx.root)
    name = ctx.config.claims.remote
    if not name:
        return local
    remote.require_remote(ctx.root, name)
    return {**local, **remote.fetch(ctx.root, name)}


def _acquire(ctx: Context, record: ClaimRecord, replacing: str = "") -> str:
    name = ctx.config.claims.remote
    if name:
        return remote.acquire(ctx.root, name, record, replacing)
    return claims.acquire(ctx.root, record, replacing or gitio.ZERO_OID)


def _release(ctx: Context, feature_id: str, oid: str) -> bool:
    name = ctx.config.claims.remote
    if name:
        return remote.release(ctx.root, name, feature_id, oid)
    return claims.release_ref(ctx.root, feature_id, oid)


# -- claim ---------------------------------------------------------------------------------


def claim(ctx: Context, feature_id: str | None, steal: bool, say: Say, force: bool = False) -> int:
    from shiftkit.commands import start as startup

    held = state.local_claim(ctx.git_dir)
    if held is not None:
        raise Refused(
            f"this worktree already holds a claim on {held.feature} (one feature at a "
            f"time): finish it, revert it, or `shiftkit release` it first"
        )
    if gitio.branch(ctx.root) is None:
        raise Refused(
            "HEAD is detached; check out a branch before claiming (e.g. `git switch -c shift-work`)"
        )
    dirty = gitio.status_lines(ctx.root)
    if dirty:
        raise Refused(
            f"the work tree is not clean ({dirty[0][3:]}"
            f"{' and more' if len(dirty) > 1 else ''}); commit it, put it away with `git "
            f"stash --include-untracked`, or delete it before claiming, so a revert can "
            f"restore exactly this state"
        )
    if not startup.has_green_check(ctx):
        say("no start check at this HEAD in this worktree yet: running it now")
        startup.run_checks(ctx, say)
    feature_list = read_features(ctx.project)
    if feature_id is None:
        record, oid = _claim_next(ctx, feature_list, startup.repair_first(ctx), say)
        if record is None:
            return 0
        note = ""
    else:
        chosen = features.require(feature_list, feature_id, ctx.config.features)
        _check_claimable(feature_list, chosen)
        record, oid, note = _claim_named(ctx, chosen, steal, force)
    state.save_local_claim(ctx.git_dir, LocalClaim(record, oid))
    if note:
        add_note(ctx, note)
    feature = features.require(feature_list, record.feature, ctx.config.features)
    say(f"claimed {feature.id}: {feature.description} (base {short(record.base)})")
    return 0


def _new_record(ctx: Context, feature_id: str) -> ClaimRecord:
    base = gitio.head_oid(ctx.root)
    assert base is not None
    return claims.new_record(
        feature_id, ctx.root, gitio.branch(ctx.root), base, ctx.config.claims.ttl_hours
    )


def _claim_next(
    ctx: Context, feature_list: features.FeatureList, repair: list[str], say: Say
) -> tuple[ClaimRecord | None, str]:
    """Claim the first feature `next` names; on a lost race, the next one."""
    for _ in range(CLAIM_TRIES):
        options = features.candidates(feature_list, taken(ctx), repair, limit=1)
        if not options:
            if features.all_pass(feature_list):
                from shiftkit.edge import regression

                checked = regression.unchecked(ctx, feature_list) == []
                say(features.all_pass_message(feature_list, checked))
                return None, ""
            raise Refused(
                "no feature can be claimed: every open feature is blocked, claimed "
                "or waiting on a dependency (`shiftkit status`)"
            )
        record = _new_record(ctx, options[0].id)
        if not ctx.config.claims.enabled:
            return record, ""
        try:
            return record, _acquire(ctx, record)
        except claims.ClaimHeld:
            continue  # another session took it between our look and our claim
    raise Refused(
        f"lost the race for a feature {CLAIM_TRIES} times in a row; try again "
        f"(`shiftkit claims` shows who holds what)"
    )


def _claim_named(
    ctx: Context, chosen: features.Feature, steal: bool, force: bool
) -> tuple[ClaimRecord, str, str]:
    record = _new_record(ctx, chosen.id)
    existing = taken(ctx).get(chosen.id) if ctx.config.claims.enabled else None
    if existing is not None:
        if existing.record is not None and existing.record.worktree == str(ctx.root) and not steal:
            # Our own claim whose local record was lost (a crash between the two writes).
            return existing.record, existing.oid, ""
        if not steal:
            raise claims.ClaimHeld(existing)
        _require_stale(existing, force)
        oid = _acquire(ctx, record, replacing=existing.oid)
        return record, oid, f"claim taken over (--steal) from {holder(existing)}"
    if ctx.config.claims.enabled:
        return record, _acquire(ctx, record), ""
    return record, "", ""


def _check_claimable(feature_list: features.FeatureList, feature: features.Feature) -> None:
    if feature.passes:
        raise Refused(f"{feature.id} already passes; `shiftkit next` shows what is open")
    if feature.blocked is not None:
        raise Refused(
            f"{feature.id} is blocked ({feature.blocked.reason}); a person must "
            f"`shiftkit unblock {feature.id} --note ...` first"
        )
    unmet = [dep for dep in feature.depends_on if not features.passes(feature_list, dep)]
    if unmet:
        raise Refused(
            f"{feature.id} depends on {', '.join(unmet)}, which do not pass yet: claim "
            f"{'that' if len(unmet) == 1 else 'those'} first (`shiftkit claim {unmet[0]}`), "
            f"or take what `shiftkit next` names"
        )


def _require_stale(held: claims.Claim, force: bool) -> None:
    """`--steal` takes only a claim that looks abandoned; a live one needs `--force` too.
    Two stealers racing: the first replaces the stale object, and the second then finds a
    live claim (or loses the lease on the stale one) — exactly one wins."""
    if force or held.record is None or claims.staleness(held.record) is not None:
        return
    raise ShiftkitError(
        f"{held.holder()}, and it does not look abandoned (`shiftkit claims` marks stale "
        f"ones); --steal takes only a stale claim — add --force to take a live one",
        exit_code=CLAIM_HELD,
    )


def holder(held: claims.Claim) -> str:
    return held.record.holder() if held.record else f"nobody (a broken claim: {held.broken})"


# -- release -------------------------------------------------------------------------------


def release(
    ctx: Context, feature_id: str | None, steal: bool, say: Say, force: bool = False
) -> int:
    own = state.local_claim(ctx.git_dir)
    if feature_id is None or (own is not None and own.feature == feature_id):
        if own is None:
            raise Refused("this worktree holds no claim; `shiftkit claims` lists all claims")
        ledger.note_unit(ctx, own, "released")
        if own.oid:
            _release(ctx, own.feature, own.oid)
        state.drop_local_claim(ctx.git_dir)
        clear_note(ctx)
        say(f"released {own.feature} (no attempt counted)")
        return 0
    held = taken(ctx).get(feature_id)
    if held is None:
        raise BadInput(f"no claim on {feature_id!r}; `shiftkit claims` lists the claims")
    if not steal:
        raise claims.ClaimHeld(held)
    _require_stale(held, force)
    if not _release(ctx, feature_id, held.oid):
        raise Refused(f"the claim on {feature_id} changed while releasing it; look again")
    say(f"released {feature_id}, which was held by {holder(held)}")
    return 0


# -- after a finish or revert commit: done means on the remote ------------------------------


class Parked(NamedTuple):
    """A claim whose unit is committed here but not yet on the remote's branch."""

    feature: str
    oid: str
    commit: str


PARKED = "parked-claims.json"


def _parked_path(ctx: Context) -> Path:
    return state.worktree_state(ctx.git_dir) / PARKED


def parked(ctx: Context) -> list[Parked]:
    rows = state.read_json(_parked_path(ctx))
    if not isinstance(rows, list):
        return []
    return [
        Parked(*row)
        for row in rows
        if isinstance(row, list) and len(row) == 3 and all(isinstance(x, str) for x in row)
    ]


def _save_parked(ctx: Context, rows: list[Parked]) -> None:
    if rows:
        state.write_json(_parked_path(ctx), [list(row) for row in rows])
    else:
        _parked_path(ctx).unlink(missing_ok=True)


def let_go(ctx: Context, held: LocalClaim, commit: str) -> str | None:
    """Close this worktree's claim after its unit's commit. Without a remote the claim ref
    goes at once; with one, the branch is pushed first and the claim stays (parked, still
    locked on the remote) until its commit is there. Returns what the caller should say."""
    state.drop_local_claim(ctx.git_dir)
    clear_note(ctx)
    name = ctx.config.claims.remote
    if not name or not held.oid:
        if held.oid:
            claims.release_ref(ctx.root, held.feature, held.oid)
        return None
    _save_parked(ctx, [*parked(ctx), Parked(held.feature, held.oid, commit)])
    branch = gitio.branch(ctx.root)
    problem = remote.push_branch(ctx.root, name, branch) if branch else "HEAD is detached"
    if problem is not None:
        return (
            f"the claim on {held.feature} stays until its commit is on {name}: the push was "
            f"refused ({problem}); run `shiftkit sync`"
        )
    released = _release_landed(ctx, name, branch or "")
    return f"pushed to {name}; released {', '.join(released) or 'nothing'}"


def _release_landed(ctx: Context, name: str, branch: str) -> list[str]:
    """Release every parked claim whose commit is on the remote's branch."""
    gitio.run(
        [
            "fetch",
            "--quiet",
            "--no-tags",
            name,
            f"+refs/heads/{branch}:refs/remotes/{name}/{branch}",
        ],
        ctx.root,
        check=False,
    )
    waiting, released = [], []
    for row in parked(ctx):
        if remote.on_remote(ctx.root, name, branch, row.commit):
            remote.release(ctx.root, name, row.feature, row.oid)
            released.append(row.feature)
        else:
            waiting.append(row)
    _save_parked(ctx, waiting)
    return released


# -- sync ----------------------------------------------------------------------------------


def sync(ctx: Context, say: Say) -> int:
    """Fetch the remote's branch, merge it (the features merge driver and the log's union
    driver do the work), judge the merge by the rules, push, and release every claim of this
    worktree whose finishing commit is now on the remote."""
    from shiftkit.commands import audit

    name = ctx.config.claims.remote
    if not name:
        raise BadInput(
            ".shiftkit.toml: 'shiftkit.claims.remote' is empty; `shiftkit sync` shares work "
            'through a remote — set it (e.g. "origin") or push by hand'
        )
    remote.require_remote(ctx.root, name)
    branch = gitio.branch(ctx.root)
    if branch is None:
        raise Refused("HEAD is detached; check out the branch to sync")
    if gitio.status_lines(ctx.root):
        raise Refused("the work tree is not clean; finish, revert or stash first, then sync")
    tracking = f"refs/remotes/{name}/{branch}"
    fetched = gitio.run(
        ["fetch", "--quiet", "--no-tags", name, f"+refs/heads/{branch}:{tracking}"],
        ctx.root,
        check=False,
    )
    if fetched.returncode != 0 and "couldn't find remote ref" not in fetched.stderr:
        raise remote.Unreachable(name, f"fetch {branch}", fetched.stderr)
    before = gitio.head_oid(ctx.root)
    if fetched.returncode == 0 and not remote.on_remote(ctx.root, name, branch, "HEAD"):
        merged = gitio.run(
            ["merge", "--no-edit", "-m", f"Merge {name}/{branch} (shiftkit sync)", tracking],
            ctx.root,
            check=False,
        )
        if merged.returncode != 0:
            gitio.run(["merge", "--abort"], ctx.root, check=False)
            lines = (merged.stdout + merged.stderr).strip().splitlines()
            # A hook's refusal names the rule; say that rather than git's last words.
            ours = [line for line in lines if "rule " in line or "shiftkit:" in line]
            detail = (ours or lines or ["conflict"])[0].removeprefix("shiftkit: ").strip()
            raise Refused(
                f"merging {name}/{branch} failed ({detail}); nothing changed — fix that, or "
                f"merge by hand, then `shiftkit sync`"
            )
        head = gitio.head_oid(ctx.root)
        if head != before and head is not None:
            findings = audit.audit_commits(ctx, audit.commits_in(ctx.root, before), False, say)
            broken = [f for f in findings if f.violations]
            if broken:
                gitio.run(["reset", "--quiet", "--keep", before or "HEAD"], ctx.root)
                raise Refused(
                    f"the merge with {name}/{branch} breaks the rules "
                    f"({broken[0].violations[0]}); nothing changed"
                )
    problem = remote.push_branch(ctx.root, name, branch)
    if problem is not None:
        raise Refused(f"pushing {branch} to {name} was refused ({problem}); run sync again")
    released = _release_landed(ctx, name, branch)
    say(f"synced {branch} with {name}" + (f"; released {', '.join(released)}" if released else ""))
    return 0


# -- claims --------------------------------------------------------------------------------


def listing(ctx: Context) -> list[dict[str, object]]:
    """Every claim: holder, age, staleness, and where it is held (this repository, the
    remote, or both — a claim only here while a remote is set is left over)."""
    from datetime import UTC, datetime

    local = claims.list_claims(ctx.root)
    name = ctx.config.claims.remote
    if name:
        remote.require_remote(ctx.root, name)
    far = remote.fetch(ctx.root, name) if name else {}
    now = datetime.now(UTC)
    rows: list[dict[str, object]] = []
    for feature_id in sorted(set(local) | set(far)):
        held = far.get(feature_id) or local[feature_id]
        where = "here" if not name else ("remote" if feature_id in far else "here only")
        taken_at = held.record.taken if held.record else ""
        try:
            age = int(
                (
                    now - datetime.strptime(taken_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
                ).total_seconds()
            )
        except ValueError:
            age = None
        rows.append(
            {
                "id": feature_id,
                **held.as_json(),
                "where": where,
                "age_seconds": age,
                "stale": claims.staleness(held.record),
            }
        )
    return rows
