"""One pytest project in the shapes people give it, for tests/test_local_is_ci_*.py (issue 35,
"Local verdict = CI verdict"): built on a fresh scaffold, its feature `add` judged by
`python -m pytest`, the agent's ground (`code`) set by the person. Each test runs the same two
judges on it: the agent's local `finish`, and a fresh clone's `audit --reverify --isolated`
(CI's job)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from conftest import Result, forced_flip, git_ok, shiftkit, write

TEST_ADD = "def test_add():\n    from calc.ops import add\n    assert add(2, 3) == 5\n"
GOOD = "def add(a, b):\n    return a + b\n"
BROKEN = "def add(a, b):\n    return 0\n"
VERIFY = "python -m pytest -q -p no:cacheprovider tests/test_add.py"
PYPROJECT = """[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "calc"
version = "0.1"
"""
SRC_PYTEST = '\n[tool.pytest.ini_options]\npythonpath = ["src"]\n'
# the person's own strict xfail beside the feature's test: expected to fail, counted as written
XFAIL = (
    "\n\nimport pytest\n\n\n@pytest.mark.xfail(strict=True, reason='strings are not numbers')\n"
    "def test_add_strings():\n    from calc.ops import add\n    assert add('a', 1) == 'a1'\n"
)
PIP_TIMEOUT = 600


@dataclass
class Shape:
    """Where the package lives and how the developer's environment reaches it."""

    src: bool = False  # src/calc (else calc/ at the root)
    install: str = ""  # "", "editable" or "plain": into the developer's venv
    init: str = ""  # the person's install step ("" keeps the scaffold's)
    test_extra: str = ""  # more of the person's tests in tests/test_add.py
    env: dict[str, str] = field(default_factory=dict)  # for every shiftkit command

    @property
    def package(self) -> str:
        return "src/calc" if self.src else "calc"


def build(scaffold: Path, shape: Shape, venv: Path) -> Shape:
    """The person's project: package, test, feature `add`, the ground set, all committed;
    the developer's venv made when ``shape.install`` asks. Returns the shape with the
    environment every shiftkit command gets."""
    write(scaffold / shape.package / "__init__.py", "")
    write(scaffold / shape.package / "ops.py", "")
    write(scaffold / "tests" / "test_add.py", TEST_ADD + shape.test_extra)
    gitignore = "__pycache__/\nbuild/\n*.egg-info/\n.pytest_cache/\n"
    write(scaffold / ".gitignore", gitignore)
    if shape.src:
        write(scaffold / "pyproject.toml", PYPROJECT + ("" if shape.install else SRC_PYTEST))
    added = shiftkit(
        scaffold, "add", "--description", "add works", "--step", "s", "--verify", VERIFY
    )
    assert added.returncode == 0, added.output
    git_ok(scaffold, "add", "-A")
    git_ok(scaffold, "commit", "-q", "-m", "The calc package and its feature")
    settings = scaffold / ".shiftkit.toml"
    text = settings.read_text().replace(
        "[shiftkit]\n", f'[shiftkit]\ncode = ["{shape.package}/**"]\n', 1
    )
    if shape.init:
        text = text.replace('init = "./init.sh"', f"init = {json.dumps(shape.init)}", 1)
    settings.write_text(text)
    git_ok(scaffold, "add", ".shiftkit.toml")
    git_ok(
        scaffold, "commit", "-q", "-m", "The agent works in the package",
        "-m", "Shiftkit-Override: the person sets the ground and the install step",
    )  # fmt: skip
    if shape.install:
        python = developer_venv(venv, scaffold, editable=shape.install == "editable")
        path = f"{python.parent}{os.pathsep}{os.environ['PATH']}"
        shape = Shape(shape.src, shape.install, shape.init, shape.test_extra, {"PATH": path})
    return shape


def developer_venv(where: Path, project: Path, *, editable: bool) -> Path:
    """The developer's venv outside the repository (pytest and the project in it), the
    project installed into it as it is now — before any feature is built: a plain install is
    stale from the first change on."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    python = where / "bin" / "python"
    args = [str(python), "-m", "pip", "install", "-q", "pytest"]
    done = subprocess.run(
        [*args, *(["-e"] if editable else []), str(project)],
        capture_output=True,
        text=True,
        timeout=PIP_TIMEOUT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return python


def sk(project: Path, shape: Shape, *args: str, env: dict[str, str] | None = None) -> Result:
    return shiftkit(project, *args, env={**shape.env, **(env or {})})


def implement(project: Path, shape: Shape, good: bool) -> None:
    write(project / shape.package / "ops.py", GOOD if good else BROKEN)


def passing(project: Path) -> bool:
    document = json.loads((project / "features.json").read_text())
    return bool(next(i for i in document["features"] if i["id"] == "F001").get("passes"))


def fresh_clone_judges(project: Path, shape: Shape, tmp_path: Path) -> tuple[Result, Result]:
    """CI: a fresh clone re-verifies every claim of the history and every passing feature
    at HEAD, isolated (`audit --reverify --isolated`, `check --isolated`)."""
    clone = tmp_path / "ci-clone"
    git_ok(tmp_path, "clone", "-q", str(project), str(clone))
    audited = sk(clone, shape, "audit", "--reverify", "--isolated")
    return audited, sk(clone, shape, "check", "--isolated", "--no-demote")


def forced_finish(project: Path, files: dict[str, str]) -> None:
    """What a finish writes (the flip, its log entry, the trailers) in a commit past every
    hook, beside ``files``: the agent that wants to look done, publishing anyway."""
    forced_flip(project, "F001", "add works", files)
