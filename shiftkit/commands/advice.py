"""Advice said after a command to a person at a terminal: would Codex run this project's
hooks (`shiftkit.edge.codex_trust`)?"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

Say = Callable[[str], None]


def codex_trust(root: Path, warn: Say) -> None:
    """Say (on `warn`, the error stream) the Codex-trust advice for `root`, if any."""
    from shiftkit.edge import codex_trust as trust

    advice = trust.line(root)
    if advice:
        warn(f"shiftkit: {advice}")
