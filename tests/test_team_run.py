"""`shiftkit run --parallel N`: N agent loops, each in its own clone of one bare remote, with
stand-in agents (programs that claim, write the file the verifier wants, finish, and print a
Claude-Code-shaped result). The team finishes the list with no feature done twice; an agent
that finds everything left claimed waits instead of spending sessions; the team's budget and
Ctrl-C stop every agent with its claim cleaned up; one agent's loop never spends a session
on a list whose every pickable feature a teammate holds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import Result, git_ok, ok, shiftkit, write
from teams import finished_on_remote, remote_claims, remote_list, team_project

from shiftkit.core import loop

AGENT = r'''
"""A stand-in agent session: claim, write what the verifier wants, finish; print a result."""
import json, os, re, subprocess, sys, time

log = sys.argv[1]
delay = float(os.environ.get("STANDIN_DELAY", "0"))

def sk(*args):
    return subprocess.run(["shiftkit", *args], capture_output=True, text=True)

said = sk("claim")
found = re.search(r"^claimed (F[0-9]+):", said.stdout, re.M)
feature = found.group(1) if said.returncode == 0 and found else None
if feature:
    verify = json.loads(sk("show", feature, "--json").stdout)["verify"] or ""
    time.sleep(delay)
    if verify.startswith("test -f "):
        open(verify[len("test -f "):], "w").write("done\n")
    finished = sk("finish", "-m", f"make {feature} work")
    with open(log, "a") as out:
        out.write(json.dumps({"cwd": os.getcwd(), "feature": feature,
                              "finish": finished.returncode,
                              "said": (finished.stdout + finished.stderr)[-300:]}) + "\n")
print(json.dumps({
    "type": "result", "subtype": "success", "is_error": False, "duration_ms": 900,
    "num_turns": 3, "result": "done", "session_id": f"standin-{os.getpid()}",
    "total_cost_usd": 0.01,
    "usage": {"input_tokens": 1000, "cache_creation_input_tokens": 0,
              "cache_read_input_tokens": 0, "output_tokens": 100},
}))
'''
NAMES = [f"f{i}.txt" for i in range(1, 7)]


def agent_command(tmp_path: Path) -> str:
    write(tmp_path / "agent.py", AGENT)
    return f"{sys.executable} {tmp_path / 'agent.py'} {tmp_path / 'work.jsonl'}"


def work_done(tmp_path: Path) -> list[dict[str, object]]:
    path = tmp_path / "work.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def team_run(scaffold: Path, tmp_path: Path, *options: str) -> Result:
    command = agent_command(tmp_path)
    return shiftkit(
        scaffold, "run", "--agent", command, "--clones", str(tmp_path / "agents"), *options
    )


def test_three_agents_finish_the_list_each_feature_once(scaffold: Path, tmp_path: Path) -> None:
    bare = team_project(scaffold, tmp_path, NAMES)
    clones = tmp_path / "agents"
    result = team_run(scaffold, tmp_path, "--parallel", "3", "--max-sessions", "6")
    assert result.returncode == 0, result.output
    assert "Traceback" not in result.output
    assert all(item["passes"] is True for item in remote_list(bare)), result.output
    # each feature finished once on the remote, by several agents
    assert finished_on_remote(bare) == [f"F{i:03d}" for i in range(1, len(NAMES) + 1)]
    places = {Path(str(w["cwd"])).name for w in work_done(tmp_path)}
    assert places <= {"agent-1", "agent-2", "agent-3"} and len(places) >= 2, places
    assert remote_claims(bare) == []
    # the combined view: each agent, the project's figures, a stop reason per agent
    assert "project: 7/7 passing on the remote" in result.output, result.output
    for name in ("agent-1", "agent-2", "agent-3"):
        assert f"[{name}] stopped: " in result.output
    assert "stopped: all 7 features pass on the remote (agent-" in result.output
    assert "re-ran every verifier at its HEAD) — exit 0" in result.output
    # the clones are ordinary clones of the remote, with shiftkit's hooks
    for name in ("agent-1", "agent-2", "agent-3"):
        url = git_ok(clones / name, "remote", "get-url", "origin").strip()
        assert url == str(bare)
        assert (clones / name / ".git" / "hooks" / "pre-commit").exists()
    # a second run reuses the clones and stops at once: everything passes
    again = team_run(scaffold, tmp_path, "--parallel", "3")
    assert again.returncode == 0, again.output
    assert "(0 made now, 3 reused)" in again.output


def test_a_loop_never_spends_a_session_on_features_a_teammate_holds(
    scaffold: Path, tmp_path: Path
) -> None:
    """One agent's `shiftkit run` in a clone: the one feature left is claimed by a person's
    clone, so the loop stops with exit 16 before running any session (it used to run
    sessions that found nothing to claim, until --no-progress)."""
    bare = team_project(scaffold, tmp_path, NAMES[:1])
    ok(scaffold, "claim", "F001")  # the person holds the only feature left
    clone = tmp_path / "clone"
    git_ok(tmp_path, "clone", "-q", str(bare), str(clone))
    ok(clone, "install-hooks", "--force")
    result = shiftkit(clone, "run", "--agent", agent_command(tmp_path))
    assert result.returncode == loop.ALL_CLAIMED, result.output
    assert "claimed elsewhere (1 feature)" in result.output
    assert work_done(tmp_path) == []
    assert "after 0 sessions" in result.output
    # its twin: once the person releases it, the same loop takes it and finishes
    ok(scaffold, "release")
    result = shiftkit(clone, "run", "--agent", agent_command(tmp_path))
    assert result.returncode == 0, result.output
    assert [w["feature"] for w in work_done(tmp_path)] == ["F001"]


def test_agents_wait_while_a_clone_outside_holds_the_rest(scaffold: Path, tmp_path: Path) -> None:
    bare = team_project(scaffold, tmp_path, NAMES[:2])
    ok(scaffold, "claim", "F002")  # the person's clone holds F002
    result = team_run(scaffold, tmp_path, "--parallel", "2")
    assert result.returncode == loop.ALL_CLAIMED, result.output
    assert "every feature left is claimed (F002 by session " in result.output
    assert [w["feature"] for w in work_done(tmp_path)] == ["F001"]
    listing = {item["id"]: item["passes"] for item in remote_list(bare)}
    assert listing["F001"] is True and listing["F002"] is False
    assert "waiting (everything left is claimed)" in result.output


def parked_features(clones: Path) -> set[str]:
    """Features whose finished commit waits in an agent's clone to be published (its claim
    rightly kept: the work is there)."""
    from shiftkit.edge import parking

    return {row.feature for place in clones.iterdir() for row in parking.read(place / ".git")}


def test_the_teams_budget_stops_every_agent_and_nothing_is_lost(
    scaffold: Path, tmp_path: Path
) -> None:
    bare = team_project(scaffold, tmp_path, NAMES)
    clones = tmp_path / "agents"
    result = team_run(scaffold, tmp_path, "--parallel", "2", "--budget-tokens", "1500")
    assert result.returncode == loop.BUDGET, result.output
    assert "the token budget is spent" in result.output and "all agents" in result.output
    # a claim left is one whose finished commit waits in its clone, nothing else
    left = {ref.rsplit("/", 1)[1] for ref in remote_claims(bare)}
    assert left <= parked_features(clones), result.output
    passing = sum(1 for item in remote_list(bare) if item["passes"] is True)
    assert 1 < passing < 7, result.output
    # the next run, without a budget, publishes what waited and finishes the rest, once each
    again = team_run(scaffold, tmp_path, "--parallel", "2")
    assert again.returncode == 0, result.output + again.output
    assert all(item["passes"] is True for item in remote_list(bare))
    assert finished_on_remote(bare) == [f"F{i:03d}" for i in range(1, len(NAMES) + 1)]
    assert remote_claims(bare) == []


def test_ctrl_c_stops_every_agent_and_releases_their_claims(scaffold: Path, tmp_path: Path) -> None:
    bare = team_project(scaffold, tmp_path, NAMES)
    proc = subprocess.Popen(
        [
            "shiftkit",
            "run",
            "--agent",
            agent_command(tmp_path),
            "--parallel",
            "2",
            "--clones",
            str(tmp_path / "agents"),
        ],
        cwd=scaffold,
        env={**os.environ, "STANDIN_DELAY": "30"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 60
    while len(remote_claims(bare)) < 2 and time.monotonic() < deadline:
        time.sleep(0.3)
    assert len(remote_claims(bare)) == 2
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=120)
    assert proc.returncode == loop.INTERRUPTED, output
    assert "Traceback" not in output
    assert remote_claims(bare) == [], output
    assert "interrupted" in output


def test_a_claim_whose_commit_is_at_head_is_published_not_released(
    scaffold: Path, tmp_path: Path
) -> None:
    """A session stopped between its finish's commit and its push leaves the claim open and
    HEAD its commit. Releasing it would let another agent do the feature again: `release`
    refuses and names `finish`, which publishes it and releases the claim."""
    from shiftkit.edge import state

    bare = team_project(scaffold, tmp_path, NAMES[:1])
    ok(scaffold, "claim", "F001")
    record = state.local_claim_path(scaffold / ".git")
    kept = record.read_bytes()
    claim = json.loads(kept)["oid"]
    before = git_ok(bare, "rev-parse", "main").strip()
    (scaffold / "f1.txt").write_text("done\n")
    ok(scaffold, "finish", "-m", "make F001 work")
    # as if stopped after the commit, before the push and the claim's release
    git_ok(bare, "update-ref", "refs/heads/main", before)
    git_ok(bare, "update-ref", "refs/shiftkit/claims/F001", claim)
    record.write_bytes(kept)
    refused = shiftkit(scaffold, "release")
    assert refused.returncode == 1, refused.output
    assert "`shiftkit finish` publishes it" in refused.stderr
    assert remote_claims(bare) == ["refs/shiftkit/claims/F001"]
    published = shiftkit(scaffold, "finish", "-m", "again")
    assert published.returncode == 0, published.output
    assert "already committed at HEAD" in published.stdout
    assert remote_claims(bare) == []
    assert finished_on_remote(bare) == ["F001"]


def test_a_merge_stopped_midway_leaves_nothing_a_person_must_clear(
    scaffold: Path, tmp_path: Path
) -> None:
    """An agent stopped while its finish merged leaves git's temporary `.merge_file_*` files;
    the next `shiftkit run` clears them and goes on. Its twin: any other untracked file is
    someone's, and `run` still refuses to start over it."""
    team_project(scaffold, tmp_path, NAMES[:1])
    (scaffold / ".merge_file_a1B2c3").write_text("<<<<<<< a driver's temporary file\n")
    result = shiftkit(scaffold, "run", "--agent", agent_command(tmp_path))
    assert result.returncode == 0, result.output
    assert "removed git's temporary files of a stopped merge (1 .merge_file_*)" in result.output
    assert not (scaffold / ".merge_file_a1B2c3").exists()
    (scaffold / "notes.txt").write_text("a person's notes\n")
    refused = shiftkit(scaffold, "run", "--agent", agent_command(tmp_path))
    assert refused.returncode == 1 and "the work tree is not clean" in refused.stderr
    assert (scaffold / "notes.txt").read_text() == "a person's notes\n"


def test_a_plain_commit_left_in_a_clone_is_published_and_repaired(
    scaffold: Path, tmp_path: Path
) -> None:
    """The night's adversity: an agent's plain commit deleted what F001 reads and its
    sessions ended without publishing it. The loop publishes it first (`sync`: the gate
    demotes F001 where it broke), so the team sees the break and an agent repairs it —
    it used to wait with the commit stranded ("claimed elsewhere", F001 passing on the
    remote and broken here). The person's clone holds F002 throughout."""
    bare = team_project(scaffold, tmp_path, NAMES[:2])
    ok(scaffold, "claim", "F001")
    write(scaffold / "f1.txt", "done\n")
    ok(scaffold, "finish", "-m", "make F001 work")
    ok(scaffold, "claim", "F002")
    clone = tmp_path / "clone"
    git_ok(tmp_path, "clone", "-q", str(bare), str(clone))
    ok(clone, "install-hooks", "--force")
    git_ok(clone, "rm", "-q", "f1.txt")
    git_ok(clone, "commit", "-q", "-m", "Tidy: f1.txt is not needed")
    result = shiftkit(clone, "run", "--agent", agent_command(tmp_path))
    assert "published the 1 commit left here unpublished" in result.output, result.output
    assert result.returncode == loop.ALL_CLAIMED, result.output  # (F002: the person's)
    assert [w["feature"] for w in work_done(tmp_path)] == ["F001"]
    subjects = git_ok(bare, "log", "--format=%s", "main").splitlines()
    assert subjects[0].startswith("F001:") and subjects[1] == "Tidy: f1.txt is not needed"
    assert {i["id"]: i["passes"] for i in remote_list(bare)}["F001"] is True
