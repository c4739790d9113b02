"""`shiftkit demo`: scaffold a sample project and play shifts in it through the real hooks."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from shiftkit import gitio, scaffold

DEMO_IDENTITY = {
    "GIT_AUTHOR_NAME": "shiftkit demo",
    "GIT_AUTHOR_EMAIL": "demo@shiftkit.invalid",
    "GIT_COMMITTER_NAME": "shiftkit demo",
    "GIT_COMMITTER_EMAIL": "demo@shiftkit.invalid",
}


def run(directory: Path | None) -> int:
    target = directory or Path(tempfile.mkdtemp(prefix="shiftkit-demo-")) / "todo-app"
    target.parent.mkdir(parents=True, exist_ok=True)
    if not gitio.has_identity(target.parent):
        # A fresh machine has no git identity; the demo's commits use a demo one.
        os.environ.update(DEMO_IDENTITY)
    print(f"== scaffolding a sample project in {target}")
    scaffold.new(target, {"project_name": "todo-app"}, defaults=True, quiet=True)
    print("== shiftkit status")
    return subprocess.run(["shiftkit", "status"], cwd=target).returncode
