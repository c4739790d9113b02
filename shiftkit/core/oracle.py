"""A feature's oracle: the files its verifier judges by (issue 26 item 1; decision record 0048).

Declared on the feature (`oracle`, paths or globs, part of its definition), else the project's
default (`oracle` in `.shiftkit.toml`), and always what the verify command shows safely: a
pytest run's path arguments (a file, or a folder's test and conftest files), its `-c` file
and `-p` plugins, and a script a command runs (`./check.sh`, `python tests/check.py`). A
pytest verifier also judges by the conftest files and runner settings on the way from its
paths to the root, and by a module at the root that shadows pytest.

Pure: strings in, values out.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from typing import NamedTuple

# pytest's options that take the next word as their value.
_VALUED = frozenset(
    {
        "-k",
        "-m",
        "-p",
        "-c",
        "-o",
        "-W",
        "-n",
        "-r",
        "--rootdir",
        "--confcutdir",
        "--basetemp",
        "--junitxml",
        "--junit-xml",
        "--junit-prefix",
        "--deselect",
        "--ignore",
        "--ignore-glob",
        "--maxfail",
        "--tb",
        "--durations",
        "--durations-min",
        "--log-level",
        "--log-format",
        "--log-file",
        "--log-file-level",
        "--log-cli-level",
        "--override-ini",
        "--config-file",
        "--inifile",
        "--import-mode",
        "--cov",
        "--cov-report",
        "--cov-config",
        "--capture",
        "--color",
        "--code-highlight",
        "--pastebin",
        "--last-failed-no-failures",
        "--timeout",
        "--dist",
        "--numprocesses",
        "--maxprocesses",
        "--tx",
        "--reruns",
        "--randomly-seed",
        "--show-capture",
        "--report-log",
        "",
    }
)
_PYTHON = re.compile(r"python(?:\d+(?:\.\d+)?)?(?:\.exe)?")
_WRAPPERS = {"env", "exec", "command", "nice", "nohup", "time", "xvfb-run"}
_RUNNERS = {"uv", "poetry", "pipenv", "hatch", "pdm", "rye"}  # `X run ...`
_OPERATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")", ";;", "|&"})
_PLAIN = re.compile(r"[^'\"\\$`;&|()<>#*?\[\]{}~!\n]*")
_REDIRECTS = re.compile(r"^\d*(?:>>?|<|>&|<&|&>>?)$")


class Oracle(NamedTuple):
    """``patterns``: paths and globs whose files are the oracle; ``folders``: where a
    conftest.py or a runner settings file counts as a change of it (pytest: the folders of its
    paths and every folder above them, "" the root); ``within``: folders any conftest.py
    under which counts; ``pytest``: the verifier runs pytest (a module at the root that
    shadows it counts)."""

    patterns: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()
    within: tuple[str, ...] = ()
    pytest: bool = False


def oracle_of(verify: str | None, declared: Sequence[str], default: Sequence[str] = ()) -> Oracle:
    """The oracle of a feature whose verify command is ``verify`` (the effective one), with
    its own ``declared`` list or else the project's ``default``."""
    inferred, pytest = infer(verify or "")
    own = [p or "**" for p in map(clean, declared or default) if p is not None]
    patterns = list(dict.fromkeys([*own, *inferred]))
    if not pytest:
        return Oracle(tuple(patterns))
    folders: dict[str, None] = {"": None}
    within: dict[str, None] = {}
    for pattern in patterns:
        base = literal_base(pattern)
        if base != pattern or is_folder_glob(pattern):
            within[base] = None
        else:
            base = posixpath.dirname(base)
        for folder in ancestors(base):
            folders[folder] = None
    return Oracle(tuple(patterns), tuple(folders), tuple(within), True)


def clean(path: str) -> str | None:
    """A project-relative path as git names it ("" the root; None: outside the project)."""
    text = path.strip().replace("\\", "/")
    if not text or text.startswith("/"):
        return None
    normal = posixpath.normpath(text)
    if normal == ".":
        return ""
    return None if normal == ".." or normal.startswith("../") else normal


def literal_base(pattern: str) -> str:
    """The folder part of a glob before its first wildcard (the pattern itself when it has
    none)."""
    match = re.search(r"[*?\[]", pattern)
    if match is None:
        return pattern
    return pattern[: match.start()].rpartition("/")[0]


def is_folder_glob(pattern: str) -> bool:
    return pattern.endswith("/**") or pattern == "**"


def ancestors(folder: str) -> list[str]:
    """``folder`` and every folder above it, up to the root ("")."""
    found = []
    while folder:
        found.append(folder)
        folder = posixpath.dirname(folder)
    return [*found, ""]


def infer(command: str) -> tuple[list[str], bool]:
    """What the verify command shows of its oracle: (paths and globs, runs pytest)."""
    if _PLAIN.fullmatch(command):
        words = command.split()  # (no quote, escape or operator: 5,000 verifiers are cheap)
    else:
        import shlex

        try:
            lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>")
            lexer.whitespace_split = True
            words = list(lexer)
        except ValueError:
            return [], False  # (unbalanced quotes: the shell would refuse it too)
    found: list[str] = []
    pytest = False
    cwd: str | None = ""
    simple: list[str] = []
    for word in [*words, ";"]:
        if word not in _OPERATORS and not _REDIRECTS.match(word):
            simple.append(word)
            continue
        if _REDIRECTS.match(word):
            simple.append("\0redirect")
            continue
        argv = _strip_redirects(simple)
        simple = []
        if argv[:1] == ["cd"] and len(argv) == 2:
            cwd = clean(posixpath.join(cwd, argv[1])) if cwd is not None else None
            continue
        paths, runs_pytest = _one_command(argv)
        pytest = pytest or runs_pytest
        if cwd is None:
            continue  # (somewhere outside the project)
        for path in paths:
            joined = clean(posixpath.join(cwd, path))
            if joined:
                found.append(joined)
    return list(dict.fromkeys(found)), pytest


def _strip_redirects(words: list[str]) -> list[str]:
    argv, skip = [], False
    for word in words:
        if skip:
            skip = False
            continue
        if word == "\0redirect":
            skip = True
            continue
        argv.append(word)
    return argv


def _unwrap(argv: list[str]) -> list[str]:
    """The command under environment assignments and wrappers (`env`, `timeout 60`,
    `uv run`)."""
    while argv:
        head = posixpath.basename(argv[0])
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", argv[0]):
            argv = argv[1:]
        elif head in _WRAPPERS:
            argv = argv[1:]
            while argv and (argv[0].startswith("-") or "=" in argv[0]):
                argv = argv[1:]
        elif head == "timeout":
            argv = argv[1:]
            while argv and argv[0].startswith("-"):
                argv = argv[1:]
            argv = argv[1:]  # the duration
        elif head in _RUNNERS and argv[1:2] == ["run"]:
            argv = argv[2:]
            while argv and argv[0].startswith("-"):
                argv = argv[1:]
        else:
            break
    return argv


def _one_command(argv: list[str]) -> tuple[list[str], bool]:
    argv = _unwrap(argv)
    if not argv:
        return [], False
    head = posixpath.basename(argv[0])
    if head in ("pytest", "py.test"):
        return _pytest_paths(argv[1:]), True
    if _PYTHON.fullmatch(head):
        rest = argv[1:]
        while rest and rest[0].startswith("-") and not rest[0].startswith("-m"):
            if rest[0] == "-c":
                return [], False
            rest = rest[2:] if rest[0] in ("-W", "-X") else rest[1:]
        if rest[:2] in (["-m", "pytest"], ["-m", "py.test"]) or rest[:1] == ["-mpytest"]:
            return _pytest_paths(rest[2:] if rest[0] == "-m" else rest[1:]), True
    # (a script the command runs is not inferred: `./init.sh smoke` is the code its feature
    # builds as much as its check; a project names such a script in `oracle`)
    return [], False


def _pytest_paths(args: list[str]) -> list[str]:
    """A pytest run's oracle paths: each path argument (a folder: its test and conftest files),
    the `-c` settings file, a `-p` plugin's module; no path argument: every test file."""
    found: list[str] = []
    positional = False
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--":
            continue
        if word.startswith("-") and word != "-":
            name, eq, value = word.partition("=")
            if not eq and name in _VALUED and index < len(args):
                value, index = args[index], index + 1
            elif not eq and len(name) > 2 and name[:2] in ("-c", "-p") and name[1] != "-":
                value = name[2:]  # (`-cfile`, `-pplugin`)
                name = name[:2]
            if name in ("-c", "--config-file", "--inifile") and value:
                found.append(value)
            elif name == "-p" and value and not value.startswith("no:"):
                module = value.replace(".", "/")
                found += [f"{module}.py", f"{module}/**"]
            continue
        positional = True
        path = word.split("::", 1)[0]
        if not path:
            continue
        if re.search(r"\.\w+$", posixpath.basename(path)):
            found.append(path)
        else:
            found += _folder_tests(path)
    if not positional:
        found += _folder_tests(".")
    return found


def _folder_tests(folder: str) -> list[str]:
    """The files pytest collects from a folder by default, and the conftest files in it."""
    base = clean(folder)
    prefix = "" if not base else f"{base}/"
    return [f"{prefix}**/test_*.py", f"{prefix}**/*_test.py", f"{prefix}**/conftest.py"]
