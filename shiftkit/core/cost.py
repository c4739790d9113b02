"""What the work cost: the ledger summed per feature (or session, or day), in tokens by kind,
fresh-equivalent tokens and money, and the cost per passing feature. Pure.

The cost per passing feature is the sources' cost per solved task: *all* the spend — failed
attempts, blocked features, checks and unattributed usage included — divided by the features
that pass now (judged by the feature list, never by what an agent said).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from shiftkit.core.config import CostConfig, ModelPrice
from shiftkit.core.ledger import (
    COORDINATION,
    IDLE,
    PURPOSES,
    UNATTRIBUTED,
    Entry,
    Usage,
    time_key,
)
from shiftkit.core.prices import Book

FAILED_OUTCOMES = ("failed", "blocked", "abandoned")


class Spend(NamedTuple):
    """Tokens by kind, their fresh-equivalent, and money (None: nothing was priced)."""

    usage: Usage = Usage()
    fresh_equivalent: float = 0.0
    usd: float | None = None
    unpriced: int = 0  # usage entries whose model has no price (and that carried no money)

    def __add__(self, other: object) -> Spend:
        if not isinstance(other, Spend):
            return NotImplemented
        usd = None if self.usd is None and other.usd is None else (self.usd or 0) + (other.usd or 0)
        return Spend(
            self.usage + other.usage,
            self.fresh_equivalent + other.fresh_equivalent,
            usd,
            self.unpriced + other.unpriced,
        )

    def divided(self, n: int) -> Spend:
        return Spend(
            Usage(*(round(x / n) for x in self.usage)),
            self.fresh_equivalent / n,
            None if self.usd is None else self.usd / n,
            self.unpriced,
        )


def fresh_equivalent(usage: Usage, ratios: CostConfig) -> float:
    """Tokens counted as fresh input tokens: cache reads, cache writes and output weighted."""
    return (
        usage.input
        + ratios.cache_read_ratio * usage.cache_read
        + ratios.cache_write_ratio * usage.cache_write
        + ratios.output_ratio * usage.output
    )


def priced(usage: Usage, price: ModelPrice) -> float:
    return (
        usage.input * price.input
        + usage.cache_read * price.cache_read
        + usage.cache_write * price.cache_write
        + usage.output * price.output
    ) / 1_000_000


def spend_of(entry: Entry, ratios: CostConfig, prices: Mapping[str, ModelPrice] | Book) -> Spend:
    """One usage entry's spend. Money: the configured price of its model, else what the
    harness reported (``usd``), else unknown."""
    price = prices.get(entry.model or "")
    if price is not None:
        usd: float | None = priced(entry.usage, price)
    else:
        usd = entry.usd
    unpriced = 1 if usd is None and entry.usage.tokens else 0
    return Spend(entry.usage, fresh_equivalent(entry.usage, ratios), usd, unpriced)


class Row(NamedTuple):
    """One line of the report: a feature (or session, or day) and what it cost."""

    key: str
    status: str  # passing, open, blocked (features), or "" (sessions, days, unattributed)
    claims: int
    attempts: int  # units that ended in a result: passed, failed, blocked, abandoned
    failed: int
    sessions: int
    verifier_runs: int
    verifier_seconds: float
    wall_seconds: float
    spend: Spend
    repairs: int = 0  # units that made it pass again after a regression (not attempts)


Lookup = Mapping[str, ModelPrice] | Book
Prices = Sequence[tuple[str, ModelPrice]] | Lookup


def lookup(prices: Prices) -> Lookup:
    """A price by model: the bundled table under the configured prices (a `Book`), or the
    prices given."""
    if isinstance(prices, Book | Mapping):
        return prices
    return dict(prices)


def unpriced_models(entries: Iterable[Entry], prices: Lookup) -> tuple[str, ...]:
    """The models of usage that has neither a price nor money of its own, sorted."""
    return tuple(
        sorted(
            {
                e.model or "(no model named)"
                for e in entries
                if e.kind == "usage"
                and e.usage.tokens
                and e.usd is None
                and prices.get(e.model or "") is None
            }
        )
    )


class Report(NamedTuple):
    rows: list[Row]  # features in list order (then any the ledger names that the list lacks)
    unattributed: Row
    totals: Spend
    passing: int
    per_passing_feature: Spend | None  # None while nothing passes
    blocked_without_result: list[str]
    by: str
    groups: list[Row]  # by session or day (empty: by feature)
    unpriced_models: tuple[str, ...] = ()
    coordination: Row = Row(COORDINATION, "", 0, 0, 0, 0, 0, 0.0, 0.0, Spend())
    idle: Row = Row(IDLE, "", 0, 0, 0, 0, 0, 0.0, 0.0, Spend())
    # the cost per passing feature without the sessions that found nothing to take
    per_passing_without_coordination: Spend | None = None


def _seconds_between(start: str, end: str) -> float:
    return max(time_key(end) - time_key(start), 0.0)


class Attempts(NamedTuple):
    """A feature's attempts as every view says them (decision records 0073, 0080): its units
    that ended in a result (passed, failed, blocked, abandoned: a release is no attempt, nor
    is a repair), how many of those failed, and its repairs — units that made it pass again
    after it had passed and lost its pass to a regression."""

    tries: int
    failed: int
    repairs: int = 0

    def text(self) -> str:
        notes = [f"{self.failed} failed"] if self.failed else []
        if self.repairs:
            notes.append(f"{self.repairs} repair{'s' if self.repairs != 1 else ''}")
        return f"{self.tries} ({', '.join(notes)})" if notes else str(self.tries)


def attempts(entries: Iterable[Entry], feature: str | None = None) -> Attempts:
    """The attempts the ledger's units (of ``feature``, when given) record: the one count
    `cost`, `report`, `show` and `next` print. A unit that passed a feature which an earlier
    unit had passed is a repair (decision record 0080): a passing feature cannot be claimed,
    so the pass was lost in between — a regression, someone else's cost; its failed repairs
    (reverted) are attempts like any."""
    units = sorted(
        (e for e in entries if e.kind == "unit" and (feature is None or e.feature == feature)),
        key=lambda e: time_key(e.at),
    )
    passed: set[str | None] = set()
    tries = failed = repairs = 0
    for unit in units:
        if unit.outcome == "released":
            continue
        if unit.outcome == "passed" and unit.feature in passed:
            repairs += 1
            continue
        tries += 1
        failed += unit.outcome in FAILED_OUTCOMES
        if unit.outcome == "passed":
            passed.add(unit.feature)
    return Attempts(tries, failed, repairs)


def bucket(entry: Entry) -> str:
    """The row of `cost` an entry is counted in, named as every view names it (decision
    record 0073): its feature; without one, "coordination" (a session that looked for a
    feature to take and found none), "idle" (one that claimed nothing and did not look), else
    "unattributed"."""
    if entry.feature is not None:
        return entry.feature
    return entry.purpose if entry.purpose in PURPOSES else UNATTRIBUTED


def _row(key: str, status: str, entries: Sequence[Entry], spend: Spend) -> Row:
    units = [e for e in entries if e.kind == "unit"]
    verifies = [e for e in entries if e.kind == "verify"]
    sessions = {e.session for e in entries if e.kind == "usage" and e.session}
    tried = attempts(units)
    return Row(
        key,
        status,
        claims=len(units),
        attempts=tried.tries,
        failed=tried.failed,
        sessions=len(sessions),
        verifier_runs=len(verifies),
        verifier_seconds=sum(v.seconds or 0.0 for v in verifies),
        wall_seconds=sum(_seconds_between(u.claimed_at or u.at, u.at) for u in units),
        spend=spend,
        repairs=tried.repairs,
    )


def _spend(entries: Iterable[Entry], ratios: CostConfig, prices: Lookup) -> Spend:
    total = Spend()
    for entry in entries:
        if entry.kind == "usage":
            total = total + spend_of(entry, ratios, prices)
    return total


def report(
    entries: Sequence[Entry],
    feature_status: Sequence[tuple[str, str]],
    ratios: CostConfig,
    prices: Prices = (),
    by: str = "feature",
) -> Report:
    """``feature_status``: (id, "passing" | "open" | "blocked") of every feature, in order."""
    price_of = lookup(prices)
    per: dict[str | None, list[Entry]] = {}
    for entry in entries:
        per.setdefault(entry.feature, []).append(entry)
    status = dict(feature_status)
    order = [fid for fid, _ in feature_status] + sorted(
        f for f in per if f is not None and f not in status
    )
    rows = [
        _row(
            fid,
            status.get(fid, "unknown"),
            per.get(fid, []),
            _spend(per.get(fid, []), ratios, price_of),
        )
        for fid in order
    ]
    loose = {
        name: [e for e in per.get(None, []) if bucket(e) == name]
        for name in (UNATTRIBUTED, COORDINATION, IDLE)
    }
    unattributed, coordination, idle = (
        _row(name, "", found, _spend(found, ratios, price_of)) for name, found in loose.items()
    )
    totals = _spend(entries, ratios, price_of)
    passing = sum(1 for _, s in feature_status if s == "passing")
    working = _spend((e for e in entries if bucket(e) != COORDINATION), ratios, price_of)
    blocked = [r.key for r in rows if r.status == "blocked" and r.spend.usage.tokens]
    groups: list[Row] = []
    if by in ("session", "day"):
        grouped: dict[str, list[Entry]] = {}
        for entry in entries:
            key = (entry.session or "-") if by == "session" else entry.at[:10]
            grouped.setdefault(key, []).append(entry)
        groups = [
            _row(key, "", grouped[key], _spend(grouped[key], ratios, price_of))
            for key in sorted(grouped)
        ]
    return Report(
        rows,
        unattributed,
        totals,
        passing,
        totals.divided(passing) if passing else None,
        blocked,
        by,
        groups,
        unpriced_models(entries, price_of),
        coordination,
        idle,
        working.divided(passing) if passing else None,
    )


def totals(
    entries: Sequence[Entry],
    passing: int,
    ratios: CostConfig,
    prices: Prices = (),
) -> Report:
    """Only the totals and the cost per passing feature (the status line's), no rows."""
    price_of = lookup(prices)
    total = _spend(entries, ratios, price_of)
    empty = _row(UNATTRIBUTED, "", [], Spend())
    per = total.divided(passing) if passing else None
    unpriced = unpriced_models(entries, price_of)
    return Report([], empty, total, passing, per, [], "feature", [], unpriced)


# -- renderings ---------------------------------------------------------------------------


def spend_json(spend: Spend) -> dict[str, Any]:
    value: dict[str, Any] = {
        **spend.usage._asdict(),
        "fresh_equivalent": round(spend.fresh_equivalent, 6),
    }
    if spend.usd is not None:
        value["usd"] = round(spend.usd, 6)
    return value


def _row_json(row: Row) -> dict[str, Any]:
    value: dict[str, Any] = {"status": row.status} if row.status else {}
    value.update(
        {
            "claims": row.claims,
            "attempts": row.attempts,
            "failed_attempts": row.failed,
            "repairs": row.repairs,
            "sessions": row.sessions,
            "verifier_runs": row.verifier_runs,
            "verifier_seconds": round(row.verifier_seconds, 3),
            "wall_seconds": round(row.wall_seconds, 3),
        }
    )
    value.update(spend_json(row.spend))
    return value


def as_json(rep: Report, ratios: CostConfig) -> dict[str, Any]:
    value: dict[str, Any] = {
        "features": {row.key: _row_json(row) for row in rep.rows},
        "unattributed": _row_json(rep.unattributed),
        "coordination": _row_json(rep.coordination),
        "idle": _row_json(rep.idle),
        "totals": spend_json(rep.totals),
        "passing": rep.passing,
        "per_passing_feature": (
            spend_json(rep.per_passing_feature) if rep.per_passing_feature else None
        ),
        "per_passing_feature_without_coordination": (
            spend_json(rep.per_passing_without_coordination)
            if rep.per_passing_without_coordination
            else None
        ),
        "blocked_without_result": rep.blocked_without_result,
        "unpriced_models": list(rep.unpriced_models),
        "ratios": ratios._asdict(),
    }
    if rep.groups:
        value[f"by_{rep.by}"] = {row.key: _row_json(row) for row in rep.groups}
    return value


def number(value: float) -> str:
    """12345.6 -> '12,345.6'; whole numbers without decimals."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def money(value: float | None) -> str:
    return (
        "-"
        if value is None
        else f"${value:,.2f}"
        if value >= 0.01 or value == 0
        else f"${value:.4f}"
    )


def one_line(rep: Report) -> str | None:
    """The status line: the cost per passing feature, once there is usage."""
    if not rep.totals.usage.tokens:
        return None
    if rep.per_passing_feature is None:
        return (
            f"cost: {number(rep.totals.fresh_equivalent)} fresh-equivalent tokens spent, "
            f"no feature passes yet"
        )
    per = rep.per_passing_feature
    usd = f" ({money(per.usd)})" if per.usd is not None else ""
    return (
        f"cost per passing feature: {number(per.fresh_equivalent)} fresh-equivalent tokens"
        f"{usd} ({rep.passing} passing)"
    )


HEADER = (
    "key",
    "status",
    "claims",
    "attempts",
    "sessions",
    "verify",
    "wall",
    "input",
    "cache rd",
    "cache wr",
    "output",
    "fresh-eq",
    "usd",
)


def _cells(row: Row) -> list[str]:
    s = row.spend
    return [
        row.key,
        row.status or "-",
        str(row.claims),
        Attempts(row.attempts, row.failed, row.repairs).text(),
        str(row.sessions),
        f"{row.verifier_runs}/{row.verifier_seconds:.1f}s",
        _duration(row.wall_seconds),
        number(s.usage.input),
        number(s.usage.cache_read),
        number(s.usage.cache_write),
        number(s.usage.output),
        number(s.fresh_equivalent),
        "no price" if s.usd is None and s.usage.tokens else money(s.usd),
    ]


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"


def table(rep: Report, ratios: CostConfig) -> str:
    if rep.groups:
        body = rep.groups
    else:
        body = [r for r in rep.rows if r.claims or r.spend.usage.tokens or r.verifier_runs]
        for loose in (rep.coordination, rep.idle, rep.unattributed):
            if loose.spend.usage.tokens or loose.verifier_runs:
                body = [*body, loose]
    lines = [list(HEADER)] + [_cells(r) for r in body]
    total = Row("TOTAL", "", 0, 0, 0, 0, 0, 0.0, 0.0, rep.totals)
    total_cells = _cells(total)
    total_cells[1:7] = ["", "", "", "", "", ""]
    lines.append(total_cells)
    widths = [max(len(line[i]) for line in lines) for i in range(len(HEADER))]
    out = [
        "  ".join(
            cell.ljust(w) if i < 2 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(line, widths, strict=True))
        ).rstrip()
        for line in lines
    ]
    out.insert(1, "  ".join("-" * w for w in widths))
    out.insert(len(out) - 1, "  ".join("-" * w for w in widths))
    out.append(
        f"fresh-equivalent: input 1, cache read {ratios.cache_read_ratio:g}, cache write "
        f"{ratios.cache_write_ratio:g}, output {ratios.output_ratio:g} ([shiftkit.cost])"
    )
    if rep.per_passing_feature is None:
        out.append("cost per passing feature: - (no feature passes yet)")
    elif not rep.totals.usage.tokens:
        # (0 would read as free: nothing was recorded, found by an agent trial)
        out.append(
            "cost per passing feature: unknown — no usage recorded yet (the harness's "
            "session-end hook records it; a person adds it with `shiftkit usage add`)"
        )
    else:
        per = rep.per_passing_feature
        usd = f", {money(per.usd)}" if per.usd is not None else ""
        out.append(
            f"cost per passing feature: {number(per.fresh_equivalent)} fresh-equivalent tokens"
            f"{usd} (all spend / {rep.passing} passing)"
        )
        without = rep.per_passing_without_coordination
        if rep.coordination.spend.usage.tokens and without is not None:
            usd = f", {money(without.usd)}" if without.usd is not None else ""
            out.append(
                f"  without coordination: {number(without.fresh_equivalent)} fresh-equivalent "
                f"tokens{usd} (less {number(rep.coordination.spend.fresh_equivalent)} spent by "
                f"sessions that found nothing to take)"
            )
    if rep.blocked_without_result:
        out.append(f"spend without result (blocked): {', '.join(rep.blocked_without_result)}")
    if rep.unpriced_models:
        out.append(unpriced_note(rep.unpriced_models))
    return "\n".join(out)


def unpriced_note(models: Sequence[str]) -> str:
    return (
        f"note: no price known for {', '.join(models)}: the dollars leave that usage out; "
        f"give it one in [shiftkit.prices]"
    )
