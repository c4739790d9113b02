"""What a verifier's own report says (decision record 0051): whether a command runs pytest, so
shiftkit can ask it for a JUnit XML report; that report, read; and why a run that exited 0 is
still no pass — it ran no test, skipped or xfailed one, or deselected some."""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Collection
from typing import NamedTuple

from shiftkit.core.words import counted

REPORT_LIMIT = 64 * 1024 * 1024  # bytes of a report read, at most (a larger one is refused)

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")
_PYTEST = ("pytest", "py.test")
# `TOOL run pytest ...`: runners that start a program in the project's environment.
_RUN_PREFIXES = ("uv", "poetry", "pdm", "hatch", "pipenv", "rye")
_PYTHON_OPTIONS_WITH_VALUE = ("-W", "-X", "-Q")


def _words(command: str) -> list[str] | None:
    """The shell words of ``command`` when it is a plain list of commands joined by `&&`
    (operators as words of their own), else None: anything else the shell would read
    (comments, substitutions, redirections, pipes, newlines) keeps it unrecognised."""
    if any(mark in command for mark in ("\n", "`", "$(", "\\")):
        return None
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        words = list(lexer)
    except ValueError:  # an unclosed quote
        return None
    if any(word.startswith("#") for word in words):
        return None
    return words


def _last_command(command: str) -> list[str] | None:
    words = _words(command)
    if not words:
        return None
    segments: list[list[str]] = [[]]
    for word in words:
        if word == "&&":
            segments.append([])
        elif set(word) <= set("();<>|&"):
            return None  # another operator: `;`, `|`, `||`, `>`, `&`, a subshell
        else:
            segments[-1].append(word)
    return segments[-1] or None


def runs_pytest(command: str) -> bool:
    """Whether the last command of ``command`` (after any `cd DIR &&`-like steps) is pytest:
    `pytest`, `py.test`, `python -m pytest` (any python, any path), optionally after variable
    assignments, `env`, or `uv|poetry|pdm|hatch|pipenv|rye run`; so that an argument
    appended to ``command`` is one of pytest's. A `--` among its arguments, or any shell
    syntax beyond `&&`, keeps it unrecognised."""
    words = _last_command(command)
    if words is None or "--" in words:
        return False
    rest = _after_prefixes(words)
    if not rest:
        return False
    program = posixpath.basename(rest[0])
    if program in _PYTEST:
        return True
    if not _PYTHON.fullmatch(program):
        return False
    options = iter(rest[1:])
    for word in options:
        if word in ("-m", "-mpytest"):
            return word == "-mpytest" or next(options, "") == "pytest"
        if word in _PYTHON_OPTIONS_WITH_VALUE:
            next(options, "")
        elif not word.startswith("-") or word.startswith("-c"):
            return False  # a script, or `-c CODE`
    return False


def _pytest_arguments(command: str) -> list[str]:
    """The words after `pytest` (or `python -m pytest`) in ``command`` (`runs_pytest`'s)."""
    if not runs_pytest(command):
        return []
    rest = _after_prefixes(_last_command(command) or [])
    if posixpath.basename(rest[0]) in _PYTEST:
        return rest[1:]
    for n, word in enumerate(rest):
        if word == "-mpytest":
            return rest[n + 1 :]
        if word == "-m":
            return rest[n + 2 :]
    return []


def _after_prefixes(words: list[str]) -> list[str]:
    rest = list(words)
    while rest and _ASSIGNMENT.match(rest[0]):
        rest.pop(0)
    if rest and rest[0] == "env":
        rest.pop(0)
        while rest and _ASSIGNMENT.match(rest[0]):
            rest.pop(0)
    if len(rest) > 1 and posixpath.basename(rest[0]) in _RUN_PREFIXES and rest[1] == "run":
        rest = rest[2:]
    return rest


def with_report(command: str, report: str) -> str:
    """``command`` (one `runs_pytest` accepts) asking pytest for a JUnit XML report at
    ``report``, in the family that records each test's file."""
    return f"{command} {shlex.quote('--junitxml=' + report)} -o junit_family=xunit1"


# -- the report -------------------------------------------------------------------------------


class Report(NamedTuple):
    """What a JUnit XML report lists: its test cases' names, and those skipped (with "(xfailed)"
    for pytest's expected failures) or failed."""

    cases: int
    skipped: tuple[str, ...]
    failed: tuple[str, ...]
    # each skipped test's (name shown in `skipped`, its file, its classname, its name)
    skips: tuple[tuple[str, str, str, str], ...] = ()


class BadReport(ValueError):
    """A report that cannot be read as JUnit XML (its one-line reason)."""


def read_report(text: str) -> Report:
    """A JUnit XML report read with the standard library's parser. A document type (and with it
    every entity definition, external or expanding) is refused before parsing, so nothing the
    report names is fetched and nothing expands; the size is bounded by the reader."""
    import xml.etree.ElementTree as ElementTree

    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise BadReport("it declares a document type (shiftkit reads no DTD or entities)")
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise BadReport(f"it is not well-formed XML ({exc})") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise BadReport(f"its top element is <{root.tag[:40]}>, not <testsuites> or <testsuite>")
    cases = 0
    skips: list[tuple[str, str, str, str]] = []
    failed_names: list[str] = []
    for case in root.iter("testcase"):
        cases += 1
        name = _case_name(case.attrib)
        for child in case:
            if child.tag == "skipped":
                xfail = child.get("type") == "pytest.xfail"
                shown = name + (" (xfailed)" if xfail else "")
                got = case.attrib.get
                skips.append((shown, got("file", ""), got("classname", ""), got("name", "")))
                break
            if child.tag in ("failure", "error"):
                failed_names.append(name)
                break
    return Report(cases, tuple(s[0] for s in skips), tuple(failed_names), tuple(skips))


def _case_name(attributes: dict[str, str]) -> str:
    name = attributes.get("name", "?")
    where = attributes.get("file") or attributes.get("classname") or ""
    return f"{where}::{name}" if where else name


# -- the verdict ---------------------------------------------------------------------------------

# pytest's last line: "=== 3 passed, 1 deselected in 0.12s ===" (or without the rule, under -q).
_SUMMARY = re.compile(
    r"^=*\s*((?:no tests ran|\d+ [a-z]+)(?:, \d+ [a-z]+)*) in \d+(?:\.\d+)?s\b.*$", re.MULTILINE
)
_DESELECTED = re.compile(r"\b(\d+) deselected\b")


def deselected(output: str) -> int:
    """How many tests pytest's summary line (the last in ``output``) says were deselected:
    by `-k`/`-m`/`--deselect`, an `addopts` setting or a plugin's hook. Under `-qq`, or
    without pytest's terminal reporter, there is no such line: 0."""
    lines = _SUMMARY.findall(output)
    if not lines:
        return 0
    found = _DESELECTED.search(lines[-1])
    return int(found.group(1)) if found else 0


def _listed(names: tuple[str, ...]) -> str:
    shown = ", ".join(names[:3])
    return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def refusal(
    report: Report, output: str, declared: Collection[str] = (), selects: bool = False
) -> str | None:
    """Why a verifier that exited 0 with ``report`` (and printed ``output``) did not pass, in
    one line; None when it ran at least one test and every test it lists passed. ``declared``:
    the skipped tests whose own source marks them so (`core.declared`: the person's choice,
    counted as written); ``selects``: the command as the person wrote it deselects tests
    (`person_selects`)."""
    if report.failed:
        return (
            f"the verifier's report lists {counted(len(report.failed), 'failing test')}: "
            f"{_listed(report.failed)}"
        )
    skipped = tuple(name for name in report.skipped if name not in declared)
    if skipped:
        return f"the verifier skipped {counted(len(skipped), 'test')}: {_listed(skipped)}"
    if report.cases == len(report.skipped):
        return "the verifier ran no test"
    dropped = 0 if selects else deselected(output)
    if dropped:
        return f"the verifier deselected {counted(dropped, 'test')}"
    return None


_SELECTING = ("-k", "-m", "--deselect")


def person_selects(command: str) -> bool:
    """Whether ``command`` as written chooses which tests run (`-k`, `-m`, `--deselect`):
    the tests it leaves out are the person's choice."""
    words = _pytest_arguments(command)
    return any(
        word in _SELECTING
        or word.startswith(("--deselect=", "-m=", "-k="))
        or (len(word) > 2 and word[:2] in ("-k", "-m") and not word.startswith("--"))
        for word in words
    )
