"""The guard on file-tool calls (Write, Edit, MultiEdit, NotebookEdit, and Codex CLI's
apply_patch): whether the payload can be checked at all, and whether an edit of the feature
list changes a status field."""

from __future__ import annotations

from shiftkit.core import jsonbound
from shiftkit.core.errors import BadInput

TYPE_CHECKING = False  # (typing is not imported on the guard's path: decision 0070)
if TYPE_CHECKING:
    from typing import Any

STATUS_FIELDS = ("passes", "attempts", "blocked")

FILE_TOOLS = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
# Codex CLI sends a patch as `{"command": PATCH TEXT}` under the tool name `apply_patch`.
PATCH_TOOL = "apply_patch"
TEXT_TOOLS = ("Bash", PATCH_TOOL)  # tools whose input is one text in `command`


def apply_edits(current: str, edits: list[dict[str, Any]]) -> str | None:
    text = current
    for edit in edits:
        old, new = edit.get("old_string", ""), edit.get("new_string", "")
        if not isinstance(old, str) or not isinstance(new, str) or old not in text:
            return None
        text = text.replace(old, new) if edit.get("replace_all") else text.replace(old, new, 1)
    return text


def check_file_edit(
    current: str | None, proposed: str | None, edit_text: str, features_name: str
) -> str | None:
    """Why this change of the feature list must not be made by hand, or None."""
    before = _features(current)
    after = _features(proposed)
    if after is None:
        if any(f'"{name}"' in edit_text for name in STATUS_FIELDS):
            return (
                f"this edit touches a status field of {features_name} "
                f"({', '.join(STATUS_FIELDS)}); use `shiftkit finish`, `revert` or `unblock`"
            )
        return None
    old_by_id = {item.get("id"): item for item in before or [] if isinstance(item, dict)}
    for item in after:
        if not isinstance(item, dict):
            continue
        old = old_by_id.get(item.get("id"))
        if old is None:
            return (
                f"this edit appends {item.get('id')} to {features_name}: a feature's definition "
                f"(its steps, its verifier) is a person's, not the agent's (decision 0050); "
                f"stop and ask a person to append it, and meanwhile record the proposal with "
                f"`shiftkit note`"
            )
        for name in STATUS_FIELDS:
            if old.get(name) != item.get(name):
                return (
                    f"this edit changes {item.get('id')}'s {name!r} in {features_name} by "
                    f"hand; status fields change only through `shiftkit finish`, "
                    f"`shiftkit revert` or `shiftkit unblock`"
                )
    new_ids = {item.get("id") for item in after if isinstance(item, dict)}
    removed = [i for i in old_by_id if i not in new_ids]
    if removed:
        return f"this edit removes {removed[0]} from {features_name}; features are never removed"
    return None


def _features(text: str | None) -> list[Any] | None:
    if text is None:
        return None
    try:
        document = jsonbound.loads(text, "features", max_depth=None)
    except BadInput:
        return None
    if isinstance(document, dict) and isinstance(document.get("features"), list):
        return list(document["features"])
    return list(document) if isinstance(document, list) else None


def _describe(value: Any) -> str:
    if value is None:
        return "missing"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__
    )


# Where a patch call's text may be: Codex's hooks name it `command`; its freeform tool's
# argument is `input`; other harnesses say `patch`. The first string found is judged.
PATCH_KEYS = ("command", "input", "patch")


def patch_key(tool_input: dict[str, Any]) -> str:
    """The key of ``tool_input`` that holds an `apply_patch` call's text (`command` when
    none does: then it is missing, and the call is denied)."""
    return next((k for k in PATCH_KEYS if isinstance(tool_input.get(k), str)), "command")


def payload_problem(payload: dict[str, Any]) -> str | None:
    """Why a Bash, file-tool or patch call cannot be checked (it is then denied), or None."""
    tool = payload.get("tool_name")
    if not isinstance(tool, str) or (tool not in TEXT_TOOLS and tool not in FILE_TOOLS):
        return None
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return (
            f"the {tool} call's tool_input is {_describe(tool_input)}, not an object, so it "
            f"cannot be checked; denied"
        )
    key = "command" if tool in TEXT_TOOLS else FILE_TOOLS[tool]
    if tool == PATCH_TOOL:
        key = patch_key(tool_input)
    value = tool_input.get(key)
    if not isinstance(value, str) or (tool in FILE_TOOLS and (not value or "\0" in value)):
        return (
            f"the {tool} call's {key} is {_describe(value)}, not a usable string, so it "
            f"cannot be checked; denied"
        )
    return None
