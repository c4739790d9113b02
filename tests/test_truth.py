""" "Passing" means it passes at HEAD (issue 18): the start sample rotates over every passing
feature, `shiftkit check` verifies them all at HEAD, "all pass" is a checked statement, a dirty
tree does not switch the check off, and the session never ends dirty. Real git, real hooks."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import (
    copy_of,
    git,
    git_ok,
    isolated_environment,
    ok,
    shiftkit,
    write,
)

# F001 stays open (so "repair first" can be seen); F002..F006 pass, F002 is core (F000 too).
OPEN = "open"
PASSING = ["alpha", "beta", "gamma", "delta", "eps"]
IDS = {name: f"F{n:03d}" for n, name in enumerate([OPEN, *PASSING], 1)}


def _add(project: Path, name: str, core: bool = False) -> None:
    ok(
        project,
        "add",
        "--description",
        f"{name}.txt says ok",
        "--step",
        f"write ok into {name}.txt",
        "--verify",
        f"grep -q ok {name}.txt",
        *(["--core"] if core else []),
    )


@pytest.fixture(scope="module")
def pristine_six(
    pristine_scaffold: Path, tmp_path_factory: pytest.TempPathFactory, isolated_home: Path
) -> Path:
    """Six passing features (F000 and F002 core) and one open, each made passing through
    claim and finish."""
    with isolated_environment(isolated_home):
        project = copy_of(pristine_scaffold, tmp_path_factory.mktemp("six"))
        ok(project, "claim", "F000")
        ok(project, "finish", "-m", "the environment builds")
        _add(project, OPEN)
        for n, name in enumerate(PASSING):
            _add(project, name, core=n == 0)
        git_ok(project, "commit", "-q", "-am", "Add six features")
        for name in PASSING:
            ok(project, "claim", IDS[name])
            write(project / f"{name}.txt", "ok\n")
            ok(project, "finish", "-m", f"write {name}.txt")
        assert git_ok(project, "status", "--porcelain") == ""
        return project


@pytest.fixture
def six(pristine_six: Path, tmp_path: Path) -> Path:
    return copy_of(pristine_six, tmp_path)


def passes_at_head(project: Path) -> dict[str, bool]:
    listing = json.loads(git_ok(project, "show", "HEAD:features.json"))
    return {item["id"]: item["passes"] for item in listing["features"]}


def break_plainly(project: Path, name: str) -> None:
    """An honest slip: a plain commit, through every hook, that breaks an old feature."""
    write(project / f"{name}.txt", "renamed\n")
    git_ok(project, "commit", "-q", "-am", f"Reword {name}.txt for the new wording")


def test_the_start_sample_finds_a_broken_non_core_feature_within_three_starts(six: Path) -> None:
    """6 passing, 2 core, sample 2: a plain commit breaks a non-core feature; it is demoted
    within ⌈6/2⌉ = 3 consecutive `start` runs (core-first sampling never reached it)."""
    break_plainly(six, "eps")
    broken = IDS["eps"]
    for _ in range(3):
        out = ok(six, "start")
        if not passes_at_head(six)[broken]:
            break
    else:
        pytest.fail(f"{broken} is still passing after 3 start checks:\n{out}")
    assert f"repair first: {broken} (demoted at start)" in out
    assert f"{broken}: demoted, its verifier fails at session start" in git_ok(
        six, "log", "-1", "--format=%s"
    )


def test_every_passing_feature_is_sampled_within_three_starts(six: Path) -> None:
    sampled: set[str] = set()
    for _ in range(3):
        checks = json.loads(ok(six, "start", "--json"))["checks"]
        assert len(checks["regression"]) == 2
        sampled |= {row["id"] for row in checks["regression"]}
    assert sampled == {"F000", *(IDS[name] for name in PASSING)}


def test_check_finds_it_at_once_and_demotes_in_one_commit(six: Path) -> None:
    break_plainly(six, "delta")
    broken = IDS["delta"]
    before = git_ok(six, "rev-parse", "HEAD").strip()
    result = shiftkit(six, "check", "-j", "2")
    assert result.returncode == 1, result.output
    assert f"FAILED {broken}: exit 1" in result.stdout
    assert f"demoted {broken} in " in result.stdout
    assert git_ok(six, "rev-parse", "HEAD~1").strip() == before  # one commit
    changed = git_ok(six, "diff", "--name-only", "HEAD~1", "HEAD").split()
    assert changed == ["claude-progress.txt", "features.json"]
    assert passes_at_head(six)[broken] is False
    assert sum(passes_at_head(six).values()) == 5
    audit = shiftkit(six, "audit")
    assert audit.returncode == 0, audit.output
    # repair first: F001 is open and earlier in the list, yet the demoted feature comes first
    assert ok(six, "next").startswith(f"{broken}  delta.txt says ok")
    assert shiftkit(six, "audit", "--reverify").returncode == 0


def test_a_second_check_at_the_same_head_runs_nothing(six: Path) -> None:
    first = json.loads(ok(six, "check", "--json"))
    assert (first["ran"], first["cached"], first["failed"]) == (6, 0, [])
    again = json.loads(ok(six, "check", "--json"))
    assert (again["ran"], again["cached"]) == (0, 6)
    assert again["all_pass"] is False  # F001 is open: not every feature passes
    assert "all 6 passing features pass at HEAD" in ok(six, "check")


def test_all_pass_is_said_only_after_check_and_run_never_exits_0_unchecked(
    six: Path, tmp_path: Path
) -> None:
    """Every feature marked passing, one broken at HEAD; a stand-in agent that does nothing.
    `run` checks before it would stop with 0, demotes the broken one and goes on."""
    ok(six, "claim", IDS[OPEN])
    write(six / "open.txt", "ok\n")
    ok(six, "finish", "-m", "write open.txt")
    break_plainly(six, "gamma")
    broken = IDS["gamma"]
    for command in ("status", "next"):
        out = ok(six, command)
        assert "all 7 features marked passing; not yet verified in a clean checkout of HEAD" in out
        assert "nothing to do" not in out
    agent = write(tmp_path / "idle-agent.py", "import sys\nsys.exit(0)\n")
    result = shiftkit(six, "run", "--agent", f"{sys.executable} {agent}", "--max-sessions", "2")
    assert result.returncode != 0, result.output
    assert f"check at HEAD: {broken} failed, demoted" in result.stdout
    assert passes_at_head(six)[broken] is False
    assert "stopped: all" not in result.stdout


def test_run_stops_with_0_only_when_check_passes_at_head(six: Path, tmp_path: Path) -> None:
    ok(six, "claim", IDS[OPEN])
    write(six / "open.txt", "ok\n")
    ok(six, "finish", "-m", "write open.txt")
    agent = write(tmp_path / "idle-agent.py", "raise SystemExit(0)\n")
    result = shiftkit(six, "run", "--agent", f"{sys.executable} {agent}")
    assert result.returncode == 0, result.output
    assert "stopped: all 7 features pass (checked at HEAD) — exit 0, after 0 sessions" in (
        result.stdout
    )
    assert "all 7 features pass (checked at HEAD) — nothing to do" in ok(six, "status")


def test_a_dirty_tree_does_not_switch_the_check_off(six: Path) -> None:
    write(six / "notes.md", "tracked notes\n")
    git_ok(six, "add", "notes.md")
    git_ok(six, "commit", "-q", "-m", "Keep notes")
    break_plainly(six, "beta")
    broken = IDS["beta"]
    write(six / "scratch.txt", "an unrelated untracked file\n")
    write(six / "notes.md", "tracked notes, edited\n")
    dirty = git_ok(six, "status", "--porcelain")
    for _ in range(3):
        out = ok(six, "start")
        if not passes_at_head(six)[broken]:
            break
    assert passes_at_head(six)[broken] is False, out
    assert "(in a checkout of HEAD: the work tree is dirty)" in out
    assert git_ok(six, "status", "--porcelain") == dirty
    assert (six / "notes.md").read_text() == "tracked notes, edited\n"
    assert (six / "scratch.txt").exists()
    changed = git_ok(six, "diff", "--name-only", "HEAD~1", "HEAD").split()
    assert changed == ["claude-progress.txt", "features.json"]


def test_a_dirty_list_is_named_not_committed(six: Path) -> None:
    break_plainly(six, "alpha")
    write(six / "features.json", (six / "features.json").read_text() + " ")
    head = git_ok(six, "rev-parse", "HEAD")
    result = shiftkit(six, "check")
    assert result.returncode == 1
    assert "features.json has uncommitted changes, and the demotion commits it" in result.stderr
    assert result.stderr.startswith("shiftkit: ") and len(result.stderr.splitlines()) == 1
    assert git_ok(six, "rev-parse", "HEAD") == head


def test_a_hanging_verifier_is_killed_and_counts_as_a_failure(six: Path, tmp_path: Path) -> None:
    config = six / ".shiftkit.toml"
    config.write_text(config.read_text().replace("verify_timeout = 900", "verify_timeout = 1"))
    git_ok(six, "commit", "-q", "-am", "Shorter verifier timeout\n\nShiftkit-Override: a test")
    # gamma's verifier cannot change (rule 2): its file becomes a link to a pipe nobody
    # writes, and `grep` blocks on it.
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    (six / "gamma.txt").unlink()
    (six / "gamma.txt").symlink_to(pipe)
    git_ok(six, "add", "-A")
    git_ok(six, "commit", "-q", "-m", "Read gamma from a pipe")
    result = shiftkit(six, "check")
    assert result.returncode == 1, result.output
    assert f"FAILED {IDS['gamma']}: timed out after 1s" in result.stdout


@pytest.mark.parametrize("case", ["unborn", "detached", "shallow"])
def test_check_where_it_cannot_record_says_one_line(case: str, six: Path, tmp_path: Path) -> None:
    target = six
    if case == "unborn":
        git_ok(six, "checkout", "-q", "--orphan", "fresh")
    elif case == "detached":
        git_ok(six, "checkout", "-q", "--detach")
    else:
        target = tmp_path / "shallow"
        git_ok(tmp_path, "clone", "-q", "--depth", "1", f"file://{six}", str(target))
    result = shiftkit(target, "check")
    assert result.returncode == 2, result.output
    assert result.stderr.startswith("shiftkit: ") and len(result.stderr.splitlines()) == 1
    assert "Traceback" not in result.output
    if case == "detached":
        verified = shiftkit(target, "check", "--no-demote")
        assert verified.returncode == 0, verified.output


def test_finish_names_what_it_adds_unstaged(six: Path) -> None:
    ok(six, "claim", IDS[OPEN])
    write(six / "open.txt", "ok\n")
    write(six / "debug_out.txt", "left behind\n")
    write(six / ".gitignore", "ignored.out\n")
    git_ok(six, "add", ".gitignore")
    write(six / "ignored.out", "never committed\n")
    out = ok(six, "finish", "-m", "write open.txt")
    assert "adding what was not staged: debug_out.txt, open.txt" in out
    committed = git_ok(six, "show", "--name-only", "--format=", "HEAD").split()
    assert "debug_out.txt" in committed and "ignored.out" not in committed


def test_a_flip_past_the_hooks_is_told_the_rule_that_broke(six: Path) -> None:
    """Holding the claim, a flip committed with --no-verify lacks the claim trailers: the
    reference-transaction hook says so, not "this worktree holds no claim"."""
    ok(six, "claim", IDS[OPEN])
    write(six / "open.txt", "ok\n")
    ok(six, "verify")
    listing = json.loads((six / "features.json").read_text())
    for item in listing["features"]:
        if item["id"] == IDS[OPEN]:
            item["passes"] = True
    (six / "features.json").write_text(json.dumps(listing, indent=2) + "\n")
    from shiftkit.core import progress

    log = six / "claude-progress.txt"
    log.write_text(
        progress.append(
            log.read_text(),
            progress.format_entry("2026-12-01 10:00 UTC", IDS[OPEN], "passed", "abc1234", "ok"),
        )
    )
    git_ok(six, "add", "-A")
    result = git(six, "commit", "-q", "--no-verify", "-m", f"{IDS[OPEN]}: write open.txt")
    assert result.returncode != 0
    assert "holds no claim" not in result.stderr
    assert "names no claim on it (no Shiftkit-Claim" in result.stderr


def test_claim_of_a_feature_whose_dependency_fails_says_what_to_do(scaffold: Path) -> None:
    ok(scaffold, "add", "--description", "a", "--step", "s", "--verify", "true")
    ok(
        scaffold,
        "add",
        "--description",
        "b",
        "--step",
        "s",
        "--verify",
        "true",
        "--depends-on",
        "F001",
    )
    git_ok(scaffold, "commit", "-q", "-am", "Add two features")
    result = shiftkit(scaffold, "claim", "F002")
    assert result.returncode == 1
    assert "claim that first (`shiftkit claim F001`)" in result.stderr


def test_decide_commits_its_record_or_says_finish_will(scaffold: Path) -> None:
    out = ok(scaffold, "decide", "Use plain files", "--why", "small", "--rejected", "a db: big")
    assert "committed docs/decisions/0002-use-plain-files.md in " in out
    assert git_ok(scaffold, "status", "--porcelain") == ""
    ok(scaffold, "claim")
    out = ok(scaffold, "decide", "Keep it small", "--why", "x", "--rejected", "y: z")
    assert "not committed yet: `shiftkit finish` commits docs/decisions/0003-" in out


def test_the_brief_says_a_claim_needs_a_clean_tree(six: Path) -> None:
    write(six / "scratch.txt", "x\n")
    brief = ok(six, "start", "--brief", "--no-check")
    assert (
        "then: `shiftkit claim` to take it — it needs a clean tree, and 1 path is uncommitted"
        in brief
    )
    assert "(scratch.txt)" in brief
    (six / "scratch.txt").unlink()
    assert "then: `shiftkit claim` to take it\n" in ok(six, "start", "--brief", "--no-check")
