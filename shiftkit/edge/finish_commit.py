"""`finish`'s commit: the plan written and committed, the tree being exactly the verified
tree plus shiftkit's bookkeeping; refused at the commit, everything as it was."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from typing import TYPE_CHECKING

from shiftkit.core.errors import Refused
from shiftkit.edge import gitio, ledger, verify
from shiftkit.edge.committing import commit as make_commit
from shiftkit.edge.context import Context, bookkeeping, write_features, write_planned_log
from shiftkit.edge.undo import undone_on_refusal

if TYPE_CHECKING:
    from shiftkit.core.features import FeatureList
    from shiftkit.edge.finish_plan import FinishPlan
    from shiftkit.edge.gate import Verdict

Say = Callable[[str], None]

# Untracked file names that look like an agent's scratch rather than the work (decision
# 0055); `scratch` in .shiftkit.toml adds more. Names only, never where a file is: a new
# package or a new test is work (decision record 0093).
SCRATCH = ("*.log", "notes*", "tmp*", "scratch*")


def say_unstaged(ctx: Context, say: Say) -> None:
    """`finish` commits the whole work tree (`git add -A`; what .gitignore matches never):
    it names every path it adds that was not staged, so nothing lands unseen, and warns of
    untracked files whose names look like scratch (`scratch_paths`)."""
    ours = bookkeeping(ctx)
    added = sorted({path for path in verify.unstaged_paths(ctx.root) if path not in ours})
    if added:
        say(f"finish commits the work tree; adding what was not staged: {', '.join(added)}")
    scratch = scratch_paths(ctx, ours)
    if scratch:
        say(
            f"warning: {', '.join(scratch[:5])}{' …' if len(scratch) > 5 else ''} "
            f"look{'s' if len(scratch) == 1 else ''} like scratch (by name: "
            f"{', '.join(scratch_names(ctx))}), not work, and will be committed; if "
            f"{'it is' if len(scratch) == 1 else 'they are'} scratch, delete "
            f"{'it' if len(scratch) == 1 else 'them'}, or keep such files out with "
            f".gitignore (or .git/info/exclude) before `shiftkit finish`"
        )


def scratch_names(ctx: Context) -> tuple[str, ...]:
    """The file-name globs of scratch: shiftkit's, then the project's (`scratch`)."""
    return tuple(dict.fromkeys((*SCRATCH, *ctx.config.scratch)))


def scratch_paths(ctx: Context, ours: frozenset[str]) -> list[str]:
    """Untracked files (not ignored) whose file names match a scratch glob
    (`scratch_names`). Where a file lies says nothing: new files of the change are work."""
    patterns = [glob.lower() for glob in scratch_names(ctx)]  # (NOTES.md is notes too)
    listing = gitio.out(["ls-files", "--others", "--exclude-standard", "-z"], ctx.root)
    return [
        path
        for path in listing.split("\0")
        if path
        and path not in ours
        and any(fnmatch.fnmatchcase(path.rsplit("/", 1)[-1].lower(), glob) for glob in patterns)
    ]


def commit(ctx: Context, plan: FinishPlan, verdict: Verdict, say: Say) -> str:
    """Write the plan and commit it. Refused here (a hook, or a tree that is not the verified
    one): the index and shiftkit's files as they were, so `finish` can simply be run again."""
    from shiftkit.edge.project import read_features

    again = (
        f"nothing was committed, and the index, {ctx.config.features} and the log are as "
        f"they were: fix what it reports (a fixer's changes are in the work tree) and run "
        f"`shiftkit finish` again, which verifies the tree it commits"
    )
    with undone_on_refusal(ctx, say, again):
        write_features(ctx, plan.flipped)
        write_planned_log(ctx, plan.log, plan.archive)
        ledger.close_unit(ctx, plan.held, "passed")
        gitio.run(["add", "-A"], ctx.root)
        tree = gitio.write_tree(ctx.root)
        require_verified_tree(ctx, verdict.tree, tree)
        current = read_features(ctx.project)
        record_evidence(ctx, current, [plan.feature.id, *plan.repaired], verdict.checked, tree)
        return make_commit(ctx, plan.message.replace("TREE", tree))


def record_evidence(
    ctx: Context, current: FeatureList, flipped: list[str], checked: list[str], tree: str
) -> None:
    """The passes the commit of ``tree`` rests on: each of ``flipped`` (marked passing in it:
    the hooks' rule 4 evidence) and, with them, ``checked`` (the gate's passes in temporary
    checkouts of the verified tree), recorded at ``tree``."""
    from shiftkit.edge.gate import verifier_of

    for feature_id in flipped:
        feature = current.get(feature_id)
        if feature is not None:
            command = verify.cache_command(verifier_of(ctx, feature), ctx.config.verify_in)
            verify.record_pass(ctx.common_dir, tree, command)
    carry_checkout_passes(ctx, current, [*checked, *flipped[1:]], tree)


def carry_checkout_passes(ctx: Context, current: FeatureList, ids: list[str], tree: str) -> None:
    """The passes the gate found in temporary checkouts of the verified tree hold at the
    committed tree, which differs from it only in shiftkit's bookkeeping
    (`require_verified_tree`): recorded there, the publish gate finds them and runs
    nothing again (decision record 0075)."""
    from shiftkit.edge.gate import verifier_of
    from shiftkit.edge.regression import CHECKOUT

    for feature_id in ids:
        feature = current.get(feature_id)
        if feature is not None:
            command = verify.cache_command(verifier_of(ctx, feature), CHECKOUT)
            verify.record_pass(ctx.common_dir, tree, command)


def require_verified_tree(ctx: Context, verified: str, committed: str) -> None:
    """The tree about to be committed must be the verified tree plus the bookkeeping files:
    something that changed the work tree meanwhile was not verified."""
    ours = bookkeeping(ctx)
    changed = gitio.out(
        ["diff-tree", "-r", "--name-only", "-z", "--no-renames", verified, committed], ctx.root
    ).split("\0")
    strangers = [path for path in changed if path and path not in ours]
    if not strangers:
        return
    raise Refused(
        f"the work tree changed after the verifier ran ({', '.join(strangers[:3])}); "
        f"the tree to commit is not the tree verified, so nothing was committed — "
        f"run `shiftkit finish` again"
    )
