"""`shiftkit guard`: Claude Code's PreToolUse hook. It denies the ways around the commit
hooks and edits that would change a feature's status by hand. Best effort: the commit hooks
and `audit` are the real guards; this one only catches the attempt early, with the reason and
the shiftkit command to use instead.

Contract: exit 2 with the reason on stderr blocks the tool call; exit 0 allows it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

STATUS_FIELDS = ("passes", "attempts", "blocked")
WRAPPERS = {"sudo", "command", "exec", "nohup", "time", "nice", "env", "xargs"}
SHELLS = {"sh", "bash", "zsh", "dash"}
INTERPRETERS = {"python", "python3", "node", "ruby", "perl", "php", "deno", "bun"}
NO_VERIFY_COMMANDS = {"commit", "merge", "am", "cherry-pick", "revert", "pull"}
SEPARATORS = {";", "&&", "||", "|", "&", "\n", "(", ")", "|&", ";;"}
REDIRECTS = {">", ">>", ">|", "&>", "&>>", "1>", "2>"}

USE_SHIFTKIT = ("use `shiftkit finish` (verifies and commits), `shiftkit revert`, or commit "
                "normally so the hooks run")  # fmt: skip


def split_commands(command: str) -> list[list[str]]:
    """Simple commands of a shell line, as tokens (best effort: no expansion)."""
    lexer = shlex.shlex(command.replace("\\\n", " "), posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:
        tokens = command.split()
    result: list[list[str]] = [[]]
    for token in tokens:
        for part in re.split(r"(\n)", token) if "\n" in token else [token]:
            if part in SEPARATORS:
                result.append([])
            elif part:
                result[-1].append(part)
    return [c for c in result if c]


def _is_features(path: str, features_name: str) -> bool:
    cleaned = path.strip("'\"")
    return cleaned == features_name or cleaned.endswith("/" + features_name) or (
        Path(cleaned).name == Path(features_name).name and Path(features_name).name == cleaned
    )


def check_command(command: str, features_name: str = "features.json") -> str | None:
    """Why this shell command must not run, or None."""
    for words in split_commands(command):
        reason = _check_simple(words, features_name, command)
        if reason:
            return reason
    return None


def _check_simple(words: list[str], features_name: str, whole: str) -> str | None:
    env: dict[str, str] = {}
    index = 0
    while index < len(words):
        word = words[index]
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word):
            name, _, value = word.partition("=")
            env[name] = value
        elif word in WRAPPERS or word == "export":
            pass
        elif word.startswith("-") and index > 0 and words[index - 1] in WRAPPERS:
            pass
        else:
            break
        index += 1
    argv = words[index:]
    reason = _check_environment(env, argv)
    if reason:
        return reason
    for position, token in enumerate(words):
        if token in REDIRECTS and position + 1 < len(words) and _is_features(words[position + 1], features_name):
            return (f"writing {features_name} with a shell redirection replaces it by hand; "
                    f"add features with `shiftkit add`, and let `shiftkit finish`/`revert` "
                    f"change status fields")  # fmt: skip
    if not argv:
        return None
    program = os.path.basename(argv[0])
    if program in SHELLS:
        for position, arg in enumerate(argv[:-1]):
            if arg == "-c" or (arg.startswith("-") and not arg.startswith("--") and "c" in arg):
                return check_command(argv[position + 1], features_name)
        return None
    if program == "git":
        return _check_git(argv[1:], env)
    if program in {"rm", "chmod", "chown", "mv", "unlink", "ln", "truncate", "shred"}:
        for arg in argv[1:]:
            normalized = arg.rstrip("/")
            if ".git/hooks" in normalized or normalized in {".git", "./.git"} or normalized.endswith("/.git"):
                return (f"`{program}` on {arg} disables or removes the commit hooks; they are "
                        f"what makes a shift's work count — {USE_SHIFTKIT}")  # fmt: skip
    if program in {"sed", "perl"} and any(a == "-i" or a.startswith(("-i", "--in-place")) or
                                          (a.startswith("-") and not a.startswith("--") and "i" in a)
                                          for a in argv[1:]) and any(  # fmt: skip
        _is_features(a, features_name) for a in argv[1:]
    ):
        return (f"`{program} -i` rewrites {features_name} in place; status fields change only "
                f"through `shiftkit finish`/`revert`/`unblock`, definitions only by appending "
                f"with `shiftkit add`")  # fmt: skip
    if program in {"tee", "cp", "mv", "dd", "truncate", "install", "rsync"}:
        targets = argv[1:] if program != "dd" else [a[3:] for a in argv if a.startswith("of=")]
        if program in {"cp", "mv", "install", "rsync"}:
            targets = [a for a in argv[1:] if not a.startswith("-")][-1:]
        if any(_is_features(t, features_name) for t in targets):
            return (f"`{program}` would replace {features_name} by hand; use `shiftkit add` to "
                    f"append features and `shiftkit finish`/`revert` for status")  # fmt: skip
    if program.rstrip("0123456789.") in INTERPRETERS and features_name in whole:
        if re.search(r"""(['"]w['"+]|['"]a['"]|write|dump\(|writeFile|open\([^)]*,\s*['"][wa])""", whole):
            return (f"a script that opens {features_name} for writing changes it by hand; use "
                    f"`shiftkit add`, `shiftkit finish` or `shiftkit revert`")  # fmt: skip
    return None


def _check_environment(env: dict[str, str], argv: list[str]) -> str | None:
    program = os.path.basename(argv[0]) if argv else ""
    runs_hooks = program in {"git", "pre-commit", ""}
    if "SKIP" in env and runs_hooks:
        return f"SKIP= tells pre-commit to skip hooks; {USE_SHIFTKIT}"
    if "PRE_COMMIT_ALLOW_NO_CONFIG" in env:
        return f"PRE_COMMIT_ALLOW_NO_CONFIG lets commits through without the hooks; {USE_SHIFTKIT}"
    tricks = [n for n in env if n.startswith("GIT_CONFIG")]
    if tricks and runs_hooks:
        return f"{tricks[0]} can redirect git's hooks (core.hooksPath); {USE_SHIFTKIT}"
    return None


def _check_git(args: list[str], env: dict[str, str]) -> str | None:
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in {"-c", "--config-env"} and index + 1 < len(args):
            if "hookspath" in args[index + 1].lower():
                return f"`git {arg} core.hooksPath=...` points git away from the hooks; {USE_SHIFTKIT}"
            index += 2
            continue
        if arg.startswith("--config-env=") and "hookspath" in arg.lower():
            return f"`git --config-env` with core.hooksPath points git away from the hooks; {USE_SHIFTKIT}"
        if arg in {"-C", "--git-dir", "--work-tree", "--namespace"} and index + 1 < len(args):
            index += 2
            continue
        if arg.startswith("-"):
            index += 1
            continue
        break
    if index >= len(args):
        return None
    sub, rest = args[index], args[index + 1 :]
    if sub in NO_VERIFY_COMMANDS and "--no-verify" in rest:
        return f"`git {sub} --no-verify` skips the commit hooks; {USE_SHIFTKIT}"
    if sub == "commit":
        for arg in rest:
            if arg == "--":
                break
            if arg.startswith("-") and not arg.startswith("--"):
                for letter in arg[1:]:
                    if letter == "n":
                        return f"`git commit -n` skips the commit hooks; {USE_SHIFTKIT}"
                    if letter in "mFcCtS":
                        break
    if sub == "config":
        lowered = [a.lower() for a in rest]
        reading = any(a in {"--get", "--get-all", "--list", "-l", "--get-regexp"} for a in lowered)
        if any("hookspath" in a for a in lowered) and not reading:
            return f"`git config core.hooksPath` points git away from the hooks; {USE_SHIFTKIT}"
    if sub == "cherry-pick":
        return (f"`git cherry-pick` commits without the pre-commit hook; reapply the change and "
                f"{USE_SHIFTKIT}")  # fmt: skip
    if sub == "commit-tree":
        return f"`git commit-tree` makes commits without any hook; {USE_SHIFTKIT}"
    if sub == "update-ref":
        refs = [a for a in rest if not a.startswith("-")]
        if "--stdin" in rest or (refs and not refs[0].startswith("refs/shiftkit/")):
            return (f"`git update-ref` moves a branch without a commit through the hooks; "
                    f"{USE_SHIFTKIT}")  # fmt: skip
    return None


# -- file tools --------------------------------------------------------------------------------


def _apply_edits(current: str, edits: list[dict[str, Any]]) -> str | None:
    text = current
    for edit in edits:
        old, new = edit.get("old_string", ""), edit.get("new_string", "")
        if not isinstance(old, str) or not isinstance(new, str) or old not in text:
            return None
        text = text.replace(old, new) if edit.get("replace_all") else text.replace(old, new, 1)
    return text


def check_file_edit(current: str | None, proposed: str | None, edit_text: str,
                    features_name: str) -> str | None:  # fmt: skip
    """Why this change of the feature list must not be made by hand, or None."""
    before = _items(current)
    after = _items(proposed)
    if after is None:
        if any(f'"{name}"' in edit_text for name in STATUS_FIELDS):
            return (f"this edit touches a status field of {features_name} "
                    f"({', '.join(STATUS_FIELDS)}); use `shiftkit finish`, `revert` or `unblock`")
        return None
    old_by_id = {item.get("id"): item for item in before or [] if isinstance(item, dict)}
    for item in after:
        if not isinstance(item, dict):
            continue
        old = old_by_id.get(item.get("id"))
        if old is None:
            if item.get("passes") is True:
                return (f"{item.get('id')} would be appended already passing; append it with "
                        f"\"passes\": false (`shiftkit add`) and finish it with `shiftkit finish`")
            continue
        for name in STATUS_FIELDS:
            if old.get(name) != item.get(name):
                return (f"this edit changes {item.get('id')}'s {name!r} by hand; status fields "
                        f"change only through `shiftkit finish`, `shiftkit revert` or "
                        f"`shiftkit unblock`")  # fmt: skip
    new_ids = {item.get("id") for item in after if isinstance(item, dict)}
    removed = [i for i in old_by_id if i not in new_ids]
    if removed:
        return f"this edit removes {removed[0]} from {features_name}; features are never removed"
    return None


def _items(text: str | None) -> list[Any] | None:
    if text is None:
        return None
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        return None
    if isinstance(document, dict) and isinstance(document.get("features"), list):
        return list(document["features"])
    return list(document) if isinstance(document, list) else None


def decide(payload: dict[str, Any], root: Path | None, features_name: str) -> str | None:
    """The reason to deny this tool call, or None to allow it."""
    tool = payload.get("tool_name", "")
    tool_input = payload.get("tool_input") or {}
    if not isinstance(tool_input, dict):
        return None
    if tool == "Bash":
        command = tool_input.get("command", "")
        return check_command(command, features_name) if isinstance(command, str) else None
    if tool not in {"Write", "Edit", "MultiEdit"}:
        return None
    file_path = tool_input.get("file_path", "")
    if not isinstance(file_path, str) or not file_path:
        return None
    path = Path(file_path)
    if root is not None and not path.is_absolute():
        path = root / path
    if root is not None:
        is_target = path.resolve() == (root / features_name).resolve()
    else:
        is_target = path.name == Path(features_name).name
    if not is_target:
        return None
    try:
        current: str | None = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        current = None
    if tool == "Write":
        proposed = tool_input.get("content")
        return check_file_edit(current, proposed if isinstance(proposed, str) else None,
                               str(proposed), features_name)  # fmt: skip
    edits = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
    if not isinstance(edits, list) or current is None:
        return None
    proposed = _apply_edits(current, [e for e in edits if isinstance(e, dict)])
    edit_text = json.dumps(edits)
    return check_file_edit(current, proposed, edit_text, features_name)
