"""Whether Codex CLI will run this project's hooks, asked of Codex itself (decision 0059).

Codex loads a project's `.codex/hooks.json` only in a project it trusts, and then runs only
the hooks a person trusted at their current hash (`/hooks` in its TUI); an untrusted hook is
skipped without a word. `codex app-server` answers `hooks/list` with each hook it found for a
folder and its `trustStatus`; shiftkit asks it, and never computes Codex's hash itself.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any, NamedTuple

from shiftkit.core import codex_trust
from shiftkit.edge import codex

HOOKS_FILE = ".codex/hooks.json"
TIMEOUT = 20.0


class Asked(NamedTuple):
    hooks: list[dict[str, Any]]  # Codex's HookMetadata for the folder (empty: none loaded)
    warnings: list[str]  # its configWarning summaries


def _exchange(binary: str, root: Path) -> Asked | None:
    """One `codex app-server` session over stdio: initialize, then `hooks/list` for ``root``;
    None when Codex cannot be asked (it fails, or does not answer within the timeout)."""
    try:
        proc = subprocess.Popen(
            [binary, "app-server"],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "RUST_LOG": "error"},
        )
    except OSError:
        return None
    timer = threading.Timer(TIMEOUT, proc.kill)
    timer.start()
    warnings: list[str] = []
    try:
        assert proc.stdin is not None and proc.stdout is not None
        requests = [
            {"id": 1, "method": "initialize", "params": {"clientInfo": _client()}},
            {"method": "initialized"},
            {"id": 2, "method": "hooks/list", "params": {"cwds": [str(root)]}},
        ]
        proc.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
        proc.stdin.flush()
        for line in proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict):
                continue
            if message.get("method") == "configWarning":
                summary = (message.get("params") or {}).get("summary")
                if isinstance(summary, str):
                    warnings.append(summary)
            if message.get("id") == 2:
                return Asked(codex_trust.listed(message.get("result"), root), warnings)
        return None
    except (OSError, AssertionError):
        return None
    finally:
        timer.cancel()
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        proc.kill()
        proc.wait()


def _client() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return {"name": "shiftkit", "version": version("shiftkit")}
    except PackageNotFoundError:
        return {"name": "shiftkit", "version": "0"}


def check(root: Path, binary: str | None = None) -> codex_trust.Trust | None:
    """What Codex says of this project's hooks; None when there is nothing to ask (no
    `.codex/hooks.json`, no `codex` on PATH) or Codex did not answer."""
    if not (root / HOOKS_FILE).is_file():
        return None
    found = binary or shutil.which("codex")
    if found is None:
        return None
    asked = _exchange(found, root)
    if asked is None:
        return None
    return codex_trust.judge(asked.hooks, asked.warnings, root, codex.home())


def line(root: Path, binary: str | None = None) -> str | None:
    """The one line a person needs (None: Codex runs every hook of the project, or there is
    nothing to ask)."""
    trust = check(root, binary)
    return codex_trust.advice(trust) if trust is not None else None
