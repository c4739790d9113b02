"""Imports come from the judged tree (issue 35 item 2; decision record 0087): with the project
installed editable in the developer's environment (real pip, setuptools' finder and `.pth`
modes), a verifier in a temporary checkout imports the package from that checkout. The
six-command reproduction of the issue: break the code in a plain commit, fix it only in the
work tree, and `shiftkit check` must say the feature fails at HEAD."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git_ok, ok, shiftkit, write

NO_HOOKS = ("-c", "core.hooksPath=/dev/null/no-hooks")
PYPROJECT = """[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "pkg"
version = "0.1"
"""


HATCH_PYPROJECT = """[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "pkg"
version = "0.1"

[tool.hatch.build.targets.wheel]
packages = ["src/pkg"]
"""
# hatchling's "exact" mode: the `editables` redirecting finder instead of a path entry
HATCH_EXACT = "\n[tool.hatch.build]\ndev-mode-exact = true\n"
PDM_PYPROJECT = """[build-system]
requires = ["pdm-backend"]
build-backend = "pdm.backend"

[project]
name = "pkg"
version = "0.1"
"""
# pdm-backend's default editable is a `.pth` path entry; "editables" is its redirecting finder
PDM_EDITABLES = '\n[tool.pdm.build]\neditable-backend = "editables"\n'
BACKENDS = {
    "setuptools finder": (PYPROJECT, ""),
    "setuptools compat": (PYPROJECT, "compat"),
    "hatchling path": (HATCH_PYPROJECT, ""),
    "hatchling exact": (HATCH_PYPROJECT + HATCH_EXACT, ""),
    "pdm path": (PDM_PYPROJECT, ""),
    "pdm editables": (PDM_PYPROJECT + PDM_EDITABLES, ""),
}


def value_module(value: int) -> str:
    return f"def value():\n    return {value}\n"


def make_venv(where: Path, project: Path, mode: str) -> Path:
    """A venv with ``project`` installed editable (setuptools from the package index)."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    python = where / "bin" / "python"
    args = [str(python), "-m", "pip", "install", "-q"]  # (hatchling exact needs `editables`)
    if mode:
        args += ["--config-settings", f"editable_mode={mode}"]
    done = subprocess.run([*args, "-e", str(project)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return python


@pytest.mark.parametrize("backend", BACKENDS)
def test_check_judges_head_not_the_work_tree_of_an_editable_install(
    scaffold: Path, tmp_path: Path, backend: str
) -> None:
    pyproject, mode = BACKENDS[backend]
    write(scaffold / "pyproject.toml", pyproject)
    write(scaffold / "src" / "pkg" / "__init__.py", value_module(2))
    write(scaffold / ".gitignore", "__pycache__/\n*.egg-info/\nbuild/\n")
    python = make_venv(tmp_path / "venv", scaffold, mode)
    verifier = f'{python} -c "import pkg, sys; sys.exit(0 if pkg.value() == 2 else 1)"'
    ok(scaffold, "add", "--description", "value is 2", "--step", "s", "--verify", verifier)
    git_ok(scaffold, "add", "-A")
    git_ok(scaffold, "commit", "-q", "-m", "The package and its feature")
    ok(scaffold, "claim", "F001")
    ok(scaffold, "finish", "-m", "value is two")
    assert shiftkit(scaffold, "check", "--no-demote").returncode == 0  # (the honest twin)
    # What the verifier read in the checkout is the checkout's package: its read set (measured
    # under strace, where it can trace) holds the package's source.
    from shiftkit.edge import gitio, readsets

    read = readsets.load_one(gitio.common_dir(scaffold), "F001")
    if readsets.tracer() is not None or os.environ.get("CI"):
        assert read is not None and "src/pkg/__init__.py" in read.files, read

    # A plain commit breaks it; the work tree alone is fixed (uncommitted).
    module = scaffold / "src" / "pkg" / "__init__.py"
    module.write_text(value_module(3))
    git_ok(scaffold, "add", "-A")
    git_ok(scaffold, *NO_HOOKS, "commit", "-q", "--no-verify", "-m", "Change the value")
    module.write_text(value_module(2))
    checked = shiftkit(scaffold, "check", "--no-demote")
    assert checked.returncode == 1, checked.output
    assert "FAILED F001" in checked.stdout, checked.output

    # The developer's environment is untouched: it still imports the work tree.
    where = subprocess.run(
        [str(python), "-c", "import pkg; print(pkg.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert Path(where.stdout.strip()).resolve() == module.resolve(), where.stderr


def test_a_users_own_sitecustomize_still_runs(scaffold: Path, tmp_path: Path) -> None:
    """The shim chains to the next `sitecustomize` on the path (the interpreter's own)."""
    from shiftkit.edge import imports

    own = tmp_path / "own"
    write(own / "sitecustomize.py", "import os\nos.environ['OWN_SITE'] = 'ran'\n")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    imports.register(checkout, scaffold)
    try:
        env = imports.variables(checkout, {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(own)})
    finally:
        imports.forget(checkout)
    ran = subprocess.run(
        [sys.executable, "-c", "import os, sys; print(os.environ.get('OWN_SITE'))"],
        capture_output=True,
        text=True,
        env=env,
        cwd=checkout,
    )
    assert ran.stdout.strip() == "ran", ran.stderr
    assert json.loads(json.dumps(env))[imports.JUDGED_TREE] == str(checkout.resolve())


def test_a_venv_kept_in_the_work_tree_stays_the_interpreters(scaffold: Path) -> None:
    """The common layout: the developer's `.venv` inside the repository (ignored), the
    project installed editable in it, pytest from it. The verifier in a checkout imports the
    package from the checkout and everything else from that venv (before, every entry under
    the work tree moved, the venv's `site-packages` too: "No module named pytest")."""
    write(scaffold / "pyproject.toml", PYPROJECT)
    write(scaffold / "src" / "pkg" / "__init__.py", value_module(2))
    write(
        scaffold / "tests" / "test_value.py",
        "import pkg\n\n\ndef test_value():\n    assert pkg.value() == 2\n",
    )
    write(scaffold / ".gitignore", "__pycache__/\n*.egg-info/\nbuild/\n.venv/\n")
    python = make_venv(scaffold / ".venv", scaffold, "")
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "pytest"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    verifier = f"{python} -m pytest -q -p no:cacheprovider tests/test_value.py"
    ok(scaffold, "add", "--description", "value is 2", "--step", "s", "--verify", verifier)
    git_ok(scaffold, "add", "-A")
    git_ok(scaffold, "commit", "-q", "-m", "The package and its feature")
    ok(scaffold, "claim", "F001")
    ok(scaffold, "finish", "-m", "value is two")
    checked = shiftkit(scaffold, "check", "--no-demote")
    assert checked.returncode == 0, checked.output

    # The honest twin's mirror: HEAD broken, the work tree fixed: the checkout is judged.
    module = scaffold / "src" / "pkg" / "__init__.py"
    module.write_text(value_module(3))
    git_ok(scaffold, "add", "-A")
    git_ok(scaffold, *NO_HOOKS, "commit", "-q", "--no-verify", "-m", "Change the value")
    module.write_text(value_module(2))
    checked = shiftkit(scaffold, "check", "--no-demote")
    assert checked.returncode == 1 and "FAILED F001" in checked.stdout, checked.output


# The installers an `init` may run: pip, and uv's pip interface (which installs into the
# environment `VIRTUAL_ENV` names: the private one, like pip).
# uv reads the machine's certificate store from `SSL_CERT_FILE` where pip reads its own
# configuration: a variable the person names (`env`), as any verifier's would be.
INSTALLERS = {
    "pip": 'init = "pip install -q --no-deps -e ."',
    "uv pip": 'init = "uv pip install -q --no-deps -e ."\nenv = ["SSL_CERT_FILE"]',
}


@pytest.mark.parametrize("installer", INSTALLERS)
def test_an_init_that_installs_the_project_leaves_the_developers_environment_alone(
    scaffold: Path, tmp_path: Path, installer: str
) -> None:
    """`init = "pip install -e ."`: every verification installs the project into a private
    environment over the developer's (decision record 0098). Before, `check` ran the
    developer's pip in a temporary checkout and left the developer's editable install
    pointing at the deleted checkout: `import pkg` failed afterwards."""
    write(scaffold / "pyproject.toml", PYPROJECT)
    write(scaffold / "src" / "pkg" / "__init__.py", value_module(2))
    write(scaffold / ".gitignore", "__pycache__/\n*.egg-info/\nbuild/\n")
    python = make_venv(tmp_path / "venv", scaffold, "")
    # uv comes with the test dependencies, beside this interpreter
    tools = Path(sys.executable).parent
    path = {"PATH": f"{python.parent}{os.pathsep}{os.environ['PATH']}{os.pathsep}{tools}"}
    settings = scaffold / ".shiftkit.toml"
    settings.write_text(
        re.sub(r"(?m)^init = .*$", lambda _: INSTALLERS[installer], settings.read_text())
    )
    verifier = 'python -c "import pkg, sys; sys.exit(0 if pkg.value() == 2 else 1)"'
    ok(scaffold, "add", "--description", "value is 2", "--step", "s", "--verify", verifier)
    git_ok(scaffold, "add", "-A")
    git_ok(
        scaffold, "commit", "-q", "-m", "The package, its feature and its install step",
        "-m", "Shiftkit-Override: the person sets init",
    )  # fmt: skip
    assert shiftkit(scaffold, "claim", "F001", env=path).returncode == 0
    finished = shiftkit(scaffold, "finish", "-m", "value is two", env=path)
    assert finished.returncode == 0, finished.output
    checked = shiftkit(scaffold, "check", "--no-demote", env=path)
    assert checked.returncode == 0, checked.output

    # The developer's environment still imports the work tree.
    where = subprocess.run(
        [str(python), "-c", "import pkg; print(pkg.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    module = scaffold / "src" / "pkg" / "__init__.py"
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).resolve() == module.resolve(), where.stdout
