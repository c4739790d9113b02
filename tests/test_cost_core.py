"""The cost report's pure core (`shiftkit.core.cost`) in memory: spend of usage entries, the
report per feature, session or day, and its JSON, status line and table. Every figure below
is worked out by hand in the comments.

The end-to-end tests (`shiftkit usage` and `shiftkit cost` on real claims) are in
test_cost.py."""

from __future__ import annotations

import json

import pytest

from shiftkit.core import cost
from shiftkit.core.config import CostConfig, ModelPrice
from shiftkit.core.cost import Spend
from shiftkit.core.ledger import Entry, Usage

RATIOS = CostConfig()  # cache read 0.1, cache write 1.25, output 5
PRICES = (("m1", ModelPrice(3.0, 0.3, 3.75, 15.0)),)
STATUS = [("F001", "passing"), ("F002", "open"), ("F003", "blocked"), ("F004", "passing")]


def usage(
    ident: str,
    at: str,
    feature: str | None,
    tokens: Usage,
    model: str = "m1",
    session: str | None = "s1",
    usd: float | None = None,
) -> Entry:
    return Entry("usage", ident, at, feature, session=session, model=model, usage=tokens, usd=usd)


def unit(ident: str, claimed: str, ended: str, feature: str, outcome: str, session: str) -> Entry:
    return Entry(
        "unit", ident, ended, feature, session=session, outcome=outcome, claimed_at=claimed
    )


HISTORY = [
    # F001: failed once, then passed; two sessions, two verifier runs
    unit("u1", "2026-11-30T10:00:00Z", "2026-11-30T10:10:00Z", "F001", "failed", "s1"),
    Entry("verify", "v1", "2026-11-30T10:05:00Z", "F001", ok=False, seconds=2.5),
    usage("x1", "2026-11-30T10:01:00Z", "F001", Usage(1000, 10_000, 2000, 100)),
    unit("u2", "2026-11-30T11:00:00Z", "2026-11-30T11:30:00Z", "F001", "passed", "s2"),
    Entry("verify", "v2", "2026-11-30T11:20:00Z", "F001", ok=True, seconds=1.5),
    usage("x2", "2026-11-30T11:01:00Z", "F001", Usage(500, 0, 0, 50), session="s2"),
    # F002: claimed and released, no spend
    unit("u3", "2026-11-30T12:00:00Z", "2026-11-30T12:01:00Z", "F002", "released", "s2"),
    # F003 (blocked): an unpriced model whose harness reported the money
    usage("x3", "2026-12-01T09:00:00Z", "F003", Usage(100, 0, 0, 10), "other", "s3", 0.02),
    # outside any claim, a model with no price and no money
    usage("x4", "2026-12-01T09:30:00Z", None, Usage(10, 0, 0, 0), "mystery", "s3"),
    # a feature the list does not have (any more)
    Entry("verify", "v3", "2026-12-01T10:00:00Z", "F009", ok=True, seconds=0.25),
]


# -- spend --------------------------------------------------------------------------------------


def test_spend_adds_money_only_when_some_is_known() -> None:
    a = Spend(Usage(1, 2, 3, 4), 10.0, None, 1)
    b = Spend(Usage(10, 0, 0, 0), 10.5, 0.25, 0)
    assert a + a == Spend(Usage(2, 4, 6, 8), 20.0, None, 2)
    assert a + b == Spend(Usage(11, 2, 3, 4), 20.5, 0.25, 1)
    assert b + a == Spend(Usage(11, 2, 3, 4), 20.5, 0.25, 1)
    assert Spend() + Spend() == Spend()
    with pytest.raises(TypeError):
        a + (1, 2)  # noqa: RUF005


def test_spend_divided_rounds_tokens_and_keeps_the_unpriced_count() -> None:
    assert Spend(Usage(3, 5, 0, 7), 9.0, 1.5, 2).divided(2) == Spend(
        Usage(2, 2, 0, 4), 4.5, 0.75, 2
    )
    assert Spend(Usage(9, 0, 0, 0), 9.0).divided(3) == Spend(Usage(3, 0, 0, 0), 3.0, None, 0)


def test_fresh_equivalent_and_price_weigh_each_kind() -> None:
    tokens = Usage(1000, 10_000, 2000, 100)
    # 1000 + 0.1 * 10,000 + 1.25 * 2000 + 5 * 100
    assert cost.fresh_equivalent(tokens, RATIOS) == 1000 + 1000 + 2500 + 500
    assert cost.fresh_equivalent(tokens, CostConfig(0, 0, 0)) == 1000
    # (1000 * 3 + 10,000 * 0.3 + 2000 * 3.75 + 100 * 15) / 1e6 = 15,000 / 1e6
    assert cost.priced(tokens, PRICES[0][1]) == pytest.approx(0.015)


def test_money_is_the_configured_price_else_the_reported_money_else_unknown() -> None:
    prices = dict(PRICES)
    tokens = Usage(1_000_000, 0, 0, 0)
    priced = usage("a", "t", None, tokens, "m1", usd=99.0)
    assert cost.spend_of(priced, RATIOS, prices) == Spend(tokens, 1_000_000.0, 3.0, 0)
    reported = usage("b", "t", None, tokens, "other", usd=0.5)
    assert cost.spend_of(reported, RATIOS, prices) == Spend(tokens, 1_000_000.0, 0.5, 0)
    unknown = usage("c", "t", None, tokens, "other")
    assert cost.spend_of(unknown, RATIOS, prices) == Spend(tokens, 1_000_000.0, None, 1)
    nothing = usage("d", "t", None, Usage(), "other")
    assert cost.spend_of(nothing, RATIOS, prices) == Spend(Usage(), 0.0, None, 0)
    modelless = Entry("usage", "e", "t", usage=tokens)  # a hand-written entry
    assert cost.spend_of(modelless, RATIOS, prices).unpriced == 1


# -- the report -----------------------------------------------------------------------------------


def test_report_per_feature_in_list_order_then_features_the_list_lacks() -> None:
    rep = cost.report(HISTORY, STATUS, RATIOS, PRICES)
    assert [(r.key, r.status) for r in rep.rows] == [
        ("F001", "passing"),
        ("F002", "open"),
        ("F003", "blocked"),
        ("F004", "passing"),
        ("F009", "unknown"),
    ]
    f001, f002, f003, f004, f009 = rep.rows
    # claims, attempts (not released), failed, sessions (of usage), verifier runs and seconds,
    # wall time claim -> end: 10 + 30 minutes
    assert f001[2:9] == (2, 2, 1, 2, 2, 4.0, 2400.0)
    assert f001.spend.usage == Usage(1500, 10_000, 2000, 150)
    # x1: 1000 + 1000 + 2500 + 500 = 5000; x2: 500 + 250 = 750
    assert f001.spend.fresh_equivalent == 5750.0
    # x1: $0.015; x2: (500 * 3 + 50 * 15) / 1e6 = $0.00225
    assert f001.spend.usd == pytest.approx(0.01725) and f001.spend.unpriced == 0
    assert f002[2:9] == (1, 0, 0, 0, 0, 0.0, 60.0) and f002.spend == Spend()
    assert f003.spend == Spend(Usage(100, 0, 0, 10), 150.0, 0.02, 0)
    assert f004[2:] == (0, 0, 0, 0, 0, 0.0, 0.0, Spend(), 0)
    assert (f009.verifier_runs, f009.verifier_seconds, f009.claims) == (1, 0.25, 0)
    assert rep.unattributed.key == "unattributed" and rep.unattributed.status == ""
    assert rep.unattributed.sessions == 1
    assert rep.unattributed.spend == Spend(Usage(10, 0, 0, 0), 10.0, None, 1)
    assert rep.totals.usage == Usage(1610, 10_000, 2000, 160)
    assert rep.totals.fresh_equivalent == 5750 + 150 + 10
    assert rep.totals.usd == pytest.approx(0.01725 + 0.02) and rep.totals.unpriced == 1
    # all spend, the failed attempt, the blocked feature and the unattributed usage included,
    # over the two features passing now
    assert rep.passing == 2
    per = rep.per_passing_feature
    assert per is not None
    assert (per.usage, per.fresh_equivalent, per.unpriced) == (Usage(805, 5000, 1000, 80), 2955, 1)
    assert per.usd == pytest.approx(0.018625)
    assert rep.blocked_without_result == ["F003"]  # blocked, with spend
    assert rep.by == "feature" and rep.groups == []


def test_a_unit_without_its_claim_time_has_no_wall_time() -> None:
    entries = [Entry("unit", "u", "2026-11-30T10:00:00Z", "F001", outcome="abandoned")]
    [row] = cost.report(entries, [("F001", "open")], RATIOS).rows
    assert (row.claims, row.attempts, row.failed, row.wall_seconds) == (1, 1, 1, 0.0)


def test_a_blocked_feature_without_spend_is_no_spend_without_result() -> None:
    entries = [unit("u", "2026-11-30T10:00:00Z", "2026-11-30T10:00:30Z", "F003", "blocked", "s")]
    rep = cost.report(entries, [("F003", "blocked")], RATIOS)
    assert rep.blocked_without_result == [] and rep.rows[0].failed == 1


@pytest.mark.parametrize(
    ("by", "keys"),
    [
        ("session", ["-", "s1", "s2", "s3"]),  # "-": the verifier runs carry no session
        ("day", ["2026-11-30", "2026-12-01"]),
        ("feature", []),
    ],
)
def test_report_by_session_or_day_groups_every_entry(by: str, keys: list[str]) -> None:
    rep = cost.report(HISTORY, STATUS, RATIOS, PRICES, by)
    assert rep.by == by and [g.key for g in rep.groups] == keys
    if keys:
        assert sum((g.spend for g in rep.groups), Spend()).usage == rep.totals.usage
        assert sum(g.verifier_runs for g in rep.groups) == 3
        assert sum(g.claims for g in rep.groups) == 3
    assert len(rep.rows) == 5  # the features are there whatever the grouping


def test_report_groups_by_day_add_up() -> None:
    first, second = cost.report(HISTORY, STATUS, RATIOS, PRICES, "day").groups
    assert (first.claims, first.verifier_runs, first.sessions) == (3, 2, 2)
    assert first.spend.fresh_equivalent == 5750 and first.spend.usd == pytest.approx(0.01725)
    assert (second.claims, second.verifier_runs, second.sessions) == (0, 1, 1)
    assert second.spend == Spend(Usage(110, 0, 0, 10), 160.0, 0.02, 1)


def test_nothing_passing_means_no_cost_per_passing_feature() -> None:
    rep = cost.report(HISTORY, [("F001", "open")], RATIOS, PRICES)
    assert rep.passing == 0 and rep.per_passing_feature is None
    assert [r.key for r in rep.rows] == ["F001", "F002", "F003", "F009"]  # F002 on: "unknown"
    assert rep.blocked_without_result == []  # F003's status is unknown here, not blocked


def test_totals_are_the_report_without_rows() -> None:
    full = cost.report(HISTORY, STATUS, RATIOS, PRICES)
    rep = cost.totals(HISTORY, 2, RATIOS, PRICES)
    assert (rep.totals, rep.passing, rep.per_passing_feature) == (
        full.totals,
        2,
        full.per_passing_feature,
    )
    assert rep.rows == [] and rep.groups == [] and rep.blocked_without_result == []
    assert rep.unattributed.spend == Spend() and rep.unattributed.claims == 0
    assert cost.totals(HISTORY, 0, RATIOS).per_passing_feature is None
    assert cost.totals(HISTORY, 0, RATIOS).totals.usd == pytest.approx(0.02)  # reported only


# -- renderings -----------------------------------------------------------------------------------


def test_json_keeps_the_tables_figures_and_leaves_out_unknown_money() -> None:
    rep = cost.report(HISTORY, STATUS, RATIOS, PRICES)
    data = cost.as_json(rep, RATIOS)
    json.dumps(data, allow_nan=False)  # plain JSON
    assert list(data) == [
        "features",
        "unattributed",
        "coordination",
        "idle",
        "totals",
        "passing",
        "per_passing_feature",
        "per_passing_feature_without_coordination",
        "blocked_without_result",
        "unpriced_models",
        "ratios",
    ]
    assert list(data["features"]) == ["F001", "F002", "F003", "F004", "F009"]
    assert data["features"]["F001"] == {
        "status": "passing",
        "claims": 2,
        "attempts": 2,
        "failed_attempts": 1,
        "repairs": 0,
        "sessions": 2,
        "verifier_runs": 2,
        "verifier_seconds": 4.0,
        "wall_seconds": 2400.0,
        "input": 1500,
        "cache_read": 10_000,
        "cache_write": 2000,
        "output": 150,
        "fresh_equivalent": 5750.0,
        "usd": 0.01725,
    }
    assert "usd" not in data["features"]["F002"]  # nothing priced: money unknown, not $0
    assert "status" not in data["unattributed"] and "usd" not in data["unattributed"]
    assert data["totals"]["usd"] == 0.03725
    assert data["per_passing_feature"]["usd"] == 0.018625
    assert data["passing"] == 2 and data["blocked_without_result"] == ["F003"]
    assert data["ratios"] == {
        "cache_read_ratio": 0.1,
        "cache_write_ratio": 1.25,
        "output_ratio": 5.0,
    }
    by_day = cost.as_json(cost.report(HISTORY, STATUS, RATIOS, PRICES, "day"), RATIOS)
    assert list(by_day["by_day"]) == ["2026-11-30", "2026-12-01"]
    nothing = cost.as_json(cost.report([], [("F001", "open")], RATIOS), RATIOS)
    assert nothing["per_passing_feature"] is None and nothing["totals"] == {
        "input": 0,
        "cache_read": 0,
        "cache_write": 0,
        "output": 0,
        "fresh_equivalent": 0.0,
    }


def test_json_rounds_seconds_and_money() -> None:
    spend = Spend(Usage(1, 0, 0, 0), 1.0 / 3, 1.0 / 3)
    assert cost.spend_json(spend) == {
        "input": 1,
        "cache_read": 0,
        "cache_write": 0,
        "output": 0,
        "fresh_equivalent": 0.333333,
        "usd": 0.333333,
    }


@pytest.mark.parametrize(
    ("value", "shown"),
    [(0, "0"), (1_000_000, "1,000,000"), (12345.6, "12,345.6"), (2955.0, "2,955"), (0.04, "0.0")],
)
def test_number(value: float, shown: str) -> None:
    assert cost.number(value) == shown


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, "-"),
        (0, "$0.00"),
        (0.0, "$0.00"),
        (0.01, "$0.01"),
        (0.018625, "$0.02"),
        (1234.5, "$1,234.50"),
        (0.0046, "$0.0046"),  # a cent's fraction keeps four decimals
        (0.00001, "$0.0000"),
    ],
)
def test_money(value: float | None, shown: str) -> None:
    assert cost.money(value) == shown


def test_status_line() -> None:
    assert cost.one_line(cost.report([], STATUS, RATIOS)) is None  # no usage: no line
    released = [HISTORY[6]]
    assert cost.one_line(cost.report(released, STATUS, RATIOS)) is None
    assert cost.one_line(cost.report(HISTORY, STATUS, RATIOS, PRICES)) == (
        "cost per passing feature: 2,955 fresh-equivalent tokens ($0.02) (2 passing)"
    )
    unpriced = cost.totals(HISTORY[:3], 1, RATIOS)  # x1 only, no price: no money
    assert cost.one_line(unpriced) == (
        "cost per passing feature: 5,000 fresh-equivalent tokens (1 passing)"
    )
    assert cost.one_line(cost.totals(HISTORY, 0, RATIOS)) == (
        "cost: 5,910 fresh-equivalent tokens spent, no feature passes yet"
    )


TABLE_BY_FEATURE = """\
key           status   claims      attempts  sessions  verify  wall  input  cache rd  cache wr  output  fresh-eq       usd
------------  -------  ------  ------------  --------  ------  ----  -----  --------  --------  ------  --------  --------
F001          passing       2  2 (1 failed)         2  2/4.0s   40m  1,500    10,000     2,000     150     5,750     $0.02
F002          open          1             0         0  0/0.0s    1m      0         0         0       0         0         -
F003          blocked       0             0         1  0/0.0s    0s    100         0         0      10       150     $0.02
F009          unknown       0             0         0  1/0.2s    0s      0         0         0       0         0         -
unattributed  -             0             0         1  0/0.0s    0s     10         0         0       0        10  no price
------------  -------  ------  ------------  --------  ------  ----  -----  --------  --------  ------  --------  --------
TOTAL                                                                1,610    10,000     2,000     160     5,910     $0.04
fresh-equivalent: input 1, cache read 0.1, cache write 1.25, output 5 ([shiftkit.cost])
cost per passing feature: 2,955 fresh-equivalent tokens, $0.02 (all spend / 2 passing)
spend without result (blocked): F003
note: no price known for mystery: the dollars leave that usage out; give it one in [shiftkit.prices]"""


def test_table_by_feature() -> None:
    rep = cost.report(HISTORY, STATUS, RATIOS, PRICES)
    assert cost.table(rep, RATIOS) == TABLE_BY_FEATURE


def test_table_with_passing_features_and_no_usage_says_unknown_not_zero() -> None:
    """Found by an agent trial: "cost per passing feature: 0 fresh-equivalent tokens" read
    as free when no session's usage had been recorded at all."""
    rep = cost.report([], [("F001", "passing")], RATIOS)
    last = cost.table(rep, RATIOS).splitlines()[-1]
    assert last.startswith("cost per passing feature: unknown — no usage recorded yet"), last


def test_table_by_session_and_without_anything_passing_or_priced() -> None:
    ratios = CostConfig(0.2, 2, 4.5)
    rep = cost.report(HISTORY[:6], [("F001", "open")], ratios, (), "session")
    lines = cost.table(rep, ratios).splitlines()
    assert [line.split()[0] for line in lines[2:5]] == ["-", "s1", "s2"]
    assert lines[2].split()[:5] == ["-", "-", "0", "0", "0"]  # the two verifier runs
    assert lines[2].split()[5] == "2/4.0s"
    assert lines[3].split()[:7] == ["s1", "-", "1", "1", "(1", "failed)", "1"]
    # s1: 1000 + 0.2 * 10,000 + 2 * 2000 + 4.5 * 100 = 7,450, and no money: no price, none
    # reported, which the cell says (never `-`, which reads as nothing spent)
    assert lines[3].split()[-3:] == ["7,450", "no", "price"]
    assert lines[-4].split()[0] == "TOTAL" and lines[-4].split()[-2:] == ["no", "price"]
    assert lines[-3:] == [
        "fresh-equivalent: input 1, cache read 0.2, cache write 2, output 4.5 ([shiftkit.cost])",
        "cost per passing feature: - (no feature passes yet)",
        "note: no price known for m1: the dollars leave that usage out; give it one in "
        "[shiftkit.prices]",
    ]


def test_table_of_an_empty_ledger() -> None:
    rep = cost.report([], [("F001", "open")], RATIOS)
    lines = cost.table(rep, RATIOS).splitlines()
    assert lines[0].split()[:2] == ["key", "status"] and set(lines[1]) == {"-", " "}
    assert lines[3].split() == ["TOTAL", "0", "0", "0", "0", "0", "-"]
    assert len(lines) == 6  # header, rule, rule, total, ratios, cost per passing feature


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0, "0s"),
        (59.4, "59s"),
        (60, "1m"),
        (600, "10m"),
        (3599, "60m"),
        (3600, "1.0h"),
        (5400, "1.5h"),
    ],
)
def test_wall_time_in_the_table(seconds: float, shown: str) -> None:
    row = cost.Row("F001", "open", 1, 1, 0, 0, 0, 0.0, seconds, Spend())
    rep = cost.Report([row], row._replace(key="unattributed"), Spend(), 0, None, [], "feature", [])
    assert cost.table(rep, RATIOS).splitlines()[2].split()[6] == shown


def test_coordination_and_idle_are_rows_of_their_own() -> None:
    # (issue 29: sessions that found nothing to take were "unattributed", 60 % of the tokens)
    entries = [
        usage("a", "2026-12-01T10:00:00Z", "F001", Usage(input=600)),
        usage("b", "2026-12-01T10:00:00Z", None, Usage(input=300), session="s2")._replace(
            purpose="coordination"
        ),
        usage("c", "2026-12-01T10:00:00Z", None, Usage(input=60), session="s3")._replace(
            purpose="idle"
        ),
        usage("d", "2026-12-01T10:00:00Z", None, Usage(input=40), session="s4"),
    ]
    rep = cost.report(entries, [("F001", "passing"), ("F002", "passing")], RATIOS)
    assert rep.coordination.spend.usage.input == 300 and rep.idle.spend.usage.input == 60
    assert rep.unattributed.spend.usage.input == 40
    assert rep.per_passing_feature is not None and rep.per_passing_feature.usage.input == 500
    without = rep.per_passing_without_coordination
    assert without is not None and without.usage.input == 350  # (600 + 60 + 40) / 2
    text = cost.table(rep, RATIOS)
    assert "coordination" in text and "idle" in text
    assert "without coordination: 350 fresh-equivalent tokens" in text
    document = cost.as_json(rep, RATIOS)
    assert document["coordination"]["input"] == 300
    assert document["per_passing_feature_without_coordination"]["input"] == 350


def test_a_repair_of_a_regression_is_no_attempt_its_revert_is() -> None:
    """Decision record 0080: F001 passed, lost its pass to someone's regression, and a claim
    made it pass again — a repair. A repair claim that was reverted is an attempt (and a
    failed one), like any revert. Units are read in time order: clones' ledgers merge in any
    line order."""
    entries = [
        unit("u4", "2026-11-30T14:00:00Z", "2026-11-30T14:30:00Z", "F001", "passed", "s3"),
        unit("u3", "2026-11-30T13:00:00Z", "2026-11-30T13:10:00Z", "F001", "failed", "s3"),
        unit("u1", "2026-11-30T10:00:00Z", "2026-11-30T10:10:00Z", "F001", "passed", "s1"),
        unit("u2", "2026-11-30T12:00:00Z", "2026-11-30T12:01:00Z", "F001", "released", "s2"),
        unit("u5", "2026-11-30T10:00:00Z", "2026-11-30T10:20:00Z", "F002", "passed", "s2"),
    ]
    assert cost.attempts(entries, "F001") == cost.Attempts(2, 1, 1)
    assert cost.attempts(entries, "F001").text() == "2 (1 failed, 1 repair)"
    assert cost.attempts(entries) == cost.Attempts(3, 1, 1)  # (per feature, not overall)
    rep = cost.report(entries, [("F001", "passing"), ("F002", "passing")], RATIOS)
    row = rep.rows[0]
    assert (row.claims, row.attempts, row.failed, row.repairs) == (4, 2, 1, 1)
    assert cost.as_json(rep, RATIOS)["features"]["F001"]["repairs"] == 1
    assert "2 (1 failed, 1 repair)" in cost.table(rep, RATIOS)
