"""A run that executes no test, or skips, xfails or deselects one, is no pass (issue 26 item 2;
decision record 0051): shiftkit asks pytest for its own JUnit XML report and reads it, and
reads the report any other runner writes where the `junit` setting says. Each shortcut of the
red team is tried on a real pytest project, through `verify`, the commit hooks, `finish`, and a
fresh clone's `audit --reverify --isolated` and `check --isolated`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import (
    add_log_entry,
    by_id,
    edit_list,
    flip,
    git,
    git_ok,
    implement,
    ok,
    shiftkit,
    write,
)

from shiftkit.core import config, verdict
from shiftkit.core.errors import BadInput

# -- recognising pytest -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "pytest",
        "pytest -q tests/test_add.py",
        "py.test -x",
        "python -m pytest -q -p no:cacheprovider tests/test_add.py",
        "python3 -m pytest tests",
        "python3.12 -B -W ignore -m pytest",
        "/opt/venv/bin/python -mpytest",
        ".venv/bin/pytest -k 'add and not slow'",
        "PYTHONPATH=src pytest tests",
        "env PYTHONHASHSEED=0 pytest",
        "uv run pytest -q",
        "poetry run python -m pytest",
        "cd sub && python -m pytest -q",
        "./init.sh && pytest tests/x.py",
    ],
)
def test_pytest_commands_are_recognised(command: str) -> None:
    assert verdict.runs_pytest(command)


@pytest.mark.parametrize(
    "command",
    [
        "",
        "true",
        "test -f x",
        "python script.py pytest",
        "python -c 'import pytest'",
        "pytest -q | tail -1",  # the appended option would go to tail
        "pytest -q > out.txt",
        "pytest -q; true",
        "pytest || true",
        "pytest -q 2>&1",
        "pytest && true",  # the last command is not pytest
        "pytest -- tests",  # an appended option would be a path
        "pytest # a comment swallows what follows",
        "pytest $(cat args)",
        "pytest 'unclosed",
        "sh -c 'pytest'",
        "make test",
        "python -m pytest_other",
        "pytest-watch",
        "pytest \\\n -q",
    ],
)
def test_other_commands_are_not_taken_for_pytest(command: str) -> None:
    assert not verdict.runs_pytest(command)


def test_the_report_option_is_appended_quoted() -> None:
    command = verdict.with_report("pytest -q", "/tmp/a b/junit.xml")
    assert command == "pytest -q '--junitxml=/tmp/a b/junit.xml' -o junit_family=xunit1"


# -- reading a report ---------------------------------------------------------------------------

PASSED = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="2">'
    '<testcase classname="tests.test_a" name="test_a" file="tests/test_a.py" />'
    '<testcase classname="tests.test_a" name="test_b" file="tests/test_a.py" />'
    "</testsuite></testsuites>"
)


def test_a_passing_report() -> None:
    report = verdict.read_report(PASSED)
    assert report == verdict.Report(2, (), ())
    assert verdict.refusal(report, "2 passed in 0.01s") is None


def test_skipped_xfailed_and_failed_cases_are_named() -> None:
    text = (
        '<testsuite tests="4">'
        '<testcase file="t.py" name="a"><skipped message="no" /></testcase>'
        '<testcase classname="t" name="b"><skipped type="pytest.xfail" /></testcase>'
        '<testcase file="t.py" name="c"><failure message="x" /></testcase>'
        '<testcase file="t.py" name="d" />'
        "</testsuite>"
    )
    report = verdict.read_report(text)
    assert report[:3] == (4, ("t.py::a", "t::b (xfailed)"), ("t.py::c",))
    assert verdict.refusal(report, "") == "the verifier's report lists 1 failing test: t.py::c"
    skipped_only = report._replace(failed=())
    assert verdict.refusal(skipped_only, "") == (
        "the verifier skipped 2 tests: t.py::a, t::b (xfailed)"
    )


def test_no_case_is_no_pass_and_deselection_is_read_from_the_summary() -> None:
    empty = verdict.read_report('<testsuites><testsuite tests="0" /></testsuites>')
    assert verdict.refusal(empty, "") == "the verifier ran no test"
    one = verdict.read_report(PASSED)
    assert verdict.deselected("==== 2 passed, 3 deselected in 0.12s ====\n") == 3
    assert verdict.deselected("2 passed, 1 deselected, 1 warning in 61.00s (0:01:01)") == 1
    # Only the last summary counts (an earlier line a test printed does not), and under -qq
    # there is none.
    assert verdict.deselected("1 passed, 9 deselected in 1s\n===== 2 passed in 0.1s =====") == 0
    assert verdict.deselected("..\n") == 0
    assert verdict.refusal(one, "2 passed, 1 deselected in 0.1s") == (
        "the verifier deselected 1 test"
    )


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (
            '<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaa">]><testsuite>&a;</testsuite>',
            "document type",
        ),
        ('<!DOCTYPE testsuite SYSTEM "http://example.invalid/x.dtd"><testsuite/>', "document"),
        ("<testsuite><testcase>", "not well-formed"),
        ("", "not well-formed"),
        ("<html><testcase name='a'/></html>", "top element is <html>"),
    ],
)
def test_a_report_that_is_not_plain_junit_xml_is_refused(text: str, fragment: str) -> None:
    with pytest.raises(verdict.BadReport, match=fragment):
        verdict.read_report(text)


# -- real pytest projects: each shortcut, through `verify` ----------------------------------------


def _skip_marker(calc: Path) -> None:
    test = calc / "tests" / "test_add.py"
    test.write_text("import pytest\n\n\n@pytest.mark.skip(reason='later')\n" + test.read_text())


def _xfail_marker(calc: Path) -> None:
    test = calc / "tests" / "test_add.py"
    test.write_text("import pytest\n\n\n@pytest.mark.xfail\n" + test.read_text())


def _module_skip(calc: Path) -> None:
    """With the other modules passing (one module alone collects nothing: pytest exits 5)."""
    test = calc / "tests" / "test_add.py"
    test.write_text(
        "import pytest\n\npytest.skip('not yet', allow_module_level=True)\n" + test.read_text()
    )
    implement(calc, "sub")
    implement(calc, "mul")
    edit_list(calc, lambda items: by_id(items, "F001").update(verify="python -m pytest -q tests"))


def _conftest_skips_everything(calc: Path) -> None:
    write(
        calc / "conftest.py",
        "import pytest\n\n\ndef pytest_collection_modifyitems(config, items):\n"
        "    for item in items:\n        item.add_marker(pytest.mark.skip(reason='flaky'))\n",
    )


def _conftest_deselects_one(calc: Path) -> None:
    """An `add` that is wrong for negative numbers, and a conftest that drops their test."""
    (calc / "calc" / "ops.py").write_text("def add(a, b):\n    return abs(a + b)\n")
    test = calc / "tests" / "test_add.py"
    test.write_text(
        test.read_text() + "\n\ndef test_add_negative():\n"
        "    from calc.ops import add\n    assert add(-2, -3) == -5\n"
    )
    write(
        calc / "conftest.py",
        "def pytest_collection_modifyitems(config, items):\n"
        "    dropped = [item for item in items if 'negative' in item.name]\n"
        "    items[:] = [item for item in items if item not in dropped]\n"
        "    config.hook.pytest_deselected(items=dropped)\n",
    )


def _settings_turn_the_report_off(calc: Path) -> None:
    write(calc / "pytest.ini", "[pytest]\naddopts = -p no:junitxml\n")


def _a_pytest_that_is_not_pytest(calc: Path) -> None:
    write(calc / "pytest.py", "print('1 passed in 0.01s')\n")


SHORTCUTS = {
    "skip marker": (_skip_marker, "the verifier skipped 1 test: tests/test_add.py::test_add"),
    "xfail marker": (_xfail_marker, "skipped 1 test: tests/test_add.py::test_add (xfailed)"),
    "module-level skip": (_module_skip, "the verifier skipped 1 test: tests/test_add.py"),
    "root conftest skips all": (_conftest_skips_everything, "the verifier skipped 1 test"),
    "conftest deselects": (_conftest_deselects_one, "the verifier deselected 1 test"),
    "addopts disables junitxml": (_settings_turn_the_report_off, "wrote no pytest report"),
    "shadowing pytest.py": (_a_pytest_that_is_not_pytest, "the verifier wrote no pytest report"),
}


@pytest.mark.parametrize("case", SHORTCUTS)
def test_a_shortcut_is_no_pass(calc: Path, case: str) -> None:
    """The feature stays broken; each shortcut makes pytest exit 0 (or, with the report
    turned off, fail for asking): `verify` says why in one line and saves the failure."""
    change, reason = SHORTCUTS[case]
    implement(calc, "add", good=case == "addopts disables junitxml")  # (blind, not broken)
    change(calc)
    result = shiftkit(calc, "verify", "F001")
    assert result.returncode == 1, result.output
    assert reason in result.stdout, result.output
    assert "Traceback" not in result.output
    saved = json.loads((calc / ".git" / "shiftkit" / "last-failure.json").read_text())
    assert saved["feature"] == "F001" and reason in saved["tail"]
    assert reason in saved["summary"]


def test_an_honest_run_still_passes(calc: Path) -> None:
    implement(calc, "add")
    result = shiftkit(calc, "verify", "F001")
    assert result.returncode == 0, result.output
    assert "F001: passed" in result.stdout


# -- through every judge ---------------------------------------------------------------------------


def _claimed_skip(calc: Path) -> None:
    ok(calc, "claim", "F001")
    implement(calc, "add", good=False)
    _skip_marker(calc)


def test_finish_and_the_commit_hook_refuse_a_skipped_test(calc: Path) -> None:
    _claimed_skip(calc)
    refused = shiftkit(calc, "finish", "-m", "add two numbers")
    assert refused.returncode == 1, refused.output
    # (the skip is in F001's committed oracle: finish's plan refuses it by rule 14 first)
    assert "rule 14" in refused.stderr and "tests/test_add.py" in refused.stderr
    verified = shiftkit(calc, "verify", "F001")
    assert verified.returncode != 0, verified.output
    assert "the verifier skipped 1 test" in verified.output
    # The flip by hand, committed through git: the pre-commit hook verifies it.
    flip(calc, "F001")
    git_ok(calc, "add", "-A")
    committed = git(calc, "commit", "-q", "-m", "F001: add two numbers")
    assert committed.returncode != 0, committed.output
    assert "the verifier skipped 1 test" in committed.output


def test_a_skipped_test_forced_past_every_hook_is_caught_in_ci(calc: Path, tmp_path: Path) -> None:
    """The shortcut committed with forged trailers past every hook: a fresh clone's
    re-verification (isolated, as in CI) and `check --isolated` refuse it — running the test
    as defined, without the skip (decision record 0081), against the broken code."""
    _claimed_skip(calc)
    ok(calc, "release")
    flip(calc, "F001", log=False)
    add_log_entry(calc, "F001")
    git_ok(calc, "add", "-A")
    tree = git_ok(calc, "write-tree").strip()
    message = (
        f"F001: add two numbers\n\nShiftkit-Feature: F001\nShiftkit-Verified: {tree}\n"
        f"Shiftkit-Claim: -\n"
    )
    git_ok(calc, "-c", "core.hooksPath=/dev/null", "commit", "-q", "--no-verify", "-m", message)
    clone = tmp_path / "ci"
    git_ok(tmp_path, "clone", "-q", str(calc), str(clone))
    audited = shiftkit(clone, "audit", "--reverify", "--isolated")
    assert audited.returncode == 1, audited.output
    restored = "oracle restored from"
    assert "F001 becomes passing but its verifier fails when re-run" in audited.stdout
    assert f"(exit 1; {restored}" in audited.stdout and "tests/test_add.py" in audited.stdout
    checked = shiftkit(clone, "check", "--no-demote", "--isolated")
    assert checked.returncode == 1, checked.output
    assert f"FAILED F001: exit 1; {restored}" in checked.output


# -- another runner's report: the `junit` setting ---------------------------------------------------

REPORTER = """\
import pathlib, sys
kind = pathlib.Path("kind.txt").read_text().strip()
cases = {
    "pass": '<testcase name="t" />',
    "skip": '<testcase name="t"><skipped /></testcase>',
    "none": "",
}
if kind != "missing":
    out = pathlib.Path("reports/junit.xml")
    out.parent.mkdir(exist_ok=True)
    out.write_text("<testsuite>" + cases[kind] + "</testsuite>")
print("all good")
"""


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("pass", None),
        ("skip", "the verifier skipped 1 test: t"),
        ("none", "the verifier ran no test"),
        ("missing", "the verifier wrote no JUnit XML report at reports/junit.xml"),
    ],
)
def test_the_junit_setting_reads_another_runners_report(
    scaffold: Path, kind: str, reason: str | None
) -> None:
    write(scaffold / "report.py", REPORTER)
    write(scaffold / ".gitignore", "reports/\n")
    config = scaffold / ".shiftkit.toml"
    config.write_text(config.read_text().replace('junit = ""', 'junit = "reports/junit.xml"'))
    ok(scaffold, "add", "--description", "d", "--step", "s", "--verify", "python report.py")
    git_ok(scaffold, "add", "-A")
    git_ok(scaffold, "commit", "-q", "-m", "Read the runner's report\n\nShiftkit-Override: junit")
    write(scaffold / "kind.txt", kind + "\n")
    # A stale report of an earlier run is never read: it is removed before the run.
    write(scaffold / "reports" / "junit.xml", "<testsuite><testcase name='old' /></testsuite>")
    result = shiftkit(scaffold, "verify", "F001")
    assert not (scaffold / "reports" / "junit.xml").exists()
    if reason is None:
        assert result.returncode == 0, result.output
    else:
        assert result.returncode == 1, result.output
        assert reason in result.stdout, result.output


@pytest.mark.parametrize("value", ["../x.xml", "/tmp/x.xml", "reports/", "a/../../x"])
def test_the_junit_setting_is_a_path_inside_the_project(scaffold: Path, value: str) -> None:
    with pytest.raises(BadInput, match="must be a path inside the project"):
        config.parse(f'[shiftkit]\njunit = "{value}"\n')
    assert config.parse('[shiftkit]\njunit = "reports/junit.xml"\n').junit == "reports/junit.xml"
    settings = scaffold / ".shiftkit.toml"
    settings.write_text(settings.read_text().replace('junit = ""', f'junit = "{value}"'))
    refused = git(scaffold, "commit", "-q", "-am", "A report outside\n\nShiftkit-Override: x")
    assert refused.returncode == 1 and "must be a path inside the project" in refused.output
