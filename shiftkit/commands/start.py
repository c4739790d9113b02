"""`shiftkit start`: the session-start routine done by code, with bounded output.

Where am I, what passes, what happened lately, and what to do next — then init, smoke and
a regression sample, demoting (in a commit) a passing feature that now fails.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from shiftkit.core import features, progress
from shiftkit.edge import claims, gitio, state, verify
from shiftkit.edge.context import (
    Context,
    commit_bookkeeping,
    iso_now,
    log_time,
    read_optional,
    record_verified_at,
    short,
    write_features,
    write_log,
)
from shiftkit.edge.project import read_features

Say = Callable[[str], None]
BRIEF_LIMIT = 8000
CHECK_RECORD = "start-check.json"


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# -- checks --------------------------------------------------------------------------------


def _record_path(ctx: Context) -> Any:
    return state.worktree_state(ctx.git_dir) / CHECK_RECORD


def has_green_check(ctx: Context) -> bool:
    record = state.read_json(_record_path(ctx))
    return (
        isinstance(record, dict)
        and record.get("complete") is True
        and record.get("head") == gitio.head_oid(ctx.root)
    )


def repair_first(ctx: Context) -> list[str]:
    """Features the last start check demoted: the next session repairs them first."""
    record = state.read_json(_record_path(ctx))
    return list(record.get("demoted", [])) if isinstance(record, dict) else []


def _sample(ctx: Context, feature_list: features.FeatureList) -> list[features.Feature]:
    times = state.read_json(state.repo_state(ctx.common_dir) / "verified-at.json") or {}
    # (from the raw items: only the sampled features become `Feature`s)
    passing = [item for item in feature_list.items if item.get("passes") is True]
    ordered = sorted(passing, key=lambda i: (i.get("core") is not True, times.get(i["id"], "")))
    chosen = [feature_list.get(item["id"]) for item in ordered[: ctx.config.regression_sample]]
    return [f for f in chosen if f is not None]


def _run_step(ctx: Context, name: str, command: str, say: Say) -> dict[str, Any]:
    if not command:
        return {"name": name, "command": "", "ok": True, "summary": "not configured"}
    outcome = verify.run_command(command, ctx.root, ctx.config.verify_timeout)
    result = {
        "name": name,
        "command": command,
        "ok": outcome.ok,
        "summary": outcome.summary(),
        "seconds": round(outcome.seconds, 2),
    }
    if not outcome.ok:
        result["tail"] = _clip(outcome.tail(3, 300), 300)
    say(f"check {name}: {outcome.summary()} ({command})")
    return result


def _regression_run(ctx: Context, command: str) -> verify.Outcome:
    """A sampled feature's verifier where `verify_in` says: the (clean) work tree, or a
    temporary checkout of HEAD's tree, where no untracked or ignored file can help it."""
    cfg = ctx.config
    if cfg.verify_in == "checkout":
        tree = gitio.out(["rev-parse", "HEAD^{tree}"], ctx.root).strip()
        return verify.run_in_checkout(ctx.root, tree, command, cfg.init, cfg.verify_timeout)
    return verify.run_command(command, ctx.root, cfg.verify_timeout)


def run_checks(ctx: Context, say: Say) -> dict[str, Any]:
    cfg = ctx.config
    steps = [_run_step(ctx, "init", cfg.init, say), _run_step(ctx, "smoke", cfg.smoke, say)]
    clean = not gitio.status_lines(ctx.root)
    regression: list[dict[str, Any]] = []
    demoted: list[str] = []
    demoted_head = None
    if clean:
        feature_list = read_features(ctx.project)
        failing: list[tuple[features.Feature, verify.Outcome]] = []
        for feature in _sample(ctx, feature_list):
            command = features.effective_verify(feature, cfg.verify)
            if command is None:
                continue
            outcome = _regression_run(ctx, command)
            regression.append({"id": feature.id, "ok": outcome.ok, "summary": outcome.summary()})
            say(f"check regression {feature.id}: {outcome.summary()}")
            if outcome.ok:
                record_verified_at(ctx, [feature.id])
            else:
                failing.append((feature, outcome))
        if failing:
            demoted_head = _demote(ctx, feature_list, failing)
            demoted = [f.id for f, _ in failing]
            say(f"demoted {', '.join(demoted)} in {short(demoted_head)}: repair first")
    else:
        say("check regression: skipped, the work tree has uncommitted changes")
    record = {
        "head": gitio.head_oid(ctx.root),
        "at": iso_now(),
        "complete": clean,
        "steps": steps,
        "regression": regression,
        "demoted": demoted,
    }
    state.write_json(_record_path(ctx), record)
    return record


def _demote(
    ctx: Context,
    feature_list: features.FeatureList,
    failing: list[tuple[features.Feature, verify.Outcome]],
) -> str:
    base = short(gitio.head_oid(ctx.root))
    log_text = read_optional(ctx.project.progress_path)
    updated = feature_list
    for feature, outcome in failing:
        updated = updated.replace_feature(feature._replace(passes=False))
        body = (
            f"re-verified at session start and failed ({outcome.summary()}): "
            f"demoted to not passing; repair it first.\n"
            + "\n".join(f"    {line}" for line in outcome.tail(5, 600).splitlines())
        )
        log_text = progress.append(
            log_text,
            progress.format_entry(log_time(), feature.id, "demoted (regression)", base, body),
        )
    write_features(ctx, updated)
    write_log(ctx, log_text, features.blocked_ids(updated))
    ids = [f.id for f, _ in failing]
    if len(ids) == 1:
        subject = f"{ids[0]}: demoted, its verifier fails at session start"
    else:
        subject = f"Demote {', '.join(ids)}: verifiers fail at session start"
    subject = subject if len(subject) <= 72 else f"Demote {len(ids)} features: verifiers fail"
    return commit_bookkeeping(ctx, subject + "\n")


# -- the report ----------------------------------------------------------------------------


def _recent_commits(ctx: Context, count: int) -> list[str]:
    if gitio.head_oid(ctx.root) is None:
        return []
    from git import Repo

    with Repo(ctx.root) as repo:
        return [
            _clip(f"{commit.hexsha[:7]} {commit.summary!s}", 90)
            for commit in repo.iter_commits("HEAD", max_count=count)
        ]


def _decisions(ctx: Context, count: int) -> list[str]:
    folder = ctx.project.decisions_path
    records = sorted(p for p in folder.glob("[0-9][0-9][0-9][0-9]-*.md")) if folder.is_dir() else []
    titles = []
    for path in records[-count:]:
        first = path.read_text(encoding="utf-8", errors="replace").lstrip().splitlines()[:1]
        title = first[0].lstrip("# ").strip() if first else path.stem
        titles.append(_clip(f"{path.name[:4]} {title}", 90))
    return titles


def _feature_full(feature: features.Feature, project_verify: str) -> dict[str, Any]:
    return {
        "id": feature.id,
        "description": _clip(feature.description, 300),
        "category": feature.category,
        "verify": features.effective_verify(feature, project_verify),
        "attempts": feature.attempts,
        "steps": [_clip(step, 160) for step in feature.steps[:8]],
        "more_steps": max(0, len(feature.steps) - 8),
    }


def gather(ctx: Context, brief: bool, checks: dict[str, Any] | None) -> dict[str, Any]:
    cfg = ctx.config
    feature_list = read_features(ctx.project)
    taken = claims.list_claims(ctx.root)
    counts = features.counts(feature_list, taken)
    log = progress.parse(read_optional(ctx.project.progress_path))
    n_entries, entry_chars = (2, 500) if brief else (4, 900)
    own = state.local_claim(ctx.git_dir)
    upcoming: list[features.Feature] = []
    repair = [i for i in repair_first(ctx) if (f := feature_list.get(i)) and features.is_open(f)]
    if own is None:
        upcoming = [feature_list.by_id[i] for i in repair if i not in taken]
        chosen = features.next_feature(feature_list, set(taken) | set(repair))
        remaining = [
            f
            for f in feature_list.features
            if features.is_open(f) and f.id not in taken and f not in upcoming
        ]
        if chosen is not None:
            upcoming.append(chosen)
        upcoming += [f for f in remaining if f is not chosen][: (3 if brief else 5)]
        upcoming = upcoming[: (4 if brief else 6)]
    blocked = [f for f in feature_list.features if f.blocked is not None and not f.passes]
    toplevel = ctx.root
    common = gitio.common_dir(ctx.root)
    return {
        "where": {
            "root": str(toplevel),
            "cwd": os.getcwd(),
            "worktree": "linked" if ctx.git_dir != common else "main",
            "branch": gitio.branch(ctx.root),
            "head": short(gitio.head_oid(ctx.root)),
        },
        "counts": {
            "total": counts.total,
            "passing": counts.passing,
            "open": counts.open,
            "blocked": counts.blocked,
            "claimed": counts.claimed,
        },
        "all_pass": counts.total > 0 and counts.passing == counts.total,
        "commits": _recent_commits(ctx, 3 if brief else 6),
        "preamble": _clip(log.preamble, 800 if brief else 1600),
        "index_line": log.index_line,
        "entries": [_clip(e.text, entry_chars) for e in progress.newest_entries(log, n_entries)],
        "entries_total": len(log.entries),
        "decisions": _decisions(ctx, 2 if brief else 4),
        "claim": (
            {
                "feature": own.feature,
                "base": short(own.base),
                "taken": own.record.taken,
                "detail": _feature_full(feature_list.by_id[own.feature], cfg.verify)
                if own.feature in feature_list.by_id
                else None,
            }
            if own
            else None
        ),
        "repair_first": repair,
        "next": [
            _feature_full(f, cfg.verify)
            if i == 0
            else {"id": f.id, "description": _clip(f.description, 100)}
            for i, f in enumerate(upcoming)
        ],
        "blocked": [
            {"id": f.id, "reason": _clip(f.blocked.reason, 100)}
            for f in blocked[: (3 if brief else 5)]
            if f.blocked
        ],
        "claims": [
            {
                "id": c.feature,
                "session": c.record.session if c.record else "(broken claim)",
                "stale": claims.staleness(c.record),
            }
            for c in list(taken.values())[: (3 if brief else 5)]
        ],
        "checks": checks,
        "total_features_message": features.all_pass_message(feature_list),
    }


def render(data: dict[str, Any]) -> str:
    w, c = data["where"], data["counts"]
    out = [
        f"# shiftkit start — {w['root']}",
        f"where: {w['worktree']} worktree, branch {w['branch'] or '(detached HEAD)'}, "
        f"HEAD {w['head']}; cwd {w['cwd']}",
        f"features: {c['passing']}/{c['total']} passing, {c['open']} open, "
        f"{c['blocked']} blocked, {c['claimed']} claimed",
    ]
    if data["checks"]:
        checks = data["checks"]
        parts = [f"{s['name']} {s['summary']}" for s in checks["steps"]]
        parts += [f"{r['id']} {r['summary']}" for r in checks["regression"]]
        if not checks["complete"]:
            parts.append("regression skipped (uncommitted changes)")
        out.append("checks: " + "; ".join(parts))
        for step in checks["steps"]:
            if step.get("tail"):
                out.append(f"  {step['name']} output: {step['tail']}")
    out.append("")
    out.append("## recent commits")
    out += [f"  {line}" for line in data["commits"]] or ["  (none)"]
    out.append("")
    out.append(f"## progress log ({data['entries_total']} entries)")
    out.append(data["preamble"])
    if data["index_line"]:
        out.append(data["index_line"])
    for entry in data["entries"]:
        out += ["", entry]
    if data["decisions"]:
        out.append("")
        out.append("## newest decisions")
        out += [f"  {d}" for d in data["decisions"]]
    out.append("")
    if data["claim"]:
        claim = data["claim"]
        out.append(
            f"## your claim: {claim['feature']} (base {claim['base']}, since {claim['taken']})"
        )
        if claim["detail"]:
            out += _feature_lines(claim["detail"])
        out.append(
            "then: `shiftkit verify`, and `shiftkit finish -m ...` "
            "or `shiftkit revert --reason ...`"
        )
    elif data["all_pass"]:
        out.append(data["total_features_message"])
    elif data["next"]:
        if data["repair_first"]:
            out.append(f"## repair first: {', '.join(data['repair_first'])} (demoted at start)")
        out.append("## next")
        out += _feature_lines(data["next"][0])
        if len(data["next"]) > 1:
            out.append(
                "after that: "
                + "; ".join(f"{f['id']} {f['description']}" for f in data["next"][1:])
            )
        out.append("then: `shiftkit claim` to take it")
    else:
        out.append("no feature can be claimed: the open ones are blocked, claimed or waiting")
    if data["blocked"]:
        out.append("blocked: " + "; ".join(f"{b['id']} ({b['reason']})" for b in data["blocked"]))
    if data["claims"]:
        out.append(
            "claims: "
            + "; ".join(
                f"{x['id']} by {x['session']}" + (f" (stale? {x['stale']})" if x["stale"] else "")
                for x in data["claims"]
            )
        )
    return "\n".join(out)


def _feature_lines(f: dict[str, Any]) -> list[str]:
    lines = [f"{f['id']}  {f['description']}", f"  verify: {f['verify'] or '(none)'}"]
    lines += [f"  {n}. {step}" for n, step in enumerate(f["steps"], 1)]
    if f["more_steps"]:
        lines.append(f"  (+{f['more_steps']} more steps: `shiftkit show {f['id']}`)")
    return lines


def with_size_line(text: str, limit: int | None) -> str:
    """The text and a last line stating the size of the whole output, that line included."""
    if limit is not None and len(text.encode()) > limit - 100:
        text = text.encode()[: limit - 140].decode("utf-8", "ignore") + "\n… (cut to stay small)"
    body = len(text.encode()) + 1
    size = body
    while True:
        line = f"~{(size + 3) // 4} tokens ({size} bytes)"
        total = body + len(line.encode()) + 1
        if total == size:
            return f"{text}\n{line}"
        size = total


def start(ctx: Context, brief: bool, as_json: bool, check: bool, say: Say) -> int:
    import json

    progress_lines: list[str] = []
    checks = run_checks(ctx, progress_lines.append) if check else None
    data = gather(ctx, brief, checks)
    if as_json:
        body = json.dumps(data, indent=1, ensure_ascii=False)
        say(body)
        return 0
    say(with_size_line(render(data), BRIEF_LIMIT if brief else None))
    return 0
