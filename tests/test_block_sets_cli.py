"""The team trial's shape, with block sets (issue 37; decision record 0116): every feature's
test runs the CLI in a subprocess (`python -m app ...`), and every command lives in one
`app/cli.py` beside a shared parser. Coverage follows the subprocesses (they inherit the
measured environment), so a change to one command's function re-verifies that feature alone,
and a change to the shared parser every feature that used it. Its twin: tests that run the
CLI with a scrubbed environment leave those processes unmeasured — the run reads code no
measured process accounts for — so the gate falls back to files and re-verifies them all."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git_ok, ok, shiftkit, write
from test_block_sets import finish_editing

COMMANDS = ("add", "total", "count")

CLI = """import sys


def parse(argv):
    return argv[0], [int(a) for a in argv[1:]]


def add(numbers):
    return numbers[0] + numbers[1]


def total(numbers):
    return sum(numbers)


def count(numbers):
    return len(numbers)


def main():
    name, numbers = parse(sys.argv[1:])
    print({"add": add, "total": total, "count": count}[name](numbers))
"""

TEST = """import os, subprocess, sys


def test_{name}():
    env = {env}
    out = subprocess.run([sys.executable, "-m", "app", "{name}", "2", "3", "4"], env=env,
                         capture_output=True, text=True, check=True).stdout
    assert out == "{expected}\\n"
"""


def cli_project(scaffold: Path, env_expression: str, blocks: dict[str, str]) -> Path:
    write(scaffold / "app" / "__init__.py", "")
    write(scaffold / "app" / "__main__.py", "from app.cli import main\n\nmain()\n")
    write(scaffold / "app" / "cli.py", CLI)
    write(scaffold / ".gitignore", "__pycache__/\n.pytest_cache/\n")
    for name, expected in zip(COMMANDS, ("5", "9", "3"), strict=True):
        write(scaffold / "tests" / f"test_{name}.py",
              TEST.format(name=name, env=env_expression, expected=expected))  # fmt: skip
        ok(scaffold, "add", "--description", f"app {name} works", "--step", "s", "--verify",
           f"python -m pytest -q -p no:cacheprovider tests/test_{name}.py")  # fmt: skip
    git_ok(scaffold, "add", "-A")
    git_ok(scaffold, "commit", "-q", "-m", "The CLI and its features' tests")
    ok(scaffold, "claim", "F000")
    ok(scaffold, "finish", "-m", "the environment builds")
    for feature in ("F001", "F002", "F003"):
        assert shiftkit(scaffold, "claim", feature, env=blocks).returncode == 0
        done = shiftkit(scaffold, "finish", "-m", f"{feature} works", env=blocks)
        assert done.returncode == 0, done.output
    return scaffold


def re_verified_after(project: Path, old: str, new: str, blocks: dict[str, str]) -> list[str]:
    """Edit app/cli.py as the work of a fourth feature and finish it: the passing features
    its gate re-ran."""
    ok(project, "add", "--description", "the CLI still works", "--step", "s", "--verify",
       "python -m app count 1")  # fmt: skip
    git_ok(project, "commit", "-q", "-am", "A feature for the refactor")
    assert shiftkit(project, "claim", "F004", env=blocks).returncode == 0
    return finish_editing(project, "app/cli.py", old, new, blocks)


INHERITED = (
    '{**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}'
)
SCRUBBED = '{"PYTHONPATH": os.getcwd(), "PATH": os.environ["PATH"]}'


@pytest.mark.parametrize(
    ("env", "old", "new", "expected"),
    [
        (INHERITED, "return sum(numbers)", "return sum(numbers, 0)", ["F002"]),
        (INHERITED, "[int(a) for a in argv[1:]]", "list(map(int, argv[1:]))", ["F001", "F002", "F003"]),
        (SCRUBBED, "return sum(numbers)", "return sum(numbers, 0)", ["F001", "F002", "F003"]),
    ],
    ids=["one-command", "shared-parser", "unmeasured-subprocess"],
)  # fmt: skip
def test_a_cli_change_re_verifies_the_features_that_ran_it(
    scaffold: Path, block_sets: dict[str, str], env: str, old: str, new: str, expected: list[str]
) -> None:
    project = cli_project(scaffold, env, block_sets)
    assert re_verified_after(project, old, new, block_sets) == expected
