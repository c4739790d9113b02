"""Crash-safe file replacement: a reader sees the old content or the new, never a mix."""

from __future__ import annotations

import os
from pathlib import Path


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory, fsync and rename."""
    payload = data.encode() if isinstance(data, str) else data
    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    # A name no other writer can pick (pid and random bits), created exclusively: like
    # tempfile.mkstemp, without importing tempfile on the commit hook's path.
    tmp_name = str(directory / f".{path.name}.{os.getpid()}.{os.urandom(6).hex()}.tmp")
    fd = os.open(tmp_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(payload)
            tmp.flush()
            os.fsync(tmp.fileno())
        if mode is not None:
            os.chmod(tmp_name, mode)
        else:
            os.chmod(tmp_name, 0o666 & ~_umask())
        os.replace(tmp_name, path)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(directory)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
