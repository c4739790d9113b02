"""`shiftkit guard`: a table of commands it denies and allows, and the hook contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import shiftkit
from shiftkit import guard

DENIED = [
    "git commit --no-verify -m 'F001: done'",
    "git commit -n -m 'F001: done'",
    "git commit -anm 'F001: done'",
    "git add -A && git commit -qn -m x",
    "git -c core.hooksPath=/dev/null commit -m 'F001: done'",
    "git -c core.hookspath=/tmp/empty commit -m x",
    "git --config-env=core.hooksPath=EMPTY commit -m x",
    "git config core.hooksPath /dev/null",
    "git config --global core.hooksPath .nohooks",
    "git config --unset core.hooksPath",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/x git commit -m x",
    "GIT_CONFIG_PARAMETERS=\"'core.hooksPath'='/x'\" git commit -m x",
    "SKIP=shiftkit-pre-commit git commit -m 'F001: done'",
    "SKIP=shiftkit-pre-commit,shiftkit-commit-msg pre-commit run",
    "export SKIP=shiftkit-pre-commit",
    "PRE_COMMIT_ALLOW_NO_CONFIG=1 git commit -m x",
    "git cherry-pick abc1234",
    "git commit-tree 4b825dc -p HEAD -m x",
    "git update-ref refs/heads/main abc1234",
    "git update-ref HEAD abc1234",
    "git merge --no-verify side",
    "rm -rf .git/hooks",
    "rm .git/hooks/pre-commit",
    "chmod -x .git/hooks/commit-msg",
    "mv .git/hooks /tmp/hooks",
    "sed -i 's/\"passes\": false/\"passes\": true/' features.json",
    "sed -i.bak -e 's/false/true/' ./features.json",
    "perl -pi -e 's/false/true/' features.json",
    "echo '{}' > features.json",
    "jq '.features[0].passes = true' features.json > /tmp/f && mv /tmp/f features.json",
    "cat /tmp/new.json | tee features.json",
    "cp /tmp/new.json features.json",
    "python3 -c \"import json; d=json.load(open('features.json')); json.dump(d, open('features.json','w'))\"",
    "bash -c 'git commit --no-verify -m x'",
    "sudo git commit --no-verify -m x",
]

ALLOWED = [
    "git commit -m 'F001: add two numbers'",
    "git commit -am 'Tidy the README'",
    "git commit -m 'mention -n in the docs'",
    "git status && git diff",
    "git log --oneline -5",
    "git config --get core.hooksPath",
    "git config user.name",
    "git update-ref -d refs/shiftkit/claims/F001 abc1234",
    "git merge side",
    "git push origin main",
    "pytest -q tests/",
    "shiftkit finish -m 'add two numbers'",
    "shiftkit add --description 'division' --step 'divide'",
    "cat features.json",
    "jq '.features | length' features.json",
    "python3 -c \"import json; print(len(json.load(open('features.json'))['features']))\"",
    "sed -n '1,20p' features.json",
    "rm -rf build/ .pytest_cache",
    "ls .git/hooks",
    "SKIP=1 make test",
    "echo hello > notes.txt",
]


@pytest.mark.parametrize("command", DENIED)
def test_denied(command: str) -> None:
    assert guard.check_command(command) is not None, command


@pytest.mark.parametrize("command", ALLOWED)
def test_allowed(command: str) -> None:
    assert guard.check_command(command) is None, command


FEATURES = {"features": [
    {"id": "F000", "category": "c", "description": "d", "steps": ["s"], "passes": True},
    {"id": "F001", "category": "c", "description": "d", "steps": ["s"], "passes": False, "attempts": 1},
]}  # fmt: skip


@pytest.fixture
def features_file(tmp_path: Path) -> Path:
    path = tmp_path / "features.json"
    path.write_text(json.dumps(FEATURES, indent=2) + "\n")
    return path


def edit(path: Path, old: str, new: str) -> dict:  # type: ignore[type-arg]
    return {"tool_name": "Edit", "tool_input": {"file_path": str(path), "old_string": old, "new_string": new}}


def test_file_tools(features_file: Path) -> None:
    text = features_file.read_text()
    root = features_file.parent
    flip = edit(features_file, '"passes": false', '"passes": true')
    assert "'passes'" in guard.decide(flip, root, "features.json")  # type: ignore[operator]
    reset = edit(features_file, '"attempts": 1', '"attempts": 0')
    assert guard.decide(reset, root, "features.json") is not None
    appended = dict(FEATURES, features=FEATURES["features"] + [
        {"id": "F002", "category": "c", "description": "new", "steps": ["s"], "passes": False}])
    write = {"tool_name": "Write", "tool_input": {"file_path": str(features_file),
                                                  "content": json.dumps(appended, indent=2)}}
    assert guard.decide(write, root, "features.json") is None  # appending stays allowed
    appended["features"][-1]["passes"] = True
    assert guard.decide(write | {"tool_input": {"file_path": str(features_file),
                                                "content": json.dumps(appended)}}, root, "features.json")
    removed = {"tool_name": "Write", "tool_input": {"file_path": str(features_file),
                                                    "content": json.dumps({"features": FEATURES["features"][:1]})}}
    assert "removes F001" in guard.decide(removed, root, "features.json")  # type: ignore[operator]
    other = edit(root / "README.md", "a", "b")
    assert guard.decide(other, root, "features.json") is None
    multi = {"tool_name": "MultiEdit", "tool_input": {"file_path": str(features_file), "edits": [
        {"old_string": '"description": "d",\n      "steps": [\n        "s"\n      ],\n      "passes": false',
         "new_string": '"description": "d",\n      "steps": [\n        "s"\n      ],\n      "passes": true'}]}}
    assert text.count('"passes": false') == 1
    assert guard.decide(multi, root, "features.json") is not None


def test_hook_contract_exit_codes(scaffold: Path) -> None:
    deny = shiftkit(scaffold, "guard", input=json.dumps(
        {"tool_name": "Bash", "tool_input": {"command": "git commit --no-verify -m x"}, "cwd": str(scaffold)}))
    assert deny.returncode == 2 and "--no-verify" in deny.stderr and "shiftkit finish" in deny.stderr
    allow = shiftkit(scaffold, "guard", input=json.dumps(
        {"tool_name": "Bash", "tool_input": {"command": "git status"}, "cwd": str(scaffold)}))
    assert allow.returncode == 0 and allow.output == ""
    flip = shiftkit(scaffold, "guard", input=json.dumps(edit(scaffold / "features.json",
                                                             '"passes": false', '"passes": true')))
    assert flip.returncode == 2 and "status fields" in flip.stderr
    garbage = shiftkit(scaffold, "guard", input="not json")
    assert garbage.returncode == 1 and "not JSON" in garbage.stderr and "Traceback" not in garbage.output
    settings = json.loads((scaffold / ".claude" / "settings.json").read_text())
    assert "shiftkit guard" in json.dumps(settings["hooks"]["PreToolUse"])
