"""`shiftkit cost`: the cost per passing feature on a scripted history, computed by hand; a
merge of two branches' ledgers is their union and costs their sum."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import git, git_ok, shell_features, shiftkit, write

from shiftkit.core import cost, ledger
from shiftkit.core.config import CostConfig, ModelPrice
from shiftkit.core.ledger import Entry, Usage


def ok(project: Path, *args: str) -> str:
    result = shiftkit(project, *args)
    assert result.returncode == 0, result.output
    assert "Traceback" not in result.output
    return result.stdout


def spend(project: Path, i: int, o: int, cr: int = 0, cw: int = 0, session: str = "s") -> None:
    ok(
        project,
        *("usage", "add", "--input", str(i), "--output", str(o), "--cache-read", str(cr)),
        *("--cache-write", str(cw), "--model", "m1", "--session", session),
    )


def cost_json(project: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ok(project, "cost", "--json"))
    return data


PRICES = (
    '\n[shiftkit.prices]\n"m1" = { input = 3, cache_read = 0.3, cache_write = 3.75, output = 15 }\n'
)


def test_cost_per_passing_feature_on_a_scripted_history(scaffold: Path) -> None:
    shell_features(scaffold, "a.txt", "b.txt")  # F001, F002
    config = scaffold / ".shiftkit.toml"
    config.write_text(config.read_text() + PRICES)
    git_ok(scaffold, "commit", "-q", "-am", "Price the model m1")

    spend(scaffold, 1000, 100, session="orientation")  # a session outside any claim
    ok(scaffold, "claim", "F000")
    spend(scaffold, 2000, 300, cr=10_000, session="s1")
    ok(scaffold, "finish", "-m", "the environment builds")
    ok(scaffold, "claim", "F001")  # a failed attempt ...
    spend(scaffold, 4000, 1000, cw=2000, session="s2")
    write(scaffold / "wrong.txt", "x\n")
    ok(scaffold, "revert", "--reason", "wrote the wrong file")
    ok(scaffold, "claim", "F001")  # ... then a pass
    spend(scaffold, 1000, 200, session="s3")
    write(scaffold / "a.txt", "a\n")
    ok(scaffold, "finish", "-m", "write a")
    for session in ("s4", "s5"):  # the same failure twice: F002 is blocked
        ok(scaffold, "claim", "F002")
        spend(scaffold, 3000, 500, session=session)
        assert shiftkit(scaffold, "verify").returncode == 1
        ok(scaffold, "revert", "--reason", "b.txt never appears")
    assert json.loads(ok(scaffold, "show", "F002", "--json"))["blocked"] is not None

    data = cost_json(scaffold)
    # By hand: input 1000+2000+4000+1000+3000+3000 = 14,000; cache reads 10,000; cache
    # writes 2,000; output 100+300+1000+200+500+500 = 2,600.
    # Fresh-equivalent: 14,000 + 0.1*10,000 + 1.25*2,000 + 5*2,600 = 30,500.
    # Money: (14,000*3 + 10,000*0.3 + 2,000*3.75 + 2,600*15) / 1e6 = $0.0915.
    # Passing now: F000 and F001, so per passing feature 15,250 and $0.04575.
    assert data["passing"] == 2
    totals = data["totals"]
    assert (totals["input"], totals["cache_read"], totals["cache_write"], totals["output"]) == (
        14_000,
        10_000,
        2_000,
        2_600,
    )
    assert totals["fresh_equivalent"] == pytest.approx(30_500)
    assert totals["usd"] == pytest.approx(0.0915)
    per = data["per_passing_feature"]
    assert per["fresh_equivalent"] == pytest.approx(15_250)
    assert per["usd"] == pytest.approx(0.04575)
    assert (per["input"], per["cache_read"], per["cache_write"], per["output"]) == (
        7000,
        5000,
        1000,
        1300,
    )
    features = data["features"]
    assert features["F001"]["attempts"] == 2 and features["F001"]["failed_attempts"] == 1
    assert features["F001"]["sessions"] == 2 and features["F001"]["status"] == "passing"
    assert features["F002"]["status"] == "blocked" and features["F002"]["failed_attempts"] == 2
    assert features["F002"]["fresh_equivalent"] == pytest.approx(2 * (3000 + 5 * 500))
    assert features["F002"]["verifier_runs"] == 2
    assert data["unattributed"]["fresh_equivalent"] == pytest.approx(1000 + 5 * 100)
    assert data["blocked_without_result"] == ["F002"]

    table = ok(scaffold, "cost")
    assert "cost per passing feature: 15,250 fresh-equivalent tokens, $0.05" in table
    assert "spend without result (blocked): F002" in table
    assert "unattributed" in table
    by_session = json.loads(ok(scaffold, "cost", "--json", "--by", "session"))["by_session"]
    assert set(by_session) >= {"orientation", "s1", "s2", "s3", "s4", "s5"}
    assert by_session["s2"]["input"] == 4000
    by_day = json.loads(ok(scaffold, "cost", "--json", "--by", "day"))["by_day"]
    assert sum(row["input"] for row in by_day.values()) == 14_000
    status = ok(scaffold, "status")
    assert "cost per passing feature: 15,250 fresh-equivalent tokens ($0.05) (2 passing)" in status


def test_merge_of_two_branches_is_a_union_and_costs_the_sum(scaffold: Path) -> None:
    shell_features(scaffold, "a.txt", "b.txt")
    base = git_ok(scaffold, "rev-parse", "HEAD").strip()
    ok(scaffold, "claim", "F001")
    spend(scaffold, 100, 10, cr=1000, session="left")
    write(scaffold / "a.txt", "a\n")
    ok(scaffold, "finish", "-m", "write a")
    left = cost_json(scaffold)
    git_ok(scaffold, "switch", "-q", "-c", "other", base)
    ok(scaffold, "claim", "F002")
    spend(scaffold, 200, 20, cw=500, session="right")
    write(scaffold / "b.txt", "b\n")
    ok(scaffold, "finish", "-m", "write b")
    right = cost_json(scaffold)
    assert "left" not in (scaffold / ledger.LEDGER_FILE).read_text()  # (nothing carried over)
    git_ok(scaffold, "switch", "-q", "main")
    merged = git(scaffold, "merge", "--no-edit", "other")
    assert merged.returncode == 0, merged.output
    assert "CONFLICT" not in merged.output
    text = (scaffold / ledger.LEDGER_FILE).read_text()
    left_lines = set(git_ok(scaffold, "show", f"HEAD^1:{ledger.LEDGER_FILE}").splitlines())
    right_lines = set(git_ok(scaffold, "show", f"HEAD^2:{ledger.LEDGER_FILE}").splitlines())
    assert set(text.splitlines()) == left_lines | right_lines
    assert len(text.splitlines()) == len(left_lines | right_lines)
    both = cost_json(scaffold)
    for key in ("input", "cache_read", "cache_write", "output", "fresh_equivalent"):
        assert both["totals"][key] == pytest.approx(left["totals"][key] + right["totals"][key])
    assert both["passing"] == 2
    assert both["features"]["F001"]["input"] == 100 and both["features"]["F002"]["input"] == 200
    assert git_ok(scaffold, "status", "--porcelain") == ""


def test_report_arithmetic_without_git() -> None:
    """The pure report: wall time from claim to end, the configurable ratios, a price, money
    the harness reported for an unpriced model, and nothing passing yet."""
    entries = [
        Entry(
            "unit",
            "u1",
            "2026-11-30T10:10:00Z",
            "F001",
            outcome="failed",
            claimed_at="2026-11-30T10:00:00Z",
        ),
        Entry("verify", "v1", "2026-11-30T10:05:00Z", "F001", ok=False, seconds=2.5),
        Entry(
            "usage",
            "x1",
            "2026-11-30T10:01:00Z",
            "F001",
            session="s",
            model="priced",
            usage=Usage(1_000_000, 0, 0, 0),
        ),
        Entry(
            "usage",
            "x2",
            "2026-11-30T10:02:00Z",
            None,
            session="s",
            model="other",
            usage=Usage(10, 0, 0, 2),
            usd=0.25,
        ),
    ]
    ratios = CostConfig(cache_read_ratio=0.2, cache_write_ratio=2.0, output_ratio=4.0)
    prices = (("priced", ModelPrice(2.0, 0.0, 0.0, 0.0)),)
    rep = cost.report(entries, [("F001", "open")], ratios, prices)
    row = rep.rows[0]
    assert (row.claims, row.attempts, row.failed, row.wall_seconds) == (1, 1, 1, 600.0)
    assert (row.verifier_runs, row.verifier_seconds) == (1, 2.5)
    assert rep.totals.fresh_equivalent == 1_000_000 + 10 + 4 * 2
    assert rep.totals.usd == pytest.approx(2.0 + 0.25)
    assert rep.per_passing_feature is None
    assert cost.one_line(rep) == (
        "cost: 1,000,018 fresh-equivalent tokens spent, no feature passes yet"
    )
