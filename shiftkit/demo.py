"""`shiftkit demo`: scaffold a sample project and play shifts in it through the real hooks."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from shiftkit import scaffold


def run(directory: Path | None) -> int:
    target = directory or Path(tempfile.mkdtemp(prefix="shiftkit-demo-")) / "todo-app"
    print(f"== scaffolding a sample project in {target}")
    scaffold.new(target, {"project_name": "todo-app"}, defaults=True, quiet=True)
    print("== shiftkit status")
    return subprocess.run(["shiftkit", "status"], cwd=target).returncode
