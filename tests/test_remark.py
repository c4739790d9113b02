"""Repair re-marks (decision record 0055): a finish whose change makes demoted features pass
again re-marks them in the same commit — rules 3 to 6 accept exactly those re-marks, each
verified on the tree and logged, and nothing more."""

from __future__ import annotations

from pathlib import Path

from conftest import calc_verifier, git, git_ok, implement, ok, shiftkit, write

from shiftkit.core import features, progress, rules

TIME = "2026-11-30 10:00 UTC"


def _four(*passing: str) -> features.FeatureList:
    items = [
        features.Feature(
            f"F00{n}", "c", f"feature {n}", ("s",), "true", passes=f"F00{n}" in passing
        )
        for n in range(1, 5)
    ]
    return features.FeatureList(items)


def _entry(feature_id: str, outcome: str) -> str:
    return progress.format_entry(TIME, feature_id, outcome, "abc1234", "body")


def _log(*entries: str) -> str:
    text = ""
    for entry in entries:
        text = progress.append(text, entry)
    return text


def _judge(
    parent_list: features.FeatureList,
    parent_log: str,
    new_list: features.FeatureList,
    new_entries: list[str],
    message: str,
    verified: set[str] | None = None,
    claimed: str | None = "F004",
) -> rules.Report:
    log = parent_log
    for entry in new_entries:
        log = progress.append(log, entry)
    ran: list[str] = []

    def verification(feature: features.Feature | None) -> str | None:
        assert feature is not None
        ran.append(feature.id)
        return None if verified is None or feature.id in verified else "its verifier fails"

    report = rules.evaluate(
        [rules.Side(parent_list, parent_log, None)],
        rules.Proposed(features.dumps(new_list), log, None),
        rules_to_check=rules.ALL,
        names=("features.json", "log", "archive"),
        message=message,
        claimed=claimed,
        verification=verification,
    )
    return report


DEMOTED_LOG = _log(
    _entry("F001", "passed"),
    _entry("F002", "passed"),
    _entry("F003", "passed"),
    _entry("F001", "demoted (regression)"),
    _entry("F002", "demoted (regression)"),
    _entry("F003", "demoted (regression)"),
)
REMARK = "re-marked passing (repaired)"


def test_a_finish_may_re_mark_features_a_regression_demoted() -> None:
    report = _judge(
        _four(),
        DEMOTED_LOG,
        _four("F001", "F002", "F003", "F004"),
        [_entry("F004", "passed"), *(_entry(f, REMARK) for f in ("F001", "F002", "F003"))],
        "F004: divide\n\nRe-marks F001, F002, F003 passing.\n",
    )
    assert report.violations == []
    assert report.flips == ["F001", "F002", "F003", "F004"]
    assert report.remarks == ("F001", "F002", "F003")


def test_a_re_mark_is_verified_on_the_tree_like_any_flip() -> None:
    report = _judge(
        _four(),
        DEMOTED_LOG,
        _four("F001", "F004"),
        [_entry("F004", "passed"), _entry("F001", REMARK)],
        "F004: divide\n\nRe-marks F001.\n",
        verified={"F004"},
    )
    assert [(int(v.rule), v.feature) for v in report.violations] == [(4, "F001")]


def test_a_re_mark_of_a_feature_that_never_passed_is_refused() -> None:
    # F002 has no demotion entry: it never passed; its "re-mark" is a second flip.
    log = _log(_entry("F001", "passed"), _entry("F001", "demoted (regression)"))
    report = _judge(
        _four(),
        log,
        _four("F002", "F004"),
        [_entry("F004", "passed"), _entry("F002", REMARK)],
        "F004: divide\n\nRe-marks F002.\n",
    )
    assert report.remarks == ()
    assert 3 in {int(v.rule) for v in report.violations}
    # A re-mark without its own log entry, or not named in the message, is refused too.
    unlogged = _judge(
        _four(), DEMOTED_LOG, _four("F001", "F004"), [_entry("F004", "passed")], "F004: x\n"
    )
    assert {int(v.rule) for v in unlogged.violations} >= {3}
    unnamed = _judge(
        _four(),
        DEMOTED_LOG,
        _four("F001", "F004"),
        [_entry("F004", "passed"), _entry("F001", REMARK)],
        "F004: divide\n",
    )
    assert [(int(v.rule), v.feature) for v in unnamed.violations] == [(5, "F001")]


def test_a_demotion_entry_comes_only_with_its_demotion() -> None:
    """Else a plain commit could write one and make a 'pass earned before' out of nothing."""
    report = _judge(
        _four(), "", _four(), [_entry("F002", "demoted (regression)")], "Note a thing\n"
    )
    assert [(int(v.rule), v.feature) for v in report.violations] == [(5, "F002")]
    honest = _judge(
        _four("F002"), "", _four(), [_entry("F002", "demoted (regression)")], "F002: demoted\n"
    )
    assert honest.violations == []


# -- end to end: real git, real hooks, real pytest -------------------------------------------


def _passing(project: Path) -> set[str]:
    listing = features.loads((project / "features.json").read_text(), "features.json")
    return {f.id for f in listing.features if f.passes}


def test_one_repair_commit_re_marks_three_features_one_regression_demoted(calc: Path) -> None:
    write(calc / "tests" / "test_div.py", "def test_div():\n    from calc.div import div\n"
          "    assert div(6, 3) == 2\n")  # fmt: skip
    ok(calc, "add", "--description", "calc.div works", "--step", "s", "--verify",
       calc_verifier("div"))  # fmt: skip
    git_ok(calc, "add", "-A")
    git_ok(calc, "commit", "-q", "-m", "Add the div feature")
    ok(calc, "claim", "F000")
    ok(calc, "finish", "-m", "the environment builds")
    for name in ("add", "sub", "mul"):
        ok(calc, "claim")
        implement(calc, name)
        ok(calc, "finish", "-m", f"{name} two numbers")
    assert _passing(calc) == {"F000", "F001", "F002", "F003"}
    # One plain commit breaks all three; `check` demotes them in one commit.
    ops = calc / "calc" / "ops.py"
    ops.write_text("import calc.missing_helper\n" + ops.read_text())
    git_ok(calc, "commit", "-q", "-am", "Use the helper module in ops")
    assert shiftkit(calc, "check").returncode == 1
    assert _passing(calc) == {"F000"}
    # The repair comes with F004's work: one finish, one commit, three re-marks.
    ok(calc, "claim", "F004")
    write(calc / "calc" / "div.py", "def div(a, b):\n    return a // b\n")
    ops.write_text(ops.read_text().replace("import calc.missing_helper\n", ""))
    before = git_ok(calc, "rev-list", "--count", "HEAD").strip()
    done = ok(calc, "finish", "-m", "divide two numbers")
    assert "re-marked F001, F002, F003 passing" in done
    assert int(git_ok(calc, "rev-list", "--count", "HEAD")) == int(before) + 1
    assert _passing(calc) == {"F000", "F001", "F002", "F003", "F004"}
    entries = progress.parse((calc / "claude-progress.txt").read_text()).entries[-4:]
    assert [(e.feature, e.outcome) for e in entries] == [
        ("F004", "passed"),
        ("F001", REMARK),
        ("F002", REMARK),
        ("F003", REMARK),
    ]
    message = git_ok(calc, "log", "-1", "--format=%B")
    assert message.startswith("F004: divide two numbers") and "F001, F002, F003" in message
    # Every judge accepts it: the hooks did (it is committed), and so does `audit`.
    audit = shiftkit(calc, "audit")
    assert audit.returncode == 0, audit.output


def test_a_hand_made_re_mark_of_a_never_passing_feature_is_refused_by_the_hooks(
    calc: Path,
) -> None:
    ok(calc, "claim", "F000")
    ok(calc, "finish", "-m", "the environment builds")
    ok(calc, "claim", "F001")
    implement(calc, "add")
    implement(calc, "sub")
    path = calc / "features.json"
    listing = features.loads(path.read_text(), "features.json")
    for feature_id in ("F001", "F002"):
        listing = listing.replace_feature(listing.by_id[feature_id]._replace(passes=True))
    path.write_text(features.dumps(listing))
    log = calc / "claude-progress.txt"
    log.write_text(
        progress.append(
            progress.append(log.read_text(), _entry("F001", "passed")), _entry("F002", REMARK)
        )
    )
    git_ok(calc, "add", "-A")
    refused = git(calc, "commit", "-q", "-m", "F001: add two numbers\n\nRe-marks F002.")
    assert refused.returncode != 0
    assert "rule 3" in refused.stderr and "F002" in refused.stderr


def test_repairing_anothers_regression_is_no_attempt_of_the_repaired_feature(
    calc: Path,
) -> None:
    """Decision record 0080 (an agent trial, issue 29): F001 passed, someone's commit broke
    it, `check` demoted it. Agent B's repair — re-marked in B's finish of F002, or B's own
    claim of F001 — is no new attempt of F001; a repair that B reverts is one (failed)."""
    import json

    b = {"SHIFTKIT_SESSION": "agent-b"}

    def as_b(*args: str) -> str:
        result = shiftkit(calc, *args, env=b)
        assert result.returncode == 0, result.output
        return result.stdout

    def tried() -> tuple[str, dict[str, int]]:
        row = json.loads(ok(calc, "cost", "--json"))["features"]["F001"]
        shown = next(x for x in ok(calc, "show", "F001").splitlines() if "attempts" in x)
        return shown.strip(), {k: row[k] for k in ("claims", "attempts", "failed_attempts")}

    def regression(old: str, new: str) -> None:
        ops.write_text(ops.read_text().replace(old, new))
        git_ok(calc, "commit", "-q", "-am", "Tidy ops")  # (someone's plain commit)
        assert shiftkit(calc, "check").returncode == 1
        assert "F001" not in _passing(calc)

    ok(calc, "claim", "F000")
    ok(calc, "finish", "-m", "the environment builds")
    ok(calc, "claim", "F001")
    implement(calc, "add")
    ok(calc, "finish", "-m", "add two numbers")
    assert tried() == ("status: passing, attempts 1", {"claims": 1, "attempts": 1,
                                                      "failed_attempts": 0})  # fmt: skip
    ops = calc / "calc" / "ops.py"
    # 1. B's finish of its own F002 repairs F001 too: re-marked in the same commit
    regression("return a + b", "return a - b")
    as_b("claim", "F002")
    implement(calc, "sub")
    ops.write_text(ops.read_text().replace("return a - b\ndef sub", "return a + b\ndef sub", 1))
    assert "re-marked F001 passing" in as_b("finish", "-m", "subtract two numbers")
    assert _passing(calc) >= {"F001", "F002"}
    assert tried() == ("status: passing, attempts 1", {"claims": 1, "attempts": 1,
                                                      "failed_attempts": 0})  # fmt: skip
    # 2. B claims F001 to repair it: a repair reverted is an attempt, a repair that passes not
    regression("return a + b", "return a * b")
    as_b("claim", "F001")
    ops.write_text(ops.read_text().replace("return a * b", "return a ** b", 1))
    assert shiftkit(calc, "verify", env=b).returncode == 1
    as_b("revert", "--reason", "the power is no sum")
    as_b("claim", "F001")
    ops.write_text(ops.read_text().replace("return a * b", "return a + b", 1))
    as_b("finish", "-m", "repair add")
    assert "F001" in _passing(calc)
    shown, row = tried()
    assert row == {"claims": 3, "attempts": 2, "failed_attempts": 1}, (shown, row)
    assert shown == "status: passing, attempts 2 (1 failed, 1 repair)", shown
    listed = features.loads((calc / "features.json").read_text(), "features.json")
    assert listed.by_id["F001"].attempts == 1  # (the revert counts toward max_attempts)
    assert shiftkit(calc, "audit").returncode == 0
