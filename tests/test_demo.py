from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git_ok, shiftkit


def test_demo_plays_shifts_through_the_real_hooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Python as on a newcomer's machine: writing bytecode, which a verifier's clean checkout
    # must not take for a change (some sandboxes set PYTHONDONTWRITEBYTECODE)
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    target = tmp_path / "demo" / "todo-app"
    result = shiftkit(tmp_path, "demo", str(target))
    assert result.returncode == 0, result.output
    # no git hint block (the grafts file, decision 0067) and no colour codes when piped
    assert not [line for line in result.output.splitlines() if line.startswith("hint:")]
    assert "\x1b[" not in result.output
    assert "rule 9" in result.stdout  # the bare "wip" commit was refused by the hook
    assert "rule 2 [F002]" in result.stdout  # so was editing a committed definition
    assert "rule 2 [F002]: F002" not in result.stdout  # (the id once)
    # each refusal explained in one line, each command as a shell would take it
    assert "  => refused (exit 1), as it must be: rule 2: a committed feature's" in result.stdout
    assert "  => refused (exit 1), as it must be: rule 9: " in result.stdout
    assert "$ git commit -q -m 'Add the verifiers for F001 and F002'\n" in result.stdout
    assert "$ shiftkit run --agent '" in result.stdout
    # the start check before the first shift: the smoke test fails until F000 makes the package
    assert ("start check: smoke failed (exit 1 from `./init.sh smoke`: …") in result.stdout
    assert "(expected: the first start check's smoke test fails" in result.stdout  # said so
    assert (
        "ModuleNotFoundError: No module named 'todo'); the session's `shiftkit start` shows it"
    ) in result.stdout
    # the shifts ran through `shiftkit run`, which stopped on the verified state, and the
    # demo ends with what they cost
    # a failed attempt says why (the reason its revert was given)
    assert "session 3: F002 failed (complete() was a stub; is_done() never true)" in result.stdout
    assert "stopped: all 3 features pass (checked at HEAD) — exit 0" in result.stdout
    assert "cost per passing feature:" in result.stdout.split("$ shiftkit cost")[-1]
    assert (
        "all 3 features pass (checked at HEAD) — nothing to do" in shiftkit(target, "status").stdout
    )
    subjects = git_ok(target, "log", "--format=%s").splitlines()
    assert subjects[:4] == [
        "F002: complete todo items",
        "F002: attempt 1 failed, reverted",
        "F001: add and list todo items",
        "F000: create the todo package",
    ]
    assert git_ok(target, "status", "--porcelain") == ""
