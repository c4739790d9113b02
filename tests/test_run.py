"""`shiftkit run`: the outer loop with scripted stand-in agents (programs that act like one:
claim, write code, finish or fail, print a Claude-Code-shaped JSON result). It stops for each
reason with its exit code, never runs a session after all pass, and reverts an abandoned
dirty claim."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import git_ok, shell_features, shiftkit, write

from shiftkit.core import ledger, loop

AGENT = r'''
"""A stand-in for an agent session: does what the plan says for this session number."""
import json, os, subprocess, sys, time

plan_file, count_file = sys.argv[1], sys.argv[2]
prompt = sys.argv[3] if len(sys.argv) > 3 else ""
count = int(open(count_file).read()) + 1 if os.path.exists(count_file) else 1
open(count_file, "w").write(str(count))
plan = json.load(open(plan_file))
action = plan[count - 1] if count <= len(plan) else "idle"
with open(count_file + ".prompts", "a") as log:
    log.write(json.dumps(prompt[:40]) + "\n")

def sk(*args):
    return subprocess.run(["shiftkit", *args], capture_output=True, text=True)

def claimed():
    out = sk("claim").stdout
    feature = out.split("claimed ", 1)[1].split(":", 1)[0]
    verify = json.loads(sk("show", feature, "--json").stdout)["verify"] or ""
    return feature, verify

if action in ("pass", "fail", "abandon", "sleep"):
    feature, verify = claimed()
    if action == "pass":
        if verify.startswith("test -f "):
            open(verify[len("test -f "):], "w").write("done\n")
        sk("finish", "-m", f"make {feature} work")
    else:
        open("wrong.txt", "w").write("not it\n")
        if action == "fail":
            sk("verify")
            sk("revert", "--reason", "the file never appears")
        if action == "sleep":
            open(count_file + ".ready", "w").write("1")
            time.sleep(60)
print(json.dumps({
    "type": "result", "subtype": "success", "is_error": False, "duration_ms": 1200,
    "num_turns": 4, "result": "All features are done!", "session_id": f"claude-{count}",
    "total_cost_usd": 0.01,
    "usage": {"input_tokens": 1000, "cache_creation_input_tokens": 200,
              "cache_read_input_tokens": 5000, "output_tokens": 100},
}))
'''
# fresh-equivalent of one session's result: 1000 + 0.1*5000 + 1.25*200 + 5*100
SESSION_FRESH = 1000 + 500 + 250 + 500


def ok(project: Path, *args: str) -> str:
    result = shiftkit(project, *args)
    assert result.returncode == 0, result.output
    return result.stdout


def setup(project: Path, tmp_path: Path, names: list[str], f000: bool = True) -> None:
    shell_features(project, *names)
    if f000:
        ok(project, "claim", "F000")
        ok(project, "finish", "-m", "the environment builds")
    write(tmp_path / "agent.py", AGENT)


def agent_command(tmp_path: Path, plan: list[str]) -> str:
    write(tmp_path / "plan.json", json.dumps(plan))
    return f"{sys.executable} {tmp_path / 'agent.py'} {tmp_path / 'plan.json'} {tmp_path / 'count'}"


def sessions_run(tmp_path: Path) -> int:
    path = tmp_path / "count"
    return int(path.read_text()) if path.exists() else 0


def run(project: Path, tmp_path: Path, plan: list[str], *options: str) -> tuple[int, str]:
    result = shiftkit(project, "run", "--agent", agent_command(tmp_path, plan), *options)
    assert "Traceback" not in result.output, result.output
    return result.returncode, result.output


def test_stops_when_all_pass_and_never_runs_another_session(scaffold: Path, tmp_path: Path) -> None:
    setup(scaffold, tmp_path, ["a.txt", "b.txt"], f000=False)
    code, out = run(scaffold, tmp_path, ["pass", "pass", "pass", "pass", "pass"])
    assert code == loop.ALL_PASS == 0, out
    assert sessions_run(tmp_path) == 3  # F000, F001, F002: not one more
    assert "session 3: F002 passed · 3/3 passing" in out
    assert "stopped: all 3 features pass (checked at HEAD)" in out
    assert f"{3 * (1000 + 200 + 5000 + 100):,} tokens" in out
    assert "cost per passing feature: 2,250 fresh-equivalent tokens ($0.01) (3 passing)" in out
    code, out = run(scaffold, tmp_path, ["pass"])
    assert code == 0 and sessions_run(tmp_path) == 3 and "after 0 sessions" in out
    data = json.loads(ok(scaffold, "cost", "--json"))
    assert data["features"]["F001"]["input"] == 1000  # the result's usage, for its feature
    assert data["totals"]["fresh_equivalent"] == pytest.approx(3 * SESSION_FRESH)


def test_initializer_prompt_while_the_list_holds_only_f000(scaffold: Path, tmp_path: Path) -> None:
    write(tmp_path / "agent.py", AGENT)
    code, _ = run(scaffold, tmp_path, ["idle"], "--max-sessions", "1")
    assert code == loop.MAX_SESSIONS
    prompts = (tmp_path / "count.prompts").read_text()
    assert json.loads(prompts.splitlines()[0]) == loop.INITIALIZER_PROMPT[:40]


def test_stops_when_all_remaining_are_blocked(scaffold: Path, tmp_path: Path) -> None:
    setup(scaffold, tmp_path, ["a.txt"])
    code, out = run(scaffold, tmp_path, ["fail", "fail", "pass"])
    assert code == loop.ALL_BLOCKED == 10, out
    assert sessions_run(tmp_path) == 2
    assert "every remaining feature is blocked" in out


def test_stops_at_the_budget(scaffold: Path, tmp_path: Path) -> None:
    setup(scaffold, tmp_path, ["a.txt", "b.txt"])
    code, out = run(scaffold, tmp_path, ["pass", "pass"], "--budget-tokens", "2000")
    assert code == loop.BUDGET == 11, out
    assert sessions_run(tmp_path) == 1 and "the token budget is spent (2,250 of 2,000" in out
    code, out = run(scaffold, tmp_path, ["pass"], "--budget-usd", "0.005")
    assert code == loop.BUDGET and "the money budget is spent" in out


def test_stops_without_progress(scaffold: Path, tmp_path: Path) -> None:
    setup(scaffold, tmp_path, ["a.txt"])
    code, out = run(scaffold, tmp_path, ["idle", "idle", "idle"], "--no-progress", "2")
    assert code == loop.NO_PROGRESS == 12, out
    assert sessions_run(tmp_path) == 2
    assert "2 sessions in a row without a new passing feature" in out


def test_stops_on_the_same_failure_twice(scaffold: Path, tmp_path: Path) -> None:
    setup(scaffold, tmp_path, ["a.txt", "b.txt"])
    code, out = run(scaffold, tmp_path, ["fail", "fail", "pass"])
    assert code == loop.REPEATED_FAILURE == 13, out
    assert sessions_run(tmp_path) == 2
    assert "the same failure ended two sessions in a row (F001: " in out


def test_stops_at_max_sessions_and_reverts_an_abandoned_claim(
    scaffold: Path, tmp_path: Path
) -> None:
    setup(scaffold, tmp_path, ["a.txt", "b.txt", "c.txt"])
    code, out = run(scaffold, tmp_path, ["abandon", "pass", "pass"], "--max-sessions", "2")
    assert code == loop.MAX_SESSIONS == 14, out
    assert sessions_run(tmp_path) == 2
    assert "session 1 abandoned F001 with a dirty tree: reverted, attempt counted" in out
    assert "session 1: F001 abandoned, reverted · 1/4 passing" in out
    assert "session 2: F001 passed · 2/4 passing" in out
    assert not (scaffold / "wrong.txt").exists()
    subjects = git_ok(scaffold, "log", "--format=%s").splitlines()
    assert "F001: attempt 1 failed, reverted" in subjects
    entries = ledger.parse((scaffold / ledger.LEDGER_FILE).read_text())
    assert [e.outcome for e in entries if e.kind == "unit" and e.feature == "F001"] == [
        "failed",
        "passed",
    ]
    assert "abandoned" in (scaffold / "claude-progress.txt").read_text()
    assert git_ok(scaffold, "status", "--porcelain") == ""


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a shell starts a background job


@pytest.mark.parametrize("inherited", ["default", "ignored"])
def test_ctrl_c_cleans_up_like_an_abandoned_session(
    scaffold: Path, tmp_path: Path, inherited: str
) -> None:
    setup(scaffold, tmp_path, ["a.txt"])
    command = agent_command(tmp_path, ["sleep"])
    proc = subprocess.Popen(
        ["shiftkit", "run", "--agent", command],
        cwd=scaffold,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=os.environ.copy(),
        preexec_fn=_ignore_sigint if inherited == "ignored" else None,
    )
    deadline = time.time() + 120
    while not (tmp_path / "count.ready").exists():
        assert time.time() < deadline and proc.poll() is None
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == loop.INTERRUPTED == 130, out
    assert "interrupted (Ctrl-C)" in out and "Traceback" not in out
    assert "F001: attempt 1 failed, reverted" in git_ok(scaffold, "log", "-1", "--format=%s")
    assert git_ok(scaffold, "status", "--porcelain") == ""


# A stand-in that fails without a unit of work: session N prints what the plan says (a line
# on stdout and one on stderr, or nothing) and exits 1; with "wait", it first waits for the
# test's go-ahead file.
FAILING = r"""
import json, os, sys, time
plan_file, count_file = sys.argv[1], sys.argv[2]
count = int(open(count_file).read()) + 1 if os.path.exists(count_file) else 1
open(count_file, "w").write(str(count))
plan = json.load(open(plan_file))
action = plan[count - 1] if count <= len(plan) else "silent"
if action.startswith("wait "):
    deadline = time.time() + 60
    while not os.path.exists(count_file + ".go") and time.time() < deadline:
        time.sleep(0.1)
    action = action[5:]
if action != "silent":
    for n in range(11):
        print(f"{action} line {n}", flush=True)
    time.sleep(0.3)  # (two pipes: the order they are read in is the order they were written)
    print(f"{action}: the agent could not log in", file=sys.stderr, flush=True)
    time.sleep(0.3)
    print(f"{action} line 11", flush=True)
sys.exit(1)
"""


def failing_agent(tmp_path: Path, plan: list[str]) -> str:
    write(tmp_path / "failing.py", FAILING)
    write(tmp_path / "plan.json", json.dumps(plan))
    return (
        f"{sys.executable} {tmp_path / 'failing.py'} {tmp_path / 'plan.json'} {tmp_path / 'count'}"
    )


def test_each_session_line_comes_as_it_ends_when_piped(scaffold: Path, tmp_path: Path) -> None:
    command = failing_agent(tmp_path, ["boom", "wait bang"])
    proc = subprocess.Popen(
        ["shiftkit", "run", "--agent", command, "--max-sessions", "2"],
        cwd=scaffold,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    seen = []
    try:
        while not seen or not seen[-1].startswith("session 1:"):
            line = proc.stdout.readline()
            assert line, f"the output ended before session 1's lines: {seen}"
            seen.append(line)
        # session 2 waits for the go-ahead: session 1's lines came while the run goes on
        assert proc.poll() is None
    finally:
        (tmp_path / "count.go").write_text("go\n")
    rest = proc.stdout.read()  # (not `communicate`: it reads past what readline buffered)
    proc.wait(timeout=120)
    out = "".join(seen) + rest
    assert proc.returncode == loop.MAX_SESSIONS, out
    assert "session 1: agent exited 1 · 0/1 passing" in out
    # the agent's last 10 lines, both streams, when a session fails
    assert "  the agent's last 10 lines:\n  | boom line 3\n" in out
    assert "  | boom line 10\n  | boom: the agent could not log in\n  | boom line 11\n" in out
    assert "  | boom line 2\n" not in out
    assert "  | bang: the agent could not log in\n  | bang line 11\n" in out
    assert "after 2 sessions;" in out


def test_an_empty_failure_is_never_the_same_failure(scaffold: Path, tmp_path: Path) -> None:
    command = failing_agent(tmp_path, ["silent", "silent", "silent", "silent"])
    result = shiftkit(scaffold, "run", "--agent", command, "--no-progress", "3")
    out = result.output
    assert result.returncode == loop.NO_PROGRESS, out  # not 13 after two silent sessions
    assert sessions_run(tmp_path) == 3
    assert "the same failure" not in out and "e3b0c44298fc" not in out
    assert out.count("  (the agent printed nothing)") == 3
    # two failures that said the same are the same failure
    (tmp_path / "count").unlink()
    command = failing_agent(tmp_path, ["boom", "boom", "boom"])
    result = shiftkit(scaffold, "run", "--agent", command, "--no-progress", "3")
    assert result.returncode == loop.REPEATED_FAILURE, result.output
    assert "the same failure ended two sessions in a row (exit 1 (" in result.output


def test_verbose_streams_the_agent_output_and_one_session_is_singular(
    scaffold: Path, tmp_path: Path
) -> None:
    command = failing_agent(tmp_path, ["boom"])
    result = shiftkit(scaffold, "run", "--agent", command, "--max-sessions", "1", "--verbose")
    out = result.stdout
    assert result.returncode == loop.MAX_SESSIONS, result.output
    lines = out.splitlines()
    assert lines[0] == f"session 1: started ({command})"
    said = [f"  | boom line {n}" for n in range(11)]
    assert lines[1:14] == [*said, "  | boom: the agent could not log in", "  | boom line 11"]
    assert lines[14].startswith("session 1: agent exited 1")
    assert "the agent's last" not in out  # streamed already
    assert "1 session, the most allowed" in out and "after 1 session;" in out
