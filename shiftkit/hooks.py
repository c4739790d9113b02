"""`shiftkit hook pre-commit` and `shiftkit hook commit-msg FILE`.

This is the hot path: every commit runs it. It avoids click and jsonschema unless the
feature list is actually staged, and reads the staged state through git plumbing.
"""

from __future__ import annotations

import sys
from pathlib import Path

from shiftkit import gitio, rules
from shiftkit.errors import OK, REFUSED, BadInput

USAGE_TEXT = "usage: shiftkit hook {pre-commit | commit-msg FILE}"


def main(argv: list[str]) -> int:
    if argv[:1] == ["pre-commit"] and len(argv) == 1:
        return pre_commit(Path.cwd())
    if argv[:1] == ["commit-msg"] and len(argv) == 2:
        return commit_msg(Path(argv[1]))
    raise BadInput(f"{USAGE_TEXT} (got: {' '.join(argv) or 'nothing'})")


def _features_name(root: Path) -> str:
    if not (root / ".shiftkit.toml").exists():
        return "features.json"
    from shiftkit import config

    return config.load(root).features


def pre_commit(cwd: Path) -> int:
    root = gitio.toplevel(cwd)
    name = _features_name(root)
    if not gitio.staged_changes(root, [name]):
        return OK
    _, violations = rules.check_list(gitio.show(root, f":{name}"), name)
    return _refuse(violations)


def commit_msg(message_file: Path) -> int:
    try:
        raw = message_file.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"{message_file}: cannot read the commit message: {exc.strerror}") from None
    return _refuse(rules.check_message(raw))


def _refuse(violations: list[rules.Violation]) -> int:
    if not violations:
        return OK
    for violation in violations:
        print(f"shiftkit: commit refused by {violation}", file=sys.stderr)
    return REFUSED
