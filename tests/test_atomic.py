from __future__ import annotations

import os
from pathlib import Path

import pytest

from shiftkit.edge.atomic import atomic_write


def test_writes_and_replaces_keeping_mode(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    atomic_write(target, "one\n")
    os.chmod(target, 0o755)
    atomic_write(target, b"two\n")
    assert target.read_text() == "two\n"
    assert target.stat().st_mode & 0o777 == 0o755
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


def test_failure_leaves_old_content_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "f.txt"
    atomic_write(target, "old\n")

    def boom(src: str, dst: str) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write(target, "new\n")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]
