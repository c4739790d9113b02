"""`shiftkit guard`: a table of commands it denies and allows, file-tool edits, and the hook
contract through the real CLI (Claude Code's PreToolUse JSON on stdin)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Result, fuzz_examples, git_ok, run, shiftkit
from hypothesis import given, settings
from hypothesis import strategies as st

from shiftkit.commands import guard

# (command, a word the reason must contain)
DENIED: list[tuple[str, str]] = [
    # skipping the commit hooks: --no-verify and its abbreviations, -n, clusters
    ("git commit --no-verify -m 'F001: done'", "no-verify"),
    ("git commit --no-verif -m x", "no-verify"),
    ("git commit --no-ver -m x", "no-verify"),
    ("git commit --no-v -m x", "no-verify"),
    ("git commit -n -m 'F001: done'", "-n"),
    ("git commit -anm 'F001: done'", "-n"),
    ("git commit -nm msg", "-n"),
    ("git add -A && git commit -qn -m x", "-n"),
    ("git commit -m x --no-verify 2>&1 | tail -5", "no-verify"),
    ("git merge --no-verify side", "no-verify"),
    ("git push --no-verify origin main", "no-verify"),
    ("git push --no-verif", "no-verify"),
    ("git am --no-verify < fix.patch", "no-verify"),
    # git's global options before the subcommand
    ("git -C /work/project commit -n -m x", "-n"),
    ("git --git-dir=.git --work-tree . commit --no-verify -m x", "no-verify"),
    ("git -c user.name=x -c color.ui=never commit --no-verify -m x", "no-verify"),
    # hooks path and config includes on the command line and in git's config
    ("git -c core.hooksPath=/dev/null commit -m 'F001: done'", "hooksPath"),
    ("git -c core.hookspath=/tmp/empty commit -m x", "hooksPath"),
    ("git --config-env=core.hooksPath=EMPTY commit -m x", "hooksPath"),
    ("git -c include.path=/tmp/evil.cfg commit -m x", "include.path"),
    ("git config core.hooksPath /dev/null", "hooksPath"),
    ("git config --global core.hooksPath .nohooks", "hooksPath"),
    ("git config --unset core.hooksPath", "hooksPath"),
    ("git config set core.hooksPath /tmp", "hooksPath"),
    ("git config --local include.path ../evil.cfg", "include.path"),
    ("git config --file .git/config core.hooksPath x", "hooksPath"),
    ("git config --edit", ".git/config"),
    ("git config alias.ci 'commit --no-verify'", "no-verify"),
    ("git -c alias.ci='commit -n' ci -m x", "-n"),
    ("echo '[core] hooksPath = /x' >> .git/config", ".git/config"),
    ("sed -i 's/hooks/x/' .git/config", ".git/config"),
    (
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/x git commit -m x",
        "GIT_CONFIG",
    ),
    ("GIT_CONFIG_PARAMETERS=\"'core.hooksPath'='/x'\" git commit -m x", "GIT_CONFIG"),
    # pre-commit's own switches
    ("SKIP=shiftkit-pre-commit git commit -m 'F001: done'", "SKIP"),
    ("SKIP=shiftkit-pre-commit,shiftkit-commit-msg pre-commit run", "SKIP"),
    ("export SKIP=shiftkit-pre-commit", "SKIP"),
    ("declare -x SKIP=shiftkit-pre-commit", "SKIP"),
    ("typeset -x SKIP", "SKIP"),
    ("SKIP=all shiftkit finish -m x", "SKIP"),
    ("PRE_COMMIT_ALLOW_NO_CONFIG=1 git commit -m x", "PRE_COMMIT_ALLOW_NO_CONFIG"),
    ("pre-commit uninstall", "pre-commit uninstall"),
    # history moved without the hooks
    ("git commit --amend --no-edit", "amend"),
    ("git commit --am -m x", "amend"),
    ("git rebase -i HEAD~3", "rebase"),
    ("git rebase --continue", "rebase"),
    ("git pull --rebase", "rebase"),
    # work crosses clones through `shiftkit sync`; nothing drops a remote's commits
    ("git pull", "shiftkit sync"),
    ("git pull --no-rebase", "shiftkit sync"),
    ("git pull --ff-only origin main", "shiftkit sync"),
    ("git merge FETCH_HEAD", "shiftkit sync"),
    ("git merge --ff-only @{u}", "shiftkit sync"),
    ("git push --force", "force push"),
    ("git push -f origin main", "force push"),
    ("git push --force-with-lease origin main", "force push"),
    ("git push --forc origin main", "force push"),
    ("git push origin +main", "force push"),
    ("git push origin +HEAD:refs/heads/main", "force push"),
    ("git push origin :main", "deletion"),
    ("git push --delete origin main", "deletion"),
    ("git push -d origin main", "deletion"),
    ("git push --mirror origin", "force push"),
    ("git cherry-pick abc1234", "cherry-pick"),
    ("git commit-tree 4b825dc -p HEAD -m x", "commit-tree"),
    ("git update-ref refs/heads/main abc1234", "update-ref"),
    ("git update-ref HEAD abc1234", "update-ref"),
    ("git update-ref -d refs/shiftkit/claims/F001", "claim"),
    ("git replace abc1234 def5678", "replace"),
    ("git filter-branch --tree-filter 'rm x' HEAD", "filter-branch"),
    ("git filter-repo --path src/", "filter-repo"),
    ("git update-index --skip-worktree features.json", "skip-worktree"),
    ("git update-index --assume-unchanged features.json", "assume-unchanged"),
    # the hooks themselves
    ("rm -rf .git/hooks", ".git/hooks"),
    ("rm .git/hooks/pre-commit", ".git/hooks"),
    ("rm -rf .git", ".git"),
    ("chmod -x .git/hooks/commit-msg", ".git/hooks"),
    ("chmod 644 .git/hooks/pre-commit", ".git/hooks"),
    ("mv .git/hooks /tmp/hooks", ".git/hooks"),
    ("cp /tmp/noop .git/hooks/pre-commit", ".git/hooks"),
    ("cp /tmp/pre-commit .git/hooks/", ".git/hooks"),
    ("echo 'exit 0' > .git/hooks/pre-commit", ".git/hooks"),
    ("sed -i 's/shiftkit/true/' .git/hooks/pre-commit", ".git/hooks"),
    ("truncate -s 0 .git/hooks/commit-msg", ".git/hooks"),
    ("ln -sf /dev/null .git/hooks/pre-commit", ".git/hooks"),
    ("find .git/hooks -type f -delete", ".git/hooks"),
    ("find .git/hooks -type f -exec rm {} +", ".git/hooks"),
    # shiftkit's local state and the person-owned files
    ("rm -rf .git/shiftkit", ".git/shiftkit"),
    ("echo '{}' > .git/shiftkit/claim.json", ".git/shiftkit"),
    ("sed -i 's/a/b/' .shiftkit.toml", ".shiftkit.toml"),
    ("echo 'max_attempts = 99' >> .shiftkit.toml", ".shiftkit.toml"),
    ("echo 'me ssh-ed25519 AAAA' >> .shiftkit/allowed_signers", "allowed_signers"),
    # person actions
    ("shiftkit unblock F001 --note 'flaky'", "a person"),
    ("shiftkit override F001", "a person"),
    ("shiftkit accept 1234567 --reason 'it is fine'", "a person"),
    (".shiftkit/hook accept 1234567 --reason x", "shiftkit accept"),
    ("python3 -m shiftkit accept HEAD --reason x", "shiftkit accept"),
    ('git commit -m "Fix the parser" -m "Shiftkit-Accept: 1234567 fine"', "person trailer"),
    ("shiftkit release --steal", "a person"),
    ("shiftkit claim F002 --steal", "a person"),
    ("python3 -m shiftkit unblock F001 --note x", "shiftkit unblock"),
    ("shiftkit add --description 'division' --step 'divide'", "a person"),
    ("shiftkit add --description twin --step s --verify true", "shiftkit add"),
    # messages the shell makes when it runs: a person trailer could hide in them (0062)
    (
        'git commit -am "Skip flaky case" -m "$(echo U2hpZnRraXQtT3ZlcnJpZGU6IGZsYWt5|base64 -d)"',
        "literally",
    ),
    ('git commit -m "`printf Shiftkit-Ov; printf erride: x`"', "literally"),
    ('git commit -m "Fix $MSG"', "literally"),
    ("git commit -m ${MSG}", "literally"),
    ("git commit -m $'Shiftkit-\\x4fverride: x'", "literally"),
    ('git commit --trailer "$T" -m x', "--trailer"),
    ('git notes add -m "$(cat /tmp/x)"', "git notes"),
    ('git merge -m "$(echo x)" side', "git merge"),
    ('echo "$X" | git commit -F -', "-F -"),
    ("base64 -d /tmp/m | git commit -F -", "-F -"),
    ("git commit -F - <<EOF\nFix $X\nEOF", "-F -"),
    ('git commit -m "$(cat <<EOF\nPlain $X body\nEOF\n)"', "literally"),
    ('git commit -m "$(cat <<\'EOF\'\nx\nEOF\n)" -m "$(date)"', "literally"),
    ("echo 'Shiftkit-Override: x' >> .git/MERGE_MSG", ".git/MERGE_MSG"),
    ("cp /tmp/msg .git/SQUASH_MSG", "merge"),
    # the project's hook script passes its arguments to shiftkit; so does python's entry point
    (".shiftkit/hook add --description x --step s", "shiftkit add"),
    (".shiftkit/hook unblock F001 --note x", "shiftkit unblock"),
    (".shiftkit/hook override F001 --reason x", "shiftkit override"),
    ("./.shiftkit/hook claim F001 --steal", "--steal"),
    ('"$CLAUDE_PROJECT_DIR"/.shiftkit/hook release --steal', "--steal"),
    ("sh .shiftkit/hook unblock F001", "shiftkit unblock"),
    ("python -P -c 'from shiftkit.main import main; main()' add --description x", "shiftkit add"),
    (
        "python3 -Pc 'import sys; from shiftkit.main import main; sys.exit(main())' unblock F1",
        "a person",
    ),
    ("python -m shiftkit add --description x --step s", "shiftkit add"),
    ("python3 -m shiftkit.main override F001", "shiftkit override"),
    ("python3 -c \"from shiftkit.main import main; main(['add', '--description', 'x'])\"", "add"),
    # features.json rewritten in place
    ('sed -i \'s/"passes": false/"passes": true/\' features.json', "features.json"),
    ("sed -i.bak -e 's/false/true/' ./features.json", "features.json"),
    ("perl -pi -e 's/false/true/' features.json", "features.json"),
    ("echo '{}' > features.json", "features.json"),
    ("echo '{}' >> features.json", "features.json"),
    (
        "jq '.features[0].passes = true' features.json > /tmp/f && mv /tmp/f features.json",
        "features.json",
    ),
    ("jq '.features[0].passes = true' features.json > features.json", "features.json"),
    ("jq . features.json | sponge features.json", "features.json"),
    ("cat /tmp/new.json | tee features.json", "features.json"),
    ("cp /tmp/new.json features.json", "features.json"),
    ("cp /tmp/features.json .", "features.json"),
    ("mv /tmp/new.json features.json", "features.json"),
    ("mv features.json /tmp/old.json", "features.json"),
    ("truncate -s 0 features.json", "features.json"),
    ("dd if=/tmp/new.json of=features.json", "features.json"),
    ("yq -i '.features[0].passes = true' features.json", "features.json"),
    ("cat > features.json <<'EOF'\n{\"features\": []}\nEOF", "features.json"),
    (
        (
            "python3 -c \"import json; d=json.load(open('features.json')); "
            "json.dump(d, open('features.json','w'))\""
        ),
        "features.json",
    ),
    (
        "python3 - <<'PY'\nfrom pathlib import Path\nPath('features.json').write_text('{}')\nPY",
        "features.json",
    ),
    ("node -e \"require('fs').writeFileSync('features.json', '{}')\"", "features.json"),
    ("ruby -e \"File.write('features.json', '{}')\"", "features.json"),
    ('perl -e \'open(my $f, ">", "features.json")\'', "features.json"),
    # wrappers looked through
    ("bash -c 'git commit --no-verify -m x'", "no-verify"),
    ("sh -c \"sh -c 'git commit -n -m x'\"", "-n"),
    ("sudo git commit --no-verify -m x", "no-verify"),
    ("sudo -u dev -E git commit --no-verify -m x", "no-verify"),
    ("env -u HOME SKIP=x git commit -m y", "SKIP"),
    ("env -i git commit -n -m x", "-n"),
    ("timeout -s KILL 30 git commit --no-verify -m x", "no-verify"),
    ("nice -n 5 git commit --no-verify -m x", "no-verify"),
    ("stdbuf -oL git commit --no-verify -m x", "no-verify"),
    ("command git commit --no-verify -m x", "no-verify"),
    ("echo features.json | xargs sed -i 's/false/true/'", "features.json"),
    ("find . -name features.json -exec sed -i 's/false/true/' {} \\;", "features.json"),
    ("echo $(git commit --no-verify -m x)", "no-verify"),
    ('x="`git commit -n -m y`"', "-n"),
    ("eval 'git commit --no-verify -m x'", "no-verify"),
    ("bash <<'SH'\ngit commit --no-verify -m x\nSH", "no-verify"),
    ("echo 'git commit -n -m x' | bash", "-n"),
    ("(cd sub && git commit -n -m x)", "-n"),
    ("if true; then git commit --no-verify -m x; fi", "no-verify"),
    ("ls\ngit commit --no-verify -m x", "no-verify"),
]

ALLOWED = [
    # reading the feature list
    "cat features.json",
    "jq . features.json",
    "jq '.features | length' features.json",
    "jq '.features | map(select(.passes == false))' features.json > /tmp/open.json",
    "grep passes features.json",
    "sed -n '1,20p' features.json",
    "sed 's/a/b/' features.json > /tmp/x",
    "perl -ne 'print if /passes/' features.json",
    "tee x < features.json",
    "wc -l < features.json",
    "cp -t /tmp features.json",
    "cp features.json /tmp/x",
    "cp features.json /tmp/",
    "diff features.json /tmp/old.json",
    "git diff features.json",
    "git show HEAD:features.json > /tmp/old.json",
    "git add features.json src/",
    "touch features.json",
    "find . -name features.json",
    "printf '%s\\n' features.json | xargs cat",
    "python -c \"print(open('features.json').read())\"",
    "python3 -c \"import json; print(len(json.load(open('features.json'))['features']))\"",
    "python3 - <<'PY'\nimport json\nprint(json.load(open('features.json'))['features'][0])\nPY",
    "node -e \"console.log(require('./features.json').features.length)\"",
    # words that only look dangerous: comments, quoted strings, messages
    "ls # features.json > x",
    "ls # git commit --no-verify",
    'echo "git commit --no-verify"',
    "echo 'rm -rf .git/hooks'",
    'git commit -m "--no-verify mentioned"',
    "git commit -m 'see features.json > x'",
    "git commit --message='-n'",
    "git commit -m 'Mention --amend and -n in docs' -- docs/",
    "git commit -mn",
    "git merge -m '--no-verify' side",
    "git log --format='%H#%s' -3",
    "echo a#b > notes.txt",
    "cat > notes.md <<'EOF'\ngit commit --no-verify is denied\nrm -rf .git/hooks\nEOF",
    # messages with a `$` the shell leaves alone, or a here-document the line shows
    "git commit -m 'Costs $5 and $(nothing)'",
    'git commit -m "Costs \\$5"',
    'git commit -m "Price: 5$"',
    "git commit -m \"$(cat <<'EOF'\nFix the parser\n\nBody with $HOME literal\nEOF\n)\"",
    'git commit -m "$(cat <<EOF\nPlain body\nEOF\n)"',
    "git commit -F - <<'EOF'\nFix $X literally\nEOF",
    "echo 'Fix it' | git commit -F -",
    "cd \"$HOME/src\" && git commit -m 'Tidy'",
    # git, plainly
    "git commit -m 'F001: add two numbers'",
    "git commit -am 'Tidy the README'",
    "git status && git diff",
    "git log --oneline -5",
    "git log -n 3",
    "git push",
    "git push origin main",
    "git push -n origin main",
    "git merge side",
    "git merge --no-verify-signatures side",
    "git push -u origin main",
    "git fetch origin",
    "git merge origin-side",
    "git stash && git stash pop",
    "git checkout -b feature/x",
    "git reset --hard HEAD",
    "git revert HEAD --no-edit",
    "git rebase --help",
    "git rebase -h",
    "git rebase --abort",
    "git cherry-pick --abort",
    "git replace --list",
    "git update-index --refresh",
    "git update-index --no-skip-worktree features.json",
    "git update-ref refs/tags/v1 HEAD",
    "git -C ../other status",
    "git -c color.ui=never log",
    # reading git's config, hooks and shiftkit's files
    "git config core.hooksPath",
    "git config --get core.hooksPath",
    "git config get core.hooksPath",
    "git config --list --show-origin",
    "git config user.name",
    "git config user.email dev@example.invalid",
    "ls .git/hooks",
    "cat .git/config",
    "chmod +x .git/hooks/pre-commit",
    "chmod 755 .git/hooks/pre-commit",
    "ls -la .git/shiftkit",
    "cat .shiftkit.toml",
    "cat .shiftkit/allowed_signers",
    "rm .git/index.lock",
    "rm -rf vendor/x/.git",
    # shiftkit and pre-commit, as an agent uses them
    "shiftkit status",
    "shiftkit start --brief",
    "shiftkit claim",
    "shiftkit release",
    "shiftkit finish -m x",
    "shiftkit finish -m 'unblock the parser'",
    "shiftkit note 'needs --steal? no'",
    "shiftkit revert --reason 'verifier still fails'",
    ".shiftkit/hook status",
    "./.shiftkit/hook claim F001",
    "python -P -c 'import sys; from shiftkit.main import main; sys.exit(main())' finish -m x",
    "python -m pytest add",
    "pre-commit run --all-files",
    "SKIP=1 make test",
    "env | grep SKIP",
    'export PATH="$HOME/bin:$PATH"',
    "export -n SKIP",
    "unset SKIP",
    # everyday commands, wrapped or not
    "pytest -q tests/",
    "timeout 60 pytest -q",
    "sudo apt-get install -y jq",
    "command -v git",
    "bash scripts/test.sh",
    "bash -c 'pytest -q && shiftkit verify'",
    "rm -rf build/ dist .pytest_cache",
    "find . -name '*.pyc' -delete",
    "find . -type f -exec grep -l passes {} +",
    "mv notes.txt docs/",
    "cp README.md /tmp/",
    "sed -i 's/a/b/' README.md",
    "echo hello > notes.txt",
    'echo "$(date) done" >> notes.txt',
]


@pytest.mark.parametrize(("command", "mentions"), DENIED)
def test_denied(command: str, mentions: str) -> None:
    reason = guard.check_command(command)
    assert reason is not None, command
    assert mentions in reason, reason
    assert "shiftkit" in reason or "a person" in reason, reason  # says what to do instead


@pytest.mark.parametrize("command", ALLOWED)
def test_allowed(command: str) -> None:
    assert guard.check_command(command) is None, command


def test_the_table_is_big_enough() -> None:
    assert len(DENIED) >= 65 and len(ALLOWED) >= 65
    assert len({c for c, _ in DENIED}) == len(DENIED) and len(set(ALLOWED)) == len(ALLOWED)


def test_a_configured_feature_list_name() -> None:
    assert guard.check_command("echo x > docs/list.json", "docs/list.json") is not None
    assert guard.check_command("echo x > features.json", "docs/list.json") is None


def test_shells_nested_too_deep_are_denied() -> None:
    command = "git status"
    for _ in range(guard.MAX_DEPTH + 2):
        command = f"bash -c {json.dumps(command)}"
    assert "too deep" in (guard.check_command(command) or "")


def test_split_commands_still_splits() -> None:
    assert guard.split_commands("a b; c | d && e # f") == [["a", "b"], ["c"], ["d"], ["e"]]


# -- file tools ----------------------------------------------------------------------------------

FEATURES = {
    "features": [
        {"id": "F000", "category": "c", "description": "d", "steps": ["s"], "passes": True},
        {
            "id": "F001",
            "category": "c",
            "description": "d",
            "steps": ["s"],
            "passes": False,
            "attempts": 1,
        },
    ]
}


@pytest.fixture
def features_file(tmp_path: Path) -> Path:
    path = tmp_path / "features.json"
    path.write_text(json.dumps(FEATURES, indent=2) + "\n")
    return path


def edit(path: Path, old: str, new: str) -> dict[str, Any]:
    return {
        "tool_name": "Edit",
        "tool_input": {"file_path": str(path), "old_string": old, "new_string": new},
    }


def write(path: Path, content: str) -> dict[str, Any]:
    return {"tool_name": "Write", "tool_input": {"file_path": str(path), "content": content}}


def test_file_tools_on_the_feature_list(features_file: Path) -> None:
    text = features_file.read_text()
    root = features_file.parent
    flip = edit(features_file, '"passes": false', '"passes": true')
    assert "'passes'" in (guard.decide(flip, root, "features.json") or "")
    reset = edit(features_file, '"attempts": 1', '"attempts": 0')
    assert "'attempts'" in (guard.decide(reset, root, "features.json") or "")
    blocked = edit(features_file, '"attempts": 1', '"attempts": 1, "blocked": {"reason": "x"}')
    assert "'blocked'" in (guard.decide(blocked, root, "features.json") or "")
    appended: dict[str, Any] = dict(
        FEATURES,
        features=FEATURES["features"]
        + [{"id": "F002", "category": "c", "description": "new", "steps": ["s"], "passes": False}],
    )
    for passes in (False, True):  # appending is a person's, as `shiftkit add` is
        appended["features"][-1]["passes"] = passes
        said = guard.decide(write(features_file, json.dumps(appended)), root, "features.json")
        assert said is not None and "appends F002" in said and "a person" in said, said
    grown = edit(features_file, '"attempts": 1\n    }', '"attempts": 1\n    }, {"id": "F002"}')
    assert "appends F002" in (guard.decide(grown, root, "features.json") or "")
    removed = write(features_file, json.dumps({"features": FEATURES["features"][:1]}))
    assert "removes F001" in (guard.decide(removed, root, "features.json") or "")
    relative = edit(Path("features.json"), '"passes": false', '"passes": true')
    assert guard.decide(relative, root, "features.json") is not None
    other = edit(root / "README.md", "a", "b")
    assert guard.decide(other, root, "features.json") is None
    multi = {
        "tool_name": "MultiEdit",
        "tool_input": {
            "file_path": str(features_file),
            "edits": [
                {
                    "old_string": '"description": "d",\n      "steps": [\n        "s"\n      ],\n'
                    '      "passes": false',
                    "new_string": '"description": "d",\n      "steps": [\n        "s"\n      ],\n'
                    '      "passes": true',
                }
            ],
        },
    }
    assert text.count('"passes": false') == 1
    assert guard.decide(multi, root, "features.json") is not None


@pytest.mark.parametrize(
    ("relative", "mentions"),
    [
        (".git/hooks/pre-commit", ".git/hooks"),
        (".git/config", ".git/config"),
        (".git/shiftkit/claim.json", ".git/shiftkit"),
        (".shiftkit.toml", ".shiftkit.toml"),
        (".shiftkit/allowed_signers", "allowed_signers"),
    ],
)
def test_file_tools_on_protected_files(tmp_path: Path, relative: str, mentions: str) -> None:
    for payload in (
        write(tmp_path / relative, "x"),
        edit(tmp_path / relative, "a", "b"),
        {"tool_name": "NotebookEdit", "tool_input": {"notebook_path": str(tmp_path / relative)}},
    ):
        reason = guard.decide(payload, tmp_path, "features.json")
        assert reason is not None and mentions in reason, (payload, reason)
        assert guard.decide(payload, None, "features.json") is not None


def test_file_tools_elsewhere_are_allowed(tmp_path: Path) -> None:
    for relative in ("src/app.py", ".git/info/exclude", "docs/shiftkit.md", ".shiftkit/x.json"):
        assert guard.decide(write(tmp_path / relative, "x"), tmp_path, "features.json") is None


# -- the hook through the real CLI -----------------------------------------------------------------


def pre_tool_use(tool_input: Any, tool_name: str = "Bash", cwd: Path | None = None) -> str:
    payload = {
        "session_id": "test-session",
        "transcript_path": "/tmp/t.jsonl",
        "hook_event_name": "PreToolUse",
        "tool_name": tool_name,
        "tool_input": tool_input,
    }
    if cwd is not None:
        payload["cwd"] = str(cwd)
    return json.dumps(payload)


@pytest.mark.parametrize(
    ("command", "mentions"),
    [
        ("git commit --no-verify -m x", "no-verify"),
        ("sed -i 's/false/true/' features.json", "features.json"),
        ("shiftkit unblock F001 --note x", "a person"),
        (".shiftkit/hook add --description x --step s", "shiftkit add"),
        ("git -c core.hooksPath=/dev/null commit -m x", "hooksPath"),
    ],
)
def test_hook_denies_through_the_cli(tmp_path: Path, command: str, mentions: str) -> None:
    result = shiftkit(tmp_path, "guard", input=pre_tool_use({"command": command}, cwd=tmp_path))
    assert result.returncode == 2, result.output
    assert result.stdout == "" and mentions in result.stderr
    assert result.stderr.startswith("shiftkit guard: ") and result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "shiftkit finish -m x",
        "cat features.json",
        'echo "git commit -n"',
    ],
)
def test_hook_allows_through_the_cli(tmp_path: Path, command: str) -> None:
    result = shiftkit(tmp_path, "guard", input=pre_tool_use({"command": command}, cwd=tmp_path))
    assert (result.returncode, result.output) == (0, ""), result.output


def test_hook_contract_in_a_scaffold(scaffold: Path) -> None:
    deny = shiftkit(
        scaffold,
        "guard",
        input=pre_tool_use({"command": "git commit --no-verify -m x"}, cwd=scaffold),
    )
    assert (
        deny.returncode == 2 and "--no-verify" in deny.stderr and "shiftkit finish" in deny.stderr
    )
    flip = shiftkit(
        scaffold,
        "guard",
        input=json.dumps(
            edit(scaffold / "features.json", '"passes": false', '"passes": true')
            | {"cwd": str(scaffold)}
        ),
    )
    assert flip.returncode == 2 and "status fields" in flip.stderr
    hooks = shiftkit(
        scaffold,
        "guard",
        input=pre_tool_use(
            {"file_path": str(scaffold / ".shiftkit.toml"), "content": ""}, "Write", scaffold
        ),
    )
    assert hooks.returncode == 2 and ".shiftkit.toml" in hooks.stderr
    settings = json.loads((scaffold / ".claude" / "settings.json").read_text())
    assert ".shiftkit/hook guard" in json.dumps(settings["hooks"]["PreToolUse"])


def test_a_shiftkit_folder_in_the_project_is_not_what_the_hook_runs(scaffold: Path) -> None:
    """`.shiftkit/hook` ran `python -m shiftkit`, whose path starts with the project's own
    folder: a `shiftkit/__main__.py` written there replaced the guard (and every hook the
    script runs). `-P` keeps the project's folder off the path (decision 0070)."""
    planted = scaffold / "shiftkit"
    planted.mkdir()
    (planted / "__init__.py").write_text("")
    (planted / "__main__.py").write_text("raise SystemExit(0)\n")
    denied = run(
        [str(scaffold / ".shiftkit" / "hook"), "guard"],
        scaffold,
        input=pre_tool_use({"command": "git commit --no-verify -m x"}, cwd=scaffold),
    )
    assert denied.returncode == 2 and "no-verify" in denied.stderr, denied.output


def test_the_commit_that_ends_a_merge_keeps_gits_message(scaffold: Path) -> None:
    """`git commit --no-edit` was denied in a merge too, where the message is git's MERGE_MSG
    (`Merge branch ...`), which the guard keeps the agent from writing."""

    def guarded(command: str) -> Result:
        return shiftkit(scaffold, "guard", input=pre_tool_use({"command": command}, cwd=scaffold))

    assert guarded("git commit --no-edit").returncode == 2  # no merge: a prepared message
    git_ok(scaffold, "checkout", "-q", "-b", "side")
    (scaffold / "notes.txt").write_text("from the side\n")
    git_ok(scaffold, "add", "notes.txt")
    git_ok(scaffold, "commit", "-q", "-m", "Add notes")
    git_ok(scaffold, "checkout", "-q", "-")
    (scaffold / "other.txt").write_text("from main\n")
    git_ok(scaffold, "add", "other.txt")
    git_ok(scaffold, "commit", "-q", "-m", "Add other")
    git_ok(scaffold, "merge", "-q", "--no-commit", "--no-ff", "side")
    assert (scaffold / ".git" / "MERGE_HEAD").is_file()
    allowed = guarded("git commit --no-edit")
    assert (allowed.returncode, allowed.output) == (0, ""), allowed.output
    written = guarded("printf 'Shiftkit-Ov''erride: x' >> .git/MERGE_MSG")
    assert written.returncode == 2 and "MERGE_MSG" in written.stderr, written.output
    git_ok(scaffold, "commit", "-q", "--no-edit")  # (what the guard allowed, run)
    assert guarded("git commit --no-edit").returncode == 2  # the merge is over


def test_a_bug_in_the_guard_refuses_the_call(tmp_path: Path) -> None:
    """An exception on the guard's path went to the generic handler (exit 4), which both
    harnesses read as "not blocked": the tool call ran. A guard that cannot decide refuses."""
    crash = (  # the real guard, run with too little stack to decide (a RecursionError)
        "import sys; import shiftkit.commands.guard; from shiftkit.main import main; "
        "sys.setrecursionlimit(20); sys.exit(main(['guard']))"
    )
    result = run(
        [sys.executable, "-c", crash],
        tmp_path,
        input=pre_tool_use({"command": "git status"}, cwd=tmp_path),
    )
    assert result.returncode == 2, result.output
    assert result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("shiftkit guard: internal error (RecursionError"), result.stderr
    assert "the call is refused" in result.stderr


def test_a_corrupt_settings_cache_is_read_again(scaffold: Path) -> None:
    """A guard-settings entry nested past Python's recursion limit crashed the guard (edge/locate
    `_read` caught ValueError, not RecursionError): it is read again from HEAD instead."""
    head = git_ok(scaffold, "rev-parse", "HEAD").strip()
    folder = Path(git_ok(scaffold, "rev-parse", "--git-common-dir").strip())
    if not folder.is_absolute():
        folder = scaffold / folder
    cache = folder / "shiftkit" / "guard-settings"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / head).write_text("[" * 100_000)
    allowed = shiftkit(
        scaffold, "guard", input=pre_tool_use({"command": "git status"}, cwd=scaffold)
    )
    assert (allowed.returncode, allowed.output) == (0, ""), allowed.output
    denied = shiftkit(
        scaffold, "guard", input=pre_tool_use({"command": "rm claude-progress.txt"}, cwd=scaffold)
    )
    assert denied.returncode == 2 and "progress" in denied.stderr, denied.output


BAD_PAYLOADS: list[tuple[bytes, int]] = [
    (b"not json", 0),
    (b"[1, 2, 3]", 0),
    (b'"just a string"', 0),
    (b'{"tool_name": "Bash", "tool_input": {"command": ', 2),  # cut off, but a Bash call
    (b"\xff\xfe\x00garbage", 0),
    (b"[" * 100_000, 0),
    (pre_tool_use([1, 2]).encode(), 2),
    (pre_tool_use("git status").encode(), 2),
    (pre_tool_use({"command": 42}).encode(), 2),
    (pre_tool_use({"command": None}).encode(), 2),
    (pre_tool_use({}).encode(), 2),
    (pre_tool_use({"file_path": 7, "content": "x"}, "Write").encode(), 2),
    (pre_tool_use({"file_path": "a\u0000b", "content": "x"}, "Edit").encode(), 2),
    (pre_tool_use({"file_path": "x.py", "edits": "nope"}, "MultiEdit").encode(), 0),
    (json.dumps({"tool_name": ["Bash"], "tool_input": {"command": "x"}}).encode(), 0),
    (json.dumps({"tool_name": "Read", "tool_input": [1]}).encode(), 0),
    (
        json.dumps(
            {"tool_name": "Bash", "tool_input": {"command": "git status"}, "cwd": 12}
        ).encode(),
        0,
    ),
    (
        json.dumps(
            {"tool_name": "Bash", "tool_input": {"command": "git status"}, "cwd": "/no/such/dir"}
        ).encode(),
        0,
    ),
    ('{"tool_name": "Bash", "tool_input": {"command": "echo \u00e9"}}'.encode("latin-1"), 0),
    (b'{"tool_name": "Bash", "tool_input": {"command": "git commit -n \xff"}}', 2),
]


@pytest.mark.parametrize(("raw", "code"), BAD_PAYLOADS)
def test_bad_payloads_never_traceback(tmp_path: Path, raw: bytes, code: int) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "shiftkit", "guard"],
        cwd=tmp_path,
        input=raw,
        capture_output=True,
        timeout=60,
        check=False,
    )
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == code, stderr
    assert "Traceback" not in stderr and proc.stdout == b""
    assert stderr.count("\n") <= 1
    if stderr:
        assert stderr.startswith(("shiftkit: guard: ", "shiftkit guard: ")), stderr


def test_run_hook_is_pure() -> None:
    def nowhere(cwd: str | None) -> tuple[Path | None, str]:
        return None, "features.json"

    assert guard.run_hook(b"", nowhere) == (0, "")
    code, line = guard.run_hook(pre_tool_use({"command": "git rebase main"}).encode(), nowhere)
    assert code == 2 and "rebase" in line
    code, line = guard.run_hook(b"not json", nowhere)
    assert code == 0 and line.startswith("shiftkit: guard:") and "allowing" in line


def test_guard_imports_nothing_heavy() -> None:
    code = (
        "import sys, shiftkit.commands.guard; print(sorted(m for m in "
        "('click', 'copier', 'git', 'dataclasses', 'subprocess') if m in sys.modules))"
    )
    result = run([sys.executable, "-c", code], Path.cwd())
    assert result.returncode == 0 and result.stdout.strip() == "[]", result.output


# -- issue 19: the environment, where a command runs, .git's stores, lists from other commits --

SITE = guard.Site(
    "features.json",
    ("claude-progress.txt", "progress-archive.txt", ".shiftkit/ledger.jsonl"),
    "/work/proj",
    "",
)
DENIED_AT_SITE: list[tuple[str, str]] = [
    # an environment that points git at other config (core.hooksPath there), for a write
    ("HOME=/tmp/x git commit -m 'F001: done'", "HOME"),
    ("XDG_CONFIG_HOME=/tmp/x git commit -m x", "XDG_CONFIG_HOME"),
    ("GIT_CONFIG_GLOBAL=/tmp/evil.cfg git commit -m x", "GIT_CONFIG_GLOBAL"),
    ("GIT_CONFIG_SYSTEM=/tmp/evil.cfg git merge side", "GIT_CONFIG_SYSTEM"),
    ("GIT_EXEC_PATH=/tmp/bin git commit -m x", "GIT_EXEC_PATH"),
    ("GIT_INDEX_FILE=/tmp/index git commit -m x", "GIT_INDEX_FILE"),
    ("env HOME=/tmp/x git commit -m x", "HOME"),
    ("HOME=/tmp/x; git commit -m x", "HOME"),
    ("HOME=/tmp/x shiftkit finish -m x", "HOME"),
    ("export HOME=/tmp/x; git commit -m x", "HOME"),
    ("export XDG_CONFIG_HOME=/tmp/x", "XDG_CONFIG_HOME"),
    ("export GIT_DIR=/tmp/x/.git", "GIT_DIR"),
    # a relative path inside .git after `cd`, and `cd` that may fail or ends with a subshell
    ("cd .git; mv hooks hooks.off", ".git/hooks"),
    ("cd .git && rm -rf hooks", ".git/hooks"),
    ("cd .git/hooks && truncate -s 0 pre-commit", ".git/hooks"),
    ("cd sub && rm ../.git/hooks/pre-commit", ".git/hooks"),
    ("cd /tmp/x; git commit --no-verify -m x", "no-verify"),
    ("cd /tmp/x || git commit -n -m x", "-n"),
    ("(cd /tmp/x && true); git commit --no-verify -m x", "no-verify"),
    ("cd /tmp/x && git commit -m x; git commit --no-verify -m y", "no-verify"),
    ("cd /tmp/x && cd /work/proj && git commit -n -m x", "-n"),
    ("rm /work/proj/.git/hooks/pre-commit", ".git/hooks"),
    # writes into .git's stores: grafts, alternates, refs, by copy, sync or unpacking
    ("cp /tmp/grafts .git/info/grafts", "grafts"),
    ("cd .git && cp /tmp/grafts info/grafts", "grafts"),
    ("cp /tmp/alternates .git/objects/info/alternates", "alternates"),
    ("echo /tmp/other/objects > .git/objects/info/alternates", "alternates"),
    ("echo 0123abcd > .git/refs/heads/main", "refs"),
    ("rsync -a /tmp/evil/ .git/", ".git"),
    ("cp -r /tmp/evil/. .git/info", ".git"),
    ("tar -xf /tmp/evil.tar -C .git", ".git"),
    ("cd .git && tar xf /tmp/evil.tar", ".git"),
    ("unzip -o /tmp/evil.zip -d .git/objects/info", ".git"),
    ("tar xzf /tmp/evil.tgz .git/hooks/pre-commit", ".git/hooks"),
    # the list and the records rewritten from another commit
    ("git checkout main -- features.json", "features.json"),
    ("git checkout side features.json", "features.json"),
    ("git checkout HEAD~3 -- .", "features.json"),
    ("git restore --source=side features.json", "features.json"),
    ("git restore -s HEAD~2 claude-progress.txt", "claude-progress.txt"),
    ("git restore --source side -- progress-archive.txt", "progress-archive.txt"),
    ("git checkout side -- .shiftkit/", "ledger"),
]
ALLOWED_AT_SITE = [
    "python3 -c \"import json,sys; json.dump(json.load(open('features.json')), sys.stdout)\"",
    "python3 -c \"import json; print(json.dumps(json.load(open('features.json')), indent=2))\"",
    "GIT_CONFIG_GLOBAL=/dev/null git log",
    "HOME=/tmp/x git status",
    "HOME=/tmp/x git config --get user.name",
    "GIT_CONFIG_GLOBAL=/dev/null git diff HEAD~1",
    "HOME=/tmp/x shiftkit status",
    "HOME=/tmp/home pytest -q",
    "cd /tmp/other && git commit --no-verify -m x",
    "cd /tmp/other && rm -rf .git/hooks",
    "cd ../other && git commit -n -m x",
    "git -C /tmp/other commit -n -m x",
    "rm -rf /tmp/scratch/.git/hooks",
    "cp /tmp/scratch/.git/config /tmp/config.bak",
    "git checkout HEAD -- features.json",
    "git checkout -- features.json",
    "git restore features.json",
    "git restore --staged features.json",
    "git checkout side -- src/",
    "git checkout side",
    "tar xzf deps.tgz",
    "tar -cf /tmp/backup.tar .git",
    "unzip assets.zip -d static",
    "cp -r src /tmp/",
    "cd src && rm -rf build",
]


@pytest.mark.parametrize(("command", "mentions"), DENIED_AT_SITE)
def test_denied_at_site(command: str, mentions: str) -> None:
    reason = guard.check_command(command, SITE)
    assert reason is not None, command
    assert mentions in reason, reason
    assert "shiftkit" in reason or "a person" in reason, reason


@pytest.mark.parametrize("command", ALLOWED_AT_SITE)
def test_allowed_at_site(command: str) -> None:
    assert guard.check_command(command, SITE) is None, command


# -- claim refs under the project's own `ref_prefix` (decision 0070) ---------------------------

BRANCH_CLAIMS = guard.Site(
    "features.json", (), "/work/proj", "", claims="refs/heads/team-claims/"
)  # a host that allows only branches
TAG_CLAIMS = guard.Site("features.json", (), "/work/proj", "", claims="refs/tags/claims/")
DENIED_CLAIM_REFS: list[tuple[guard.Site, str]] = [
    (BRANCH_CLAIMS, "git push origin HEAD:refs/heads/team-claims/F001"),
    (BRANCH_CLAIMS, "git push -q origin +HEAD:refs/heads/team-claims/F001"),
    (BRANCH_CLAIMS, "git push origin HEAD:team-claims/F001"),
    (BRANCH_CLAIMS, "git push origin team-claims/F001"),
    (BRANCH_CLAIMS, "git push origin :refs/heads/team-claims/F001"),
    (BRANCH_CLAIMS, "git push --delete origin refs/heads/team-claims/F001"),
    (BRANCH_CLAIMS, "git push origin 'refs/heads/*:refs/heads/*'"),
    (BRANCH_CLAIMS, "git update-ref -d refs/heads/team-claims/F001"),
    (BRANCH_CLAIMS, "git update-ref refs/heads/team-claims/F001 HEAD"),
    (BRANCH_CLAIMS, "git push origin HEAD:refs/shiftkit/claims/F001"),  # the default too
    (TAG_CLAIMS, "git push origin HEAD:refs/tags/claims/F001"),
    (TAG_CLAIMS, "git push origin claims/F001"),
    (TAG_CLAIMS, "git update-ref refs/tags/claims/F001 HEAD"),  # (other tags are allowed)
    (TAG_CLAIMS, "git update-ref -d refs/tags/claims/F001"),
]
ALLOWED_CLAIM_REFS: list[tuple[guard.Site, str]] = [
    (BRANCH_CLAIMS, "git push origin main"),
    (BRANCH_CLAIMS, "git push origin HEAD:refs/heads/feature/team"),
    (BRANCH_CLAIMS, "git push origin HEAD:refs/heads/team-claims-notes"),
    (BRANCH_CLAIMS, "git push -u origin team"),
    (BRANCH_CLAIMS, "git fetch origin 'refs/heads/team-claims/*:refs/remotes/origin/tc/*'"),
    (BRANCH_CLAIMS, "git update-ref refs/tags/v1 HEAD"),
    (TAG_CLAIMS, "git push origin v1.0"),
    (TAG_CLAIMS, "git push origin HEAD:refs/tags/v1.0"),
    (TAG_CLAIMS, "git update-ref refs/tags/v1 HEAD"),
    (TAG_CLAIMS, "git push origin 'refs/heads/*:refs/heads/*'"),
]


@pytest.mark.parametrize(
    ("site", "command"), DENIED_CLAIM_REFS, ids=[c for _, c in DENIED_CLAIM_REFS]
)
def test_claim_refs_under_the_ref_prefix_are_denied(site: guard.Site, command: str) -> None:
    reason = guard.check_command(command, site)
    assert reason is not None, command
    assert "claim" in reason and "shiftkit" in reason, reason


@pytest.mark.parametrize(
    ("site", "command"), ALLOWED_CLAIM_REFS, ids=[c for _, c in ALLOWED_CLAIM_REFS]
)
def test_other_refs_beside_the_ref_prefix_are_allowed(site: guard.Site, command: str) -> None:
    assert guard.check_command(command, site) is None, command


def test_the_hook_reads_the_committed_ref_prefix(scaffold: Path) -> None:
    """The guard knew only `refs/shiftkit/`: with claims kept under a branch folder, a plain
    `git push origin HEAD:refs/heads/team-claims/F001` planted a claim."""
    plant = "git push origin HEAD:refs/heads/team-claims/F001"

    def guarded(command: str) -> Result:
        return shiftkit(scaffold, "guard", input=pre_tool_use({"command": command}, cwd=scaffold))

    assert guarded(plant).returncode == 0  # (another project's refs: nothing to guard)
    config = scaffold / ".shiftkit.toml"
    text = config.read_text()
    config.write_text(
        text.replace(
            'ref_prefix = "refs/shiftkit/claims/"', 'ref_prefix = "refs/heads/team-claims/"'
        )
    )
    assert config.read_text() != text
    assert guarded(plant).returncode == 0  # the committed settings are the judge's
    git_ok(scaffold, "commit", "-q", "-am", "Keep claims in a branch folder")
    denied = guarded(plant)
    assert denied.returncode == 2 and "claim ref by hand" in denied.stderr, denied.stderr
    assert guarded("git update-ref -d refs/heads/team-claims/F001").returncode == 2
    assert guarded("git push origin HEAD:refs/heads/team-claims-x").returncode == 0


@pytest.mark.parametrize(
    ("command", "code"),
    [
        ("rm -rf {scratch}/.git/hooks", 0),
        ("cd {scratch} && git commit --no-verify -m x", 0),
        ("rm -rf {root}/.git/hooks", 2),
        ("cd .git; mv hooks hooks.off", 2),
        ("git checkout HEAD~1 -- claude-progress.txt", 2),
        ("HOME={scratch} git commit -m x", 2),
        ("GIT_CONFIG_GLOBAL=/dev/null git log", 0),
    ],
)
def test_the_hook_knows_its_project(
    scaffold: Path, tmp_path: Path, command: str, code: int
) -> None:
    """Through the CLI the guard knows the root and the records: another repository's hooks
    are not this project's, the progress log is protected by its configured name."""
    scratch = tmp_path / "scratch"
    text = command.format(scratch=scratch, root=scaffold)
    result = shiftkit(scaffold, "guard", input=pre_tool_use({"command": text}, cwd=scaffold))
    assert result.returncode == code, (text, result.output)


# -- properties: no input makes the guard's modules raise, and a `cd` never hides a denial ------

WORDS = [
    "git",
    "commit",
    "-n",
    "--no-verify",
    "checkout",
    "restore",
    "--source=x",
    "-s",
    "--",
    "features.json",
    "claude-progress.txt",
    ".git",
    ".git/hooks",
    "hooks",
    "info/grafts",
    "objects/info/alternates",
    "cd",
    "pushd",
    "popd",
    "..",
    "/tmp/x",
    "/work/proj",
    "-C",
    "HOME=/tmp/x",
    "GIT_DIR=x",
    "GIT_CONFIG_GLOBAL=/dev/null",
    "export",
    "env",
    "tar",
    "xf",
    "-xf",
    "-C",
    "unzip",
    "-d",
    "rsync",
    "-a",
    "cp",
    "-r",
    "mv",
    "rm",
    "-rf",
    "sh",
    "-c",
    "python3",
    "-c",
    "open('features.json','w')",
    "&&",
    "||",
    ";",
    "|",
    "(",
    ")",
    "&",
    "\n",
    "$(",
    "`",
    "'",
    '"',
    "<<EOF",
    ">",
    ">>",
    "#",
    "{}",
    "find",
    "-exec",
    "eval",
    "xargs",
]
shell_lines = st.lists(st.sampled_from(WORDS) | st.text(max_size=8), max_size=24).map(" ".join)
sites = st.builds(
    guard.Site,
    st.sampled_from(["features.json", "docs/list.json", "", "a/../b.json"]),
    st.sampled_from([(), ("claude-progress.txt", ".shiftkit/ledger.jsonl")]),
    st.sampled_from([None, "/work/proj", "/", "/tmp/p"]),
    st.sampled_from([None, "", "sub", ".git", "/tmp/x", "/"]),
)


@settings(max_examples=fuzz_examples(300), deadline=None)
@given(shell_lines | st.text(max_size=200), sites)
def test_checking_any_line_anywhere_never_raises(line: str, site: guard.Site) -> None:
    reason = guard.check_command(line, site)
    assert reason is None or (isinstance(reason, str) and reason.strip())


@settings(max_examples=fuzz_examples(100), deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["tool_name", "tool_input", "cwd", "x"]),
        st.sampled_from(["Bash", "Write", "Edit"])
        | st.fixed_dictionaries({}, optional={"command": shell_lines, "file_path": st.text()})
        | st.text(max_size=20)
        | st.none(),
    )
)
def test_deciding_any_payload_never_raises(payload: dict[str, Any]) -> None:
    for root in (None, Path("/work/proj")):
        reason = guard.decide(payload, root, SITE)
        assert reason is None or isinstance(reason, str)


@settings(max_examples=fuzz_examples(100), deadline=None)
@given(
    st.sampled_from(DENIED_AT_SITE),
    st.sampled_from(["(cd /tmp/elsewhere); ", "cd /tmp/x; ", "cd /tmp/x || ", "pushd /tmp/y; "]),
)
def test_a_cd_that_may_not_happen_never_hides_a_denial(
    denied: tuple[str, str], prefix: str
) -> None:
    command, _ = denied
    assert guard.check_command(prefix + command, SITE) is not None, prefix + command


def test_the_deadline_is_kept_off_the_main_thread_too() -> None:
    """The deadline is an interval timer's signal, which only the main thread may handle;
    elsewhere a watchdog thread keeps it (decision 0070)."""
    import threading

    def nowhere(cwd: str | None) -> tuple[Path | None, str]:
        return None, "features.json"

    found: list[tuple[int, str]] = []
    payload = pre_tool_use({"command": "git commit -n -m x"}).encode()
    worker = threading.Thread(
        target=lambda: found.append(guard.run_with_deadline(payload, nowhere))
    )
    worker.start()
    worker.join(30)
    assert found and found[0][0] == 2 and "-n" in found[0][1], found
    assert guard.run_with_deadline(b"", nowhere) == (0, "")
