"""Under CI a test never skips for a missing tool: it fails in one line (`.ci/run` installs
every tool; a skip there is a test that silently never ran). On a person's machine it skips."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).parent

PROBE = """\
import needs

def test_uses_a_tool():
    needs.missing("frobnicate is not installed (apt-get install frobnicate)")

@needs.unless(False, "frobnicate is not installed")
def test_marked():
    raise AssertionError("ran without frobnicate")
"""


def _run(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_probe.py").write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    if ci is not None:
        env["CI"] = ci
    env["PYTHONPATH"] = str(TESTS)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rfs", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )  # fmt: skip


def test_in_ci_a_missing_tool_fails_the_test(tmp_path: Path) -> None:
    done = _run(tmp_path, "true")
    assert done.returncode == 1, done.stdout
    assert "2 failed" in done.stdout, done.stdout
    assert "frobnicate is not installed (apt-get install frobnicate)" in done.stdout


def test_on_a_persons_machine_a_missing_tool_skips(tmp_path: Path) -> None:
    done = _run(tmp_path, None)
    assert done.returncode == 0, done.stdout
    assert "2 skipped" in done.stdout, done.stdout
