"""A verifier that sets `PYTHONPATH` itself (`PYTHONPATH=src python -m pytest ...`, as both
real projects' groups do) replaces the folder of the recorder's `sitecustomize`: before, such
a run wrote no block data and kept file-level sets. Shims of the interpreter names on PATH put
the folder first again (decision record 0119). Real Python 3.12+ processes, measured by
`sys.monitoring`.

Twins: an interpreter run by its path with its own `PYTHONPATH` is still not measured (its run
keeps its files, as designed), and the shims change nothing a command can see of PATH but the
folder a name resolves to."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import newer_interpreter

from shiftkit.edge import blocksets

MODULE = "def used():\n    return 1\n\n\ndef unused():\n    return 2\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "m.py").write_text(MODULE)
    return root


def run_measured(project: Path, tmp_path: Path, command: str) -> tuple[Path, str]:
    """``command`` run by `sh` under the recorder's prefix (PATH as the test set it, a 3.12+
    `python3` first); (the measurement folder, what it printed)."""
    measured = tmp_path / "measure"
    measured.mkdir()
    env = dict(os.environ)
    prefix = blocksets.prefix(measured, project)
    done = subprocess.run(
        [*prefix, "/bin/sh", "-c", command], cwd=project, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return measured, done.stdout


def executed(measured: Path, project: Path) -> dict[str, set[str]] | None:
    found = blocksets.collect(measured, project, {"src/m.py": MODULE}, ())
    return None if found is None else {path: set(ran) for path, ran in found.items()}


def test_a_verifiers_own_pythonpath_keeps_the_recorder(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{newer_interpreter().parent}{os.pathsep}{os.environ['PATH']}")
    measured, _ = run_measured(project, tmp_path, "PYTHONPATH=src python3 -c 'import m; m.used()'")
    assert blocksets.wrote_data(measured)
    ran = executed(measured, project)
    assert ran is not None and "src/m.py" in ran
    assert any("used" in block for block in ran["src/m.py"]), ran
    assert not any("unused" in block for block in ran["src/m.py"]), ran


def test_an_interpreter_run_by_its_path_with_its_own_pythonpath_is_not_measured(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = newer_interpreter()
    monkeypatch.setenv("PATH", f"{python.parent}{os.pathsep}{os.environ['PATH']}")
    command = f"PYTHONPATH=src {python} -c 'import m; m.used()'"
    measured, _ = run_measured(project, tmp_path, command)
    assert not blocksets.wrote_data(measured)


def test_the_shims_leave_a_missing_name_missing_and_run_the_one_after_them(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = newer_interpreter()
    # (a PATH without pyenv's shims, which answer for every version)
    monkeypatch.setenv("PATH", os.pathsep.join([str(python.parent), "/usr/bin", "/bin"]))
    command = "python3 -c 'import sys; print(sys.executable)'; command -v python3.8 || echo none"
    _, printed = run_measured(project, tmp_path, command)
    lines = printed.split()
    assert Path(lines[0]).parent == python.parent, printed
    assert lines[1] == "none", printed
