from __future__ import annotations

from pathlib import Path

from conftest import git_ok, shiftkit


def test_demo_plays_shifts_through_the_real_hooks(tmp_path: Path) -> None:
    target = tmp_path / "demo" / "todo-app"
    result = shiftkit(tmp_path, "demo", str(target))
    assert result.returncode == 0, result.output
    assert "rule 9" in result.stdout  # the bare "wip" commit was refused by the hook
    assert "rule 2 [F002]" in result.stdout  # so was editing a committed definition
    # the shifts ran through `shiftkit run`, which stopped on the verified state, and the
    # demo ends with what they cost
    assert "session 3: F002 failed" in result.stdout
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
