"""Bookkeeping is said, never a verdict (decision record 0072): a bad waiting usage line does
not refuse a claim, and a usage fetch that fails (or would ask for a password) is one
`shiftkit:` line beside `audit`'s verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git_ok, shiftkit, write
from test_parallel import _machines, _server_claims


def test_a_bad_waiting_usage_line_does_not_refuse_the_claim(scaffold: Path, tmp_path: Path) -> None:
    _, (one,) = _machines(scaffold, tmp_path, ("one",))
    bare = tmp_path / "remote.git"
    write(one / ".git" / "shiftkit" / "ledger-pending.jsonl", "not an entry\n")
    claimed = shiftkit(one, "claim", "F001")
    assert claimed.returncode == 0, claimed.output
    assert "claimed F001" in claimed.stdout
    notes = [line for line in claimed.stdout.splitlines() if "waiting usage" in line]
    assert len(notes) == 1, claimed.output
    assert set(_server_claims(bare)) == {"F001"}


def test_a_usage_fetch_that_fails_leaves_the_verdict(
    scaffold: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GIT_TERMINAL_PROMPT", raising=False)
    _, (one,) = _machines(scaffold, tmp_path, ("one",))
    seen = tmp_path / "ssh-saw"
    ssh = write(
        tmp_path / "fake-ssh",
        f'#!/bin/sh\necho "GIT_TERMINAL_PROMPT=$GIT_TERMINAL_PROMPT" >> {seen}\n'
        'echo "Permission denied (publickey)." >&2\nexit 255\n',
    )
    ssh.chmod(0o755)
    git_ok(one, "config", "core.sshCommand", str(ssh))
    git_ok(one, "remote", "set-url", "origin", "ssh://nobody@example.invalid/remote.git")
    audited = shiftkit(one, "audit", "--json")
    assert audited.returncode == 0, audited.output
    assert json.loads(audited.stdout)["violations"] == []
    said = [line for line in audited.stderr.splitlines() if line.startswith("shiftkit:")]
    assert len(said) == 1 and "usage refs" in said[0] and "origin" in said[0], audited.stderr
    # (git may call it twice: `ssh -G` first, to learn which ssh it is)
    assert set(seen.read_text().splitlines()) == {"GIT_TERMINAL_PROMPT=0"}
