"""Build hook: the template a wheel bundles carries the commit it was built from (decision 0068).

`shiftkit new` from an installed wheel renders this bundled copy; the answers file then names
the source and this commit (`_commit`), so `copier update` diffs from the template that was
rendered, not from whatever the clone holds later. An sdist keeps the file for the wheel built
from it (which has no git)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

ORIGIN = "shiftkit-origin.json"
BUNDLED = ("copier.yml", "template", "hooks", "shiftkit/__init__.py")


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=False, timeout=30
        )
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def published_at(environ: Mapping[str, str]) -> str | None:
    """Where a release build's commit is published (decision 0105): `SHIFTKIT_ORIGIN_URL`, or
    on GitHub Actions the repository it runs for — a URL any CI reaches, so a project made
    from the released wheel installs its hooks and its CI's shiftkit from there (0117, 0118)."""
    named = environ.get("SHIFTKIT_ORIGIN_URL", "").strip()
    if named:
        return named
    server, repository = environ.get("GITHUB_SERVER_URL"), environ.get("GITHUB_REPOSITORY")
    return f"{server.rstrip('/')}/{repository}" if server and repository else None


def origin(root: Path) -> dict[str, Any] | None:
    """The checkout's commit, whether the bundled files differ from it, and where it is (the
    URL it is published at, for a release build; else the checkout's path)."""
    commit = _git(root, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    if not commit:
        kept = root / ORIGIN  # an sdist's record, made where git was
        return json.loads(kept.read_text(encoding="utf-8")) if kept.is_file() else None
    changed = _git(root, "status", "--porcelain", "--", *BUNDLED)
    source = published_at(os.environ) or str(root.resolve())
    return {"commit": commit, "dirty": bool(changed), "source": source}


class OriginHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        self._scratch: str | None = None
        if version == "editable":  # an editable install runs from the checkout itself
            return
        found = origin(Path(self.root))
        if found is None:
            return
        self._scratch = tempfile.mkdtemp(prefix="shiftkit-origin-")
        path = Path(self._scratch) / ORIGIN
        path.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
        target = f"shiftkit/_template/{ORIGIN}" if self.target_name == "wheel" else ORIGIN
        build_data["force_include"][str(path)] = target

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if self._scratch:
            shutil.rmtree(self._scratch, ignore_errors=True)
