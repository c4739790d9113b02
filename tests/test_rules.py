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
    base: features.FeatureList | str | None = "ours",
) -> rules.Report:
    """``base``: the common ancestor's list ("ours" by default: theirs forked from ours;
    None: no common ancestor)."""
    sides = [rules.Side(ours, log, None), rules.Side(theirs, log, None)]
    return rules.evaluate(
        sides,
        rules.Proposed(features.dumps(result), log, None),
        rules_to_check=rules.ALL,
        names=("features.json", "log", "archive"),
        message="Merge branch 'side'",
        claimed=None,
        claims_enabled=False,
        merge_base=rules.MergeBase(((),))
        if base is None
        else rules.MergeBase(((ours if isinstance(base, str) else base,),)),
    )


def test_a_merge_of_a_flip_made_on_a_branch_is_no_new_flip() -> None:
    base = _three()
    side = base.replace_feature(base.by_id["F002"]._replace(passes=True))
    report = _merge(base, side, side)
    assert report.flips == [] and report.violations == []


def test_a_merge_of_an_unrelated_history_brings_no_pass() -> None:
    """An orphan branch whose list says everything passes was never judged: merged, every
    pass it brings is a flip of the merge (and more than one is refused)."""
    base = _three()
    orphan = features.FeatureList([f._replace(passes=True) for f in base.features])
    report = _merge(base, orphan, orphan, base=None)
    assert report.flips == ["F001", "F002", "F003"]
    assert {int(v.rule) for v in report.violations} >= {3, 5}
    # Related, the same lists would be the sides' own judged flips.
    assert _merge(base, orphan, orphan, base=base).flips == []


def test_demotions_win_in_a_merge() -> None:
    """F002 passed where the branches forked; ours demoted it (the start check found it
    broken). A result that passes it again undoes the demotion: a flip, to be verified."""
    passing = _three().replace_feature(_three().by_id["F002"]._replace(passes=True))
    demoted = passing.replace_feature(passing.by_id["F002"]._replace(passes=False))
    assert _merge(demoted, passing, passing, base=passing).flips == ["F002"]
    # Demoted on their side while ours kept it: the same.
    assert _merge(passing, demoted, passing, base=passing).flips == ["F002"]
    # Kept demoted, as the merge driver merges it: nothing to earn.
    assert _merge(demoted, passing, demoted, base=passing).flips == []
    # Passing on both sides since the fork: no flip.
    assert _merge(passing, passing, passing, base=passing).flips == []


def test_demotions_win_across_every_common_ancestor_and_every_parent() -> None:
    """A criss-cross merge has several common ancestors and an octopus merge several other
    parents: a pass at any ancestor of the first parent with a side, demoted since on either,
    stays demoted."""
    old = _three()
    passing = old.replace_feature(old.by_id["F002"]._replace(passes=True))
    demoted = passing.replace_feature(passing.by_id["F002"]._replace(passes=False))

    def merge(parents: list[features.FeatureList], bases: list[list[features.FeatureList]]):
        return rules.evaluate(
            [rules.Side(lst, "", None) for lst in parents],
            rules.Proposed(features.dumps(passing), "", None),
            rules_to_check=rules.ALL,
            names=("features.json", "log", "archive"),
            message="Merge",
            claims_enabled=False,
            merge_base=rules.MergeBase(tuple(tuple(b) for b in bases)),
        )

    # criss-cross: one ancestor before the flip, one after it
    assert merge([demoted, passing], [[old, passing]]).flips == ["F002"]
    # octopus: the side forked after the flip shows the demotion; the older one does not
    assert merge([demoted, passing, old], [[passing], [old]]).flips == ["F002"]
    # honest: the flip made on the side since every ancestor
    assert merge([old, passing], [[old, old]]).flips == []


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


# -- each rule on its own, and `evaluate` checking only the rules it is asked for -------------


def _side(feature_list: features.FeatureList | None, log: str = "") -> rules.Side:
    return rules.Side(feature_list, log, None)


def _entry(feature: str, day: int, outcome: str = "passed") -> str:
    return progress.format_entry(
        f"2026-12-{day:02d} 10:00 UTC", feature, outcome, "abc1234", f"entry of day {day}"
    )


def _blocked_parent() -> features.FeatureList:
    return _list(
        {
            "index": 1,
            "attempts": 3,
            "blocked": features.Blocked("3 failed", "2026-11-30T10:00:00Z", 3),
        }
    )


def test_check_list_trusts_a_text_known_valid_without_validating_it_again() -> None:
    text = '{"features": [], "unexpected": 1}'
    _, [violation] = rules.check_list(text, "features.json")
    assert violation.rule == rules.Rule.SCHEMA and "unexpected" in violation.message
    assert violation.message.endswith("; fix the file and commit again")
    parsed, problems = rules.check_list(text, "features.json", known_valid=True)
    assert problems == [] and parsed is not None and len(parsed) == 0
    # known valid but absent: still missing
    assert rules.check_list(None, "features.json", known_valid=True)[0] is None


def test_flipped_and_aligned_changes_without_precomputed_pairs() -> None:
    before = _list()
    after = _list({"index": 0, "passes": True}, {"index": 1, "description": "changed"})
    assert rules.flipped([_side(before)], after) == ["F001"]
    pairs = rules.aligned_changes([_side(before)], after)
    assert pairs is not None and [(old.id, new.id) for old, new in pairs] == [
        ("F001", "F001"),
        ("F002", "F002"),
    ]
    assert rules.aligned_changes([_side(before)], before) == []  # nothing changed
    shorter = features.FeatureList(before.features[:1])
    assert rules.aligned_changes([_side(before)], shorter) is None  # a feature was removed
    assert rules.aligned_changes([_side(None)], before) is None  # nothing to align with
    assert rules.aligned_changes([_side(before), _side(before)], before) is None  # a merge
    # a feature new in this commit (no parent has it) is no flip
    appended = before.append(features.Feature("F003", "c", "three", ("s",), "true", passes=True))
    assert rules.flipped([_side(before)], appended) == []
    assert rules.flipped([_side(before), _side(None)], appended) == []


def test_rule2_appending_a_passing_feature_or_changing_a_definition() -> None:
    before = _list()
    appended = before.append(features.Feature("F003", "c", "three", ("s",), "true", passes=True))
    assert rules.rule2_definitions([_side(before)], appended) == [
        rules.Violation(
            2,
            'F003 is new and already passing; append it with "passes": false and finish it '
            "with `shiftkit finish`",
            "F003",
        )
    ]
    assert rules.rule2_definitions([_side(None)], appended) == []  # the list is established
    changed = _list({"index": 1, "steps": ("s", "t"), "verify": "make check"})
    [violation] = rules.rule2_definitions([_side(before)], changed)
    assert violation.message.startswith(
        "F002: the definition field(s) steps, verify changed; definitions are immutable"
    )
    # the general comparison (a merge) finds the same, once, and skips a parent without a list
    merged = rules.rule2_definitions([_side(before), _side(before), _side(None)], changed)
    assert merged == [violation]
    assert rules.rule2_definitions([_side(before), _side(None)], appended)[0].feature == "F003"


def test_rule3_refuses_two_flips_in_one_commit() -> None:
    assert rules.rule3_one_flip([]) == [] and rules.rule3_one_flip(["F001"]) == []
    assert rules.rule3_one_flip(["F001", "F002"]) == [
        rules.Violation(
            3,
            "2 features become passing in one commit (F001, F002); one feature per commit — "
            "commit them one at a time with `shiftkit finish`",
        )
    ]
    report = _evaluate(_list({"index": 0, "passes": True}, {"index": 1, "passes": True}))
    assert report.flips == ["F001", "F002"]
    # rule 4's verifier runs for a single flip only; F002 has no log entry and no claim
    assert sorted(int(v.rule) for v in report.violations) == [3, 5, 5, 6]


def test_rule4_names_why_the_flip_is_not_verified_with_the_parents_definition() -> None:
    seen: list[features.Feature | None] = []

    def verification(feature: features.Feature | None) -> str | None:
        seen.append(feature)
        return "its verifier failed on this tree"

    parents = [_side(None), _side(_list())]
    assert rules.rule4_verified(["F002", "F009"], parents, verification) == [
        rules.Violation(
            4,
            "F002 becomes passing but its verifier failed on this tree; only `shiftkit finish` "
            "(or a verified tree) may flip it",
            "F002",
        ),
        rules.Violation(
            4,
            "F009 becomes passing but its verifier failed on this tree; only `shiftkit finish` "
            "(or a verified tree) may flip it",
            "F009",
        ),
    ]
    assert seen == [_list().by_id["F002"], None]  # F009: no parent has it
    assert rules.parent_feature(parents, "F001") == _list().by_id["F001"]
    assert rules.parent_feature([_side(None)], "F001") is None


def test_rule5_counts_only_entries_new_in_this_change() -> None:
    old = _log(("F001", "passed"))
    archived = _log(("F002", "passed"))
    new = progress.append(old, _entry("F003", 3))
    parent = rules.Side(None, old, archived)
    assert [e.feature for e in rules.new_entries([parent], new)] == ["F003"]
    assert rules.new_entries([parent], None) == []  # the log is gone
    assert rules.new_entries([rules.Side(None, None, None)], archived) != []
    # an entry restored from the archive is no new entry
    restored = progress.append(old, progress.parse(archived).entries[0].text)
    assert rules.new_entries([parent], restored) == []
    entries = rules.new_entries([parent], new)
    assert rules.rule5_log(["F003"], entries, "log") == []
    [violation] = rules.rule5_log(["F001"], entries, "log")
    assert violation.message == (
        "F001 becomes passing without a new entry about it in log; `shiftkit finish` writes it"
    )


def test_rule6_the_flip_is_the_claimed_feature() -> None:
    assert rules.rule6_claimed(["F001"], "F001", True) == []
    assert rules.rule6_claimed(["F001"], None, False) == []  # claims are off
    [none] = rules.rule6_claimed(["F001"], None, True)
    assert none.message == (
        "F001 becomes passing but this worktree holds no claim; claim it with "
        "`shiftkit claim F001` and finish it"
    )
    [other] = rules.rule6_claimed(["F001"], "F002", True)
    assert "this worktree has claimed F002;" in other.message
    [stale] = rules.rule6_claimed(["F001"], "F001", True, "the claim was taken over by ana")
    assert stale == rules.Violation(
        rules.Rule.CLAIMED, "F001 becomes passing but the claim was taken over by ana", "F001"
    )


def test_rule7_attempts_only_grow_and_a_block_is_cleared_by_an_unblock() -> None:
    blocked = _blocked_parent()
    reset = _list({"index": 1, "attempts": 0})
    cleared = _list({"index": 1, "attempts": 3})
    assert rules.rule7_status([_side(blocked)], reset, []) == [
        rules.Violation(
            7,
            "F002: attempts went down without `shiftkit unblock` (which leaves a log entry)",
            "F002",
        )
    ]
    [violation] = rules.rule7_status([_side(blocked)], cleared, [])
    assert violation.message.startswith("F002: blocked was cleared without `shiftkit unblock`")
    unblock = progress.parse(_log(("F002", "unblocked by a person"))).entries
    assert rules.rule7_status([_side(blocked)], reset, unblock) == []
    # a merge: the same problem against both parents is reported once
    assert len(rules.rule7_status([_side(blocked), _side(blocked)], reset, [])) == 1
    assert rules.unblocked_features([_side(blocked), _side(blocked)], reset) == ["F002"]
    assert rules.unblocked_features([_side(blocked)], blocked) == []


def test_rule10_names_an_invalid_settings_file() -> None:
    [violation] = rules.rule10_config(
        rules.Judge(config_problem="cfg.toml: malformed TOML"), [], [_side(_list())], None, "cfg"
    )
    assert violation == rules.Violation(rules.Rule.CONFIG, "cfg.toml: malformed TOML; fix cfg")


def test_person_actions_name_an_override_an_unblock_and_changed_settings_or_signers() -> None:
    judge = rules.Judge(("verify", "claims.enabled"), signers_changed=True)
    overridden = [rules.Violation(6, "x"), rules.Violation(2, "y"), rules.Violation(6, "z")]
    assert rules.person_actions(judge, ["F002"], overridden, "flaky network") == [
        "override of rule(s) 2, 6: flaky network",
        "unblock of F002",
        "enforcement settings changed: verify, claims.enabled",
        "allowed signers changed",
    ]
    assert rules.person_actions(rules.NO_CHANGE, [], [], None) == []


def test_rule8_refuses_a_prune_that_rewrites_the_archive_or_loses_entries() -> None:
    old = _log(*SIX)
    entries = progress.parse(old).entries
    pruned = progress.prune(progress.parse(old), "", 2, [], "progress-archive.txt")
    assert _rule8(old, pruned.log_text, "", pruned.archive_text) == []
    # the old archive's entries are not kept at the start of the new archive
    old_archive = progress.append(progress.ARCHIVE_HEAD + "\n", _entry("F000", 1))
    [violation] = _rule8(old, pruned.log_text, old_archive, pruned.archive_text)
    assert violation.rule == 8
    # the log lost more entries than went to the archive
    one_moved = progress.append(progress.ARCHIVE_HEAD + "\n", entries[0].text)
    three_gone = old
    for entry in entries[:3]:
        three_gone = three_gone.replace(entry.text, "")
    assert len(progress.parse(three_gone).entries) == 3
    [violation] = _rule8(old, three_gone, "", one_moved)
    assert violation.rule == 8
    # the oldest entries moved, but not in their order
    swapped = progress.append(
        progress.append(progress.ARCHIVE_HEAD + "\n", entries[1].text), entries[0].text
    )
    in_order = progress.append(
        progress.append(progress.ARCHIVE_HEAD + "\n", entries[0].text), entries[1].text
    )
    survivors = old.replace(entries[0].text, "").replace(entries[1].text, "")
    assert _rule8(old, survivors, "", in_order) == []
    [violation] = _rule8(old, survivors, "", swapped)
    assert "was rewritten, not appended to" in violation.message


def _only(
    rules_to_check: frozenset[int], message: str | None = "wip", **kw: object
) -> rules.Report:
    """A commit that breaks rules 2, 3, 5, 6, 7 and 9 at once, checked for some rules only."""
    parent = rules.Side(_blocked_parent(), "", None)
    new = _list(
        {"index": 0, "passes": True, "description": "changed"}, {"index": 1, "passes": True}
    )
    return rules.evaluate(
        [parent],
        rules.Proposed(features.dumps(new), None, None),
        rules_to_check=rules_to_check,
        names=("features.json", "log", "archive"),
        message=message,
        claimed=None,
        **kw,  # type: ignore[arg-type]
    )


def test_evaluate_checks_only_the_rules_asked_for() -> None:
    everything = _only(rules.ALL)
    assert sorted({int(v.rule) for v in everything.violations}) == [2, 3, 4, 5, 6, 7, 9]
    assert everything.flips == ["F001", "F002"]
    for rule in (2, 3, 4, 5, 6, 7, 9):
        report = _only(frozenset({rule}))
        assert {int(v.rule) for v in report.violations} == {rule}, rule
        assert report.flips == ["F001", "F002"]  # flips are always reported
    nothing = _only(frozenset())
    assert nothing.violations == [] and nothing.person_actions == ["unblock of F002"]


def test_evaluate_without_a_message_leaves_the_message_rules_to_commit_msg() -> None:
    report = _only(rules.ALL - {rules.Rule.MESSAGE}, message=None)
    assert {int(v.rule) for v in report.violations} == {2, 3, 4, 5, 6, 7}
    assert all("named" not in v.message for v in report.violations)
    five = [v.message for v in report.violations if v.rule == 5]
    assert len(five) == 2 and all("without a new entry" in m for m in five)


def test_evaluate_before_any_feature_list_and_with_an_unreadable_one() -> None:
    log = _log(("F001", "passed"))
    none = rules.evaluate(
        [_side(None)],
        rules.Proposed(None, log, None),
        rules_to_check=rules.ALL,
        names=("features.json", "log", "archive"),
        message="Write the first log entry",
    )
    assert (none.violations, none.staged, none.flips) == ([], None, [])
    broken = rules.evaluate(
        [_side(_list(), log)],
        rules.Proposed("{not json", "", None),
        rules_to_check=rules.ALL,
        names=("features.json", "log", "archive"),
        message="Break the list",
    )
    assert broken.staged is None and broken.flips == []
    assert [int(v.rule) for v in broken.violations] == [1, 8]  # and the log lost its entry
    assert broken.violations[0].message.startswith("features.json: invalid JSON at line 1")


def test_the_commit_that_establishes_the_list_changes_no_setting_and_flips_nothing() -> None:
    def establish(listed: features.FeatureList, message: str) -> rules.Report:
        return rules.evaluate(
            [_side(None)],
            rules.Proposed(features.dumps(listed), "", None),
            rules_to_check=rules.ALL,
            names=("features.json", "log", "archive"),
            message=message,
            judge=rules.Judge(("features", "verify"), policy="signed"),
            signature=lambda: "not signed",
        )

    report = establish(_list(), "Add the feature list")
    assert report.violations == [] and report.flips == [] and report.person_actions == []
    assert report.staged is not None and len(report.staged) == 2
    # Roots bring nothing (decision record 0027): no pass, no attempts, no block — unless a
    # person imports them.
    brought = establish(_list({"index": 1, "attempts": 2}), "Add the feature list")
    assert [(int(v.rule), v.feature) for v in brought.violations] == [(2, "F002")]
    assert "2 attempts" in brought.violations[0].message and brought.flips == []
    passing = _list({"index": 0, "passes": True})
    imported = establish(passing, "Import the list\n\nShiftkit-Override: verified upstream")
    assert [int(v.rule) for v in imported.overridden] == [2]
    assert imported.person_actions == ["override of rule(s) 2: verified upstream"]
    # (a person's action: under the signed policy, signed)
    assert [int(v.rule) for v in imported.violations] == [11]


def test_rule13_two_records_with_one_number() -> None:
    names = ["README.md", "0001-a.md", "0002-b.md", "0002-c.md", "0003-d.txt", "003-e.md"]
    names += ["abcd-f.md", "0004.md", "0005-g.md"]
    assert rules.decision_numbers(names) == {
        "0001": ["0001-a.md"],
        "0002": ["0002-b.md", "0002-c.md"],
        "0005": ["0005-g.md"],
    }
    [violation] = rules.rule13_decisions([names[:3]], names, "docs/decisions")
    assert violation == rules.Violation(
        rules.Rule.DECISIONS,
        "decision record number 0002 names 0002-b.md and 0002-c.md in docs/decisions; "
        "renumber yours with `shiftkit renumber-decisions` and commit",
    )
    # a merge of two branches that each numbered a record 0002
    assert len(rules.rule13_decisions([names[:3], [*names[:2], "0002-c.md"]], names, "d")) == 1
    # a collision the parent already had is not this commit's doing
    assert rules.rule13_decisions([names], [*names, "0006-h.md"], "d") == []
    assert rules.rule13_decisions([names[:3]], names[:3], "d") == []
    # a merge bringing a pair one parent had to the other's line names it there again
    assert len(rules.rule13_decisions([names, names[:3]], names, "d")) == 1
    assert rules.rule13_decisions([names, names], names, "d") == []
    # a root commit has no parent that had the pair
    assert len(rules.rule13_decisions([], names, "d")) == 1
