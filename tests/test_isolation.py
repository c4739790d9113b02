"""CI never runs repository code inside the verdict with the runner's environment (issue 19,
item 5; decision record 0044): `audit --reverify --isolated` and `check --isolated` run each
init and verifier with the locale only, a fresh empty HOME, and PATH rebuilt without the
repository's or HOME's folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import git_ok, ok, shiftkit

from shiftkit.edge import verify


def test_the_path_keeps_fixed_folders_only() -> None:
    path = os.pathsep.join(
        [
            "/opt/python/bin",
            "bin",  # relative: wherever the command runs
            "",
            "/work/repo/.venv/bin",  # inside the repository
            "/home/runner/.local/bin",  # under HOME
            "/home/runner/work/_temp/shiftkit/bin",  # the pinned install, under HOME
            "/opt/python/bin/",  # the same folder again
            "/usr/bin",
        ]
    )
    rebuilt = verify.isolated_path(path, "/work/repo", "/home/runner").split(os.pathsep)
    assert rebuilt[:2] == ["/opt/python/bin", "/usr/bin"]
    assert rebuilt[2:] == [f for f in verify.SYSTEM_PATH if f != "/usr/bin"]
    # A HOME of "/" (or none) does not empty the PATH; a prefix is not a parent.
    assert verify.isolated_path("/usr/bin:/homework/bin", "/work/repo", "/").startswith(
        "/usr/bin:/homework/bin"
    )
    assert "/home/runner2/bin" in verify.isolated_path("/home/runner2/bin", "/r", "/home/runner")


def test_the_environment_keeps_the_locale_only(tmp_path: Path) -> None:
    base = {
        "PATH": "/usr/bin",
        "HOME": "/home/runner",
        "LANG": "C.UTF-8",
        "GITHUB_TOKEN": "secret",
        "GIT_DIR": "/elsewhere",
        "PYTHONPATH": "/evil",
        "SHIFTKIT_SESSION": "s",
    }
    env = verify.isolated_environment(base, tmp_path / "repo", tmp_path / "home")
    assert env == {
        "LANG": "C.UTF-8",
        "HOME": str(tmp_path / "home"),
        "TMPDIR": str(tmp_path / "home" / "tmp"),
        "PATH": verify.isolated_path("/usr/bin", str(tmp_path / "repo"), "/home/runner"),
    }


def _tree(p: Path) -> str:
    return git_ok(p, "rev-parse", "HEAD^{tree}").strip()


def test_an_isolated_run_cannot_reach_or_leave_anything(
    scaffold: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "runner-home"
    (home / ".local" / "bin").mkdir(parents=True)
    fake = home / ".local" / "bin" / "shiftkit-fake"
    fake.write_text("#!/bin/sh\necho fake\n")
    fake.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{home / '.local' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GITHUB_TOKEN", "secret-token")
    # An init that plants a program where the runner's HOME would find it, and a verifier
    # that looks for the runner's secrets and programs.
    init = 'mkdir -p "$HOME/.local/bin" && echo planted > "$HOME/.local/bin/shiftkit" && echo "$HOME" > "$TMPDIR/x"'
    command = (
        'test -z "$GITHUB_TOKEN" && ! command -v shiftkit-fake && '
        'test -f "$HOME/.local/bin/shiftkit" && echo "home=$HOME"'
    )
    outcome = verify.run_in_checkout(scaffold, _tree(scaffold), command, init, 60, isolated=True)
    assert outcome.ok, outcome.output
    used = outcome.output.split("home=")[1].strip()
    assert used != str(home) and not Path(used).exists()  # fresh, and thrown away
    assert not (home / ".local" / "bin" / "shiftkit").exists()
    # Not isolated, the same verifier sees the runner's environment.
    plain = verify.run_in_checkout(scaffold, _tree(scaffold), command, "", 60)
    assert not plain.ok


def test_a_verifier_that_needs_the_runners_secrets_fails_locally_as_in_ci(
    scaffold: Path,
) -> None:
    """A variable of the caller's reaches no verifier, local or isolated, unless a person
    names it in `env` (decision record 0088): local and CI verdicts are the same."""
    p = scaffold
    ok(
        p,
        "add",
        "--description",
        "talks to the service",
        "--step",
        "s",
        "--verify",
        'test -n "$SERVICE_TOKEN"',
    )
    git_ok(p, "commit", "-q", "-am", "Add a feature that needs a token")
    token = {"SERVICE_TOKEN": "from-the-runner"}
    assert shiftkit(p, "claim", "F001", env=token).returncode == 0
    (p / "service.txt").write_text("done\n")
    git_ok(p, "add", "service.txt")
    refused = shiftkit(p, "finish", "-m", "talk to the service", env=token)
    assert refused.returncode == 1, refused.output
    settings = p / ".shiftkit.toml"
    settings.write_text(
        settings.read_text().replace("[shiftkit]\n", '[shiftkit]\nenv = ["SERVICE_TOKEN"]\n', 1)
    )
    message = ("-m", "Name the token", "-m", "Shiftkit-Override: it needs it")
    git_ok(p, "commit", "-q", *message, "--", ".shiftkit.toml")
    finished = shiftkit(p, "finish", "-m", "talk to the service", env=token)
    assert finished.returncode == 0, finished.output
    for isolated in ([], ["--isolated"]):
        audited = shiftkit(p, "audit", "--reverify", *isolated, env=token)
        assert audited.returncode == 0, audited.output
        assert shiftkit(p, "check", "--no-demote", *isolated, env=token).returncode == 0
    checked = shiftkit(p, "check", "--no-demote", "--isolated")
    assert checked.returncode == 1 and "F001" in checked.output, checked.output
    assert git_ok(p, "status", "--porcelain") == ""  # --no-demote: nothing committed
