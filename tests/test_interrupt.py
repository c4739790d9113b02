"""Ctrl-C (issue 38 item 6): a real SIGINT to a running `shiftkit` exits 130 with one line
saying what state is kept, never a traceback."""

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
