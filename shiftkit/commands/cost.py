"""`shiftkit cost` and `shiftkit usage`: what the work cost, and recording what it cost.

`usage record` is Claude Code's SessionEnd hook (the hook's JSON on stdin names the session
and its transcript) and reads Codex CLI's rollouts too; `usage add` is for any other
harness. Both write to the entries waiting in the git dir; the next unit boundary commits
them into the ledger.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shiftkit.core import cost, jsonbound
from shiftkit.core import ledger as ledger_core
from shiftkit.core.errors import BadInput
from shiftkit.core.ledger import Usage
from shiftkit.edge import ledger, state
from shiftkit.edge import prices as price_table
from shiftkit.edge.context import Context
from shiftkit.edge.project import read_features, read_features_at

Say = Callable[[str], None]
BY = ("feature", "session", "day")


def feature_status(ctx: Context) -> list[tuple[str, str]]:
    """(id, passing | blocked | open) of each feature as committed at HEAD: what passes is
    what a verified commit says, never the work tree."""
    committed = read_features_at(ctx.root, "HEAD", ctx.config.features)
    feature_list = committed if committed is not None else read_features(ctx.project)
    return [
        (
            item["id"],
            "passing"
            if item.get("passes") is True
            else "blocked"
            if item.get("blocked") is not None
            else "open",
        )
        for item in feature_list.items
    ]


def build_report(ctx: Context, by: str = "feature") -> cost.Report:
    return cost.report(
        ledger.read_all(ctx),
        feature_status(ctx),
        ctx.config.cost,
        price_table.book(ctx.config.prices),
        by,
    )


def cost_cmd(ctx: Context, as_json: bool, by: str, say: Say) -> int:
    ledger.fetch_usage(ctx)  # (every clone's usage ref: decision record 0065)
    rep = build_report(ctx, by)
    if as_json:
        say(json.dumps(cost.as_json(rep, ctx.config.cost), indent=2, ensure_ascii=False))
    else:
        say(cost.table(rep, ctx.config.cost))
    return 0


def attempts_of(ctx: Context, feature_id: str) -> cost.Attempts | None:
    """The feature's attempts as `cost` counts them (`cost.attempts`, from the ledger `cost`
    reads, usage refs as last fetched included), for `show` and `next`; None when the ledger
    cannot be read."""
    from shiftkit.core.errors import ShiftkitError

    try:
        return cost.attempts(ledger.read_all(ctx), feature_id)
    except (ShiftkitError, OSError):
        return None


def status_line(ctx: Context) -> str | None:
    """`status`'s cost line, once there is usage (None before, or when it cannot be read)."""
    try:
        entries = ledger.read_all(ctx)
        if not any(e.kind == "usage" and e.usage.tokens for e in entries):
            return None
        passing = sum(1 for _, status in feature_status(ctx) if status == "passing")
        return cost.one_line(
            cost.totals(entries, passing, ctx.config.cost, price_table.book(ctx.config.prices))
        )
    except BadInput:
        return None


# -- recording usage -------------------------------------------------------------------------


def record(
    ctx: Context, hook_input: str, transcript: Path | None, session: str | None, say: Say
) -> int:
    """A harness's hook (Claude Code's SessionEnd, Codex's Stop) or a person: the usage of a
    session's transcript or rollout beyond what is recorded. Without a file named (option or
    the hook's 'transcript_path'), the Codex sessions of this worktree (by their
    ``session_meta.cwd`` under $CODEX_HOME/sessions)."""
    payload: Any = {}
    if hook_input.strip():
        try:
            payload = jsonbound.loads(hook_input, "usage record: the hook input on stdin")
        except BadInput as exc:
            raise BadInput(exc.message) from None
    if not isinstance(payload, dict):
        payload = {}
    if session is None:
        named_session = payload.get("session_id")
        session = named_session if isinstance(named_session, str) and named_session else None
    if transcript is None:
        named = payload.get("transcript_path")
        if isinstance(named, str) and named:
            transcript = Path(named).expanduser()
    if transcript is not None:
        _say_recorded(say, *ledger.record_transcript(ctx, transcript, session))
        _share(ctx)
        return 0
    from shiftkit.edge import codex

    found = codex.rollouts_in(ctx.root)
    if session is not None:
        found = [(path, ident) for path, ident in found if ident == session]
    if not found:
        raise BadInput(
            "usage record: no transcript: give --transcript PATH, or the hook's JSON with "
            f"'transcript_path' on stdin (no Codex session of this worktree under "
            f"{codex.home() / 'sessions'} either)"
        )
    for path, ident in found:
        _say_recorded(say, *ledger.record_transcript(ctx, path, ident))
    _share(ctx)
    return 0


def _share(ctx: Context) -> None:
    """With no claim open (a session's end after its `finish`, or one that claimed nothing),
    the usage just recorded goes onto this clone's usage ref and to the claims remote (no
    commit: decision record 0065), so the last session's usage reaches the remote too. A
    remote that does not answer now gets it from the next `sync`."""
    from shiftkit.core.errors import ShiftkitError

    if not ctx.config.claims.remote or state.local_claim(ctx.git_dir) is not None:
        return
    try:
        ledger.publish(ctx)
    except (ShiftkitError, OSError):
        return


def _say_recorded(say: Say, session: str, written: list[ledger_core.Entry]) -> None:
    tokens = sum(e.usage.tokens for e in written)
    where = sorted({cost.bucket(e) for e in written})  # (the rows `cost` counts them in)
    say(
        f"recorded {tokens:,} tokens of session {session}"
        + (f" ({', '.join(where)})" if where else " (nothing new)")
    )


def add(
    ctx: Context,
    usage: Usage,
    model: str,
    usd: float | None,
    session: str | None,
    say: Say,
) -> int:
    """Usage reported by any harness, for this worktree's current claim (else unattributed)."""
    import math

    from shiftkit.edge import session as sessions

    if usd is not None and not (math.isfinite(usd) and 0 <= usd <= ledger_core.MAX_AMOUNT):
        raise BadInput(
            f"--cost-usd must be a number of dollars, 0 or more, up to "
            f"{ledger_core.MAX_AMOUNT:,} (got {usd})"
        )
    for option, count in zip(("input", "cache-read", "cache-write", "output"), usage, strict=True):
        problem = ledger_core.count_problem(f"--{option}", count)
        if problem:
            raise BadInput(problem)
    held = state.local_claim(ctx.git_dir)
    feature = held.feature if held else None
    entry = ledger.add_usage(
        ctx,
        usage,
        model=model,
        session=session or sessions.current(ctx.git_dir),
        source="manual",
        feature=feature,
        usd=usd,
    )
    where = feature or f"{cost.bucket(entry)} usage"  # (the row `cost` counts it in)
    say(
        f"recorded {entry.usage.tokens:,} tokens for {where} "
        f"(committed into the ledger at the next unit boundary)"
    )
    return 0
