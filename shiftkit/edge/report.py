"""What `shiftkit report` reads: every protocol commit's feature list in one pass, through
the bulk reader `audit` uses (`edge.history`), each version compared with its first parent's;
HEAD's list; and what the verify cache says of HEAD's tree.

A commit whose list blob is its parent's costs a dictionary lookup; a changed list is read
beside its parent's (`features.loads_against`), so a commit costs what it changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shiftkit.core import features
from shiftkit.core.errors import BadInput
from shiftkit.core.report import Check, HeadFeature, Step
from shiftkit.edge import gitio, history, regression, snapshot, verify
from shiftkit.edge.context import Context
from shiftkit.edge.project import read_features_at
from shiftkit.edge.revisions import Commit

_KEPT_LISTS = 8  # lists kept whole for the commits after them (a branchy history re-reads)


def commit_times(ctx: Context, oids: Sequence[str]) -> dict[str, int]:
    """The committer time of each commit, in one `git log`."""
    if not oids:
        return {}
    args = ["log", "--no-walk=unsorted", "--stdin", "--format=%H %ct"]
    code, out, err = gitio.plumb(args, ctx.root, "".join(f"{oid}\n" for oid in oids).encode())
    if code != 0:
        raise gitio.GitFailed(args, code, err.decode("utf-8", "replace"))
    found = {}
    for line in out.decode().splitlines():
        oid, _, when = line.partition(" ")
        found[oid] = int(when or 0)
    return found


def steps(ctx: Context, selected: Sequence[Commit]) -> list[Step]:
    """Each commit of ``selected`` (oldest first, parents before children) as a `Step`."""
    name = ctx.config.features
    times = commit_times(ctx, [c.oid for c in selected])
    blob_of: dict[str, str | None] = {}  # commit -> its list's blob id
    table_of: dict[str, features.Table] = {}  # commit -> its list's table
    kept: dict[str, features.FeatureList] = {}  # blob id -> list (the newest few)
    result = []
    with history.History(ctx.root, ctx.common_dir, selected) as read:

        def load(
            blob: str | None, base: features.FeatureList | None
        ) -> features.FeatureList | None:
            if blob is None:
                return None
            if blob in kept:
                return kept[blob]
            text = read.text(blob)
            if text is None:
                return None
            found = features.loads_against(text, base) if base is not None else None
            if found is None:
                found = snapshot.parse_list((blob, text), name, ctx.common_dir)
            if found is not None:
                if len(kept) >= _KEPT_LISTS:
                    del kept[next(iter(kept))]
                kept[blob] = found
            return found

        following = dict(zip((c.oid for c in selected), selected[1:], strict=False))
        for commit in selected:
            blob = read.ids(commit.oid, [name])[0]
            after = following.get(commit.oid)
            if after is not None:  # (git unpacks the next version while this one is read)
                read.ask(read.ids(after.oid, [name]) if after.parents == (commit.oid,) else [])
            first = commit.parents[0] if commit.parents else None
            base_blob = blob_of.get(first) if first is not None else None
            blob_of[commit.oid] = blob
            time = times.get(commit.oid, 0)
            if first is not None and first in table_of and blob == base_blob:
                table = table_of[first]
                table_of[commit.oid] = table
                result.append(_step(commit, time, table))
                continue
            base = load(base_blob, None) if base_blob is not None else None
            current = load(blob, base)
            if current is None:  # (absent or invalid: audit names it; the parent's carries on)
                table = table_of.get(first or "", features.Table((), b"", ()))
                table_of[commit.oid] = table
                result.append(_step(commit, time, table, readable=False))
                continue
            table = current.table
            old_table = table_of.get(first or "")
            if old_table is not None and table.ids == old_table.ids:
                table = features.Table(old_table.ids, table.flags, old_table.depends_on)
            table_of[commit.oid] = table
            flipped, demoted = _flips(old_table, table)
            reverted = _reverted(base, current) if base is not None else ()
            added = _added(old_table, table) if len(commit.parents) == 1 else ()
            result.append(_step(commit, time, table, flipped, demoted, reverted, added=added))
    return result


def _step(
    commit: Commit,
    time: int,
    table: features.Table,
    flipped: tuple[str, ...] = (),
    demoted: tuple[str, ...] = (),
    reverted: tuple[str, ...] = (),
    readable: bool = True,
    added: tuple[str, ...] = (),
) -> Step:
    passing = _count_passing(table.flags)
    return Step(
        commit.oid,
        commit.parents,
        time,
        commit.subject,
        passing,
        len(table.ids),
        flipped,
        demoted,
        reverted,
        readable,
        added,
    )


def _added(old: features.Table | None, new: features.Table) -> tuple[str, ...]:
    """The ids ``new`` appends to ``old`` (none when there was no list: it is established)."""
    if old is None or old.ids == new.ids:
        return ()
    known = set(old.ids)
    return tuple(i for i in new.ids if i not in known)


_PASS_MARKS = bytes(1 if flags & features.PASSES else 0 for flags in range(256))


def _count_passing(flags: bytes) -> int:
    return flags.translate(_PASS_MARKS).count(1)


def _flips(
    old: features.Table | None, new: features.Table
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(features passing in ``new`` and not in ``old``, features passing in ``old`` and
    not in ``new``)."""
    if old is None:
        return tuple(i for i, f in zip(new.ids, new.flags, strict=True) if f & features.PASSES), ()
    if old.ids == new.ids[: len(old.ids)] and old.flags == new.flags[: len(old.flags)]:
        appended = zip(new.ids[len(old.ids) :], new.flags[len(old.flags) :], strict=True)
        return tuple(i for i, f in appended if f & features.PASSES), ()
    was = {i for i, f in zip(old.ids, old.flags, strict=True) if f & features.PASSES}
    now = {i for i, f in zip(new.ids, new.flags, strict=True) if f & features.PASSES}
    return tuple(i for i in new.ids if i in now - was), tuple(i for i in old.ids if i in was - now)


def _attempts(item: Mapping[str, Any]) -> int:
    value = item.get("attempts", 0)
    return value if isinstance(value, int) else 0


def _reverted(old: features.FeatureList, new: features.FeatureList) -> tuple[str, ...]:
    """The features whose attempts grew from ``old`` to ``new``."""
    positions = features.changed_positions(old, new)
    if positions is not None:
        grew = []
        for index in positions:
            before, after = old.items_at(index), new.items_at(index)
            if before.get("id") == after.get("id") and _attempts(after) > _attempts(before):
                grew.append(str(after["id"]))
        return tuple(grew)
    was = {item["id"]: _attempts(item) for item in old.items}
    return tuple(
        item["id"] for item in new.items if _attempts(item) > was.get(item["id"], _attempts(item))
    )


def head_features(ctx: Context) -> tuple[features.FeatureList, list[HeadFeature]]:
    """HEAD's list, and each feature as the report shows it."""
    committed = read_features_at(ctx.root, "HEAD", ctx.config.features)
    if committed is None:
        raise BadInput(
            f"{ctx.config.features} is not committed at HEAD: there is nothing to report yet"
        )
    rows = []
    for item in committed.items:
        blocked = item.get("blocked")
        status = "passing" if item.get("passes") is True else "blocked" if blocked else "open"
        reason = blocked.get("reason") if isinstance(blocked, dict) else None
        rows.append(HeadFeature(item["id"], str(item.get("description", "")), status, reason))
    return committed, rows


def last_check(ctx: Context, committed: features.FeatureList) -> Check:
    """Which passing features the verify cache has as passing at HEAD's tree, and when the
    newest of those records was made."""
    tree = regression.head_tree(ctx.root)
    unchecked = regression.unchecked(ctx, committed) or []
    ids = regression.passing_ids(committed)
    work = regression.jobs(committed, ids, ctx.config.verify)
    times = []
    for job in work:
        if job.feature.id in unchecked:
            continue
        path = verify.cache_path(
            ctx.common_dir, tree, verify.cache_command(job.command, regression.CHECKOUT)
        )
        try:
            times.append(path.stat().st_mtime)
        except OSError:
            continue
    verified = tuple(i for i in ids if i not in set(unchecked))
    return Check(tree, verified, tuple(unchecked), max(times) if times else None)
