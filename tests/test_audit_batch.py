"""`audit` reads history in bulk (`edge.history`) and checks a changed list beside its parent's
(`features.loads_against`); these tests try to make it disagree with judging each commit on its own.

Every scenario lands commits past every hook, then compares `audit_commits` (the batch) with
`commits.judge_commit` run on each commit alone, finding by finding, besides checking what
the batch must report. `features.loads_against` is also checked against `features.loads` on random
edits of a list's text.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import FEATURES, LOG, by_id, edit_list, git_ok, run, shiftkit, write

from shiftkit.commands import audit
from shiftkit.core import features, progress
from shiftkit.core.errors import BadInput
from shiftkit.edge import gitio, history
from shiftkit.edge.context import open_context

PAST_ALL_HOOKS = ("-c", "core.hooksPath=/dev/null/no-hooks")
CLAIM = "0123456789abcdef0123456789abcdef01234567"
CONFIG = ".shiftkit.toml"


def make_items(count: int) -> list[features.Feature]:
    return [
        features.Feature(
            id=f"F{i:03d}",
            category="functional",
            description=f"feature {i} works",
            steps=(f"step {i}",),
            verify="true",
        )
        for i in range(1, count + 1)
    ]


def land(project: Path, subject: str, flipped: str | None = None, body: str = "") -> str:
    """Commit everything past every hook; ``flipped``: the trailers `finish` writes for it."""
    git_ok(project, "add", "-A")
    message = subject + (f"\n\n{body}" if body else "")
    if flipped is not None:
        tree = git_ok(project, "write-tree").strip()
        message += (
            f"\n\nShiftkit-Feature: {flipped}\nShiftkit-Verified: {tree}\nShiftkit-Claim: {CLAIM}\n"
        )
    git_ok(project, *PAST_ALL_HOOKS, "commit", "-q", "--no-verify", "--allow-empty", "-m", message)
    return git_ok(project, "rev-parse", "HEAD").strip()


def log_entry(project: Path, feature_id: str, outcome: str) -> None:
    """A log entry of its own (an entry equal to an earlier one is not a new one)."""
    path = project / LOG
    count = path.read_text().count("\n## ")
    entry = progress.format_entry(
        f"2026-11-{count % 28 + 1:02d} {count % 24:02d}:00 UTC",
        feature_id,
        outcome,
        "-",
        f"#{count}: {feature_id} {outcome}",
    )
    path.write_text(progress.append(path.read_text(), entry))


def set_passes(project: Path, feature_id: str, passes: bool, log: bool = True) -> None:
    edit_list(project, lambda items: by_id(items, feature_id).update(passes=passes))
    if log:
        log_entry(project, feature_id, "passed" if passes else "regressed")


def honest_flip(project: Path, feature_id: str) -> str:
    set_passes(project, feature_id, True)
    return land(project, f"{feature_id}: make it work", flipped=feature_id)


def demote(project: Path, feature_id: str) -> str:
    set_passes(project, feature_id, False)
    return land(project, f"Demote {feature_id}: it regressed")


@pytest.fixture
def listed(scaffold: Path) -> Path:
    """The scaffold's feature F000 and twelve more, open, laid out as shiftkit writes them."""
    first = features.loads((scaffold / FEATURES).read_text()).features
    (scaffold / FEATURES).write_text(
        features.dumps(features.FeatureList(first + tuple(make_items(12))))
    )
    land(scaffold, "Add twelve features")
    return scaffold


def batch_and_alone(project: Path, since: str | None = None) -> list[audit.Finding]:
    """The batch's findings, after checking that judging each commit alone finds the same."""
    ctx = open_context(project)
    selected = audit.commits_in(ctx.root, since, ctx.config.features)
    assert selected
    batch = audit.audit_commits(ctx, selected, False, lambda _: None)
    alone = [
        found
        for commit in selected
        if (found := audit._judge(ctx, commit, False, lambda _: None, None)) is not None
    ]
    assert batch == alone
    return batch


def flagged(findings: list[audit.Finding]) -> dict[str, set[int]]:
    return {f.commit: {int(v.rule) for v in f.violations} for f in findings if f.violations}


# -- scenarios ----------------------------------------------------------------------------


def test_a_flip_past_the_hooks_in_the_middle_of_a_long_history_is_flagged(listed: Path) -> None:
    rotation = ["F000", "F004", "F007", "F012", "F002", "F009"]  # first and last items too
    bad = None
    for step in range(24):
        feature_id = rotation[step % len(rotation)]
        honest_flip(listed, feature_id)
        demote(listed, feature_id)
        if step == 11:
            # --no-verify: no trailers, no log entry, nothing the hooks would have added
            set_passes(listed, "F005", True, log=False)
            bad = land(listed, "F005: done, trust me")
            demote(listed, "F005")
    findings = batch_and_alone(listed)
    assert flagged(findings) == {bad: {4, 5, 6}}


def test_a_commit_changing_the_list_and_the_config_together(listed: Path) -> None:
    honest_flip(listed, "F003")
    config = (listed / CONFIG).read_text()
    (listed / CONFIG).write_text(config.replace("max_attempts = 3", "max_attempts = 9"))
    set_passes(listed, "F006", True)
    both = land(listed, "F006: done, and more attempts", flipped="F006")
    findings = batch_and_alone(listed)
    assert flagged(findings) == {both: {10}}
    found = next(f for f in findings if f.commit == both)
    assert "max_attempts" in str(found.violations[0]) and found.person_actions


def test_the_list_moved_by_the_config_is_read_under_its_new_name(listed: Path) -> None:
    git_ok(listed, "mv", FEATURES, "list.json")
    config = (listed / CONFIG).read_text()
    (listed / CONFIG).write_text(
        config.replace('features = "features.json"', 'features = "list.json"')
    )
    moved = land(listed, "Move the feature list to list.json")
    document = json.loads((listed / "list.json").read_text())
    by_id(document["features"], "F004")["passes"] = True
    (listed / "list.json").write_text(json.dumps(document, indent=2) + "\n")
    log_entry(listed, "F004", "passed")
    land(listed, "F004: works", flipped="F004")
    by_id(document["features"], "F005")["description"] = "changed behind everyone's back"
    (listed / "list.json").write_text(json.dumps(document, indent=2) + "\n")
    redefined = land(listed, "Reword F005")
    findings = batch_and_alone(listed)
    assert flagged(findings) == {redefined: {2}}
    assert any(f.commit == moved and f.person_actions for f in findings)


def test_merges_are_judged_against_each_parent(listed: Path) -> None:
    base = git_ok(listed, "rev-parse", "HEAD").strip()
    git_ok(listed, "checkout", "-q", "-b", "side")
    honest_flip(listed, "F002")
    git_ok(listed, "checkout", "-q", "main")
    honest_flip(listed, "F010")
    git_ok(listed, *PAST_ALL_HOOKS, "merge", "-q", "--no-ff", "--no-edit", "side")
    merged = json.loads((listed / FEATURES).read_text())["features"]
    assert by_id(merged, "F002")["passes"] and by_id(merged, "F010")["passes"]
    # A merge that flips a feature neither side flipped.
    git_ok(listed, "checkout", "-q", "-b", "other", base)
    honest_flip(listed, "F011")
    git_ok(listed, "checkout", "-q", "main")
    git_ok(listed, *PAST_ALL_HOOKS, "merge", "-q", "--no-ff", "--no-commit", "other")
    set_passes(listed, "F008", True)
    sneaky = land(listed, "Merge other")
    assert len(git_ok(listed, "log", "-1", "--format=%P").split()) == 2
    honest_flip(listed, "F003")  # after a merge: the parent's list is the merge's
    findings = batch_and_alone(listed)
    assert flagged(findings) == {sneaky: {4, 5, 6}}


def test_commits_touching_no_protocol_file_still_meet_the_message_rules(listed: Path) -> None:
    honest_flip(listed, "F003")
    write(listed / "src" / "app.py", "print('hello')\n")
    wip = land(listed, "wip")
    write(listed / "src" / "app.py", "print('hello, world')\n")
    land(listed, "Greet the whole world")
    long = land(listed, "x" * 80)
    honest_flip(listed, "F004")
    findings = batch_and_alone(listed)
    assert flagged(findings) == {wip: {9}, long: {9}}


def test_an_invalid_list_is_named_in_every_commit_that_keeps_it(listed: Path) -> None:
    edit_list(listed, lambda items: by_id(items, "F006").update(passes="yes"))
    broken = land(listed, "Break the list")
    kept = [land(listed, f"Unrelated change {i}") for i in range(3)]
    edit_list(listed, lambda items: by_id(items, "F006").update(passes=False))
    repaired = land(listed, "Repair the list")
    findings = batch_and_alone(listed)
    assert flagged(findings) == {commit: {1} for commit in [broken, *kept]}
    assert repaired not in flagged(findings)
    for found in findings:
        # (the commit that appended the features is a person action, not a violation)
        assert not found.violations or "$.features[6].passes" in str(found.violations[0])


def test_edits_the_text_comparison_cannot_vouch_for(listed: Path) -> None:
    honest_flip(listed, "F002")
    edit_list(listed, lambda items: by_id(items, "F004").update(id="F004b"))
    renamed = land(listed, "Rename F004")
    edit_list(listed, lambda items: items.insert(3, {**items[3], "id": "F100"}))
    inserted = land(listed, "Insert a feature")
    edit_list(listed, lambda items: items.pop(3))
    removed = land(listed, "Remove it again")
    edit_list(listed, lambda items: by_id(items, "F007").update(depends_on=["F001"]))
    depends = land(listed, "F007 depends on F001")
    edit_list(listed, lambda items: by_id(items, "F008").update(depends_on=["F404"]))
    dangling = land(listed, "F008 depends on nothing there")
    edit_list(listed, lambda items: by_id(items, "F008").pop("depends_on"))
    # (its parent holds no valid list: it establishes one again, and brings F002's pass —
    # decision record 0027)
    fixed = land(listed, "Drop the dangling dependency")
    # A layout shiftkit does not write: checked whole, every time.
    document = json.loads((listed / FEATURES).read_text())
    by_id(document["features"], "F009")["passes"] = True
    (listed / FEATURES).write_text(json.dumps(document, indent=4) + "\n")
    log_entry(listed, "F009", "passed")
    land(listed, "F009: works", flipped="F009")
    findings = batch_and_alone(listed)
    assert flagged(findings) == {
        renamed: {2},
        inserted: {2},
        removed: {2},
        depends: {2},
        dangling: {1},
        fixed: {2},
    }


def test_several_flips_and_status_changes_in_one_commit(listed: Path) -> None:
    set_passes(listed, "F003", True)
    set_passes(listed, "F005", True)
    two = land(listed, "F003 and F005: both done", flipped="F003")
    edit_list(listed, lambda items: by_id(items, "F007").update(attempts=2))
    land(listed, "F007: two attempts")
    edit_list(listed, lambda items: by_id(items, "F007").update(attempts=1))
    fewer = land(listed, "F007: one attempt after all")
    findings = batch_and_alone(listed)
    assert flagged(findings) == {two: {3, 6}, fewer: {7}}


def test_decision_records_with_one_number_are_named(listed: Path) -> None:
    folder = listed / "docs" / "decisions"
    write(folder / "0002-use-postgres.md", "# 2. Use Postgres\n")
    land(listed, "Decide on the database")
    write(folder / "0002-use-redis.md", "# 2. Use Redis\n")
    twice = land(listed, "Decide on the cache")
    write(listed / "README.md", "unrelated\n")
    land(listed, "Write a README")
    findings = batch_and_alone(listed)
    assert flagged(findings) == {twice: {13}}


LEDGER = ".shiftkit/ledger.jsonl"


def spend(project: Path, tokens: int) -> None:
    """One usage entry appended to the ledger, as shiftkit writes it."""
    from shiftkit.core import ledger

    path = project / LEDGER
    old = path.read_text() if path.exists() else ""
    entry = ledger.Entry(
        "usage",
        f"u{tokens:015d}",
        "2026-11-30T10:00:00.000Z",
        model="m",
        source="manual",
        usage=ledger.Usage(tokens, 0, 0, 1),
    )
    write(path, old + ledger.dumps_entry(entry) + "\n")


def test_ledger_rewrites_are_named_in_bulk_as_alone(listed: Path) -> None:
    spend(listed, 100)
    land(listed, "Record the first session's usage")
    spend(listed, 200)
    land(listed, "Record the second session's usage")
    path = listed / LEDGER
    write(path, path.read_text().replace('"input":100', '"input":1'))
    smaller = land(listed, "Correct the ledger")
    spend(listed, 300)
    land(listed, "Record the third session's usage")
    git_ok(listed, "checkout", "-q", "-b", "side")
    spend(listed, 400)
    land(listed, "Record usage on a branch")
    git_ok(listed, "checkout", "-q", "-")
    spend(listed, 500)
    land(listed, "Record usage on main")
    git_ok(listed, *PAST_ALL_HOOKS, "merge", "-q", "--no-ff", "--no-edit", "side")
    lines = path.read_text().splitlines(keepends=True)
    write(path, "".join(line for line in lines if '"input":400' not in line))
    lost = land(listed, "Drop a branch's usage")
    assert flagged(batch_and_alone(listed)) == {smaller: {12}, lost: {12}}


@pytest.mark.parametrize(("seed", "budget"), [(0, None), (1, None), (2, 1)])
def test_random_histories_are_judged_alike_in_bulk_and_alone(
    listed: Path, seed: int, budget: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any mix of honest and dishonest commits: the batch finds what judging each alone finds
    (also when its caches keep no more than the commit at hand: a budget of one character)."""
    from shiftkit.edge import history

    if budget is not None:
        monkeypatch.setattr(history, "_TEXT_BUDGET", budget)
    rng = random.Random(seed)

    def items() -> list[dict[str, Any]]:
        return json.loads((listed / FEATURES).read_text())["features"]  # type: ignore[no-any-return]

    def some(passing: bool | None = None) -> str:
        ids = [i["id"] for i in items() if passing is None or i["passes"] is passing]
        return rng.choice(ids or [i["id"] for i in items()])

    def change(feature_id: str, **fields: Any) -> None:
        edit_list(listed, lambda found: by_id(found, feature_id).update(fields))

    def prune() -> None:
        log = progress.parse((listed / LOG).read_text())
        archive = listed / "progress-archive.txt"
        old = archive.read_text() if archive.exists() else ""
        pruned = progress.prune(log, old, 2, [], "progress-archive.txt")
        (listed / LOG).write_text(pruned.log_text)
        archive.write_text(pruned.archive_text)
        land(listed, "Prune the log")

    def merge() -> None:
        git_ok(listed, "checkout", "-q", "-b", f"side{rng.random()}")
        honest_flip(listed, some(False))
        git_ok(listed, "checkout", "-q", "-")
        write(listed / "notes.txt", f"{rng.random()}\n")
        land(listed, "Take notes")
        git_ok(listed, *PAST_ALL_HOOKS, "merge", "-q", "--no-ff", "--no-edit", "-")

    def config() -> None:
        text = (listed / CONFIG).read_text()
        value = rng.choice(["max_attempts = 4", "max_attempts = 3", "regression_sample = 5"])
        (listed / CONFIG).write_text(re.sub(value.split(" =")[0] + r" = \d+", value, text))
        if rng.random() < 0.5:
            set_passes(listed, some(False), True)
        land(listed, "Tune the settings")

    operations: list[Callable[[], object]] = [
        lambda: honest_flip(listed, some(False)),
        lambda: honest_flip(listed, some(False)),
        lambda: demote(listed, some(True)),
        lambda: (
            set_passes(listed, some(False), True, log=rng.random() < 0.5),
            land(listed, "Done"),
        ),
        lambda: (change(some(), attempts=rng.randrange(3)), land(listed, "Count attempts")),
        lambda: (
            change(some(), blocked={"reason": "stuck", "since": "2026-11-29", "attempts": 2}),
            land(listed, "Block a feature"),
        ),
        lambda: (change(some(), description=f"reworded {rng.random()}"), land(listed, "Reword")),
        lambda: (change(some(), passes="maybe"), land(listed, "Break the list")),
        lambda: (
            edit_list(listed, lambda found: [i.update(passes=i["passes"] is True) for i in found]),
            land(listed, "Repair the list"),
        ),
        lambda: (write(listed / "src.py", f"x = {rng.random()}\n"), land(listed, "Change code")),
        lambda: (spend(listed, rng.randrange(1, 10**6)), land(listed, "Record usage")),
        lambda: (
            write(listed / LEDGER, "".join(sorted((listed / LEDGER).read_text().splitlines(True))))
            if (listed / LEDGER).exists()
            else None,
            land(listed, "Sort the ledger"),
        ),
        lambda: land(listed, rng.choice(["wip", "x" * 80, "Explain the code"])),
        prune,
        merge,
        config,
    ]
    for _ in range(30):
        rng.choice(operations)()
    for found in batch_and_alone(listed):
        assert found.violations or found.overridden or found.person_actions


def test_the_caches_keep_a_budget_of_text_and_the_newest_entries() -> None:
    from shiftkit.edge.history import _Lru

    cache = _Lru(4, budget=10, size_floor=2)
    for key, text in [("a", "x" * 6), ("b", "y" * 6), ("c", "z" * 6)]:
        cache.put(key, text)
    assert list(cache) == ["b", "c"] and cache.weight == 12  # the floor outweighs the budget
    cache.put("d", "")
    cache.put("e", "")
    assert list(cache) == ["c", "d", "e"] and cache.weight == 6  # within the budget again
    for key in "fghij":
        cache.put(key, None)
    assert list(cache) == ["g", "h", "i", "j"]  # and never more than its size


def test_audit_asks_git_the_same_few_times_however_long_the_history(
    listed: Path, tmp_path: Path
) -> None:
    """One git log, one diff-tree, long-lived cat-files: not a git process per commit."""
    counter = tmp_path / "bin"
    counter.mkdir()
    calls = tmp_path / "calls"
    real_git = shutil.which("git")
    (counter / "git").write_text(f'#!/bin/sh\necho "$1" >> {calls}\nexec {real_git} "$@"\n')
    (counter / "git").chmod(0o755)
    env = {"PATH": f"{counter}{os.pathsep}{os.environ['PATH']}"}

    def git_calls() -> int:
        calls.write_text("")
        result = shiftkit(listed, "audit", env=env)
        assert result.returncode == 0, result.output
        return len(calls.read_text().splitlines())

    for feature_id in ("F002", "F003", "F004"):
        honest_flip(listed, feature_id)
    short = git_calls()
    for feature_id in ("F005", "F006", "F007", "F008", "F009", "F010", "F011"):
        honest_flip(listed, feature_id)
        demote(listed, feature_id)
    assert git_calls() == short


# -- the text comparison alone --------------------------------------------------------------


def _mutations(rng: random.Random, text: str) -> list[tuple[str, Callable[[str], str]]]:
    blocks = text.split(features.ITEM_SEPARATOR)

    def in_block(change: Callable[[str], str], index: int | None = None) -> Callable[[str], str]:
        def apply(t: str) -> str:
            edited = t.split(features.ITEM_SEPARATOR)
            i = rng.randrange(len(edited)) if index is None else min(index, len(edited) - 1)
            edited[i] = change(edited[i])
            return features.ITEM_SEPARATOR.join(edited)

        return apply

    def flip(block: str) -> str:
        return block.replace('"passes": false', '"passes": true').replace(
            '"passes": true', '"passes": false'
        )

    def set_field(field: str, value: Any) -> Callable[[str], str]:
        def change(block: str) -> str:
            lines = block.split("\n")
            at = next((i for i, line in enumerate(lines) if '"passes"' in line), len(lines) - 1)
            lines.insert(at, f'      "{field}": {json.dumps(value)},')
            return "\n".join(lines)

        return change

    def splice(_: str) -> str:
        at = rng.randrange(len(text))
        return text[:at] + rng.choice(["}", "{", ",", '"', "\n    },\n    {\n", "x"]) + text[at:]

    return [
        ("flip", in_block(flip)),
        ("flip first", in_block(flip, 0)),
        ("flip last", in_block(flip, len(blocks) - 1)),
        ("attempts", in_block(set_field("attempts", rng.randrange(5)))),
        ("negative attempts", in_block(set_field("attempts", -1))),
        ("attempts as text", in_block(set_field("attempts", "2"))),
        ("blocked", in_block(set_field("blocked", {"reason": "r", "since": "s", "attempts": 1}))),
        ("bad blocked", in_block(set_field("blocked", {"reason": ""}))),
        ("unknown key", in_block(set_field("colour", "red"))),
        ("core", in_block(set_field("core", True))),
        ("depends", in_block(set_field("depends_on", ["F001"]))),
        ("id", in_block(lambda b: b.replace('"id": "F0', '"id": "G0', 1))),
        (
            "id taken",
            in_block(lambda b: b.replace(b[b.index('"id"') :].split(",")[0], '"id": "F001"')),
        ),
        ("description", in_block(lambda b: b.replace("works", "works well", 1))),
        (
            "empty steps",
            in_block(lambda b: b.split('"steps"')[0] + '"steps": [],\n      "passes": false'),
        ),
        ("two flips", lambda t: in_block(flip)(in_block(flip)(t))),
        ("splice", splice),
        ("drop a block", lambda t: features.ITEM_SEPARATOR.join(blocks[:3] + blocks[4:])),
        ("copy a block", lambda t: features.ITEM_SEPARATOR.join(blocks[:3] + blocks[2:])),
        ("reindent", lambda t: t.replace("\n      ", "\n     ", 1 + rng.randrange(9))),
        ("unicode", in_block(lambda b: b.replace("works", "w\u00f6rks \ud800", 1))),
    ]


def _checked(text: str) -> features.FeatureList:
    """``text`` as shiftkit reads a list it checked before: by its table and spans."""
    parsed = features.loads(text)
    items = parsed.items
    return features.FeatureList.from_text(
        text, features.table_of(items), features.item_spans(text, items), parsed.schema_ref
    )


def _loads(text: str) -> features.FeatureList | None:
    try:
        return features.loads(text)
    except BadInput:
        return None


@pytest.mark.parametrize("seed", range(6))
def test_the_item_by_item_check_agrees_with_a_full_check(seed: int) -> None:
    rng = random.Random(seed)
    items = make_items(rng.randrange(3, 40))
    items = [f._replace(passes=rng.random() < 0.5) for f in items]
    base_text = features.dumps(features.FeatureList(items))
    base = _checked(base_text)
    assert base.spans is not None
    text = base_text
    for _ in range(60):
        name, mutate = rng.choice(_mutations(rng, text))
        candidate = mutate(text)
        full = _loads(candidate)
        quick = features.loads_against(candidate, base)
        if quick is None:
            continue  # the caller checks it whole, as the full check does
        assert full is not None, (name, candidate)
        assert features.same_json(list(quick.items), list(full.items)), name
        assert quick.schema_ref == full.schema_ref
        differs = [i for i, item in enumerate(full.items[: len(base)]) if item != base.items[i]]
        # (by text: an item laid out anew counts as changed, and compares equal later)
        assert set(differs) <= set(features.changed_positions(base, quick) or ()), name
        for item in full.items:
            assert quick.position(item["id"]) == full.position(item["id"])
        base, text = quick, candidate  # a chain of lists checked beside each other


def test_the_item_by_item_check_takes_flips_and_leaves_the_rest(listed: Path) -> None:
    text = (listed / FEATURES).read_text()
    base = _checked(text)
    document = json.loads(text)
    by_id(document["features"], "F006")["passes"] = True
    flipped = json.dumps(document, indent=2) + "\n"
    quick = features.loads_against(flipped, base)
    assert quick is not None and features.changed_positions(base, quick) == [6]
    assert quick.get("F006") == base.get("F006")._replace(passes=True)  # type: ignore[union-attr]
    by_id(document["features"], "F000")["passes"] = True  # the first item, after the head
    both = features.loads_against(json.dumps(document, indent=2) + "\n", base)
    assert both is not None and features.changed_positions(base, both) == [0, 6]
    document["features"].pop()  # an item gone: the full check names it
    assert features.loads_against(json.dumps(document, indent=2) + "\n", base) is None


def test_git_asked_ahead_is_stopped_and_a_dead_git_is_an_error(scaffold: Path) -> None:
    big = "x" * (3 << 20)  # more than the pipe holds: git blocks writing it
    oid = run(["git", "hash-object", "-w", "--stdin"], scaffold, input=big).stdout.strip()
    cat = history._Cat(scaffold, "--batch")
    cat.request([oid])
    closing = threading.Thread(target=cat.close)
    closing.start()
    closing.join(timeout=30)
    assert not closing.is_alive()
    cat = history._Cat(scaffold, "--batch")
    cat.proc.kill()
    cat.proc.wait()
    with pytest.raises(gitio.GitFailed):
        cat.answer()
    cat = history._Cat(scaffold, "--batch")
    cat.proc.kill()
    cat.proc.wait()
    with pytest.raises(gitio.GitFailed):
        cat.request([oid])


def test_audit_words_one_commit_and_a_long_subject() -> None:
    from shiftkit.commands import audit as audit_mod
    from shiftkit.core import rules

    subject = "Rewrite the whole storage layer and the API handlers at once, then more"
    bad = audit_mod.Finding("a" * 40, subject, [rules.Violation(9, "too long")])
    text = audit_mod.render([bad], 1)
    assert text.splitlines()[-1].startswith("audit: 1 commit checked, 1 with violations")
    assert f"{'a' * 7} 'Rewrite the whole storage layer and the API handl…': rule 9" in text
    assert audit_mod.render([], 2).startswith("audit: 2 commits checked")
    short = audit_mod.render([audit_mod.Finding("b" * 40, "wip", [rules.Violation(9, "x")])], 1)
    assert "'wip': rule 9: x" in short
