"""Reading Codex CLI's answer about a project's hooks, and the line a person needs. Pure.

Codex's `hooks/list` gives, per folder, each hook it loaded with its ``source`` (``project``
for the project's `.codex/hooks.json`), ``sourcePath``, ``eventName``, ``key`` and
``trustStatus`` (``trusted``, ``untrusted``, ``modified`` — changed since trusted — or
``managed``). In a project Codex does not trust, it loads none of the project's hooks and
warns that project-local hooks are disabled (decision 0059).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

RUNS = ("trusted", "managed")


class Trust(NamedTuple):
    project_trusted: bool
    hooks: int  # the project's hooks Codex loaded
    untrusted: tuple[str, ...]  # events of those it will not run until a person trusts them
    root: str
    config: str  # the config.toml a project's trust goes in


def listed(result: Any, root: Path) -> list[dict[str, Any]]:
    """The hooks of ``root``'s `.codex/hooks.json` in a `hooks/list` result."""
    data = result.get("data") if isinstance(result, dict) else None
    source = str(root / ".codex" / "hooks.json")
    found = []
    for entry in data if isinstance(data, list) else []:
        hooks = entry.get("hooks") if isinstance(entry, dict) else None
        for hook in hooks if isinstance(hooks, list) else []:
            if isinstance(hook, dict) and hook.get("source") == "project":
                named = hook.get("sourcePath")
                if isinstance(named, str) and _same(named, source):
                    found.append(hook)
    return found


def _same(a: str, b: str) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except (OSError, RuntimeError, ValueError):
        return False


def judge(hooks: list[dict[str, Any]], warnings: list[str], root: Path, home: Path) -> Trust:
    untrusted = tuple(
        str(hook.get("eventName") or "?") for hook in hooks if hook.get("trustStatus") not in RUNS
    )
    return Trust(bool(hooks), len(hooks), untrusted, str(root), str(home / "config.toml"))


def advice(trust: Trust) -> str | None:
    """One line saying what a person must do for Codex to run the project's hooks (None:
    Codex runs them all)."""
    if not trust.project_trusted:
        return (
            f"Codex CLI does not trust this project, so it runs none of its hooks (no brief, "
            f"no guard, no stop check, no usage): trust it when Codex asks on its first start "
            f'here, or add [projects."{trust.root}"] trust_level = "trusted" to {trust.config}; '
            f"then trust its hooks with /hooks in Codex"
        )
    if trust.untrusted:
        events = ", ".join(sorted(set(trust.untrusted)))
        return (
            f"Codex CLI will not run {len(trust.untrusted)} of this project's "
            f"{trust.hooks} hooks ({events}) until a person trusts them: open Codex here and "
            f"trust them with /hooks (for one unattended run: shiftkit run --agent codex "
            f"--dangerously-bypass-hook-trust)"
        )
    return None
