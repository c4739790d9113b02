"""The commands, run as a user runs them: a real process in a real scaffold."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from conftest import git, git_ok, shiftkit, write

from shiftkit.core import features
from shiftkit.core.own_refs import MARKER


def add_features(project: Path, n: int) -> None:
    for i in range(n):
        result = shiftkit(
            project,
            "add",
            "--description",
            f"Feature {i + 1}",
            "--step",
            "do it",
            "--verify",
            "true",
        )
        assert result.returncode == 0, result.output


def test_status_next_show_on_a_fresh_scaffold(scaffold: Path) -> None:
    add_features(scaffold, 3)
    # `status` and `next` read the list committed at HEAD, and mark the work tree's edit.
    status = shiftkit(scaffold, "status")
    assert status.stdout.splitlines()[0] == "0/1 passing (uncommitted edit of features.json)"
    assert "(uncommitted edit of features.json)" in shiftkit(scaffold, "next").stdout
    git_ok(scaffold, "commit", "-q", "-am", "Add three features")
    status = shiftkit(scaffold, "status")
    assert status.returncode == 0
    assert status.stdout.splitlines()[0] == "0/4 passing"  # plain when piped
    data = json.loads(shiftkit(scaffold, "status", "--json").stdout)
    assert (data["total"], data["open"], data["next"]) == (4, 4, "F000")
    nxt = shiftkit(scaffold, "next")
    assert nxt.returncode == 0 and nxt.stdout.startswith("F000  The environment builds")
    assert json.loads(shiftkit(scaffold, "next", "--json").stdout)["next"]["id"] == "F000"
    shown = shiftkit(scaffold, "show", "F002")
    assert "Feature 2" in shown.stdout and "verify: true" in shown.stdout
    assert json.loads(shiftkit(scaffold, "show", "F002", "--json").stdout)["id"] == "F002"


def test_a_hand_edit_of_the_list_is_not_what_status_believes(scaffold: Path) -> None:
    path = scaffold / "features.json"
    path.write_text(path.read_text().replace('"passes": false', '"passes": true'))
    for args in (["next"], ["status"]):
        result = shiftkit(scaffold, *args)
        assert result.returncode == 0
        assert "(uncommitted edit of features.json)" in result.stdout
        assert "all 1" not in result.stdout
    data = json.loads(shiftkit(scaffold, "status", "--json").stdout)
    assert (data["passing"], data["all_pass"], data["all_marked_passing"]) == (0, False, False)


def test_status_lists_blocked_and_claimed(scaffold: Path) -> None:
    add_features(scaffold, 2)
    path = scaffold / "features.json"
    listing = features.loads(path.read_text())
    blocked = features.Blocked("verifier times out", "2026-11-29T10:00:00Z", 3)
    listing = listing.replace_feature(listing.features[1]._replace(blocked=blocked, attempts=3))
    path.write_text(features.dumps(listing))
    git_ok(scaffold, "commit", "-q", "-am", "Block F001 by hand\n\nShiftkit-Override: a test")
    empty_tree = git_ok(scaffold, "hash-object", "-t", "tree", "/dev/null").strip()
    record = json.dumps({"feature": "F002", "session": "s-1", "worktree": "/elsewhere"})
    oid = git_ok(scaffold, "commit-tree", empty_tree, "-m", record).strip()
    planted = git(scaffold, "update-ref", "refs/shiftkit/claims/F002", oid, env={MARKER: "1"})
    assert planted.returncode == 0, planted.output
    text = shiftkit(scaffold, "status").stdout
    assert "blocked:\n  F001  verifier times out" in text
    assert "claimed:\n  F002  session s-1 in /elsewhere" in text
    assert "next: F000" in text


def test_import_converts_legacy_to_stdout_and_file(tmp_path: Path) -> None:
    legacy = write(
        tmp_path / "legacy.json",
        json.dumps(
            [
                {"category": "functional", "description": "A", "steps": ["s"], "passes": True},
                {"category": "functional", "description": "B", "steps": ["s"], "passes": False},
            ]
        ),
    )
    result = shiftkit(tmp_path, "import", str(legacy))
    assert result.returncode == 0, result.output
    converted = features.loads(result.stdout)
    assert [(f.id, f.passes) for f in converted.features] == [("F001", True), ("F002", False)]
    out = tmp_path / "features.json"
    assert shiftkit(tmp_path, "import", str(legacy), "-o", str(out)).returncode == 0
    assert out.read_text() == result.stdout


def test_validate_path_and_project(scaffold: Path) -> None:
    assert shiftkit(scaffold, "validate").stdout.strip() == "features.json: valid, 1 features"
    assert shiftkit(scaffold, "validate", "features.json").returncode == 0


def _break_features(project: Path, old: str, new: str) -> None:
    path = project / "features.json"
    path.write_text(path.read_text().replace(old, new, 1))


BAD_INPUT = [
    # (setup, args, exit code, expected fragment of the one line)
    # (a work-tree edit of the list: `validate` reads it; `status` and `next` read HEAD's)
    ("malformed_json", ["validate"], 2, "features.json: invalid JSON at line 3 column"),
    (
        "wrong_type",
        ["validate"],
        2,
        "features.json: $.features[0].passes: 'no' is not of type 'boolean'",
    ),
    ("missing_field", ["validate"], 2, "$.features[0]: 'description' is a required property"),
    ("duplicate_id", ["validate"], 2, "duplicate id 'F000'"),
    ("dangling_features", ["validate"], 2, "features.json: file not found"),
    ("config_is_a_directory", ["status"], 2, ".shiftkit.toml: is a directory"),
    (
        "unknown_config_key",
        ["status"],
        2,
        ".shiftkit.toml: unknown key 'shiftkit.max_attempt' (did you mean 'shiftkit.max_attempts'?)",
    ),
    (
        "wrong_config_type",
        ["status"],
        2,
        ".shiftkit.toml: key 'shiftkit.log.keep' must be an integer",
    ),
    ("malformed_toml", ["next"], 2, ".shiftkit.toml: malformed TOML"),
    ("missing_features", ["validate"], 2, "features.json: file not found"),
    (
        "legacy_in_place",
        ["validate"],
        2,
        "legacy bare-array format; convert it with `shiftkit import features.json`",
    ),
    (None, ["show", "F999"], 2, "unknown feature id 'F999' (features.json has F000..F000)"),
    (None, ["audit", "nonsense"], 2, "REV 'nonsense': not a commit in this repository"),
    (None, ["audit", "--", "--x"], 2, "REV '--x': not a commit in this repository"),
    (None, ["merge-log", "/nope", "/nope2", "/nope3"], 2, "/nope: file not found"),
    (None, ["show"], 2, "Missing argument 'ID'"),
    (None, ["frobnicate"], 2, "No such command 'frobnicate'"),
    (None, ["status", "--jsn"], 2, "No such option '--jsn'"),
    (None, ["add", "--description", "x"], 2, "Missing option '--step'"),
    (
        None,
        ["add", "--id", "F000", "--description", "x", "--step", "s"],
        2,
        "--id 'F000': already used",
    ),
    (
        None,
        ["add", "--id", "bad id", "--description", "x", "--step", "s"],
        2,
        "the new feature is invalid: features.json: $.features[1].id",
    ),
    (
        None,
        ["add", "--description", "x", "--step", "s", "--depends-on", "F404"],
        2,
        "unknown feature id 'F404'",
    ),
    (
        None,
        ["new", "elsewhere", "--defaults", "--data", "colour=red"],
        2,
        "--data 'colour=red': unknown question 'colour'",
    ),
    (
        None,  # a hidden question is shiftkit's to answer, and not offered as known
        ["new", "elsewhere", "--defaults", "--data", "template_origin=x"],
        2,
        "known: ci, ci_install, code, decisions, goal, harnesses, hook_repository, hook_rev, hook_source, "
        "install_command, "
        "people_policy, people_signer, progress_file, project_name, smoke_command, "
        "start_command, verify_command",
    ),
    (
        None,
        ["new", "elsewhere", "--defaults", "--data", "nonsense"],
        2,
        "--data 'nonsense': expected KEY=VALUE",
    ),
    (
        None,
        ["new", "elsewhere", "--defaults", "--data", "progress_file=../x"],
        2,
        "template answers:",
    ),
    (
        None,
        ["new", "elsewhere", "--defaults", "--features", "nope.json"],
        2,
        "nope.json: file not found",
    ),
    (None, ["import", "nope.json"], 2, "nope.json: file not found"),
    (None, ["validate", "nope.json"], 2, "nope.json: file not found"),
    (None, ["hook", "pre-cmmit"], 2, "usage: shiftkit hook"),
    (None, ["hook", "commit-msg", "/nonexistent/msg"], 2, "cannot read the commit message"),
]


def _setup(project: Path, case: str | None) -> None:
    if case == "malformed_json":
        (project / "features.json").write_text('{\n  "features": [\n  }\n')
    elif case == "wrong_type":
        _break_features(project, '"passes": false', '"passes": "no"')
    elif case == "missing_field":
        _break_features(
            project, '"description": "The environment builds and the smoke test passes",', ""
        )
    elif case == "duplicate_id":
        path = project / "features.json"
        listing = features.loads(path.read_text())
        doc = json.loads(path.read_text())
        doc["features"].append(features.feature_to_dict(listing.features[0]))
        path.write_text(json.dumps(doc))
    elif case == "unknown_config_key":
        write(project / ".shiftkit.toml", "[shiftkit]\nmax_attempt = 3\n")
    elif case == "wrong_config_type":
        write(project / ".shiftkit.toml", "[shiftkit.log]\nkeep = 'many'\n")
    elif case == "malformed_toml":
        write(project / ".shiftkit.toml", "[shiftkit\nkeep = 1\n")
    elif case == "missing_features":
        (project / "features.json").unlink()
    elif case == "dangling_features":
        (project / "features.json").unlink()
        (project / "features.json").symlink_to(project / "nowhere" / "features.json")
    elif case == "config_is_a_directory":
        (project / ".shiftkit.toml").unlink()
        (project / ".shiftkit.toml").mkdir()
    elif case == "legacy_in_place":
        (project / "features.json").write_text("[]\n")


@pytest.mark.parametrize(
    ("case", "args", "code", "fragment"),
    BAD_INPUT,
    ids=[f"{c or a[0]}-{i}" for i, (c, a, _, _) in enumerate(BAD_INPUT)],
)
def test_bad_input_one_clear_line(
    scaffold: Path, case: str | None, args: list[str], code: int, fragment: str
) -> None:
    _setup(scaffold, case)
    result = shiftkit(scaffold, *args)
    assert result.returncode == code, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert fragment in lines[0]
    assert lines[0].startswith("shiftkit: ")


def test_not_a_git_repository(tmp_path: Path) -> None:
    result = shiftkit(tmp_path, "status")
    assert result.returncode == 2
    assert "is not inside a git work tree" in result.stderr and "Traceback" not in result.output


def test_new_without_terminal_asks_for_defaults(tmp_path: Path) -> None:
    result = shiftkit(tmp_path, "new", "x", input="")
    assert result.returncode == 2 and "pass --defaults" in result.stderr
    assert not (tmp_path / "x").exists()


def test_version_and_help(tmp_path: Path) -> None:
    assert shiftkit(tmp_path, "--version").stdout.startswith("shiftkit, version ")
    helped = shiftkit(tmp_path, "--help")
    assert helped.returncode == 0 and "Exit codes" in helped.stdout


def _commands(group: click.Group, path: str) -> list[tuple[str, click.Command]]:
    """Every command under ``group`` (hidden ones too), with its path."""
    found: list[tuple[str, click.Command]] = [(path, group)]
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found += _commands(command, f"{path} {name}")
        else:
            found.append((f"{path} {name}", command))
    return found


def test_every_command_and_option_has_help() -> None:
    from shiftkit.cli import cli

    missing = [
        f"{path} {'/'.join(param.opts)}"
        for path, command in _commands(cli, "shiftkit")
        for param in command.params
        if isinstance(param, click.Option) and not (param.help or "").strip()
    ]
    missing += [path for path, command in _commands(cli, "shiftkit") if not command.help]
    assert not missing, f"without help: {missing}"


def test_help_lists_commands_by_section_with_whole_descriptions(tmp_path: Path) -> None:
    from shiftkit.cli import SECTIONS, cli, summary

    helped = shiftkit(tmp_path, "--help")
    assert helped.returncode == 0, helped.output
    listing = helped.stdout.split("Options:", 1)[1]
    assert "…" not in listing and "..." not in listing  # click cuts descriptions so
    titles = [title for title, _ in SECTIONS]
    assert [line[:-1] for line in listing.splitlines() if line.endswith(":")] == titles
    flat = " ".join(listing.split())
    for title, names in SECTIONS:
        part = " ".join(listing.split(f"{title}:", 1)[1].split("\n\n", 1)[0].split())
        for name in names:
            assert f"{name} {summary(cli.commands[name])}" in part, (title, name)
    visible = {name for name, command in cli.commands.items() if not command.hidden}
    assert visible == {name for _, names in SECTIONS for name in names}, (
        "a command without a section"
    )
    assert "Commands:" not in flat
    # each command's own help still works
    assert shiftkit(tmp_path, "status", "--help").stdout.startswith("Usage: shiftkit status")


def test_every_hook_answers_help(tmp_path: Path) -> None:
    from shiftkit.cli import hook

    helped = shiftkit(tmp_path, "hook", "--help")
    assert helped.returncode == 0, helped.output
    for name, command in hook.commands.items():
        assert name in helped.stdout
        for flag in ("--help", "-h"):
            result = shiftkit(tmp_path, "hook", name, flag)
            assert result.returncode == 0, result.output
            assert result.stdout.startswith(f"Usage: shiftkit hook {name}"), result.stdout
            assert " ".join((command.help or "").split())[:40] in " ".join(result.stdout.split())
    assert set(hook.commands) == {"pre-commit", "commit-msg", "reference-transaction", "pre-push"}
    # what git runs still goes past click: no help there, and bad input is still exit 2
    assert shiftkit(tmp_path, "hook").returncode == 2


def test_claim_and_demo_help_say_what_they_do(tmp_path: Path) -> None:
    claim = " ".join(shiftkit(tmp_path, "claim", "--help").stdout.split())
    assert "remote" in claim and "Exit 3" in claim and "--steal" in claim
    demo = " ".join(shiftkit(tmp_path, "demo", "--help").stdout.split())
    assert "four shifts" in demo and "`shiftkit run`" in demo and "real hooks" in demo


def test_progress_bar_on_a_terminal_plain_when_piped() -> None:
    from shiftkit.commands import views

    data = {
        "passing": 3,
        "total": 12,
        "open": 8,
        "blocked": 1,
        "claimed": 0,
        "all_pass": False,
        "all_pass_message": None,
        "uncommitted_edit": None,
        "next": "F004",
        "blocked_features": [],
        "claimed_features": [],
    }
    terminal = views.status_text(data, terminal=True).splitlines()[0]
    assert terminal.startswith("[") and "#" in terminal and "3/12 passing (25%)" in terminal
    assert views.status_text(data, terminal=False).splitlines()[0] == "3/12 passing"


def test_the_suite_finds_this_interpreters_shiftkit_by_name() -> None:
    """conftest puts the running interpreter's bin directory first on PATH for every
    subprocess, so `.venv/bin/python -m pytest tests/test_X.py` works without the venv on
    PATH (fixtures wider than a test included)."""
    import os
    import shutil
    import sys

    first = os.environ["PATH"].split(os.pathsep)[0]
    assert first == str(Path(sys.executable).parent)
    assert os.environ["PATH"].split(os.pathsep).count(first) == 1
    found = shutil.which("shiftkit")
    assert found is not None and Path(found).parent == Path(first)


def test_revert_and_finish_help_say_what_happens_to_the_work(tmp_path: Path) -> None:
    revert = " ".join(shiftkit(tmp_path, "revert", "--help").stdout.split())
    assert "changes are discarded" in revert and "untracked files" in revert
    finish = " ".join(shiftkit(tmp_path, "finish", "--help").stdout.split())
    assert "after the feature's id (`F012: ...`)" in finish
