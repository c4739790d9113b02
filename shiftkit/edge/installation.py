"""Which shiftkit judges this clone: a fingerprint of the installed package (every file of it,
hashed), the `shiftkit` the PATH finds and the interpreter, recorded in the git dir at setup
and compared by `setup` and `start` (decision 0063). About 2 ms warm for the package's ~90
files (`bench/installation.py`)."""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path

from shiftkit.edge import state

FILE = "installation.json"


def _digest_tree(folder: str) -> str:
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            path = os.path.join(root, name)
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:
                data = b"(unreadable)"
            relative = os.path.relpath(path, folder).encode("utf-8", "surrogateescape")
            digest.update(relative + b"\0" + str(len(data)).encode() + b"\0" + data)
    return digest.hexdigest()


def _digest_file(path: str | None) -> str | None:
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def current() -> dict[str, str | None]:
    """This process's installation: its package folder and digest, the PATH's `shiftkit`
    (what the harness hooks run) and its digest, and the interpreter."""
    import shiftkit

    package = os.path.dirname(os.path.abspath(shiftkit.__file__))
    entry = shutil.which("shiftkit")
    return {
        "package": package,
        "package_digest": _digest_tree(package),
        "entry": entry,
        "entry_digest": _digest_file(entry),
        "python": os.path.realpath(sys.executable),
    }


def record(common_dir: Path) -> None:
    state.write_json(state.repo_state(common_dir) / FILE, current())


def recorded(common_dir: Path) -> dict[str, object] | None:
    value = state.read_json(state.repo_state(common_dir) / FILE)
    return value if isinstance(value, dict) else None


def problem(common_dir: Path) -> str | None:
    """One line when the installation is not the one recorded at setup (None: it is, or none
    was recorded yet)."""
    before = recorded(common_dir)
    if before is None:
        return None
    now = current()
    # The program recorded is read where it was (the PATH differs between a person's terminal
    # and a harness; what matters is whether that file was replaced).
    entry = before.get("entry")
    now["entry_digest"] = _digest_file(entry) if isinstance(entry, str) else None
    changed = [
        what
        for key, what in (
            ("package", "its package folder"),
            ("package_digest", "its package's files"),
            ("entry_digest", f"the program {entry}"),
            ("python", "its interpreter"),
        )
        if before.get(key) != now.get(key)
    ]
    if not changed:
        return None
    return (
        f"shiftkit's installation is not the one recorded at setup ({', '.join(changed)} "
        f"changed): the judge may have been replaced; a person checks it, then runs "
        f"`shiftkit setup --trust-installation`"
    )
