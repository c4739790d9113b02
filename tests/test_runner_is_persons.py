"""The runner's configuration is the person's (issue 35 item 4; decision record 0097), on real
pytest projects through the real CLI:

- a `*.dist-info` plugin a commit carries is not loaded (pytest's autoload is off; what a
  person installed still loads), while the honest project passes;
- re-verification runs the command exactly as written too: code that behaves only under the
  judge's report arguments fails `audit --reverify` and `check --isolated`;
- a person's own `xfail`/`skip` marks and `-k` selection count as written, while a skip the
  code causes at run time stays no pass.
"""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import forced_flip, git_ok, implement, ok, shiftkit, write

from shiftkit.edge import verify

PLUGIN_METADATA = "Metadata-Version: 2.1\nName: ci-tools\nVersion: 1.0\n"
PLUGIN = (
    "import pytest\n\n\n@pytest.hookimpl(tryfirst=True)\n"
    "def pytest_runtest_call(item):\n    item.runtest = lambda: None\n"
)


def clone(project: Path, tmp_path: Path) -> Path:
    target = tmp_path / "ci"
    git_ok(tmp_path, "clone", "-q", str(project), str(target))
    return target


def test_a_plugin_the_commit_carries_is_not_loaded(calc: Path, tmp_path: Path) -> None:
    implement(calc, "add", good=False)
    forced_flip(
        calc,
        "F001",
        "add two numbers",
        {
            "ci_tools-1.0.dist-info/METADATA": PLUGIN_METADATA,
            "ci_tools-1.0.dist-info/entry_points.txt": "[pytest11]\nci_tools = ci_tools_plugin\n",
            "ci_tools_plugin.py": PLUGIN,
        },
    )
    checked = shiftkit(clone(calc, tmp_path), "check", "--no-demote")
    assert checked.returncode == 1, checked.output
    assert "FAILED F001" in checked.stdout, checked.output


def test_the_honest_project_still_passes_with_the_persons_plugins(calc: Path) -> None:
    """The twin: the same feature done honestly passes; the plugins installed in the
    interpreter's environment (pytest-xdist, hypothesis's) still load."""
    ok(calc, "claim", "F001")
    implement(calc, "add")
    ok(calc, "finish", "-m", "add two numbers")
    checked = shiftkit(calc, "check", "--no-demote")
    assert checked.returncode == 0, checked.output


def test_the_persons_installed_plugins_load_and_the_trees_do_not(tmp_path: Path) -> None:
    """pytest's own header lists the plugins it loaded: the environment's (pytest-xdist, a
    test dependency) and not the one a folder of the tree carries."""
    write(tmp_path / "ci_tools-1.0.dist-info" / "METADATA", PLUGIN_METADATA)
    write(
        tmp_path / "ci_tools-1.0.dist-info" / "entry_points.txt",
        "[pytest11]\nci_tools = ci_tools_plugin\n",
    )
    write(tmp_path / "ci_tools_plugin.py", PLUGIN)
    write(tmp_path / "test_x.py", "def test_x():\n    assert False\n")
    git_ok(tmp_path, "init", "-q")  # (the metadata is the tree's: not yet added, then added)
    ran = verify.run_command(f"{sys.executable} -m pytest -p no:cacheprovider", tmp_path, 120)
    header = [line for line in ran.output.splitlines() if line.startswith("plugins:")]
    assert header and "xdist" in header[0], ran.output
    assert "ci-tools" not in header[0] and not ran.ok, ran.output


SNIFFING_ADD = (
    "import sys\n\n\ndef add(a, b):\n"
    "    # right only when the judge's report arguments are on the command line\n"
    "    return a + b if any('junit' in word for word in sys.argv) else 0\n"
)


def test_code_that_tells_the_judge_by_its_arguments_fails_reverification(
    calc: Path, tmp_path: Path
) -> None:
    ops = calc / "calc" / "ops.py"
    ops.write_text(ops.read_text() + SNIFFING_ADD)
    forced_flip(calc, "F001", "add two numbers")
    ci = clone(calc, tmp_path)
    audited = shiftkit(ci, "audit", "--reverify")
    assert audited.returncode == 1, audited.output
    assert "run exactly as written" in audited.stdout, audited.output
    checked = shiftkit(ci, "check", "--no-demote", "--isolated")
    assert checked.returncode == 1, checked.output
    assert "run exactly as written" in checked.output


def test_honest_code_passes_reverification_run_both_ways(calc: Path, tmp_path: Path) -> None:
    ok(calc, "claim", "F001")
    implement(calc, "add")
    ok(calc, "finish", "-m", "add two numbers")
    ci = clone(calc, tmp_path)
    audited = shiftkit(ci, "audit", "--reverify")
    assert audited.returncode == 0, audited.output
    checked = shiftkit(ci, "check", "--no-demote", "--isolated")
    assert checked.returncode == 0, checked.output


def define(project: Path, name: str, test: str, verify: str = "") -> str:
    """A new feature whose test file ``tests/test_NAME.py`` a person writes and commits."""
    write(project / "tests" / f"test_{name}.py", test)
    command = verify or f"python -m pytest -q -p no:cacheprovider tests/test_{name}.py"
    ok(project, "add", "--description", f"{name} works", "--step", "s", "--verify", command)
    git_ok(project, "add", "-A")
    git_ok(project, "commit", "-q", "-m", f"Define the {name} feature")
    return "F004"


STRICT_XFAIL = """import pytest

from calc.ops import add


def test_add_numbers():
    assert add(2, 3) == 5


@pytest.mark.xfail(strict=True, reason="strings are not numbers yet")
def test_add_strings():
    assert add("2", 3) == 5
"""


def test_a_persons_strict_xfail_counts_as_written(calc: Path) -> None:
    feature = define(calc, "strings", STRICT_XFAIL)
    ok(calc, "claim", feature)
    implement(calc, "add")
    finished = shiftkit(calc, "finish", "-m", "add numbers")
    assert finished.returncode == 0, finished.output
    assert shiftkit(calc, "check", "--no-demote").returncode == 0


RUNTIME_SKIP = """from calc.ops import add


def test_add_numbers():
    assert add(2, 3) == 5
"""


def test_a_skip_the_code_causes_is_still_no_pass(calc: Path) -> None:
    """The twin: the code under test calls `pytest.skip()` — no mark in the person's test."""
    feature = define(calc, "skipping", RUNTIME_SKIP)
    ok(calc, "claim", feature)
    ops = calc / "calc" / "ops.py"
    ops.write_text(
        ops.read_text() + "import pytest\n\n\ndef add(a, b):\n    pytest.skip('later')\n"
    )
    verified = shiftkit(calc, "verify", feature)
    assert verified.returncode == 1, verified.output
    assert "the verifier skipped 1 test" in verified.output


def test_an_xfail_mark_the_agent_adds_in_the_work_tree_is_no_pass(calc: Path) -> None:
    """The other twin: the mark is the agent's (not in the file HEAD holds)."""
    feature = define(calc, "strings", STRICT_XFAIL.replace("@pytest.mark.xfail", "# (none)"))
    ok(calc, "claim", feature)
    test = calc / "tests" / "test_strings.py"
    test.write_text(test.read_text().replace("# (none)", "@pytest.mark.xfail"))
    implement(calc, "add")
    verified = shiftkit(calc, "verify", feature)
    assert verified.returncode == 1, verified.output
    assert "skipped 1 test" in verified.output and "(xfailed)" in verified.output


SELECTED = """from calc.ops import add


def test_add_numbers():
    assert add(2, 3) == 5


def test_add_slow():
    assert add(10**6, 1) == 10**6 + 1
"""


def test_a_persons_own_selection_counts_as_written(calc: Path) -> None:
    command = "python -m pytest -q -p no:cacheprovider tests/test_selected.py -k 'not slow'"
    feature = define(calc, "selected", SELECTED, command)
    ok(calc, "claim", feature)
    implement(calc, "add")
    finished = shiftkit(calc, "finish", "-m", "add numbers")
    assert finished.returncode == 0, finished.output
