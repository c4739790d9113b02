"""Scripts and people (issue 38 item 6): a real SIGINT to a running `shiftkit` exits 130 with one line
saying what state is kept, never a traceback; a missing remote HEAD is an error."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from conftest import git_ok, ok


def test_ctrl_c_exits_130_and_says_what_is_kept(scaffold: Path) -> None:
    ok(scaffold, "add", "--description", "slow", "--step", "s", "--verify", "sleep 30")
    git_ok(scaffold, "add", "-A")
    git_ok(scaffold, "commit", "-q", "-m", "Add a slow feature")
    ok(scaffold, "claim", "F001")
    proc = subprocess.Popen(
        ["shiftkit", "verify"],
        cwd=scaffold,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "a claim this session held is still yours" in err.strip().splitlines()[-1]


def test_a_missing_remote_head_is_an_error_not_zero_commits(scaffold: Path, tmp_path: Path) -> None:
    """A clone whose remote HEAD names a missing branch has an unborn HEAD: `audit` said
    "0 commits checked" and exited 0 (issue 38 item 6)."""
    from conftest import shiftkit

    bare = tmp_path / "remote.git"
    git_ok(tmp_path, "clone", "-q", "--bare", str(scaffold), str(bare))
    git_ok(bare, "symbolic-ref", "HEAD", "refs/heads/gone")
    clone = tmp_path / "clone"
    git_ok(tmp_path, "clone", "-q", str(bare), str(clone))
    audited = shiftkit(clone, "audit")
    assert audited.returncode == 2, audited.output
    assert "HEAD names the branch 'gone', which has no commit" in audited.stderr
    assert "git checkout" in audited.stderr
    git_ok(clone, "checkout", "-q", "main")
    assert shiftkit(clone, "audit").returncode == 0  # (the twin: the branch checked out)
