"""The rules of SPEC section 7 as pure functions.

The commit hooks, `finish` and `audit` all call these; no rule is written twice.
Each returns a list of violations, empty when the change is acceptable.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple, Sequence

if TYPE_CHECKING:
    from shiftkit import features

MAX_SUBJECT = 72
GENERIC_SUBJECTS = frozenset(
    {
        "wip", "fix", "fixes", "fixed", "update", "updates", "updated", "change", "changes",
        "changed", "edit", "edits", "stuff", "misc", "tmp", "temp", "test", "tests", "commit",
        "save", "progress", "work", "more", "minor", "cleanup", "done", "refactor", "todo",
    }
)  # fmt: skip


class Violation(NamedTuple):
    rule: int
    message: str
    feature: str | None = None

    def __str__(self) -> str:
        about = f" [{self.feature}]" if self.feature else ""
        return f"rule {self.rule}{about}: {self.message}"


def trusted_items(text: str | None) -> list[Any] | None:
    """The feature items of a list known to be valid, for incremental validation."""
    import json

    try:
        document = json.loads(text) if text is not None else None
    except json.JSONDecodeError:
        return None
    items = document.get("features") if isinstance(document, dict) else None
    return items if isinstance(items, list) else None


def check_list(
    text: str | None, source: str, trusted: Sequence[Any] | None = None
) -> tuple[features.FeatureList | None, list[Violation]]:
    """Rule 1: the list parses, validates against the packaged schema, ids are unique."""
    from shiftkit import features
    from shiftkit.errors import BadInput

    if text is None:
        return None, [
            Violation(1, f"{source} is missing from the commit; restore it with "
                         f"`git checkout HEAD -- {source}`")
        ]  # fmt: skip
    try:
        return features.loads(text, source, trusted), []
    except BadInput as exc:
        return None, [Violation(1, f"{exc.message}; fix the file and commit again")]


def message_body(raw: str) -> str:
    """The message as git will store it: no comment lines, nothing below the scissors."""
    kept = []
    for line in raw.splitlines():
        if line.startswith("# ------------------------ >8 ------------------------"):
            break
        if line.startswith("#"):
            continue
        kept.append(line)
    return "\n".join(kept).strip()


def subject(message: str) -> str:
    body = message_body(message)
    return body.splitlines()[0].strip() if body else ""


def check_message(raw: str) -> list[Violation]:
    """Rule 9: a non-empty subject of at most 72 characters that says something."""
    first = subject(raw)
    if not first:
        return [Violation(9, "the commit message is empty; say what changed")]
    if len(first) > MAX_SUBJECT:
        return [
            Violation(9, f"the subject is {len(first)} characters; keep it to {MAX_SUBJECT} "
                         f"and put the detail in the body")
        ]  # fmt: skip
    words = re.sub(r"[^\w\s]", " ", first.lower()).split()
    if not words or (len(words) == 1 and words[0] in GENERIC_SUBJECTS):
        return [
            Violation(9, f"the subject {first!r} says nothing; write what changed and why, "
                         f"e.g. 'F012: add the todo list endpoint'")
        ]  # fmt: skip
    return []
