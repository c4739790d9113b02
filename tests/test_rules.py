from __future__ import annotations

import pytest

from shiftkit.core import rules


@pytest.mark.parametrize(
    "message", ["wip", "WIP\n", "fix", "Update.", "  changes  ", "", "# only a comment\n"]
)
def test_generic_or_empty_subjects_are_refused(message: str) -> None:
    [violation] = rules.check_message(message)
    assert violation.rule == 9


@pytest.mark.parametrize(
    "message",
    [
        "F012: add the todo list",
        "Fix the crash when the list is empty",
        "wip: parser handles nested lists\n\nbody",
    ],
)
def test_meaningful_subjects_pass(message: str) -> None:
    assert rules.check_message(message) == []


def test_long_subject_refused_with_length() -> None:
    [violation] = rules.check_message("x" * 73)
    assert "73 characters" in str(violation)


def test_scissors_and_comments_ignored() -> None:
    raw = "Add the parser\n# Please enter the commit message\n# ------------------------ >8 ------------------------\nwip\n"
    assert rules.check_message(raw) == []


@pytest.mark.parametrize(
    ("message", "named"),
    [
        ("F002: subtract two numbers", True),
        ("Subtract two numbers\n\nF002 needed a helper", True),
        ("Subtract two numbers", False),
        (
            "Subtract two numbers\n\nShiftkit-Feature: F002\nShiftkit-Verified: 4b825dc\n"
            "Shiftkit-Claim: c1a1c1a\n",
            False,
        ),
        ("Subtract two numbers\n\nReviewed-for: F002\nShiftkit-Feature: F002\n", True),
    ],
)
def test_the_machine_trailers_do_not_name_a_flip(message: str, named: bool) -> None:
    """Regression: the commit-msg hook judges a message before it adds Shiftkit-Feature, and
    `audit` judged it after, where the trailer itself named the feature — so a flip whose
    message did not name it was refused by the hook but passed by `audit` once landed past
    the hooks with the usual trailers. Both now read the message without them."""
    found = rules.rule5_message(["F002"], message)
    assert (found == []) == named, found
    with_trailer = rules.rule5_message(["F002"], f"{message}\n\nShiftkit-Feature: F002\n")
    assert (with_trailer == []) == named, with_trailer


def test_check_list_reports_rule_one() -> None:
    _, [violation] = rules.check_list('{"features": 3}', "features.json")
    assert str(violation).startswith("rule 1: features.json: $.features: 3 is not of type 'array'")
    _, [missing] = rules.check_list(None, "features.json")
    assert "missing" in missing.message


# -- rule 8 on in-memory logs: only the oldest entries move, verbatim ---------------------------

from shiftkit.core import progress  # noqa: E402

PREAMBLE = "# Progress — demo\nGoal: a demo.\n\n"


def _log(*entries: tuple[str, str]) -> str:
    text = PREAMBLE
    for index, (feature, outcome) in enumerate(entries):
        text = progress.append(
            text,
            progress.format_entry(
                f"2026-11-{index + 1:02d} 10:00 UTC", feature, outcome, "abc1234", f"entry {index}"
            ),
        )
    return text


SIX = [
    ("F001", "passed"),
    ("F002", "attempt 1 failed, blocked"),
    ("F003", "passed"),
    ("F004", "passed"),
    ("F005", "passed"),
    ("F006", "passed"),
]


def _rule8(
    old_log: str,
    new_log: str,
    old_archive: str = "",
    new_archive: str = "",
    kept: frozenset[str] = frozenset(),
) -> list[rules.Violation]:
    parent = rules.Side(None, old_log, old_archive or None)
    return rules.rule8_log(
        [parent],
        rules.Proposed(None, new_log, new_archive or None),
        "claude-progress.txt",
        "progress-archive.txt",
        kept,
    )


def test_rule8_accepts_an_honest_prune_and_a_plain_append() -> None:
    old = _log(*SIX)
    pruned = progress.prune(progress.parse(old), "", 3, [], "progress-archive.txt")
    assert _rule8(old, pruned.log_text, "", pruned.archive_text) == []
    assert _rule8(old, _log(*SIX, ("F007", "passed"))) == []


def test_rule8_accepts_a_prune_that_keeps_the_blocked_features_entry() -> None:
    old = _log(*SIX)
    pruned = progress.prune(progress.parse(old), "", 3, ["F002"], "progress-archive.txt")
    assert "F002" in pruned.log_text
    assert _rule8(old, pruned.log_text, "", pruned.archive_text, frozenset({"F002"})) == []


def test_rule8_refuses_a_prune_that_moves_an_entry_that_is_not_among_the_oldest() -> None:
    old = _log(*SIX)
    entries = progress.parse(old).entries
    middle = entries[3]  # F004: newer than F001..F003, which stay
    new_log = old.replace(middle.text, "")
    archive = progress.append(progress.ARCHIVE_HEAD + "\n", middle.text)
    [violation] = _rule8(old, new_log, "", archive)
    assert violation.rule == rules.Rule.LOG_APPEND_ONLY and "oldest" in violation.message


def test_rule8_refuses_an_edit_of_the_last_entry_presented_as_a_prune() -> None:
    old = _log(*SIX)
    last = progress.parse(old).entries[-1]
    edited = last.text.replace("entry 5", "entry 5, and it all worked")
    archive = progress.append(progress.ARCHIVE_HEAD + "\n", last.text)
    [violation] = _rule8(old, old.replace(last.text, edited), "", archive)
    assert violation.rule == 8


def test_rule8_refuses_a_prune_whose_entries_do_not_reach_the_archive() -> None:
    old = _log(*SIX)
    pruned = progress.prune(progress.parse(old), "", 3, [], "progress-archive.txt")
    [violation] = _rule8(old, pruned.log_text, "", progress.ARCHIVE_HEAD + "\n")
    assert violation.rule == 8


def test_rule8_compares_entries_without_the_blank_lines_between_them() -> None:
    old = _log(*SIX).rstrip("\n") + "\n"  # end-of-file-fixer took the trailing blank line
    pruned = progress.prune(progress.parse(old), "", 3, [], "progress-archive.txt")
    assert _rule8(old, pruned.log_text, "", pruned.archive_text) == []


# -- rules 4 (definition), 10 and 11 on in-memory lists -----------------------------------------

from shiftkit.core import features  # noqa: E402


def _list(*changes: dict[str, object]) -> features.FeatureList:
    items = [
        features.Feature("F001", "c", "one", ("s",), "pytest -q"),
        features.Feature("F002", "c", "two", ("s",), None),
    ]
    for change in changes:
        index = int(str(change["index"]))
        fields = {k: v for k, v in change.items() if k != "index"}
        items[index] = items[index]._replace(**fields)  # type: ignore[arg-type]
    return features.FeatureList(items)


def _evaluate(
    new: features.FeatureList,
    judge: rules.Judge = rules.NO_CHANGE,
    signature: object = None,
    message: str = "F001: one",
) -> rules.Report:
    parent = rules.Side(_list(), "", None)
    log = progress.format_entry("2026-11-30 10:00 UTC", "F001", "passed", "abc1234", "done")
    return rules.evaluate(
        [parent],
        rules.Proposed(features.dumps(new), log, None),
        rules_to_check=rules.ALL,
        names=("features.json", "log", "archive"),
        message=message,
        claimed="F001",
        judge=judge,
        verification=lambda feature: None,
        signature=signature,
    )


def test_rule4_refuses_a_flip_whose_definition_changed_in_the_same_commit() -> None:
    report = _evaluate(
        _list({"index": 0, "verify": "true", "passes": True}),
        message="F001: one\n\nShiftkit-Override: flaky",
    )
    assert [int(v.rule) for v in report.violations] == [4]
    assert [int(v.rule) for v in report.overridden] == [2]


def test_rule4_verifies_with_the_parents_definition() -> None:
    seen: list[str | None] = []
    parent = rules.Side(_list(), "", None)
    log = progress.format_entry("2026-11-30 10:00 UTC", "F001", "passed", "abc1234", "done")
    rules.evaluate(
        [parent],
        rules.Proposed(features.dumps(_list({"index": 0, "passes": True})), log, None),
        rules_to_check=rules.ALL,
        names=("features.json", "log", "archive"),
        message="F001: one",
        claimed="F001",
        verification=lambda feature: seen.append(feature.verify),
    )
    assert seen == ["pytest -q"]


def test_rule10_a_settings_change_flips_nothing() -> None:
    report = _evaluate(_list({"index": 0, "passes": True}), rules.Judge(("verify",)))
    assert [int(v.rule) for v in report.violations] == [10]
    assert report.person_actions == ["enforcement settings changed: verify"]


def test_rule10_a_moved_list_holds_the_old_list() -> None:
    moved = _evaluate(
        _list({"index": 1, "description": "changed"}),
        rules.Judge(("features",)),
        message="Move the list",
    )
    assert {int(v.rule) for v in moved.violations} == {2, 10}
    same = _evaluate(_list(), rules.Judge(("features",)), message="Move the list")
    assert same.violations == []


def test_rule11_needs_a_good_signature_under_the_signed_policy() -> None:
    unblocked = _list({"index": 1, "attempts": 0})
    blocked_parent = _list(
        {
            "index": 1,
            "attempts": 3,
            "blocked": features.Blocked("3 failed", "2026-11-30T10:00:00Z", 3),
        }
    )
    log = progress.format_entry("2026-11-30 10:00 UTC", "F002", "unblocked", "abc1234", "ok")

    def run(policy: str, signature: object) -> rules.Report:
        return rules.evaluate(
            [rules.Side(blocked_parent, "", None)],
            rules.Proposed(features.dumps(unblocked), log, None),
            rules_to_check=rules.ALL,
            names=("features.json", "log", "archive"),
            message="F002: unblocked by a person",
            judge=rules.Judge(policy=policy),
            signature=signature,
        )

    assert run("trailer", lambda: "not signed").violations == []
    assert run("trailer", None).person_actions == ["unblock of F002"]
    assert run("signed", None).violations == []  # no commit object yet: checked later
    assert run("signed", lambda: None).violations == []
    [violation] = run("signed", lambda: "the commit is not signed").violations
    assert violation.rule == rules.Rule.PERSON and "unblock of F002" in violation.message


# -- merges and the general comparison (two parents, or features that moved) ------------------


def _three() -> features.FeatureList:
    return features.FeatureList(
        [
            features.Feature("F001", "c", "one", ("s",), "true"),
            features.Feature("F002", "c", "two", ("s",), "true"),
            features.Feature("F003", "c", "three", ("s",), "true"),
        ]
    )


def _merge(
    ours: features.FeatureList,
    theirs: features.FeatureList,
    result: features.FeatureList,
    log: str = "",
) -> rules.Report:
    sides = [rules.Side(ours, log, None), rules.Side(theirs, log, None)]
    return rules.evaluate(
        sides,
        rules.Proposed(features.dumps(result), log, None),
        rules_to_check=rules.ALL,
        names=("features.json", "log", "archive"),
        message="Merge branch 'side'",
        claimed=None,
        claims_enabled=False,
    )


def test_a_merge_of_a_flip_made_on_a_branch_is_no_new_flip() -> None:
    base = _three()
    side = base.replace_feature(base.by_id["F002"]._replace(passes=True))
    report = _merge(base, side, side)
    assert report.flips == [] and report.violations == []


def test_a_merge_that_flips_in_neither_parent_is_a_flip_and_must_be_logged() -> None:
    base = _three()
    merged = base.replace_feature(base.by_id["F003"]._replace(passes=True))
    report = _merge(base, base, merged)
    assert report.flips == ["F003"]
    assert {int(v.rule) for v in report.violations} >= {5}


def test_rule2_in_general_refuses_removal_reordering_and_insertion() -> None:
    base = _three()
    removed = features.FeatureList(base.features[:2])
    assert any("removed" in v.message for v in _merge(base, base, removed).violations)
    reordered = features.FeatureList([base.features[1], base.features[0], base.features[2]])
    assert any("moved" in v.message for v in _merge(base, base, reordered).violations)
    inserted = features.FeatureList(
        [base.features[0], features.Feature("F009", "c", "new", ("s",), "true"), *base.features[1:]]
    )
    single = rules.evaluate(
        [rules.Side(base, "", None)],
        rules.Proposed(features.dumps(inserted), "", None),
        rules_to_check=rules.ALL,
        names=("features.json", "log", "archive"),
        message="Insert a feature",
        claims_enabled=False,
    )
    assert any("inserted at position 1" in v.message for v in single.violations)


def test_rule8_a_merge_keeps_every_parents_entries() -> None:
    one = _log(("F001", "passed"))
    two = _log(("F002", "passed"))
    union = progress.append(one, progress.parse(two).entries[0].text)
    sides = [rules.Side(None, one, None), rules.Side(None, two, None)]
    assert rules.rule8_log(sides, rules.Proposed(None, union, None), "log", "archive") == []
    lost = rules.rule8_log(sides, rules.Proposed(None, one, None), "log", "archive")
    assert [v.message for v in lost] == ["the merge lost entries of log"]


def test_rule8_refuses_a_changed_preamble() -> None:
    old = _log(*SIX)
    [violation] = _rule8(old, old.replace("Goal: a demo.", "Goal: another demo."))
    assert "preamble" in violation.message


# -- rule 8 and the blank lines between entries ---------------------------------------------------


def _loosen(text: str) -> str:
    """The log as a merge, a fixer or a hand edit may leave it: entries not separated by a
    blank line, spaces at line ends, no newline at the end."""
    return text.replace("\n\n## ", "\n## ", 2).replace("entry 1\n", "entry 1  \n").rstrip("\n")


def test_rule8_accepts_the_fixers_own_commit_and_appends_after_it() -> None:
    old = _log(*SIX)
    loose = _loosen(old)
    assert _rule8(old, old.rstrip("\n") + "\n") == []  # end-of-file-fixer's commit
    assert _rule8(old, loose) == []  # and any other change of spacing only
    assert _rule8(loose, old) == []  # shiftkit tidying it again
    appended = progress.append(
        loose, progress.format_entry("2026-11-07 10:00 UTC", "F007", "passed", "abc1234", "x")
    )
    assert _rule8(loose, appended) == []
    assert _rule8(loose, progress.tidy(appended)) == []


def test_rule8_accepts_a_prune_of_a_loose_log() -> None:
    loose = _loosen(_log(*SIX))
    archive = progress.ARCHIVE_HEAD + "\n" + _loosen(_log(("F000", "passed")).split("\n\n", 1)[1])
    for old_archive in ("", archive):
        pruned = progress.prune(progress.parse(loose), old_archive, 3, [], "progress-archive.txt")
        assert _rule8(loose, pruned.log_text, old_archive, pruned.archive_text) == []
        blocked = progress.prune(progress.parse(loose), old_archive, 3, ["F002"], "a.txt")
        assert (
            _rule8(loose, blocked.log_text, old_archive, blocked.archive_text, frozenset({"F002"}))
            == []
        )


def test_rule8_still_refuses_edits_hidden_among_spacing_changes() -> None:
    old = _log(*SIX)
    loose = _loosen(old)
    entries = progress.parse(old).entries
    edited = loose.replace("entry 2", "entry 2, all fine")
    dropped = loose.replace(entries[4].key, "")
    swapped = old.replace(entries[2].text, "").replace(
        entries[3].text, entries[3].text + entries[2].text
    )
    index_added = old.replace(
        "Goal: a demo.\n", "Goal: a demo.\n\n[shiftkit] 9 earlier entries archived\n"
    )
    for new in (edited, dropped, swapped, index_added):
        [violation] = _rule8(old, new)
        assert violation.rule == rules.Rule.LOG_APPEND_ONLY, new
