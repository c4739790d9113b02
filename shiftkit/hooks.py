"""`shiftkit hook pre-commit` and `shiftkit hook commit-msg FILE`.

This is the hot path: every commit runs it. The common commit (feature list not staged)
imports no click, jsonschema, pathlib or dataclasses, parses no TOML and no JSON: it asks
git once for the staged names and returns. Everything else is imported when needed.
"""

from __future__ import annotations

import os
import sys
from typing import Sequence

from shiftkit.errors import OK, REFUSED, BadInput

USAGE_TEXT = "usage: shiftkit hook {pre-commit | commit-msg FILE}"
DEFAULT_FEATURES = "features.json"
CONFIG_FILE = ".shiftkit.toml"


def main(argv: list[str]) -> int:
    if argv[:1] == ["pre-commit"] and len(argv) == 1:
        return pre_commit(_worktree_root())
    if argv[:1] == ["commit-msg"] and len(argv) == 2:
        return commit_msg(argv[1])
    raise BadInput(f"{USAGE_TEXT} (got: {' '.join(argv) or 'nothing'})")


def _worktree_root() -> str:
    # git runs hooks at the top of the work tree; ask git only when run by hand elsewhere.
    if os.path.exists(".git"):
        return os.getcwd()
    from shiftkit import gitio

    return str(gitio.toplevel())


def staged_entries(root: str) -> dict[str, tuple[str, str]]:
    """Each staged path with its blob at HEAD and in the index (zeros when absent)."""
    import subprocess

    proc = subprocess.run(
        ["git", "diff", "--cached", "--raw", "-z", "--no-abbrev", "--no-renames"],
        cwd=root, capture_output=True,
    )  # fmt: skip
    if proc.returncode != 0:
        raise BadInput(f"git diff --cached failed: {proc.stderr.decode(errors='replace').strip()}")
    fields = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    entries = {}
    for meta, name in zip(fields[0::2], fields[1::2]):
        _, _, head_blob, staged_blob, _ = meta.split(" ", 4)
        entries[name] = (head_blob, staged_blob)
    return entries


def features_name_if_staged(root: str, staged: list[str]) -> str | None:
    """The configured feature-list path when it is among ``staged``, else None.

    The configured name must appear literally in `.shiftkit.toml`, so the TOML is parsed
    only when a staged path occurs in its text (or the config itself is staged).
    """
    try:
        with open(os.path.join(root, CONFIG_FILE), encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return DEFAULT_FEATURES if DEFAULT_FEATURES in staged else None
    except (OSError, UnicodeDecodeError):
        text = None
    if (
        text is not None
        and "\\" not in text
        and CONFIG_FILE not in staged
        and DEFAULT_FEATURES not in staged
        and not any(name in text for name in staged)
    ):
        return None
    from pathlib import Path

    from shiftkit import config

    name = config.load(Path(root)).features
    return name if name in staged else None


def pre_commit(root: str) -> int:
    staged = staged_entries(root)
    if not staged:
        return OK
    name = features_name_if_staged(root, list(staged))
    if name is None:
        return OK
    from pathlib import Path

    from shiftkit import gitio, rules, state

    head_blob, staged_blob = staged[name]
    top = Path(root)
    common = gitio.common_dir(top)
    trusted = None
    if head_blob != gitio.ZERO_OID and state.is_validated(common, head_blob):
        trusted = rules.trusted_items(gitio.show(top, head_blob))
    staged_text = None if staged_blob == gitio.ZERO_OID else gitio.show(top, staged_blob)
    _, violations = rules.check_list(staged_text, name, trusted)
    if not violations:
        state.mark_validated(common, staged_blob)
    return _refuse(violations)


def commit_msg(message_file: str) -> int:
    try:
        with open(message_file, encoding="utf-8") as handle:
            raw = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise BadInput(f"{message_file}: cannot read the commit message: {reason}") from None
    from shiftkit import rules

    return _refuse(rules.check_message(raw))


def _refuse(violations: Sequence[object]) -> int:
    if not violations:
        return OK
    for violation in violations:
        print(f"shiftkit: commit refused by {violation}", file=sys.stderr)
    return REFUSED
