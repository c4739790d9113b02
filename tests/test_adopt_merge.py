"""The merges and the plan of an adoption, as pure functions: every user line, hook and
permission kept, shiftkit's parts added once, merging twice the same as once."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from shiftkit.core import adoption
from shiftkit.core.adopt_merge import (
    BEGIN,
    END,
    merge_claude_settings,
    merge_gitignore,
    merge_lines,
    merge_markdown,
    merge_pre_commit_config,
)
from shiftkit.core.errors import BadInput, Refused

TEMPLATE = Path(__file__).resolve().parent.parent / "template"


def rendered_pre_commit_config(source: str = "local") -> str:
    import jinja2

    text = (TEMPLATE / ".pre-commit-config.yaml.jinja").read_text()
    return jinja2.Template(text).render(
        hook_source=source, hook_repository="https://example.invalid/shiftkit", hook_rev="v1"
    )


OURS_YAML = rendered_pre_commit_config()
OURS_SETTINGS = (TEMPLATE / ".claude" / "settings.json").read_text()
OURS_AGENTS = f"{BEGIN}\n# Working on demo\n\nThe shift routine.\n{END}\n"
SHIFTKIT_IDS = {"shiftkit-pre-commit", "shiftkit-commit-msg"}


def safe_load(text: str) -> Any:
    return YAML(typ="safe").load(text)


# -- Markdown ------------------------------------------------------------------------------


def test_markdown_appends_a_marked_section_then_replaces_only_it() -> None:
    user = "# Ours\n\nUse tabs."  # no final newline
    merged = merge_markdown(user, OURS_AGENTS, "AGENTS.md")
    assert merged == f"# Ours\n\nUse tabs.\n\n{OURS_AGENTS}"
    assert merge_markdown(merged, OURS_AGENTS, "AGENTS.md") == merged
    edited = merged.replace("The shift routine.", "Edited.") + "\n## After\n"
    newer = OURS_AGENTS.replace("The shift routine.", "The new routine.")
    again = merge_markdown(edited, newer, "AGENTS.md")
    assert again == f"# Ours\n\nUse tabs.\n\n{newer}\n## After\n"


def test_markdown_without_markers_in_the_template_is_marked_whole() -> None:
    merged = merge_markdown("Mine.\n", "Read @AGENTS.md.\n", "CLAUDE.md")
    assert merged == f"Mine.\n\n{BEGIN}\nRead @AGENTS.md.\n{END}\n"
    assert merge_markdown("", OURS_AGENTS, "AGENTS.md") == OURS_AGENTS


@pytest.mark.parametrize(
    "broken", [f"{BEGIN}\nno end\n", f"{END}\n{BEGIN}\n", f"{BEGIN}{END}{BEGIN}{END}"]
)
def test_markdown_with_broken_markers_is_refused_in_one_line(broken: str) -> None:
    with pytest.raises(BadInput) as caught:
        merge_markdown(broken, OURS_AGENTS, "AGENTS.md")
    assert caught.value.message.startswith("AGENTS.md: ") and "\n" not in caught.value.message


# -- .gitattributes --------------------------------------------------------------------------


def test_gitattributes_get_only_the_missing_lines() -> None:
    ours = "claude-progress.txt merge=union\nfeatures.json merge=shiftkit-features\n"
    user = "*.png binary\nclaude-progress.txt   merge=union"
    merged = merge_lines(user, ours, ".gitattributes")
    assert merged == user + "\nfeatures.json merge=shiftkit-features\n"
    assert merge_lines(merged, ours, ".gitattributes") == merged


# -- .gitignore --------------------------------------------------------------------------------


def test_gitignore_gets_the_runner_caches_the_users_lines_lack() -> None:
    ours = (TEMPLATE / ".gitignore.jinja").read_text()
    user = "*.log\n__pycache__\n/.venv/\n"  # `__pycache__` covers `__pycache__/`
    merged = merge_gitignore(user, ours, ".gitignore")
    assert merged.startswith(user + "\n# Runner caches")
    added = merged[len(user) :].splitlines()
    assert "__pycache__/" not in added and ".venv/" in added and ".pytest_cache/" in added
    assert merge_gitignore(merged, ours, ".gitignore") == merged
    assert merge_gitignore("", ours, ".gitignore") == ours
    assert merge_gitignore(ours, ours, ".gitignore") == ours
    assert merge_gitignore("node_modules", ours, ".gitignore").startswith("node_modules\n\n#")


@settings(max_examples=100, deadline=None, database=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["__pycache__/", "*.pyc", "# mine", "", "build/", ".venv", "!keep"]),
            st.text(st.characters(blacklist_categories=["Cs", "Cc"]), max_size=12),
        ),
        max_size=8,
    ),
    st.booleans(),
)
def test_gitignore_merge_keeps_the_users_text_and_is_idempotent(
    lines: list[str], newline: bool
) -> None:
    ours = (TEMPLATE / ".gitignore.jinja").read_text()
    user = "\n".join(lines) + ("\n" if newline and lines else "")
    merged = merge_gitignore(user, ours, ".gitignore")
    assert merged.startswith(user) or not user.strip()
    covered = {line.strip().rstrip("/") for line in merged.split("\n")}
    assert all(line.rstrip("/") in covered for line in ours.splitlines())
    assert merge_gitignore(merged, ours, ".gitignore") == merged


# -- .claude/settings.json -------------------------------------------------------------------


def test_settings_keep_the_users_keys_and_hooks_and_add_shiftkits_once() -> None:
    user = {
        "permissions": {"allow": ["Bash(make test)"]},
        "env": {"A": "1"},
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "echo done"}]}],
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {"type": "command", "command": "./lint.sh"},
                        {"type": "command", "command": "shiftkit guard"},  # by hand, earlier
                    ],
                }
            ],
        },
    }
    text = json.dumps(user, indent=4) + "\n"
    merged = merge_claude_settings(text, OURS_SETTINGS, ".claude/settings.json")
    assert merged.splitlines()[1].startswith('    "')  # the user's indentation
    data = json.loads(merged)
    assert data["permissions"] == user["permissions"] and data["env"] == user["env"]
    commands = [
        hook["command"]
        for groups in data["hooks"].values()
        for group in groups
        for hook in group["hooks"]
    ]
    # The user's bare `shiftkit guard` gives way to the template's (fail-closed) one.
    assert not any(command.startswith("shiftkit guard") for command in commands)
    assert sum(command == ".shiftkit/hook guard" for command in commands) == 1
    assert {"echo done", "./lint.sh"} <= set(commands)
    for ours in ("hook stop-check", "hook start --brief", "hook usage record"):
        assert sum(command.startswith(f".shiftkit/{ours}") for command in commands) == 1, ours
    assert merge_claude_settings(merged, OURS_SETTINGS, ".claude/settings.json") == merged


def test_settings_adopt_new_top_level_keys_and_replace_old_shiftkit_entries() -> None:
    ours = json.loads(OURS_SETTINGS)
    newer = {"$schema": "https://json.schemastore.org/claude-code-settings.json", **ours}
    newer["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 30
    once = merge_claude_settings('{"model": "x"}', OURS_SETTINGS, "s")
    twice = json.loads(merge_claude_settings(once, json.dumps(newer), "s"))
    assert next(iter(twice)) == "$schema" and twice["model"] == "x"
    assert twice["hooks"]["Stop"] == newer["hooks"]["Stop"]  # replaced, not duplicated


@pytest.mark.parametrize(
    "user",
    [
        '{"permissions":{"allow":["Bash(make test)"]}}',
        '{"permissions": {"allow": ["Bash(make test)"]}}\n',
    ],
)
def test_compact_settings_stay_compact(user: str) -> None:
    merged = merge_claude_settings(user, OURS_SETTINGS, ".claude/settings.json")
    assert merged.count("\n") == user.count("\n")  # still one line
    assert user.strip()[1:-1] in merged  # the user's text, as it was
    assert json.loads(merged)["permissions"] == {"allow": ["Bash(make test)"]}
    assert merge_claude_settings(merged, OURS_SETTINGS, ".claude/settings.json") == merged


def test_settings_that_are_not_json_are_refused_in_one_line() -> None:
    with pytest.raises(BadInput) as caught:
        merge_claude_settings("{\n  'single': quotes\n}\n", OURS_SETTINGS, ".claude/settings.json")
    assert "line 2" in caught.value.message and "\n" not in caught.value.message


# -- .pre-commit-config.yaml -----------------------------------------------------------------


def test_pre_commit_config_keeps_every_line_and_the_users_install_types_and_version() -> None:
    user = (
        "# top comment\n"
        "default_install_hook_types: [pre-commit, pre-push]\n"
        "minimum_pre_commit_version: '5.0.0'  # ours is newer\n"
        "repos:\n"
        "- repo: https://github.com/pre-commit/pre-commit-hooks\n"
        "  rev: v4.5.0  # pinned\n"
        "  hooks:\n"
        "  - id: trailing-whitespace\n"
        "  # - id: disabled-for-now\n"
        "  - id: end-of-file-fixer\n"
    )
    merged = merge_pre_commit_config(user, OURS_YAML, ".pre-commit-config.yaml")
    data = safe_load(merged)
    assert data["default_install_hook_types"] == ["pre-commit", "pre-push"]
    assert data["minimum_pre_commit_version"] == "5.0.0"
    for line in user.splitlines():
        assert line in merged.splitlines(), line
    # A lower minimum is raised to what shiftkit's hooks need (`language: unsupported`:
    # pre-commit 4.4.0), so an older pre-commit says so in one line (decision 0069) ...
    older = user.replace("'5.0.0'  # ours is newer", "'3.0.0'")
    merged = merge_pre_commit_config(older, OURS_YAML, ".pre-commit-config.yaml")
    assert safe_load(merged)["minimum_pre_commit_version"] == "4.4.0"
    assert merge_pre_commit_config(merged, OURS_YAML, ".pre-commit-config.yaml") == merged
    # ... and a config without the key gets it, first, with a comment saying why.
    bare = "".join(line + "\n" for line in user.splitlines() if "minimum_pre_commit" not in line)
    merged = merge_pre_commit_config(bare, OURS_YAML, ".pre-commit-config.yaml")
    assert safe_load(merged)["minimum_pre_commit_version"] == "4.4.0"
    assert 'minimum_pre_commit_version: "4.4.0"  # shiftkit\'s hooks need it' in merged
    assert merge_pre_commit_config(merged, OURS_YAML, ".pre-commit-config.yaml") == merged


def test_pre_commit_config_moves_from_local_hooks_to_the_repository_and_back() -> None:
    local = merge_pre_commit_config("repos: []\n", OURS_YAML, "c")
    remote_template = rendered_pre_commit_config("repository")
    remote = merge_pre_commit_config(local, remote_template, "c")
    repos = safe_load(remote)["repos"]
    assert [repo["repo"] for repo in repos] == ["https://example.invalid/shiftkit"]
    assert safe_load(merge_pre_commit_config(remote, OURS_YAML, "c")) == safe_load(local)


def test_pre_commit_config_that_is_not_a_config_is_refused() -> None:
    for text in ("- just\n- a list\n", "repos: {a: 1}\n", "repos: [\n"):
        with pytest.raises(BadInput) as caught:
            merge_pre_commit_config(text, OURS_YAML, ".pre-commit-config.yaml")
        assert caught.value.message.startswith(".pre-commit-config.yaml: ")


hook_ids = st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True).filter(
    lambda name: name not in SHIFTKIT_IDS
)
comments = st.from_regex(r"[A-Za-z0-9 ,.()-]{0,30}", fullmatch=True)
user_hooks = st.lists(
    st.fixed_dictionaries(
        {"id": hook_ids},
        optional={
            "args": st.lists(st.from_regex(r"--[a-z]{1,8}", fullmatch=True), max_size=2),
            "language": st.sampled_from(["system", "pygrep", "python"]),
        },
    ),
    min_size=1,
    max_size=3,
)
user_repos = st.lists(
    st.one_of(
        st.builds(lambda hooks: {"repo": "local", "hooks": hooks}, user_hooks),
        st.builds(
            lambda name, rev, hooks: {
                "repo": f"https://github.com/x/{name}",
                "rev": rev,
                "hooks": hooks,
            },
            hook_ids,
            st.from_regex(r"v[0-9]\.[0-9]", fullmatch=True),
            user_hooks,
        ),
    ),
    max_size=4,
)


def dump_users_config(repos: list[dict[str, Any]], style: tuple[int, int], notes: list[str]) -> str:
    """The user's config in one of the indentation styles people use, with comments."""
    sequence, offset = style
    yaml = YAML()
    yaml.indent(mapping=2, sequence=sequence, offset=offset)
    out = io.StringIO()
    yaml.dump({"repos": repos} if repos else {"repos": []}, out)
    lines = out.getvalue().splitlines()
    for number, note in enumerate(notes):  # comments on their own lines, indented like a key
        at = 1 + number * 3
        if at < len(lines):
            indent = re.match(r"\s*(?:- )?", lines[at])
            width = len(indent.group(0)) if indent else 0
            lines.insert(at, " " * width + f"# {note}".rstrip())
    return "# the user's header\n" + "\n".join(lines) + "\n"


@settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    repos=user_repos,
    style=st.sampled_from([(2, 0), (4, 2)]),
    notes=st.lists(comments, max_size=3),
    source=st.sampled_from(["local", "repository"]),
)
def test_pre_commit_merge_keeps_all_user_repos_and_is_idempotent(
    repos: list[dict[str, Any]], style: tuple[int, int], notes: list[str], source: str
) -> None:
    user = dump_users_config(repos, style, notes)
    ours = rendered_pre_commit_config(source)
    merged = merge_pre_commit_config(user, ours, ".pre-commit-config.yaml")
    data = safe_load(merged)
    kept = [repo for repo in data["repos"] if not {h["id"] for h in repo["hooks"]} & SHIFTKIT_IDS]
    assert kept == repos  # every user repo and hook, in order, unchanged
    ids = [hook["id"] for repo in data["repos"] for hook in repo["hooks"]]
    assert sorted(i for i in ids if i in SHIFTKIT_IDS) == sorted(SHIFTKIT_IDS)
    assert data["repos"][len(repos) :] == safe_load(ours)["repos"]
    for line in user.splitlines():
        if line.lstrip().startswith("#"):
            assert line in merged.splitlines(), (line, merged)
    assert merge_pre_commit_config(merged, ours, ".pre-commit-config.yaml") == merged


# -- the plan ----------------------------------------------------------------------------------


def test_the_plan_creates_merges_keeps_and_refuses() -> None:
    rendered = {
        "AGENTS.md": OURS_AGENTS.encode(),
        "init.sh": b"#!/bin/sh\n",
        "features.json": b"{}\n",
        "CLAUDE.md": b"x\n",
    }
    existing = {
        "AGENTS.md": b"Mine.\n",
        "init.sh": b"#!/bin/sh\necho mine\n",
        "features.json": b"{}\n",
    }
    with pytest.raises(Refused) as caught:
        adoption.plan(rendered, existing, {}, adopted=False, overwrite=False)
    assert caught.value.message.startswith("init.sh exists")
    steps = {
        step.path: step.action
        for step in adoption.plan(rendered, existing, {}, adopted=False, overwrite=True)
    }
    assert steps == {
        "AGENTS.md": "merge",
        "init.sh": "overwrite",
        "features.json": "same",
        "CLAUDE.md": "create",
    }
    again = adoption.plan(
        rendered, existing, {"CLAUDE.md": "a symbolic link"}, adopted=True, overwrite=False
    )
    assert {step.path: step.action for step in again}["init.sh"] == "keep"
    assert {step.path: step.content for step in again}["CLAUDE.md"] is None  # a link is left be
    with pytest.raises(Refused) as odd:
        adoption.plan(rendered, {}, {"init.sh": "a directory"}, adopted=False, overwrite=True)
    assert "init.sh (a directory)" in odd.value.message


# -- every byte of the user's .pre-commit-config.yaml survives (issue 38 item 4) -------------

USER_REPO = "  - repo: https://github.com/pre-commit/pre-commit-hooks\n    rev: v5.0.0\n"
CONSTRUCTS = {
    # structlog's file starts with a document marker; the round trip dropped it
    "document start": "---\n"
    + "ci:\n  autoupdate_schedule: monthly\n\nrepos:\n"
    + USER_REPO
    + "    hooks:\n      - id: trailing-whitespace\n",
    "comment above the marker": "# Our hooks.\n---\nrepos:\n"
    + USER_REPO
    + "    hooks:\n      - id: check-toml\n",
    "document end": "repos:\n" + USER_REPO + "    hooks:\n      - id: check-yaml\n...\n",
    "a flow mapping in a flow list": "repos:\n" + USER_REPO + "    hooks: [{id: check-ast}]\n",
    "quotes and inline comments": "repos:\n  - repo: 'https://github.com/x/y'  # ours\n"
    + '    rev: "v1.2"\n    hooks:\n      - id: "a"  # keep\n',
    "items at column 0": "repos:\n- repo: https://github.com/x/y\n  rev: v1\n  hooks:\n  - id: a\n",
    "keys after repos": "repos:\n"
    + USER_REPO
    + "    hooks:\n      - id: a\n\n"
    + "default_language_version:\n  python: python3\n",
    # (these four passed at adoption and at the update from the start: the text merge keeps them)
    "a comment after the list": "repos:\n" + USER_REPO + "    hooks:\n      - id: a\n# the end\n",
    "a block scalar": "repos:\n  - repo: local\n    hooks:\n      - id: a\n        name: a\n"
    + "        entry: |\n          sh -c 'x'\n        language: system\n",
    "an anchor and its alias": "x-common: &common\n  language: system\nrepos:\n  - repo: local\n"
    + "    hooks:\n      - id: a\n        name: a\n        entry: a\n        <<: *common\n",
    "escapes in quotes": "repos:\n  - repo: local\n    hooks:\n      - id: a\n"
    + "        name: 'it''s'\n        entry: \"a\\tb\"\n        language: system\n",
}


def lines_kept(user: str, merged: str) -> list[str]:
    """The user's lines not found in ``merged`` in their order (each found after the last)."""
    rest = merged.splitlines()
    missing = []
    for line in user.splitlines():
        if line in rest:
            rest = rest[rest.index(line) + 1 :]
        else:
            missing.append(line)
    return missing


@pytest.mark.parametrize("construct", CONSTRUCTS)
def test_every_line_of_the_users_config_survives(construct: str) -> None:
    """shiftkit's lines are inserted; the user's lines all stay, in order, byte for byte, and
    the result means what the round trip means (shiftkit's hooks, the minimum version)."""
    user = CONSTRUCTS[construct]
    merged = merge_pre_commit_config(user, OURS_YAML, ".pre-commit-config.yaml")
    missing = lines_kept(user, merged)
    assert not missing, (missing, merged)
    loaded = safe_load(merged)
    ids = {hook["id"] for repo in loaded["repos"] for hook in repo["hooks"]}
    assert ids >= SHIFTKIT_IDS
    assert loaded["minimum_pre_commit_version"] == "4.4.0"
    assert merge_pre_commit_config(merged, OURS_YAML, ".pre-commit-config.yaml") == merged


@pytest.mark.parametrize("construct", CONSTRUCTS)
def test_every_line_survives_an_update_that_changes_shiftkits_entries(construct: str) -> None:
    """The other merge shiftkit does into the file: `copier update` (or `recopy`) with
    shiftkit's entries there and changed — the hooks moved from `local` to the hook repository
    and back. Before, that fell to the round trip, which dropped `---`, `...`, the comment
    above the marker and after the list, a blank line and respelled a flow mapping; now
    shiftkit's entries are replaced where they stand and every user line stays."""
    user = CONSTRUCTS[construct]
    adopted = merge_pre_commit_config(user, OURS_YAML, ".pre-commit-config.yaml")
    repository = rendered_pre_commit_config("repository")
    moved = merge_pre_commit_config(adopted, repository, ".pre-commit-config.yaml")
    back = merge_pre_commit_config(moved, OURS_YAML, ".pre-commit-config.yaml")
    for merged, ours in ((moved, repository), (back, OURS_YAML)):
        missing = lines_kept(user, merged)
        assert not missing, (missing, merged)
        loaded = safe_load(merged)
        mine = [repo for repo in loaded["repos"] if {h["id"] for h in repo["hooks"]} & SHIFTKIT_IDS]
        assert mine == safe_load(ours)["repos"]  # shiftkit's entries, as the template has them
        assert merge_pre_commit_config(merged, ours, ".pre-commit-config.yaml") == merged
    assert back == adopted  # (there and back: the same bytes)
