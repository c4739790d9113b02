"""Reading Codex CLI's `hooks/list` answer (its shape as Codex 0.169's app-server sends it:
tests/test_real_codex.py asks the real one) and the one line a person needs (decision 0059)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shiftkit.core import codex_trust

ROOT = Path("/work/app")
HOME = Path("/home/dev/.codex")


def hook(event: str, status: str, source: str = "project", root: Path = ROOT) -> dict[str, Any]:
    return {
        "key": f"{root}/.codex/hooks.json:{event}:0:0",
        "eventName": event,
        "handlerType": "command",
        "command": ".shiftkit/hook guard",
        "source": source,
        "sourcePath": str(root / ".codex" / "hooks.json"),
        "currentHash": "sha256:" + "0" * 64,
        "trustStatus": status,
        "enabled": True,
    }


def answer(*hooks: dict[str, Any]) -> dict[str, Any]:
    return {"data": [{"cwd": str(ROOT), "hooks": list(hooks), "warnings": [], "errors": []}]}


def advice(*hooks: dict[str, Any]) -> str | None:
    listed = codex_trust.listed(answer(*hooks), ROOT)
    return codex_trust.advice(codex_trust.judge(listed, [], ROOT, HOME))


def test_an_untrusted_project_names_the_exact_config_entry() -> None:
    line = advice()  # Codex loads no project hooks in a project it does not trust
    assert line is not None and "\n" not in line
    assert f'[projects."{ROOT}"] trust_level = "trusted"' in line
    assert str(HOME / "config.toml") in line and "/hooks" in line


def test_untrusted_and_modified_hooks_are_counted_with_their_events() -> None:
    line = advice(
        hook("preToolUse", "untrusted"),
        hook("stop", "modified"),
        hook("sessionStart", "trusted"),
    )
    assert line is not None and "\n" not in line
    assert "will not run 2 of this project's 3 hooks (preToolUse, stop)" in line
    assert "/hooks" in line and "--dangerously-bypass-hook-trust" in line


def test_trusted_and_managed_hooks_need_nothing() -> None:
    assert advice(hook("preToolUse", "trusted"), hook("stop", "managed")) is None


def test_only_this_projects_file_counts() -> None:
    """A user-level hook, or another folder's, says nothing of this project's trust."""
    others = (hook("stop", "untrusted", source="user"), hook("stop", "untrusted", root=Path("/x")))
    assert codex_trust.listed(answer(*others), ROOT) == []
    assert codex_trust.listed("not an answer", ROOT) == []
    assert codex_trust.listed({"data": [{"hooks": ["x", None]}]}, ROOT) == []
