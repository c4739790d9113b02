"""What adopting shiftkit does to each file of an existing directory: the plan, decided
before anything is written, from the rendered template and what the directory holds."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from shiftkit.core import adopt_merge
from shiftkit.core.errors import BadInput, Refused

Merge = Callable[[str, str, str], str]

MERGES: dict[str, Merge] = {
    "AGENTS.md": adopt_merge.merge_markdown,
    "CLAUDE.md": adopt_merge.merge_markdown,
    ".pre-commit-config.yaml": adopt_merge.merge_pre_commit_config,
    ".claude/settings.json": adopt_merge.merge_claude_settings,
    ".codex/hooks.json": adopt_merge.merge_codex_hooks,
    ".gitattributes": adopt_merge.merge_lines,
    ".gitignore": adopt_merge.merge_gitignore,
}

CREATE = "create"  # the directory has no such file
MERGE = "merge"  # the user's file with shiftkit's part added
OVERWRITE = "overwrite"  # --overwrite: the user's file replaced
KEEP = "keep"  # already adopted, or a link: left as it is
SAME = "same"  # already what it should be


@dataclass(frozen=True)
class Step:
    path: str
    action: str
    content: bytes | None  # what to write; None when nothing is written


def plan(
    rendered: Mapping[str, bytes],
    existing: Mapping[str, bytes],
    odd: Mapping[str, str],
    *,
    adopted: bool,
    overwrite: bool,
) -> list[Step]:
    """One step per rendered file. ``existing``: the directory's regular files of the same
    names; ``odd``: names that are something else there (a link, a directory), with what.
    ``adopted``: the directory already has shiftkit (re-adoption keeps its files).
    Refuses, naming the file, when a file differs and cannot be merged."""
    steps: list[Step] = []
    conflicts: list[str] = []
    for path in sorted(rendered):
        ours = rendered[path]
        if path in odd:
            if path in MERGES or adopted:
                steps.append(Step(path, KEEP, None))
            else:
                conflicts.append(f"{path} ({odd[path]})")
            continue
        theirs = existing.get(path)
        if theirs is None:
            steps.append(Step(path, CREATE, ours))
        elif theirs == ours:
            steps.append(Step(path, SAME, None))
        elif path in MERGES:
            merged = MERGES[path](_text(theirs, path), _text(ours, path), path).encode()
            steps.append(Step(path, MERGE, merged) if merged != theirs else Step(path, SAME, None))
        elif adopted:
            steps.append(Step(path, KEEP, None))
        elif overwrite:
            steps.append(Step(path, OVERWRITE, ours))
        else:
            conflicts.append(path)
    if conflicts:
        more = (
            f" (and {len(conflicts) - 1} more: {', '.join(conflicts[1:])})" if conflicts[1:] else ""
        )
        raise Refused(
            f"{conflicts[0]} exists and shiftkit cannot merge into it{more}; move it away, "
            f"or pass --overwrite to replace it with shiftkit's"
        )
    return steps


def _text(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not UTF-8 text, so shiftkit cannot merge into it") from None
