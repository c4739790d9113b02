"""Fixtures: an isolated git identity and config, the real template, real scaffolds."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
BIN_DIR = Path(sys.executable).parent


def path_with_interpreter(path: str) -> str:
    """``path`` with the running interpreter's bin directory first (once): the `shiftkit`
    installed beside it is the one found by name."""
    rest = [entry for entry in path.split(os.pathsep) if entry and Path(entry) != BIN_DIR]
    return os.pathsep.join([str(BIN_DIR), *rest])


def pytest_configure(config: pytest.Config) -> None:
    """The one place the tests' PATH is made: every subprocess they start (`shiftkit` and
    `pre-commit` by name, git running the hooks, the agents' stand-ins), in a test or in a
    fixture wider than one, finds this interpreter's `shiftkit` — also when the suite runs
    as `.venv/bin/python -m pytest` with the venv not on PATH."""
    os.environ["PATH"] = path_with_interpreter(os.environ.get("PATH", os.defpath))


def pytest_report_header(config: pytest.Config) -> list[str]:
    """The real agent harnesses the suite runs (tests/harnesses.py), by their own --version."""
    import harnesses

    return [harnesses.version(name) for name in harnesses.PACKAGES]


GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Shift Tester",
    "GIT_AUTHOR_EMAIL": "tester@shiftkit.invalid",
    "GIT_COMMITTER_NAME": "Shift Tester",
    "GIT_COMMITTER_EMAIL": "tester@shiftkit.invalid",
}


@pytest.fixture(scope="session")
def isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    (home / "gitconfig").write_text(
        "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"
        '[protocol "file"]\n\tallow = always\n'
    )
    return home


def session_environment(home: Path) -> dict[str, str]:
    """A git identity and config of the tests' own, never the machine's."""
    return {
        **GIT_IDENTITY,
        "GIT_CONFIG_GLOBAL": str(home / "gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "PRE_COMMIT_HOME": str(home / "pre-commit"),
        "PATH": path_with_interpreter(os.environ["PATH"]),
    }


@pytest.fixture(autouse=True)
def git_environment(monkeypatch: pytest.MonkeyPatch, isolated_home: Path) -> None:
    for key, value in session_environment(isolated_home).items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("SHIFTKIT_DEBUG", raising=False)
    # (the suite run from inside an agent's shell: `start` would say its hooks are not running)
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "CLAUDECODE", "CODEX_THREAD_ID"):
        monkeypatch.delenv(key, raising=False)


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run(
    args: list[str],
    cwd: Path,
    *,
    input: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> Result:
    proc = subprocess.run(
        args,
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def shiftkit(
    cwd: Path, *args: str, input: str | None = None, env: dict[str, str] | None = None
) -> Result:
    return run(["shiftkit", *args], cwd, input=input, env=env)


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return run(["git", *args], cwd, env=env)


def git_ok(cwd: Path, *args: str) -> str:
    result = git(cwd, *args)
    assert result.returncode == 0, result.output
    return result.stdout


def snapshot_repository(destination: Path) -> Path:
    """This repository's current files (committed or not) as a fresh git repo."""
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name in filter(None, listing.split("\0")):
        source = REPO_ROOT / name
        if not source.exists():
            continue
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    git_ok(destination, "init", "-q")
    git_ok(destination, "add", "-A")
    git_ok(destination, "commit", "-q", "-m", "snapshot of shiftkit")
    return destination


@contextlib.contextmanager
def isolated_environment(home: Path, **extra: str) -> Iterator[None]:
    """The tests' git environment for fixtures wider than a test, which run before the
    autouse `git_environment` does."""
    with pytest.MonkeyPatch.context() as mp:
        for key, value in {**session_environment(home), **extra}.items():
            mp.setenv(key, value)
        yield


@pytest.fixture(scope="session")
def template_repo(tmp_path_factory: pytest.TempPathFactory, isolated_home: Path) -> Iterator[Path]:
    with isolated_environment(isolated_home):
        yield snapshot_repository(tmp_path_factory.mktemp("shiftkit-src"))


@pytest.fixture(scope="session")
def pristine_scaffold(tmp_path_factory: pytest.TempPathFactory, isolated_home: Path) -> Path:
    """One real `shiftkit new --defaults`; tests get copies of it."""
    target = tmp_path_factory.mktemp("pristine") / "demo-project"
    env = session_environment(isolated_home)
    result = run(["shiftkit", "new", str(target), "--defaults"], target.parent, env=env)
    assert result.returncode == 0, result.output
    return target


def copy_of(pristine: Path, tmp_path: Path) -> Path:
    """A test's own copy of a session-wide project, git dir and hooks included."""
    target = tmp_path / pristine.name
    shutil.copytree(pristine, target, symlinks=True)
    return target


@pytest.fixture
def scaffold(pristine_scaffold: Path, tmp_path: Path) -> Path:
    return copy_of(pristine_scaffold, tmp_path)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


CALC_TESTS = {
    "add": "def test_add():\n    from calc.ops import add\n    assert add(2, 3) == 5\n",
    "sub": "def test_sub():\n    from calc.ops import sub\n    assert sub(5, 3) == 2\n",
    "mul": "def test_mul():\n    from calc.ops import mul\n    assert mul(4, 3) == 12\n",
}
GOOD_IMPL = {
    "add": "def add(a, b):\n    return a + b\n",
    "sub": "def sub(a, b):\n    return a - b\n",
    "mul": "def mul(a, b):\n    return a * b\n",
}


def calc_verifier(name: str) -> str:
    return f"python -m pytest -q -p no:cacheprovider tests/test_{name}.py"


@pytest.fixture(scope="session")
def pristine_calc(
    pristine_scaffold: Path, tmp_path_factory: pytest.TempPathFactory, isolated_home: Path
) -> Path:
    """A scaffold holding a small real Python package whose features have pytest verifiers."""
    target = tmp_path_factory.mktemp("calc") / "calc-project"
    shutil.copytree(pristine_scaffold, target, symlinks=True)
    env = session_environment(isolated_home)
    write(target / "calc" / "__init__.py", "")
    write(target / "calc" / "ops.py", "")
    for name, body in CALC_TESTS.items():
        write(target / "tests" / f"test_{name}.py", body)
    write(target / ".gitignore", "__pycache__/\nbuild/\n.pytest_cache/\n")
    for name in CALC_TESTS:
        result = run(
            [
                "shiftkit",
                "add",
                "--description",
                f"calc.ops.{name} works",
                "--step",
                f"call {name}",
                "--verify",
                calc_verifier(name),
            ],
            target,
            env=env,
        )
        assert result.returncode == 0, result.output
    for args in (
        ["git", "add", "-A"],
        ["git", "commit", "-q", "-m", "Add the calc package and its features"],
    ):
        result = run(args, target, env=env)
        assert result.returncode == 0, result.output
    return target


@pytest.fixture
def calc(pristine_calc: Path, tmp_path: Path) -> Path:
    return copy_of(pristine_calc, tmp_path)


NEWER_PYTHON = "SHIFTKIT_TEST_NEWER_PYTHON"


def newer_interpreter() -> Path:
    """A Python 3.12+ (sys.monitoring) for verifiers: ``$SHIFTKIT_TEST_NEWER_PYTHON``, else
    pyenv's newest 3.12+, else python3.13/python3.12 on PATH; a one-line failure without."""
    named = os.environ.get(NEWER_PYTHON)
    if named:
        return Path(named)
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found = sorted(pyenv.glob("3.1[2-9]*/bin/python3"), key=lambda p: p.parent.parent.name)
    on_path = [shutil.which(name) for name in ("python3.13", "python3.12")]
    for candidate in [*reversed(found), *(Path(p) for p in on_path if p)]:
        return candidate
    pytest.fail(f"no Python 3.12+ here for sys.monitoring block sets: set {NEWER_PYTHON}", False)


@pytest.fixture(scope="session")
def newer_python(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment additions that make `python` a Python 3.12+ with pytest (a venv of its
    own) for the verifiers, while `shiftkit` stays this interpreter's."""
    home = tmp_path_factory.mktemp("newer-python")
    venv = home / "venv"
    for args in (
        [str(newer_interpreter()), "-m", "venv", str(venv)],
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "pytest>=8"],
    ):
        done = subprocess.run(args, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    shims = home / "bin"
    shims.mkdir()
    for name in ("python", "python3"):  # (python3: what an installing init's overlay uses)
        write(shims / name, f'#!/bin/sh\nexec {venv}/bin/python "$@"\n').chmod(0o755)
    return {"PATH": f"{shims}{os.pathsep}{os.environ['PATH']}"}


@pytest.fixture(params=["coverage", "sysmon"])
def block_sets(request: pytest.FixtureRequest) -> dict[str, str]:
    """The two ways a verifier's Python processes are measured (decision records 0116, 0119):
    coverage.py before 3.12 (asked for with `SHIFTKIT_BLOCKS=on`), `sys.monitoring` on 3.12+
    (the default)."""
    if request.param == "coverage":
        return {"SHIFTKIT_BLOCKS": "on"}
    additions: dict[str, str] = request.getfixturevalue("newer_python")
    return additions


def implement(project: Path, name: str, good: bool = True) -> None:
    ops = project / "calc" / "ops.py"
    body = GOOD_IMPL[name] if good else GOOD_IMPL[name].replace("return a", "return 0 * a")
    ops.write_text(ops.read_text() + body)


# -- editing a project's protocol files by hand, the way an agent might ------------------------

FEATURES = "features.json"
LOG = "claude-progress.txt"


def ok(project: Path, *args: str) -> str:
    result = shiftkit(project, *args)
    assert result.returncode == 0, result.output
    return result.stdout


def edit_list(project: Path, change: Callable[[list[dict[str, Any]]], Any]) -> None:
    path = project / FEATURES
    document = json.loads(path.read_text())
    change(document["features"])
    path.write_text(json.dumps(document, indent=2) + "\n")


def by_id(items: list[dict[str, Any]], feature_id: str) -> dict[str, Any]:
    return next(item for item in items if item["id"] == feature_id)


def add_log_entry(project: Path, feature_id: str, outcome: str = "passed") -> None:
    from shiftkit.core import progress

    path = project / LOG
    path.write_text(
        progress.append(
            path.read_text(),
            progress.format_entry(
                "2026-11-29 12:00 UTC", feature_id, outcome, "abc1234", "hand-written entry"
            ),
        )
    )


def flip(project: Path, *ids: str, log: bool = True) -> None:
    def change(items: list[dict[str, Any]]) -> None:
        for feature_id in ids:
            by_id(items, feature_id)["passes"] = True

    edit_list(project, change)
    if log:
        for feature_id in ids:
            add_log_entry(project, feature_id)


# How an installed shim runs shiftkit (after the interpreter): the entry point, as
# `.shiftkit/hook` runs it (`-m` would import runpy first: decision 0122).
SHIM_RUNS = "-P -c 'import sys; from shiftkit.main import main; sys.exit(main())' hook"


def use_shims(project: Path) -> None:
    """Replace the pre-commit framework's hooks by shiftkit's plain shims."""
    for name in ("pre-commit", "commit-msg"):
        (project / ".git" / "hooks" / name).unlink()
    ok(project, "install-hooks")
    assert SHIM_RUNS in (project / ".git" / "hooks" / "pre-commit").read_text()


def shell_features(project: Path, *names: str) -> None:
    """Features whose verifiers are `test -f NAME` (fast), committed."""
    for name in names:
        ok(
            project,
            "add",
            "--description",
            f"{name} exists",
            "--step",
            "s",
            "--verify",
            f"test -f {name}",
        )
    git_ok(project, "add", "-A")
    git_ok(project, "commit", "-q", "-m", "Add the features")


def fuzz_examples(default: int, *, subprocess_runs: bool = False) -> int:
    """The example count of one property: ``default``, or more for a long run."""
    wanted = os.environ.get("SHIFTKIT_FUZZ_EXAMPLES", "").strip()
    if wanted.isdigit() and int(wanted) > 0:
        return max(default, int(wanted) // 10 if subprocess_runs else int(wanted))
    if os.environ.get("SHIFTKIT_FUZZ", "").strip().lower() == "long":
        return default * 10
    return default


NO_HOOKS = ("-c", "core.hooksPath=/dev/null/no-hooks")


def forced_flip(
    project: Path, feature: str, subject: str, files: dict[str, str] | None = None
) -> str:
    """``feature`` marked passing (beside ``files``) with everything a finish writes — its log
    entry and the trailers — in a commit made past every hook, as a determined agent could;
    the commit's short id."""
    for name, text in (files or {}).items():
        write(project / name, text)
    path = project / "features.json"
    document = json.loads(path.read_text())
    for item in document["features"]:
        if item["id"] == feature:
            item["passes"] = True
    path.write_text(json.dumps(document, indent=2) + "\n")
    add_log_entry(project, feature)
    git_ok(project, "add", "-A")
    tree = git_ok(project, "write-tree").strip()
    message = (
        f"{feature}: {subject}\n\nShiftkit-Feature: {feature}\n"
        f"Shiftkit-Verified: {tree}\nShiftkit-Claim: -\n"
    )
    git_ok(project, *NO_HOOKS, "commit", "-q", "--no-verify", "-m", message)
    return git_ok(project, "rev-parse", "--short", "HEAD").strip()
