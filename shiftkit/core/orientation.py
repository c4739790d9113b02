"""The session-start orientation: the start check's data as typed records, and its text
within a byte budget, most important first (decision 0015).

Pure: `commands/start.py` gathers the records from git and the project's files; `render`
turns them into text that never exceeds the budget, whatever the project holds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from shiftkit.core import features

# Claude Code shows a model about the first 2 KB of a SessionStart hook's output.
BRIEF_BUDGET = 2000
FULL_BUDGET = 16000
SIZE_LINE_RESERVE = 40  # "~NNNN tokens (NNNNN bytes)" and its newline
WARNINGS_MAX = 2
WARNING_CHARS = 200
ELLIPSIS = "…"


@dataclass(frozen=True)
class Step:
    """One step of the start check: init or smoke."""

    name: str
    command: str
    ok: bool
    summary: str
    seconds: float | None = None
    tail: str | None = None


@dataclass(frozen=True)
class Regression:
    id: str
    ok: bool
    summary: str


@dataclass(frozen=True)
class Checks:
    """A start check's record, as written to (and read back from) the worktree's state."""

    head: str | None
    at: str
    complete: bool  # the regression sample ran (the tree was clean)
    steps: tuple[Step, ...] = ()
    regression: tuple[Regression, ...] = ()
    demoted: tuple[str, ...] = ()
    in_checkout: bool = False  # the sample ran in a checkout of HEAD (a dirty work tree)


@dataclass(frozen=True)
class Where:
    root: str
    cwd: str
    worktree: str  # "main" or "linked"
    branch: str | None
    head: str


@dataclass(frozen=True)
class Tally:
    total: int
    passing: int
    open: int
    blocked: int
    claimed: int
    counted_on: str | None = None  # the remote's branch this one is behind, when counted there
    diverged_from: str | None = None  # the remote's branch this one diverged from (counted here)


@dataclass(frozen=True)
class FeatureView:
    id: str
    description: str
    category: str = ""
    verify: str | None = None
    attempts: int = 0
    steps: tuple[str, ...] = ()
    more_steps: int = 0


@dataclass(frozen=True)
class Upcoming:
    id: str
    description: str


@dataclass(frozen=True)
class ClaimView:
    feature: str
    base: str
    taken: str | None
    detail: FeatureView | None


@dataclass(frozen=True)
class BlockedView:
    id: str
    reason: str


@dataclass(frozen=True)
class ClaimRow:
    id: str
    session: str | None
    stale: str | None
    age: str = ""  # how long it has been held ("12 min")
    clone: str = ""  # the holder's clone


@dataclass(frozen=True)
class Sources:
    """Where the cut parts can be read in full."""

    progress: str = "claude-progress.txt"
    decisions: str = "docs/decisions"
    # the remote's branch the log, the decisions and the commits were read at (the brief of a
    # branch only behind it: decision record 0079); None: this work tree and HEAD
    at: str | None = None


@dataclass(frozen=True)
class StartData:
    where: Where
    counts: Tally
    all_pass: bool
    total_features_message: str
    # Printed first: what stops the protocol from working at all (missing hooks, ...).
    warnings: tuple[str, ...] = ()
    claim: ClaimView | None = None
    repair_first: tuple[str, ...] = ()
    next: FeatureView | None = None
    why_none: str = ""  # with no next: what keeps each open feature (`upcoming.blockers`)
    after: tuple[Upcoming, ...] = ()
    blocked: tuple[BlockedView, ...] = ()
    claims: tuple[ClaimRow, ...] = ()
    checks: Checks | None = None
    checks_ran: bool = False  # False: `checks` is the last record, read back, if any
    dirty: tuple[str, ...] = ()  # uncommitted paths (a claim needs a clean tree)
    skipped_because: str | None = None  # why the checks did not run now (resume, compact)
    entries: tuple[str, ...] = ()  # newest first
    entries_total: int = 0
    index_line: str | None = None
    decisions: tuple[str, ...] = ()  # newest first
    commits: tuple[str, ...] = ()  # newest first
    preamble: str = ""
    sources: Sources = field(default_factory=Sources)
    ground: str = ""  # where the agent's work is judged from (`core.ground.describe`)


# -- when the checks run ---------------------------------------------------------------------

# SessionStart's `source`: a resumed or compacted session goes on with the same work, so the
# orientation is re-read from the files but the checks (init, smoke, verifiers) do not re-run.
RE_RENDER_ONLY = {"resume": "session resumed", "compact": "context compacted"}


def skip_checks_for(hook_input: str) -> str | None:
    """Why the checks should not run for this SessionStart hook input (JSON on stdin), or
    None to run them: on `startup`, `clear`, and anything unknown or unreadable."""
    from shiftkit.core import jsonbound
    from shiftkit.core.errors import BadInput

    try:
        document = jsonbound.loads(hook_input, "hook input")
    except BadInput:
        return None
    source = document.get("source") if isinstance(document, dict) else None
    return RE_RENDER_ONLY.get(source) if isinstance(source, str) else None


# -- records to and from JSON ---------------------------------------------------------------


def checks_to_json(checks: Checks) -> dict[str, Any]:
    return asdict(checks)


def checks_from_json(record: Any) -> Checks | None:
    """A check record read back from the state file; None when it is not one."""
    if not isinstance(record, Mapping) or not isinstance(record.get("complete"), bool):
        return None
    steps = tuple(
        Step(
            name=str(s.get("name", "")),
            command=str(s.get("command", "")),
            ok=s.get("ok") is True,
            summary=str(s.get("summary", "")),
            seconds=s["seconds"] if isinstance(s.get("seconds"), int | float) else None,
            tail=s["tail"] if isinstance(s.get("tail"), str) else None,
        )
        for s in _dicts(record.get("steps"))
    )
    regression = tuple(
        Regression(str(r.get("id", "")), r.get("ok") is True, str(r.get("summary", "")))
        for r in _dicts(record.get("regression"))
    )
    demoted = record.get("demoted")
    head = record.get("head")
    return Checks(
        head=head if isinstance(head, str) else None,
        at=str(record.get("at", "")),
        complete=record["complete"],
        steps=steps,
        regression=regression,
        in_checkout=record.get("in_checkout") is True,
        demoted=tuple(i for i in demoted if isinstance(i, str))
        if isinstance(demoted, list)
        else (),
    )


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def as_json(data: StartData) -> dict[str, Any]:
    """`start --json`: the records as they are, with `next` kept a list (the chosen feature
    in full, then the ones after it) as it has always been."""
    out = asdict(data)
    chosen = out.pop("next")
    out["next"] = ([chosen] if chosen else []) + list(out.pop("after"))
    return out


# -- text within a budget -------------------------------------------------------------------


def size(line: str) -> int:
    return len(line.encode("utf-8")) + 1  # the line and its newline


def clip(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + ELLIPSIS


def clip_bytes(line: str, limit: int) -> str:
    """``line`` cut to at most ``limit`` UTF-8 bytes (newline included), ending in "…"."""
    if size(line) <= limit:
        return line
    room = max(0, limit - 1 - len(ELLIPSIS.encode()))
    return line.encode("utf-8")[:room].decode("utf-8", "ignore").rstrip() + ELLIPSIS


def clip_lines(text: str, limit: int, source: str) -> str:
    """The first lines of ``text`` within ``limit`` characters, cut at a line boundary
    (a first line longer than that is cut itself), noting what is left out."""
    lines = text.strip("\n").splitlines()
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > limit:
            break
        kept.append(line)
        used += len(line) + 1
    if len(kept) == len(lines):
        return "\n".join(kept)
    if not kept:
        kept = [clip(lines[0], max(20, limit - 60))]
    return "\n".join([*kept, more_note(len(lines) - len(kept), "line", source)])


def more_note(count: int, noun: str, source: str) -> str:
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"  {ELLIPSIS} ({count} more {noun if count == 1 else plural}; see {source})"


@dataclass(frozen=True)
class Section:
    """Lines shown together; cut from the end when the budget says so."""

    lines: tuple[str, ...]
    source: str = ""  # where the cut lines can be read
    title: str | None = None  # kept with the first line, or the section is dropped
    noun: str = "line"
    fair: bool = False  # False: served first, in order; True: shares what is left
    share: float = 1.0  # below 1: served first only when whole within this part of the budget
    whole: bool = False  # each line is a whole (an entry of several lines): never cut itself

    @property
    def size(self) -> int:
        return sum(map(size, ([self.title] if self.title else []) + list(self.lines)))


def fit(section: Section, allowance: int) -> list[str]:
    """The section's lines within ``allowance`` bytes: whole lines from the top, then one
    line saying how many more there are and where; a first line too long is cut itself."""
    lines = list(section.lines)
    head = [section.title] if section.title else []
    if section.size <= allowance:
        return head + lines
    source = section.source or "the full output"
    used = sum(map(size, head))
    prefix = [used]  # prefix[k]: the title and the first k lines
    for line in lines:
        prefix.append(prefix[-1] + size(line))
        if prefix[-1] > allowance:
            break
    for kept in range(len(prefix) - 1, 0, -1):
        note = more_note(len(lines) - kept, section.noun, source)
        if kept < len(lines) and prefix[kept] + size(note) <= allowance:
            return [*head, *lines[:kept], note]
    if section.whole:
        note = more_note(len(lines), section.noun, source)
        return [note] if size(note) <= allowance else []
    note = more_note(len(lines) - 1, section.noun, source) if len(lines) > 1 else ""
    room = allowance - used - (size(note) if note else 0)
    if lines and room >= 40:
        return [*head, clip_bytes(lines[0], room), *([note] if note else [])]
    return []


def share(sizes: Sequence[int], budget: int) -> list[int]:
    """Each section's allowance: a fair share of ``budget``, small sections taking only what
    they need and leaving the rest to the larger ones (water-filling)."""
    allowance = [0] * len(sizes)
    left, remaining = budget, len(sizes)
    for index in sorted(range(len(sizes)), key=lambda i: sizes[i]):
        fair = left // remaining if remaining else 0
        allowance[index] = min(sizes[index], fair)
        left -= allowance[index]
        remaining -= 1
    return allowance


def lay_out(sections: Sequence[Section], budget: int) -> list[str]:
    """The sections in their order within ``budget`` bytes: the ones not marked ``fair``
    served first, in order, each as far as the budget goes; the fair ones sharing what is
    left (a small one gets all it needs)."""
    kept: dict[int, list[str]] = {}
    left = budget
    # A section served first up to a part of the budget (``share``) is served first only
    # when it fits whole in that part; otherwise it shares what is left like the rest.
    first = [
        not s.fair and (s.share >= 1 or s.size <= min(left, int(budget * s.share)))
        for s in sections
    ]
    for index, section in enumerate(sections):
        if first[index]:
            kept[index] = fit(section, left)
            left -= sum(map(size, kept[index]))
    fair = [i for i in range(len(sections)) if not first[i]]
    allowances = dict(zip(fair, share([sections[i].size for i in fair], left), strict=True))
    for index in fair:
        kept[index] = fit(sections[index], allowances[index])
    # Whole lines leave bytes unused: offer them, in order, to the sections that were cut.
    slack = left - sum(sum(map(size, kept[i])) for i in fair)
    for index in fair:
        if sum(map(size, kept[index])) < sections[index].size:
            used = sum(map(size, kept[index]))
            kept[index] = fit(sections[index], used + slack)
            slack -= sum(map(size, kept[index])) - used
    return [line for index in range(len(sections)) for line in kept[index]]


def with_size_line(text: str) -> str:
    """The text and a last line stating the size of the whole output, that line included."""
    body = len(text.encode()) + 1
    total_size = body
    while True:
        line = f"~{(total_size + 3) // 4} tokens ({total_size} bytes)"
        total = body + len(line.encode()) + 1
        if total == total_size:
            return f"{text}\n{line}"
        total_size = total


def render(data: StartData, budget: int = BRIEF_BUDGET) -> str:
    """The orientation, at most ``budget`` bytes with its size line (and its final newline)."""
    lines = lay_out([*_first(data), *_rest(data)], budget - SIZE_LINE_RESERVE)
    return with_size_line("\n".join(lines))


def _first(data: StartData) -> list[Section]:
    """What must be seen, served first: warnings, what to do now, what is blocked, how the
    checks went. Only the steps and the checks' output share the budget with the rest."""
    c = data.counts
    warnings = [clip(w, WARNING_CHARS) for w in data.warnings[:WARNINGS_MAX]]
    header = (
        f"# shiftkit start — {c.passing}/{c.total} passing, {c.open} open, "
        f"{c.blocked} blocked, {c.claimed} claimed"
        + features.where_counted(c.counted_on, c.diverged_from)
    )
    sections = [Section(tuple([*warnings, header]))]
    sections += _todo(data)
    if data.blocked:
        more = data.counts.blocked - len(data.blocked)
        listed = "; ".join(f"{b.id} ({clip(b.reason, 60)})" for b in data.blocked)
        tail = f"; +{more} more (`shiftkit status`)" if more > 0 else ""
        sections.append(Section((clip(f"blocked: {listed}{tail}", 300),)))
    sections += _checks(data)
    return sections


def _paths(count: int) -> str:
    return "1 path is" if count == 1 else f"{count} paths are"


def _todo(data: StartData) -> list[Section]:
    if data.claim is not None:
        claim = data.claim
        lines = [clip(f"your claim: {claim.feature} (base {claim.base}, since {claim.taken})", 160)]
        detail: list[Section] = []
        if claim.detail is not None:
            lines += _feature_head(claim.detail)
            detail = [_steps(claim.detail)]
        then = (
            "then: `shiftkit verify`, and `shiftkit finish -m ...` "
            "or `shiftkit revert --reason ...`"
        )
        return [Section(tuple(lines)), *detail, Section((then,))]
    if data.all_pass:
        return [Section((clip(data.total_features_message, 200),))]
    if data.next is None:
        why = data.why_none or "the open ones are blocked, claimed or waiting"
        return [
            Section((clip(f"no feature can be claimed now — {why}", 600),)),
            Section(
                (
                    "then: nothing to take in this session; end it (its usage counts as "
                    "coordination), or `shiftkit sync` and `shiftkit start` again later",
                )
            ),
        ]
    lines = []
    if data.repair_first:
        lines.append(clip(f"repair first: {', '.join(data.repair_first)} (demoted at start)", 160))
    lines += _feature_head(data.next, "next: ")
    if data.dirty:
        shown = ", ".join(data.dirty[:3]) + (" ..." if len(data.dirty) > 3 else "")
        claim_it = Section(
            (
                clip(
                    f"then: `shiftkit claim` to take it — it needs a clean tree, and "
                    f"{_paths(len(data.dirty))} uncommitted ({shown}): commit, "
                    f"`git stash --include-untracked` or delete them first",
                    300,
                ),
            )
        )
    else:
        claim_it = Section(("then: `shiftkit claim` to take it",))
    return [Section(tuple(lines)), _steps(data.next), claim_it]


def _feature_head(f: FeatureView, prefix: str = "") -> list[str]:
    return [
        clip_bytes(clip(f"{prefix}{f.id} — verify: {f.verify or '(none)'}", 320), 400),
        clip_bytes("  " + clip(f.description, 200), 300),
    ]


def _steps(f: FeatureView) -> Section:
    steps = [f"  {n}. {clip(step, 120)}" for n, step in enumerate(f.steps, 1)]
    if f.more_steps:
        steps.append(f"  (+{f.more_steps} more steps: `shiftkit show {f.id}`)")
    return Section(tuple(steps), f"`shiftkit show {f.id}`", noun="step line", fair=True)


def _checks(data: StartData) -> list[Section]:
    checks = data.checks
    if checks is None:
        if data.skipped_because:
            return [Section((f"checks: not re-run ({data.skipped_because}); none recorded yet",))]
        return []
    parts = [f"{s.name} {s.summary}" for s in checks.steps]
    parts += [f"{r.id} {r.summary}" for r in checks.regression]
    if checks.in_checkout:
        parts.append("(in a checkout of HEAD: the work tree is dirty)")
    if not checks.complete:
        parts.append("regression not finished (`shiftkit check`)")
    if data.checks_ran:
        label = "checks"
    else:
        why = f"not re-run ({data.skipped_because}); " if data.skipped_because else ""
        label = f"checks: {why}last at {(checks.head or '-')[:7]} {checks.at}"
    line = clip(f"{label}: {'; '.join(parts) or 'nothing configured'}", 300)
    tails = tuple(clip(f"  {s.name} output: {s.tail}", 300) for s in checks.steps if s.tail)
    return [Section((line,)), Section(tails, "`shiftkit verify`", fair=True)]


def _rest(data: StartData) -> list[Section]:
    """What helps, sharing what is left: where we are, the newest log entries and decisions,
    the features after the next one, recent commits, the log's preamble, the other claims."""
    w = data.where
    sources = data.sources
    sections = []
    where = (
        f"where: {w.worktree} worktree, branch {w.branch or '(detached HEAD)'}, "
        f"HEAD {w.head}; root {w.root}; cwd {w.cwd}"
    )
    sections.append(Section((clip(where, 300),), fair=True))
    if data.ground:
        sections.append(Section((clip(f"ground: {data.ground}", 300),), fair=True))
    if data.after:
        after = "; ".join(f"{u.id} {u.description}" for u in data.after)
        sections.append(Section((clip(f"after that: {after}", 300),), fair=True))
    if data.entries or data.index_line:
        sections += _log_sections(data)
    if data.decisions:
        title = f"## newest decisions ({sources.decisions}/)"
        decisions = tuple(f"  {d}" for d in data.decisions)
        sections.append(Section(decisions, sources.decisions, "\n" + title, "decision", True))
    if data.commits:
        commits = tuple(f"  {c}" for c in data.commits)
        title, log = "\n## recent commits", "`git log`"
        if sources.at:
            title, log = f"{title} (at {sources.at})", f"`git log {sources.at}`"
        sections.append(Section(commits, log, title, "commit", True))
    if data.preamble.strip():
        title = f"## the log's preamble ({sources.progress})"
        lines = tuple(data.preamble.strip("\n").splitlines())
        sections.append(Section(lines, sources.progress, "\n" + title, fair=True))
    if data.claims:
        rows = "; ".join(
            f"{x.id} by session {x.session}"
            + (f" of clone {x.clone}" if x.clone else "")
            + (f", {x.age}" if x.age else "")
            + (f" (stale? {x.stale})" if x.stale else "")
            for x in data.claims
        )
        sections.append(Section((clip(f"claimed elsewhere: {rows}", 300),), fair=True))
    return sections


NEWEST_ENTRY_SHARE = 0.6  # of the budget: the newest log entry, whole, before the rest shares


def _log_sections(data: StartData) -> list[Section]:
    """The newest log entry whole, served first when it fits in `NEWEST_ENTRY_SHARE` of the
    budget (a longer one shares, cut at a line), then the older ones as whole entries sharing
    what is left:
    an entry is shown whole or counted among those left out, never folded into a line count
    under another entry's header (issue 29)."""
    name = data.sources.progress
    title = f"## newest log entries (newest first, {data.entries_total} in all; see {name})"
    sections = []
    if data.entries:
        newest = tuple(data.entries[0].splitlines())
        sections.append(Section(newest, name, "\n" + title, share=NEWEST_ENTRY_SHARE))
        older = tuple("\n" + entry for entry in data.entries[1:])
        if older:
            sections.append(Section(older, name, noun="older entry", fair=True, whole=True))
    if data.index_line:
        head = None if data.entries else "\n" + title
        sections.append(Section(("", data.index_line), name, head, fair=True))
    return sections


def record_title(number: str, heading: str) -> str:
    """A decision record's title from its first line, without the ``#`` and without the
    record's own number in front (``# 1. Record decisions`` of 0001: ``Record decisions``):
    the listing names the number once."""
    title = heading.lstrip("#").strip()
    own = re.match(r"0*(\d+)\s*[.:)\-]?\s+", title)
    if own and number.isdigit() and int(own.group(1)) == int(number):
        title = title[own.end() :].strip()
    return title or heading.strip()
