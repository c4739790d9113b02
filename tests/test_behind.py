"""What a clone that is behind its remote is told (issue 29, an agent trial): the start brief
is the remote's branch's throughout — counts, next, the newest log entries, the recent
commits — never the stale HEAD's next to the remote's counts (decision record 0079); every
count says where it is counted; and a claim that catches up does not verify the incoming
flips twice."""

from __future__ import annotations

import json
import re
from pathlib import Path

import needs
from conftest import git_ok, ok, shiftkit
from test_parallel import _machines
from test_publish_gate import FEATURE, _plain_commit, _team


def _header(brief: str) -> str:
    return next(line for line in brief.splitlines() if line.startswith("# shiftkit start"))


def _newest_entry(brief: str) -> str:
    lines = brief.splitlines()
    at = next(n for n, line in enumerate(lines) if line.startswith("## newest log entries"))
    return lines[at + 1]


def test_a_clone_behind_is_briefed_from_the_remotes_branch(scaffold: Path, tmp_path: Path) -> None:
    """Two caught up on F001 passing; the first breaks it (demoted by its publish gate), the
    second catches up on the demotion, the first repairs it. The second, behind by the
    repair, was shown the demotion as the newest entry beside the remote's count of the
    repair."""
    bare, one, two = _team(scaffold, tmp_path)
    _plain_commit(one, "Tidy up the files", remove="one.txt")
    assert "demoted" in ok(one, "sync")
    assert "fast-forwarded" in ok(two, "sync")
    demotion = _newest_entry(ok(two, "start", "--brief", "--no-check"))
    assert f"| {FEATURE} | demoted" in demotion, demotion
    ok(one, "claim", FEATURE)
    (one / "one.txt").write_text("one\n")
    git_ok(one, "add", "one.txt")
    ok(one, "finish", "-m", "one.txt is back")
    repair = git_ok(bare, "log", "-1", "--format=%h %s", "main").strip()
    for args in (("--brief",), ()):
        brief = ok(two, "start", *args, "--no-check")
        newest = _newest_entry(brief)
        assert f"| {FEATURE} | passed" in newest, brief  # (the repair, not the demotion)
        assert "(at origin/main, which this branch is behind)" in _header(brief), brief
        assert "one.txt is back" in brief
        commits = brief.split("## recent commits", 1)[1].splitlines()
        assert commits[1].strip() == repair, brief
    document = json.loads(ok(two, "start", "--json", "--no-check"))
    assert f"| {FEATURE} | passed" in document["entries"][0]
    assert document["commits"][0] == repair
    head = git_ok(two, "rev-parse", "--short", "HEAD").strip()
    assert f"HEAD {head}" in ok(two, "start", "--brief", "--no-check")  # (where it is: said)


def test_every_count_says_where_and_the_advice_agrees(scaffold: Path, tmp_path: Path) -> None:
    """Behind a remote where every feature passes, `start` said "all 2 features here pass"
    while HEAD held 1/2, and `next` said to run `shiftkit check` at a HEAD that lacks them."""
    _, one, two = _team(scaffold, tmp_path)
    ok(one, "claim", "F000")
    ok(one, "finish", "-m", "the environment builds")
    there = "all 2 features are marked passing at origin/main, which this branch is behind"
    for args in (("--brief",), ()):
        brief = ok(two, "start", *args, "--no-check")
        assert "here pass" not in brief, brief
        assert f"{there} (1/2 here): run `shiftkit sync`" in brief, brief
        header = _header(brief)
        assert "— 2/2 passing" in header and "(at origin/main, which" in header, header
    shown = shiftkit(two, "next")
    assert shown.returncode == 0, shown.output
    assert f"{there} (1/2 here): run `shiftkit sync`" in shown.stdout, shown.stdout
    assert "shiftkit check" not in shown.stdout
    assert not json.loads(ok(two, "next", "--json"))["all_pass"]
    status = ok(two, "status").splitlines()
    counted = [line for line in status if "passing" in line or line.startswith("open ")]
    assert all("at origin/main" in line for line in counted), status
    assert any(line.startswith(there) for line in status), status
    # Diverged (a commit here, the remote's there): counted here, and said so.
    _plain_commit(two, "Add notes", write="notes.md")
    header = _header(ok(two, "start", "--brief", "--no-check"))
    assert "— 1/2 passing" in header, header
    assert "(here: this branch and origin/main diverged)" in header, header
    picked = shiftkit(two, "next")
    assert "passing on the remote's branch: F000 (sync)" in picked.stdout, picked.output
    assert "here: this branch and origin/main diverged" in ok(two, "status")
    # Caught up, the counts are this branch's and say nothing more.
    ok(two, "sync")
    header = _header(ok(two, "start", "--brief", "--no-check"))
    assert "— 2/2 passing" in header and "(" not in header.split("claimed", 1)[1], header


@needs.strace()
def test_a_claim_that_catches_up_verifies_each_incoming_flip_once(
    scaffold: Path, tmp_path: Path
) -> None:
    """A claim behind three flips judged each at its own commit (in a checkout), then its
    start check at the new HEAD ran the same verifiers again: a pass judged just now whose
    reads the rest of the catch-up did not change is not run twice; one whose file a later
    commit changed is."""
    runs = tmp_path / "runs.txt"  # (outside every checkout: each verifier run adds a line)
    for name in ("a", "b", "c"):
        verifier = f"echo {name} >> {runs}; grep -q {name} {name}.txt"
        ok(scaffold, "add", "--description", f"{name} exists", "--step", "s", "--verify", verifier)
    config = scaffold / ".shiftkit.toml"
    config.write_text(config.read_text().replace("regression_sample = 2", "regression_sample = 9"))
    assert "regression_sample = 9" in config.read_text()
    _, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    ok(two, "start")  # (two's own start check at the old HEAD)
    listed = json.loads((one / "features.json").read_text())["features"]
    ids = {f["description"]: f["id"] for f in listed}
    for name, also in (("a", ""), ("b", "a"), ("c", "")):
        ok(one, "claim", ids[f"{name} exists"])
        (one / f"{name}.txt").write_text(f"{name}\n")
        if also:  # (b's commit changes what a's verifier reads)
            (one / f"{also}.txt").write_text(f"{also}\nand more\n")
        git_ok(one, "add", "-A")
        ok(one, "finish", "-m", f"{name}.txt exists")
    runs.write_text("")
    claimed = ok(two, "claim")
    assert "caught up first: fast-forwarded" in claimed and "claimed F000" in claimed, claimed
    counted = runs.read_text().split()
    # a: at its commit and at HEAD (b changed a.txt); b and c: once, at their own commits.
    assert sorted(counted) == ["a", "a", "b", "c"], (counted, claimed)
    assert "check regression F001: passed" in claimed
    assert re.search(r"check regression F002: passed \(at tree [0-9a-f]{7}, just now", claimed), (
        claimed
    )
