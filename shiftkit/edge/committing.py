"""Committing through the real hooks: the whole work tree, some paths, or shiftkit's own
bookkeeping (the list, the log, the archive and the ledger's waiting entries). A refusal is a
`HookRefused` naming the hooks that refused."""

from __future__ import annotations

from shiftkit.core.errors import HookRefused
from shiftkit.edge import gitio, ledger
from shiftkit.edge.context import Context


def commit(ctx: Context, message: str, paths: list[str] | None = None, sign: bool = False) -> str:
    """Commit through the real hooks: everything (``git add -A``), only ``paths``, or (with
    an empty list) what is staged; ``sign``: with the person's signing key (`-S`). A refusal
    raises `HookRefused`, naming the failed hooks, with their output to show."""
    options = ["commit", "-q", "-F", "-", *(["-S"] if sign else [])]
    if paths is None:
        gitio.run(["add", "-A"], ctx.root)
        args = options
    elif not paths:
        args = options
    else:
        present = [p for p in paths if (ctx.root / p).exists()]
        gitio.run(["add", "--", *present], ctx.root)
        args = [*options, "--", *present]
    proc = gitio.run(args, ctx.root, input=message, check=False)
    if proc.returncode != 0:
        from shiftkit.core import hookoutput

        output = proc.stdout + proc.stderr
        raise HookRefused(hookoutput.refusal(output), hookoutput.shown(output))
    head = gitio.head_oid(ctx.root)
    assert head is not None
    ledger.forget_committed(ctx)
    return head


def commit_bookkeeping(ctx: Context, message: str, sign: bool = False) -> str:
    """Commit only shiftkit's own files (feature list, log, archive, and the ledger with the
    entries waiting for this boundary), whatever else is dirty."""
    from shiftkit.core.ledger import LEDGER_FILE

    cfg = ctx.config
    ledger.fold(ctx)
    return commit(ctx, message, [cfg.features, cfg.progress, cfg.log.archive, LEDGER_FILE], sign)


def commit_on(
    ctx: Context, parent: str, texts: dict[str, str], message: str, sign: bool = False
) -> str:
    """A commit on ``parent`` (no branch moves, no hook runs, the work tree and the index
    untouched) whose tree is the parent's with ``texts`` (repository path: text) written;
    ``sign``: with the person's signing key. Returns it; the judges see it when a branch
    moves onto it (the reference-transaction hook) or it is pushed (the pre-push hook)."""
    import os
    import tempfile

    fd, index = tempfile.mkstemp(prefix="shiftkit-index-", dir=ctx.git_dir)
    os.close(fd)
    os.unlink(index)  # (git makes it: an empty file is no index)
    env = {"GIT_INDEX_FILE": index}
    try:
        gitio.run(["read-tree", parent], ctx.root, env=env)
        for path, text in texts.items():
            blob = gitio.run(["hash-object", "-w", "--stdin"], ctx.root, input=text)
            entry = f"100644,{blob.stdout.strip()},{path}"
            gitio.run(["update-index", "--add", "--cacheinfo", entry], ctx.root, env=env)
        tree = gitio.out(["write-tree"], ctx.root, env=env).strip()
    finally:
        if os.path.exists(index):
            os.unlink(index)
    args = ["commit-tree", *(["-S"] if sign else []), tree, "-p", parent, "-F", "-"]
    proc = gitio.run(args, ctx.root, input=message, check=False)
    if proc.returncode != 0:
        from shiftkit.core import gitmsg
        from shiftkit.core.errors import Refused

        raise Refused(
            f"the commit could not be made ({gitmsg.detail(proc.stderr)}); nothing changed"
        )
    return proc.stdout.strip()
