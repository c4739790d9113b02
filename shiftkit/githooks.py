"""`shiftkit hook NAME ...`: which git hook runs — the commit hooks (`hooks`), or the
reference-transaction and pre-push hooks (`transaction`). Imported on every commit: it
imports nothing it does not run."""

from __future__ import annotations

import sys

from shiftkit.core.errors import BadInput

USAGE_TEXT = (
    "usage: shiftkit hook {pre-commit | commit-msg FILE | reference-transaction STATE "
    "| pre-push REMOTE [URL]}"
)


def main(argv: list[str]) -> int:
    if argv[:1] == ["pre-commit"] and len(argv) == 1:
        from shiftkit import hooks
        from shiftkit.edge import framework_env

        root = hooks.worktree_root()
        # (run from the hook repository's environment: as the local route, decision 0118)
        framework_env.judge_here(root, hooks.own_git_dir(root), argv)
        hooks.beat(root)
        return hooks.pre_commit(root)
    if argv[:1] == ["commit-msg"] and len(argv) == 2:
        from shiftkit import hooks
        from shiftkit.edge import framework_env

        root = hooks.worktree_root()
        framework_env.judge_here(root, hooks.own_git_dir(root), argv)
        return hooks.commit_msg(root, argv[1])
    if argv[:1] == ["reference-transaction"] and len(argv) == 2:
        from shiftkit import transaction

        return transaction.main(argv[1], sys.stdin.buffer.read())
    if argv[:1] == ["pre-push"] and len(argv) in (2, 3):
        from shiftkit import hooks, transaction

        return transaction.pre_push(hooks.worktree_root(), argv[1], sys.stdin.buffer.read())
    raise BadInput(f"{USAGE_TEXT} (got: {' '.join(argv) or 'nothing'})")
