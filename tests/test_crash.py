"""SIGKILL `finish` and `revert` at many instants: the state stays consistent and the tool
carries on (re-running the interrupted command completes it, exactly once)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import calc_verifier, git_ok, implement, shiftkit

from shiftkit.core import features, progress

DELAYS = [0.05, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 3.0]


@pytest.fixture(scope="module")
def slow_project(pristine_calc: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("slow") / "slow-project"
    shutil.copytree(pristine_calc, target, symlinks=True)
    result = shiftkit(
        target,
        "add",
        "--id",
        "F010",
        "--description",
        "add, slowly verified",
        "--step",
        "s",
        "--verify",
        f"sleep 0.5 && {calc_verifier('add')}",
    )
    assert result.returncode == 0, result.output
    git_ok(target, "commit", "-q", "-am", "Add a feature with a slow verifier")
    return target


def kill_after(project: Path, delay: float, *args: str) -> None:
    proc = subprocess.Popen(
        ["shiftkit", *args], cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    time.sleep(delay)
    try:
        os.kill(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    # Children (git, the hooks) run on; let them end as they would after a real crash.
    deadline = time.time() + 10
    while time.time() < deadline and (project / ".git" / "index.lock").exists():
        time.sleep(0.05)
    time.sleep(0.3)


def assert_consistent(project: Path, base: str) -> None:
    head = git_ok(project, "rev-parse", "HEAD").strip()
    assert head == base or git_ok(project, "rev-parse", "HEAD^").strip() == base
    features.loads((project / "features.json").read_text())  # valid
    log = progress.parse((project / "claude-progress.txt").read_text())
    assert log.preamble.startswith("# Progress")
    claims_out = shiftkit(project, "claims")
    assert claims_out.returncode == 0 and "Traceback" not in claims_out.output


def claim_open(project: Path) -> bool:
    return (project / ".git" / "shiftkit" / "claim.json").exists()


def prepare(slow_project: Path, tmp_path: Path, delay: float) -> tuple[Path, str]:
    project = tmp_path / f"p{int(delay * 100)}"
    shutil.copytree(slow_project, project, symlinks=True)
    claimed = shiftkit(project, "claim", "F010")
    assert claimed.returncode == 0, claimed.output
    return project, git_ok(project, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize("delay", DELAYS)
def test_kill_finish(slow_project: Path, tmp_path: Path, delay: float) -> None:
    project, base = prepare(slow_project, tmp_path, delay)
    implement(project, "add")
    kill_after(project, delay, "finish", "-m", "add two numbers")
    assert_consistent(project, base)
    if claim_open(project):  # the interrupted finish left its claim: finishing again completes it
        again = shiftkit(project, "finish", "-m", "add two numbers")
        assert again.returncode == 0, again.output
    assert features.loads((project / "features.json").read_text()).by_id["F010"].passes
    entries = progress.parse((project / "claude-progress.txt").read_text()).entries
    assert [e.outcome for e in entries if e.feature == "F010"] == ["passed"]
    assert git_ok(project, "rev-parse", "HEAD^").strip() == base
    assert git_ok(project, "status", "--porcelain") == ""
    assert git_ok(project, "for-each-ref", "refs/shiftkit/claims/") == ""


@pytest.mark.parametrize("delay", [0.05, 0.2, 0.4, 0.6, 0.8, 1.1])
def test_kill_revert(slow_project: Path, tmp_path: Path, delay: float) -> None:
    project, base = prepare(slow_project, tmp_path, delay)
    implement(project, "add", good=False)
    (project / "scratch.txt").write_text("attempt leftovers\n")
    kill_after(project, delay, "revert", "--reason", "wrong result")
    assert_consistent(project, base)
    if claim_open(project):
        again = shiftkit(project, "revert", "--reason", "wrong result")
        assert again.returncode == 0, again.output
    feature = features.loads((project / "features.json").read_text()).by_id["F010"]
    assert feature.attempts == 1
    entries = progress.parse((project / "claude-progress.txt").read_text()).entries
    assert [e.outcome for e in entries if e.feature == "F010"] == ["attempt 1 failed, reverted"]
    assert not (project / "scratch.txt").exists()
    assert git_ok(project, "rev-parse", "HEAD^").strip() == base
    assert git_ok(project, "status", "--porcelain") == ""
