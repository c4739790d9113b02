"""The session-start orientation, rendered in memory: the budget holds whatever the records
hold, the most important lines come first, and cuts happen at line boundaries with a note."""

from __future__ import annotations

import dataclasses
import json

import pytest

from shiftkit.core import orientation as o

WHERE = o.Where(root="/work/app", cwd="/work/app", worktree="main", branch="main", head="abc1234")
VERIFY = "python -m pytest -q tests/test_checkout.py -k 'cart and not slow'"


def feature(feature_id: str = "F0042", steps: int = 3, width: int = 40) -> o.FeatureView:
    return o.FeatureView(
        id=feature_id,
        description="The cart keeps its items across a reload",
        category="functional",
        verify=VERIFY,
        steps=tuple(f"step {n} " + "x" * width for n in range(steps)),
    )


def data(**changes: object) -> o.StartData:
    base = o.StartData(
        where=WHERE,
        counts=o.Tally(total=50, passing=10, open=38, blocked=2, claimed=0),
        all_pass=False,
        total_features_message="all 50 features pass — nothing to do",
        next=feature(),
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def huge() -> o.StartData:
    """Everything a big project can hold, each part far past the budget on its own."""
    long_title = "A decision about storage, caching and the order of migrations " * 4
    return data(
        warnings=("hooks missing: pre-commit, commit-msg; run `shiftkit setup`",),
        counts=o.Tally(total=5000, passing=2500, open=2400, blocked=100, claimed=3),
        next=feature(steps=8, width=150),
        after=tuple(o.Upcoming(f"F{n:04d}", "d" * 100) for n in range(5)),
        blocked=tuple(o.BlockedView(f"F{n:04d}", "r" * 100) for n in range(5)),
        repair_first=("F0001", "F0002"),
        checks=o.Checks(
            head="abc1234" * 5,
            at="2026-11-30T10:00:00Z",
            complete=True,
            steps=(o.Step("init", "./init.sh", False, "failed (exit 1)", 1.0, "e" * 300),),
        ),
        checks_ran=True,
        entries=tuple(
            "## 2026-11-30 10:00 UTC | F1 | passed | abc\n" + "line\n" * 2000 for _ in "ab"
        ),
        entries_total=2000,
        decisions=tuple(f"{n:04d} {long_title}" for n in range(50)),
        commits=tuple(f"abc{n:04d} a commit subject" for n in range(6)),
        preamble="\n".join("word " * 15 for _ in range(200)),
        claims=tuple(o.ClaimRow(f"F{n}", f"session-{n}", "pid gone") for n in range(5)),
    )


def test_small_projects_are_shown_whole() -> None:
    text = o.render(data(decisions=("0002 Use SQLite",), commits=("abc1234 Add cart",)))
    assert "next: F0042 — verify: " + VERIFY in text
    assert "  1. step 0" in text and "0002 Use SQLite" in text and "abc1234 Add cart" in text
    assert "…" not in text
    assert (
        text.splitlines()[-1]
        == f"~{(len(text.encode()) + 1 + 3) // 4} tokens ({len(text.encode()) + 1} bytes)"
    )


@pytest.mark.parametrize("budget", [o.BRIEF_BUDGET, 1200, o.FULL_BUDGET])
def test_the_budget_holds_whatever_the_project_holds(budget: int) -> None:
    text = o.render(huge(), budget) + "\n"
    assert len(text.encode()) <= budget
    assert text.startswith("hooks missing")  # the warnings' slot comes first


def test_the_next_feature_and_its_verifier_come_first() -> None:
    text = o.render(huge()).encode()
    head = text[:1000].decode("utf-8", "ignore")
    assert "repair first: F0001, F0002" in head
    assert f"next: F0042 — verify: {VERIFY}" in head
    assert head.index("next: F0042") < head.index("blocked: ")


def test_the_rest_is_cut_at_line_boundaries_with_a_pointer() -> None:
    lines = o.render(huge()).splitlines()
    assert "  … (" in "\n".join(lines) and "see claude-progress.txt)" in "\n".join(lines)
    assert any(line.startswith("## newest decisions") for line in lines)
    assert any("more decisions; see docs/decisions)" in line for line in lines)
    assert all(not line.startswith("line") or line == "line" for line in lines)


def test_a_claim_replaces_the_next_feature() -> None:
    claim = o.ClaimView("F0007", "abc1234", "2026-11-30T09:00:00Z", feature("F0007"))
    text = o.render(data(claim=claim, next=None))
    assert text.startswith("# shiftkit start")
    assert "your claim: F0007 (base abc1234" in text and f"F0007 — verify: {VERIFY}" in text
    assert "`shiftkit finish -m ...`" in text and "next:" not in text


def test_all_pass_and_nothing_claimable() -> None:
    done = data(all_pass=True, next=None, counts=o.Tally(50, 50, 0, 0, 0))
    assert "all 50 features pass — nothing to do" in o.render(done)
    stuck = o.render(data(next=None))
    assert "no feature can be claimed" in stuck


def test_checks_not_rerun_say_so_and_show_the_last_record() -> None:
    last = o.Checks("f" * 40, "2026-11-30T08:00:00Z", True, (o.Step("smoke", "s", True, "passed"),))
    text = o.render(data(checks=last, skipped_because="context compacted"))
    assert "checks: not re-run (context compacted); last at fffffff 2026-11-30T08:00:00Z" in text
    assert "smoke passed" in text
    none_yet = o.render(data(skipped_because="session resumed"))
    assert "checks: not re-run (session resumed); none recorded yet" in none_yet


@pytest.mark.parametrize(
    ("hook_input", "skipped"),
    [
        ('{"source": "startup"}', None),
        ('{"source": "clear"}', None),
        ('{"source": "resume", "session_id": "s"}', "session resumed"),
        ('{"source": "compact"}', "context compacted"),
        ('{"source": "something new"}', None),
        ('{"source": ["resume"]}', None),
        ("[1, 2]", None),
        ("not json", None),
        ("", None),
    ],
)
def test_the_checks_rerun_except_on_resume_and_compact(
    hook_input: str, skipped: str | None
) -> None:
    assert o.skip_checks_for(hook_input) == skipped


def test_check_records_round_trip_and_bad_ones_are_none() -> None:
    record = o.Checks(
        head="a" * 40,
        at="2026-11-30T10:00:00Z",
        complete=False,
        steps=(o.Step("init", "./init.sh", False, "failed", 0.5, "boom"),),
        regression=(o.Regression("F001", True, "passed"),),
        demoted=("F002",),
    )
    assert o.checks_from_json(json.loads(json.dumps(o.checks_to_json(record)))) == record
    for bad in (None, [], "x", {"complete": "yes"}, {}):
        assert o.checks_from_json(bad) is None
    odd = o.checks_from_json({"complete": True, "steps": [1, {"name": 2}], "demoted": "F1"})
    assert odd is not None and odd.demoted == () and odd.steps[0].name == "2"


def test_json_keeps_next_as_a_list() -> None:
    document = o.as_json(data(after=(o.Upcoming("F0043", "later"),)))
    assert [f["id"] for f in document["next"]] == ["F0042", "F0043"]
    assert document["counts"]["total"] == 50 and "after" not in document
    json.dumps(document)


def test_fit_and_share() -> None:
    section = o.Section(tuple(f"line {n}" for n in range(10)), "log.txt", "## title")
    assert o.fit(section, 1000) == ["## title", *section.lines]
    cut = o.fit(section, 60)
    assert cut[0] == "## title" and cut[-1] == "  … (8 more lines; see log.txt)"
    assert sum(map(o.size, cut)) <= 60
    assert o.fit(section, 10) == []
    long_line = o.Section(("y" * 5000,), "log.txt")
    assert o.fit(long_line, 100)[0].endswith("…") and sum(map(o.size, o.fit(long_line, 100))) <= 100
    assert o.share([10, 1000, 1000], 510) == [10, 250, 250]
    assert o.share([], 100) == []


def test_clip_lines_keeps_whole_lines_and_says_how_many_are_left() -> None:
    text = "\n".join(f"line {n}" for n in range(100))
    clipped = o.clip_lines(text, 30, "claude-progress.txt")
    assert clipped.splitlines()[:4] == ["line 0", "line 1", "line 2", "line 3"]
    assert clipped.splitlines()[-1] == "  … (96 more lines; see claude-progress.txt)"
    assert o.clip_lines("short", 30, "x") == "short"
    one_long = o.clip_lines("z" * 500, 100, "x")
    assert one_long.splitlines()[0].endswith("…") and len(one_long.splitlines()[0]) <= 100


def test_multibyte_text_never_splits_a_character() -> None:
    text = o.render(data(warnings=("é" * 500,), preamble="ü" * 5000), 800) + "\n"
    assert len(text.encode()) <= 800 and text.startswith("é")
    assert len(o.clip_bytes("é" * 100, 21).encode()) <= 20


def test_a_decision_title_names_its_number_once() -> None:
    assert o.record_title("0001", "# 1. Record architecture decisions") == (
        "Record architecture decisions"
    )
    assert o.record_title("0012", "# 0012 - Use SQLite") == "Use SQLite"
    assert o.record_title("0012", "# Use SQLite") == "Use SQLite"
    assert o.record_title("0003", "# 2. Numbered wrongly") == "2. Numbered wrongly"
    assert o.record_title("0020", "# 2026 plans") == "2026 plans"  # a number that is not its own
    assert o.record_title("0001", "# 1.") == "1."  # nothing left: the heading as written
