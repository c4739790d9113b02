"""What an agent trial of a team on one remote found (issue 29): the start header counted at a
stale HEAD, `cost` and `show` disagreed on a feature's attempts, a `finish` that won its race
in the end first said it was refused, and `next` gave counts where `claim` names holders."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import git_ok, ok, shell_features, shiftkit, write
from test_parallel import _machines, _work


def _finish(clone: Path, feature: str, name: str) -> str:
    ok(clone, "claim", feature)
    _work(clone, name)
    git_ok(clone, "add", f"{name}.txt")
    return ok(clone, "finish", "-m", f"{name} works")


def _passing(clone: Path) -> tuple[int, int]:
    listing = json.loads((clone / "features.json").read_text())["features"]
    return sum(1 for f in listing if f.get("passes")), len(listing)


def test_the_start_header_counts_where_the_advice_is_computed(
    scaffold: Path, tmp_path: Path
) -> None:
    """Behind the remote, the brief's next is counted on the remote's branch (`claim`
    fast-forwards first); its header counted the passing features at the stale HEAD."""
    _, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    _finish(one, "F001", "one")
    here, total = _passing(two)
    there, _ = _passing(one)
    assert there == here + 1
    for args in (("start", "--no-check"), ("start", "--brief", "--no-check")):
        brief = ok(two, *args)
        header = next(line for line in brief.splitlines() if line.startswith("# shiftkit start"))
        assert f"— {there}/{total} passing" in header, header
        assert "(at origin/main, which this branch is behind)" in header, header
        assert "next: F000" in brief  # (the same list the header counts)
    status = ok(two, "status")
    assert f"{there}/{total} passing (at origin/main, which this branch is behind)" in status
    assert json.loads(ok(two, "status", "--json"))["passing"] == there
    document = json.loads(ok(two, "start", "--json", "--no-check"))
    assert document["counts"]["passing"] == there
    assert document["counts"]["counted_on"] == "origin/main"
    ok(two, "sync")
    header = ok(two, "start", "--no-check").splitlines()
    assert any(f"— {there}/{total} passing" in line and "behind" not in line for line in header)


def test_cost_and_show_say_one_number_of_attempts(scaffold: Path) -> None:
    """`show` printed the feature list's counter of failed attempts ("attempts 1") while
    `cost` counted the attempts that ended in a result ("2 (1 failed)"): both now print
    `cost.attempts`, and `show` names the list's own counter only when it differs."""
    shell_features(scaffold, "a.txt")  # F001
    ok(scaffold, "claim", "F001")
    write(scaffold / "wrong.txt", "x\n")
    ok(scaffold, "revert", "--reason", "wrote the wrong file")
    ok(scaffold, "claim", "F001")
    write(scaffold / "a.txt", "a\n")
    ok(scaffold, "finish", "-m", "write a")
    shown = ok(scaffold, "show", "F001")
    assert "  status: passing, attempts 2 (1 failed)\n" in shown, shown
    table = ok(scaffold, "cost")
    row = next(line for line in table.splitlines() if line.startswith("F001"))
    assert " 2 (1 failed) " in row, table
    data = json.loads(ok(scaffold, "cost", "--json"))["features"]["F001"]
    assert (data["attempts"], data["failed_attempts"]) == (2, 1)
    ok(scaffold, "claim", "F000")
    picked = ok(scaffold, "release")
    assert "released" in picked
    assert "  status: open, attempts 0\n" in ok(scaffold, "next")  # (a release is no attempt)
    ledger = scaffold / ".shiftkit" / "ledger.jsonl"
    ledger.write_text(ledger.read_text() + "{not json\n")
    shown = ok(scaffold, "show", "F001")  # (the list's own count, said as what it is)
    assert "  status: passing, 1 failed attempt (the ledger is unreadable)\n" in shown, shown


def test_a_won_race_is_told_as_won(scaffold: Path, tmp_path: Path) -> None:
    """A `finish` whose push lost a race and then got through (its own judged sync, pushed
    again) said "pushing to origin was refused" first: now it says the remote moved on, what
    the catch-up did (the commit replayed onto the tip), and ends with where the commit is."""
    lines = [f"line {i}\n" for i in range(1, 8)]
    (scaffold / "shared.txt").write_text("".join(lines))  # (committed by `_machines`)
    bare, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    ok(one, "claim", "F001")
    ok(two, "claim", "F002")
    _work(one, "one")
    git_ok(one, "add", "one.txt")
    (one / "shared.txt").write_text("".join(["LINE 1\n", *lines[1:]]))
    ok(one, "finish", "-m", "one works")
    _work(two, "two")
    git_ok(two, "add", "two.txt")
    # (both changed shared.txt: git will not fast-forward under two's work, so it races)
    (two / "shared.txt").write_text("".join([*lines[:-1], "LINE 7\n"]))
    raced = ok(two, "finish", "-m", "two works").splitlines()
    assert not any("refused" in line for line in raced), raced
    moved = next(i for i, line in enumerate(raced) if "moved on meanwhile" in line)
    replayed = next(i for i, line in enumerate(raced) if line.startswith("replayed F002's"))
    assert moved < replayed == len(raced) - 3 and raced[-2] == "pushed to origin", raced
    assert "another clone pushed first" in raced[moved], raced
    assert raced[-1].endswith("pushed to origin after catching up; claim released"), raced
    head = git_ok(two, "rev-parse", "HEAD").strip()
    assert git_ok(bare, "rev-parse", "main").strip() == head


def test_next_names_the_holders_as_claim_does(scaffold: Path, tmp_path: Path) -> None:
    """When nothing can be picked, `next` said "2 open (2 claimed, …)"; `claim`'s refusal
    named each holder and age. Both now give the one account (`upcoming.blockers`)."""
    machines = _machines(scaffold, tmp_path, ("one", "two", "three", "four"))[1]
    taken = [re.findall(r"^claimed (F\d{3})", ok(clone, "claim"), re.M)[0] for clone in machines]
    five = tmp_path / "five"
    git_ok(tmp_path, "clone", "-q", str(tmp_path / "remote.git"), str(five))
    ok(five, "install-hooks", "--force")
    picked = shiftkit(five, "next")
    assert picked.returncode == 1, picked.output
    refused = shiftkit(five, "claim")
    assert refused.returncode == 1, refused.output
    said = picked.stdout.strip().splitlines()[-1].partition(" — ")
    told = refused.stderr.strip().partition(" — ")
    assert said[0] == "no feature can be picked now", said
    assert told[0] == "shiftkit: no feature can be claimed now", told
    assert re.sub(r"\d+ s\b", "N s", said[2]) == re.sub(r"\d+ s\b", "N s", told[2])
    for feature in taken:
        assert f"{feature} (session " in said[2] and " of clone " in said[2], said
