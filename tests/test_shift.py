"""The shift, end to end: real git, real hooks, real pytest verifiers."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from conftest import git_ok, implement, shiftkit, write

from shiftkit.core import features, progress


def listing(project: Path) -> features.FeatureList:
    return features.loads((project / "features.json").read_text())


def ok(project: Path, *args: str) -> str:
    result = shiftkit(project, *args)
    assert result.returncode == 0, result.output
    assert "Traceback" not in result.output
    return result.stdout


def head(project: Path) -> str:
    return git_ok(project, "rev-parse", "HEAD").strip()


def finish_f000(project: Path) -> None:
    ok(project, "claim")
    ok(project, "finish", "-m", "the environment builds")


def test_claim_implement_finish(calc: Path) -> None:
    finish_f000(calc)
    out = ok(calc, "claim")
    assert "claimed F001" in out
    implement(calc, "add")
    ok(calc, "note", "add is plain integer addition")
    out = ok(calc, "finish", "-m", "add two numbers", "--note", "sub is next")
    assert "F001 passes" in out
    message = git_ok(calc, "log", "-1", "--format=%B")
    assert message.startswith("F001: add two numbers\n")
    assert "Shiftkit-Feature: F001" in message
    tree = git_ok(calc, "rev-parse", "HEAD^{tree}").strip()
    assert f"Shiftkit-Verified: {tree}" in message
    assert listing(calc).by_id["F001"].passes
    last = progress.parse((calc / "claude-progress.txt").read_text()).entries[-1]
    assert (last.feature, last.outcome) == ("F001", "passed")
    assert "add is plain integer addition" in last.body and "sub is next" in last.body
    assert git_ok(calc, "status", "--porcelain") == ""
    assert git_ok(calc, "for-each-ref", "refs/shiftkit/claims/") == ""
    assert "claimed 0" in shiftkit(calc, "status").stdout


def tree_digest(project: Path) -> dict[str, str]:
    """Every file git does not ignore (tracked or not), with its content's hash."""
    listing = git_ok(project, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    return {
        name: hashlib.sha256((project / name).read_bytes()).hexdigest()
        for name in listing.split("\0")
        if name and (project / name).is_file()
    }


def test_broken_finish_refused_then_revert_restores(calc: Path) -> None:
    finish_f000(calc)
    ignored = write(calc / "build" / "cache.bin", "precious build output\n")
    ignored_stat = ignored.stat()
    ok(calc, "claim")
    base = head(calc)
    before = tree_digest(calc)
    implement(calc, "add", good=False)
    write(calc / "scratch" / "notes.txt", "attempt notes\n")
    refused = shiftkit(calc, "finish", "-m", "add two numbers")
    assert refused.returncode == 1 and "F001 does not pass" in refused.stderr
    assert "assert 3 == 5" in refused.stdout  # the tail of the verifier's output
    assert head(calc) == base
    assert not listing(calc).by_id["F001"].passes
    out = ok(calc, "revert", "--reason", "multiplies by zero")
    assert "not restored: ignored files" in out
    after = tree_digest(calc)
    for name in ("features.json", "claude-progress.txt", ".shiftkit/ledger.jsonl"):
        before.pop(name, None), after.pop(name)
    assert after == before  # byte-identical to the base, attempt's untracked files gone
    assert not (calc / "scratch").exists()
    assert (
        ignored.read_text() == "precious build output\n"
        and ignored.stat().st_mtime == ignored_stat.st_mtime
    )
    assert listing(calc).by_id["F001"].attempts == 1
    assert git_ok(calc, "rev-parse", "HEAD^").strip() == base
    changed = sorted(git_ok(calc, "show", "--name-only", "--format=", "HEAD").split())
    assert changed == [".shiftkit/ledger.jsonl", "claude-progress.txt", "features.json"]
    last = progress.parse((calc / "claude-progress.txt").read_text()).entries[-1]
    assert last.outcome == "attempt 1 failed, reverted" and "multiplies by zero" in last.body
    assert git_ok(calc, "status", "--porcelain") == ""


def test_three_failed_attempts_block_then_unblock(calc: Path) -> None:
    finish_f000(calc)
    for attempt in (1, 2, 3):
        assert "claimed F001" in ok(calc, "claim")
        implement(calc, "add", good=False)
        ok(calc, "revert", "--reason", f"attempt {attempt} went wrong")
    feature = listing(calc).by_id["F001"]
    assert feature.attempts == 3 and feature.blocked is not None
    assert "3 failed attempts" in feature.blocked.reason
    assert json.loads(ok(calc, "next", "--json"))["next"]["id"] == "F002"
    refused = shiftkit(calc, "claim", "F001")
    assert refused.returncode == 1 and "F001 is blocked" in refused.stderr
    assert "F001" in ok(calc, "status")
    ok(calc, "unblock", "F001", "--note", "the spec was clarified")
    feature = listing(calc).by_id["F001"]
    assert feature.blocked is None and feature.attempts == 0
    assert (
        progress.parse((calc / "claude-progress.txt").read_text()).entries[-1].outcome
        == "unblocked"
    )
    assert json.loads(ok(calc, "next", "--json"))["next"]["id"] == "F001"


def test_same_failure_twice_blocks(calc: Path) -> None:
    finish_f000(calc)
    for _ in range(2):
        ok(calc, "claim")
        implement(calc, "add", good=False)
        assert shiftkit(calc, "verify").returncode == 1
        ok(calc, "revert", "--reason", "still wrong")
    feature = listing(calc).by_id["F001"]
    assert feature.attempts == 2 and feature.blocked is not None
    assert "the same failure twice" in feature.blocked.reason


def test_regression_is_demoted_at_start(calc: Path) -> None:
    finish_f000(calc)
    ok(calc, "claim")
    implement(calc, "add")
    ok(calc, "finish", "-m", "add two numbers")
    # A later ordinary commit breaks F001.
    ops = calc / "calc" / "ops.py"
    ops.write_text(ops.read_text().replace("a + b", "a + b + 1"))
    git_ok(calc, "commit", "-q", "-am", "Tweak add for a new rounding rule")
    broken_head = head(calc)
    out = ok(calc, "start")
    assert "demoted F001" in out or "repair first: F001" in out
    assert head(calc) != broken_head
    assert "F001: demoted" in git_ok(calc, "log", "-1", "--format=%s")
    assert not listing(calc).by_id["F001"].passes
    assert (
        progress.parse((calc / "claude-progress.txt").read_text()).entries[-1].outcome
        == "demoted (regression)"
    )
    assert json.loads(ok(calc, "next", "--json"))["next"]["id"] == "F001"
    assert "claimed F001" in ok(calc, "claim")


def test_prune_after_twelve_finishes(scaffold: Path) -> None:
    config = scaffold / ".shiftkit.toml"
    config.write_text(
        config.read_text().replace("keep = 20", "keep = 5").replace("block = 10", "block = 3")
    )
    for i in range(12):
        ok(scaffold, "add", "--description", f"step {i}", "--step", "s", "--verify", "true")
    git_ok(scaffold, "commit", "-q", "-am", "Twelve small features and a short log")
    preamble = progress.parse((scaffold / "claude-progress.txt").read_text()).preamble
    ok(scaffold, "claim", "F000")
    ok(scaffold, "finish", "-m", "environment ok")
    written = ["F000"]
    for i in range(1, 12):
        before = (scaffold / "claude-progress.txt").read_text()
        ok(scaffold, "claim")
        ok(scaffold, "finish", "-m", f"feature {i} done")
        written.append(f"F{i:03d}")
        after = (scaffold / "claude-progress.txt").read_text()
        log = progress.parse(after)
        assert len(log.entries) <= 8
        if len(progress.parse(before).entries) < 8:
            assert after.startswith(before)  # a non-prune finish only appends
    log = progress.parse((scaffold / "claude-progress.txt").read_text())
    archive = progress.parse((scaffold / "progress-archive.txt").read_text())
    assert [e.feature for e in archive.entries] + [e.feature for e in log.entries] == written
    assert log.preamble == preamble
    assert log.index_line and log.index_line.startswith(
        f"[shiftkit] {len(archive.entries)} earlier entries"
    )


def test_verifier_runs_once_per_finish(calc: Path, tmp_path: Path) -> None:
    counter = tmp_path / "verifier-runs.txt"
    ok(
        calc,
        "add",
        "--description",
        "counted",
        "--step",
        "s",
        "--verify",
        f"echo run >> {counter} && python -m pytest -q -p no:cacheprovider tests/test_add.py",
    )
    git_ok(calc, "commit", "-q", "-am", "Add a feature whose verifier counts its runs")
    finish_f000(calc)
    ok(calc, "claim", "F004")
    implement(calc, "add")
    ok(calc, "finish", "-m", "counted feature works")
    assert counter.read_text().count("run") == 1


def test_shift_in_a_linked_worktree(calc: Path, tmp_path: Path) -> None:
    finish_f000(calc)
    other = tmp_path / "second-worktree"
    git_ok(calc, "worktree", "add", "-q", "-b", "second", str(other))
    assert "linked worktree" in ok(other, "start", "--no-check")
    ok(other, "claim", "F002")
    # The claim is visible from the main worktree and refused there with exit 3.
    held = shiftkit(calc, "claim", "F002")
    assert held.returncode == 3 and "F002 is claimed by session" in held.stderr
    assert "F002" in ok(calc, "claims")
    implement(other, "sub", good=False)
    assert shiftkit(other, "verify").returncode == 1
    ok(other, "note", "first try")
    ok(other, "revert", "--reason", "wrong sign")
    ok(other, "claim", "F002")
    implement(other, "sub")
    assert shiftkit(other, "verify").returncode == 0
    ok(other, "finish", "-m", "subtract two numbers")
    assert listing(other).by_id["F002"].passes
    ok(other, "claim")
    write(other / "wip.txt", "half done\n")
    assert shiftkit(other, "stop-check", input="{}").returncode == 2
    (other / "wip.txt").unlink()
    ok(other, "release")
    assert git_ok(other, "status", "--porcelain") == ""
    for args in (["status"], ["next"], ["show", "F002"], ["claims"], ["log"], ["validate"]):
        ok(other, *args)
    assert "0002-" in ok(
        other,
        "decide",
        "Subtract with plain ints",
        "--why",
        "no decimals needed",
        "--rejected",
        "Decimal: slower, not needed",
    )
    assert "main worktree" in ok(calc, "start", "--no-check")


def test_release_gives_back_without_counting(calc: Path) -> None:
    ok(calc, "claim")
    ok(calc, "release")
    assert listing(calc).by_id["F000"].attempts == 0
    assert git_ok(calc, "for-each-ref", "refs/shiftkit/claims/") == ""


def test_release_says_the_note_it_does_not_log(calc: Path) -> None:
    ok(calc, "claim", "F000")
    assert "noted for the F000 log entry" in ok(calc, "note", "the parser chokes on tabs")
    released = ok(calc, "release")
    assert "note not logged" in released and "the parser chokes on tabs" in released
    ok(calc, "claim", "F000")  # the next claim's entry does not carry it
    assert not (calc / ".git" / "shiftkit" / "pending-note.txt").exists()
    assert "note not logged" not in ok(calc, "release")
    assert "the parser chokes on tabs" not in (calc / "claude-progress.txt").read_text()


def test_stop_check_without_a_claim_keeps_the_tree_clean(calc: Path) -> None:
    """No claim, a dirty tree (an untracked file that is not ignored counts): the first stop
    is refused naming the paths and the ways out; the second (`stop_hook_active`) is not."""
    write(calc / ".gitignore", "ignored.log\n")
    git_ok(calc, "add", ".gitignore")
    git_ok(calc, "commit", "-q", "-m", "Ignore the log file")
    write(calc / "ignored.log", "noise\n")
    assert shiftkit(calc, "stop-check", input="{}").returncode == 0  # ignored: clean
    for n in range(7):
        write(calc / f"junk{n}.txt", "x\n")
    write(calc / "calc" / "ops.py", "def add(a, b):\n    return a + b + 0\n")
    refused = shiftkit(calc, "stop-check", input=json.dumps({"stop_hook_active": False}))
    assert refused.returncode == 2
    line = refused.stderr.strip()
    assert line.startswith("shiftkit: no claim is open and the work tree has 8 uncommitted")
    assert "junk0.txt" in line and "and 3 more" in line and "ignored.log" not in line
    for way in ("git commit", "git stash --include-untracked", "delete it"):
        assert way in line
    let_go = shiftkit(calc, "stop-check", input=json.dumps({"stop_hook_active": True}))
    assert let_go.returncode == 0 and let_go.stderr == ""
    assert not (calc / ".git" / "shiftkit" / "pending-note.txt").exists()


def test_stop_check(calc: Path) -> None:
    assert shiftkit(calc, "stop-check", input="{}").returncode == 0
    ok(calc, "claim")
    assert shiftkit(calc, "stop-check", input="{}").returncode == 0  # clean tree
    write(calc / "wip.txt", "half done\n")
    blocked = shiftkit(calc, "stop-check", input=json.dumps({"stop_hook_active": False}))
    assert blocked.returncode == 2 and blocked.stderr.startswith("shiftkit: F000 is claimed")
    allowed = shiftkit(calc, "stop-check", input=json.dumps({"stop_hook_active": True}))
    assert allowed.returncode == 0
    pending = (calc / ".git" / "shiftkit" / "pending-note.txt").read_text()
    assert "stopped with F000 claimed" in pending


def test_all_pass_is_said_only_after_a_check_at_head(scaffold: Path) -> None:
    ok(scaffold, "claim")
    ok(scaffold, "finish", "-m", "environment works")
    unchecked = "all 1 features marked passing; not yet verified in a clean checkout of HEAD — run `shiftkit check`"
    for args in (["claim"], ["next"], ["start", "--no-check"], ["status"]):
        out = ok(scaffold, *args)
        assert unchecked in out and "nothing to do" not in out
    assert "all 1 features pass (checked at HEAD) — nothing to do" in ok(scaffold, "check")
    for args in (["claim"], ["next"], ["start", "--no-check"], ["status"]):
        assert "all 1 features pass (checked at HEAD) — nothing to do" in ok(scaffold, *args)


def test_decide_writes_record_and_index(scaffold: Path) -> None:
    out = ok(
        scaffold,
        "decide",
        "Use SQLite for storage",
        "--why",
        "one file, no server",
        "--rejected",
        "PostgreSQL: a server to run in every shift",
    )
    assert "docs/decisions/0002-use-sqlite-for-storage.md" in out
    record = (scaffold / "docs/decisions/0002-use-sqlite-for-storage.md").read_text()
    assert (
        "## Rejected alternatives\n\n- PostgreSQL" in record and "## Context\n\none file" in record
    )
    index = (scaffold / "docs/decisions/README.md").read_text()
    assert index.endswith("- [0002](0002-use-sqlite-for-storage.md) Use SQLite for storage\n")
    assert "0002 Use SQLite for storage" in ok(scaffold, "start", "--no-check")  # (its number once)


def test_start_brief_is_bounded_and_reports_size(calc: Path) -> None:
    out = ok(calc, "start", "--brief", "--no-check")
    assert len(out.encode()) <= 8 * 1024
    last = out.rstrip("\n").splitlines()[-1]
    assert last.startswith("~") and f"({len(out.rstrip(chr(10)).encode()) + 1} bytes)" in last
    data = json.loads(ok(calc, "start", "--json", "--no-check"))
    assert data["next"][0]["id"] == "F000" and data["counts"]["total"] == 4


BAD = [
    ("finish", ["finish", "-m", "done"], 1, "no open claim in this worktree"),
    ("revert", ["revert", "--reason", "x"], 1, "no open claim in this worktree"),
    ("note", ["note", "hello"], 1, "no open claim in this worktree"),
    ("claim_unknown", ["claim", "F999"], 2, "unknown feature id 'F999'"),
    ("verify_unknown", ["verify", "F999"], 2, "unknown feature id 'F999'"),
    ("unblock_unknown", ["unblock", "F999", "--note", "x"], 2, "unknown feature id 'F999'"),
    ("unblock_not_blocked", ["unblock", "F001", "--note", "x"], 1, "F001 is not blocked"),
    ("unblock_empty", ["unblock", "F001", "--note", " "], 2, "--note is empty"),
    ("release_none", ["release"], 1, "this worktree holds no claim"),
    ("release_unknown", ["release", "F003"], 2, "no claim on 'F003'"),
    ("finish_no_message", ["finish"], 2, "Missing option '-m'"),
    ("revert_no_reason", ["revert"], 2, "Missing option '--reason'"),
    ("decide_no_rejected", ["decide", "T", "--why", "w"], 2, "Missing option '--rejected'"),
    ("decide_empty_title", ["decide", " ", "--why", "w", "--rejected", "r"], 2, "TITLE is empty"),
    ("claim_passing", ["claim", "F000"], 1, "F000 already passes"),
    ("claim_unmet_dep", ["claim", "F005"], 1, "F005 depends on F001"),
    (
        "claims_remote",
        ["claim"],
        2,
        "'shiftkit.claims.remote' names 'origin', which is not a remote of this repository",
    ),
]


def _prepare(project: Path, case: str) -> None:
    if case in {"claim_passing", "unblock_not_blocked", "claim_unmet_dep"}:
        finish_f000(project)
    if case == "claim_unmet_dep":
        ok(
            project,
            "add",
            "--id",
            "F005",
            "--description",
            "needs add",
            "--step",
            "s",
            "--depends-on",
            "F001",
        )
        git_ok(project, "commit", "-q", "-am", "Add F005, which depends on F001")
    if case == "claims_remote":
        config = project / ".shiftkit.toml"
        config.write_text(config.read_text().replace('remote = ""', 'remote = "origin"'))
        git_ok(project, "commit", "-q", "-am", "Share claims through origin")


@pytest.mark.parametrize(("case", "args", "code", "fragment"), BAD, ids=[b[0] for b in BAD])
def test_bad_input(calc: Path, case: str, args: list[str], code: int, fragment: str) -> None:
    _prepare(calc, case)
    result = shiftkit(calc, *args)
    assert result.returncode == code, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("shiftkit: ") and fragment in lines[0], (
        result.stderr
    )


def test_claim_refusals(calc: Path) -> None:
    write(calc / "dirty.txt", "x\n")
    dirty = shiftkit(calc, "claim")
    assert dirty.returncode == 1 and "the work tree is not clean (dirty.txt)" in dirty.stderr
    assert dirty.stderr.count("\n") == 1 and "Traceback" not in dirty.output
    assert "stash it, claim, then `git stash pop`" in dirty.stderr  # (an agent trial asked)
    (calc / "dirty.txt").unlink()
    ok(calc, "claim")
    second = shiftkit(calc, "claim", "F001")
    assert second.returncode == 1 and "already holds a claim on F000" in second.stderr
    ok(calc, "release")
    git_ok(calc, "checkout", "-q", "--detach")
    detached = shiftkit(calc, "claim")
    assert detached.returncode == 1 and "HEAD is detached" in detached.stderr
    for result in (second, detached):
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.output


def test_verifier_not_found_and_timeout(calc: Path) -> None:
    ok(
        calc,
        "add",
        "--description",
        "missing tool",
        "--step",
        "s",
        "--verify",
        "no-such-tool --check",
    )
    ok(calc, "add", "--description", "slow", "--step", "s", "--verify", "sleep 30")
    config = calc / ".shiftkit.toml"
    config.write_text(config.read_text().replace("verify_timeout = 900", "verify_timeout = 1"))
    git_ok(calc, "commit", "-q", "-am", "Two awkward features and a short timeout")
    missing = shiftkit(calc, "verify", "F004")
    assert missing.returncode == 1 and "exit 127 (command not found)" in missing.stdout
    slow = shiftkit(calc, "verify", "F005")
    assert slow.returncode == 1 and "timed out after 1s" in slow.stdout
    for result in (missing, slow):
        assert "Traceback" not in result.output


def test_finish_message_too_long(calc: Path) -> None:
    ok(calc, "claim")
    result = shiftkit(calc, "finish", "-m", "x" * 80)
    assert result.returncode == 2 and "keep -m to 66 and put the detail in --note" in result.stderr


def test_claim_held_by_another_session_exit_3_and_steal(calc: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    git_ok(calc, "worktree", "add", "-q", "-b", "other", str(other))
    ok(other, "claim", "F000")
    held = shiftkit(calc, "claim", "F000")
    assert held.returncode == 3 and "worktree" in held.stderr
    release = shiftkit(calc, "release", "F000")
    assert release.returncode == 3
    live = shiftkit(calc, "claim", "F000", "--steal")
    assert live.returncode == 3 and "add --force to take a live one" in live.stderr
    ok(calc, "claim", "F000", "--steal", "--force")
    assert "claim taken over" in (calc / ".git" / "shiftkit" / "pending-note.txt").read_text()
