"""The team trial's shape (issue 37): fifteen features, every command in one `app/cli.py`
beside a shared parser, each feature's test running the CLI in a subprocess. With block sets
(the default: `sys.monitoring`, verifiers on Python 3.12+; decision record 0119) a change to
one command's function re-verifies that feature and no other, and a change to the shared
parser re-verifies every feature that used it. Its twin: the same change at file level
(`SHIFTKIT_BLOCKS=off`) re-verifies all fifteen."""

from __future__ import annotations

from pathlib import Path

from conftest import git_ok, ok, shiftkit, write
from test_block_sets import finish_editing

COUNT = 15

CLI = "import sys\n\n\ndef parse(argv):\n    return argv[0], [int(a) for a in argv[1:]]\n\n\n" + (
    "".join(f"def c{k}(numbers):\n    return sum(numbers) + {k}\n\n\n" for k in range(1, COUNT + 1))
    + "def main():\n    name, numbers = parse(sys.argv[1:])\n"
    "    print(globals()[name](numbers))\n"
)

TEST = """import os, subprocess, sys


def test_c{k}():
    path = os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])
    env = {{**os.environ, "PYTHONPATH": path}}
    out = subprocess.run([sys.executable, "-m", "app", "c{k}", "2", "3"], env=env,
                         capture_output=True, text=True, check=True).stdout
    assert out == "{expected}\\n"
"""


def team_project(scaffold: Path, env: dict[str, str]) -> Path:
    write(scaffold / "app" / "__init__.py", "")
    write(scaffold / "app" / "__main__.py", "from app.cli import main\n\nmain()\n")
    write(scaffold / "app" / "cli.py", CLI)
    write(scaffold / ".gitignore", "__pycache__/\n.pytest_cache/\n")
    for k in range(1, COUNT + 1):
        write(scaffold / "tests" / f"test_c{k}.py", TEST.format(k=k, expected=5 + k))
        ok(scaffold, "add", "--description", f"app c{k} works", "--step", "s", "--verify",
           f"python -m pytest -q -p no:cacheprovider tests/test_c{k}.py")  # fmt: skip
    ok(scaffold, "add", "--description", "a refactor keeps the CLI", "--step", "s", "--verify",
       "python -m app c1 1")  # fmt: skip
    git_ok(scaffold, "add", "-A")
    git_ok(scaffold, "commit", "-q", "-m", "The CLI and its features' tests")
    ok(scaffold, "claim", "F000")
    ok(scaffold, "finish", "-m", "the environment builds")
    for k in range(1, COUNT + 1):
        assert shiftkit(scaffold, "claim", f"F{k:03d}", env=env).returncode == 0
        done = shiftkit(scaffold, "finish", "-m", f"c{k} works", env=env)
        assert done.returncode == 0, done.output
    return scaffold


def test_one_command_re_verifies_its_feature_and_the_parser_all(
    scaffold: Path, newer_python: dict[str, str]
) -> None:
    project = team_project(scaffold, newer_python)
    # (every command with the verifiers' Python: a claim's start check re-measures some)
    assert shiftkit(project, "claim", f"F{COUNT + 1:03d}", env=newer_python).returncode == 0
    edit = ("    return sum(numbers) + 7\n", "    return 7 + sum(numbers)\n")
    assert finish_editing(project, "app/cli.py", *edit, newer_python) == ["F007"]
    ok(project, "add", "--description", "the parser is faster", "--step", "s", "--verify",
       "python -m app c2 1")  # fmt: skip
    git_ok(project, "commit", "-q", "-am", "A feature for the parser")
    assert shiftkit(project, "claim", f"F{COUNT + 2:03d}", env=newer_python).returncode == 0
    edit = ("[int(a) for a in argv[1:]]", "list(map(int, argv[1:]))")
    every = [f"F{k:03d}" for k in range(1, COUNT + 2)]
    assert finish_editing(project, "app/cli.py", *edit, newer_python) == every


def test_at_file_level_one_command_re_verifies_all(
    scaffold: Path, newer_python: dict[str, str]
) -> None:
    files = {**newer_python, "SHIFTKIT_BLOCKS": "off"}
    project = team_project(scaffold, files)
    assert shiftkit(project, "claim", f"F{COUNT + 1:03d}", env=files).returncode == 0
    edit = ("    return sum(numbers) + 7\n", "    return 7 + sum(numbers)\n")
    assert finish_editing(project, "app/cli.py", *edit, files) == [
        f"F{k:03d}" for k in range(1, COUNT + 1)
    ]
