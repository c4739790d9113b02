"""The guard on one shell line: each simple command is unwrapped (`env`, `sudo`, `timeout`,
`xargs`, ...), its environment checked, and it is judged by what it runs: shells and `eval`
read again (to `MAX_DEPTH`), git, `find`, `export`, and the programs that write files."""

from __future__ import annotations

import os
import re

from shiftkit.core.guard_git import check_git
from shiftkit.core.guard_options import parse_options
from shiftkit.core.guard_paths import USE_SHIFTKIT, path_reason
from shiftkit.core.guard_programs import (
    INTERPRETERS,
    check_chmod,
    check_interpreter,
    check_pre_commit,
    check_shiftkit,
    check_writers,
)
from shiftkit.core.guard_shell import ASSIGNMENT, Simple, scan, simple_commands, split

MAX_DEPTH = 8  # nested `sh -c`, `$(...)`, `eval`: deeper than this is denied, not parsed


def check_command(command: str, features_name: str = "features.json") -> str | None:
    """Why this shell command must not run, or None."""
    return _check_line(command, features_name, 0)


def _check_line(command: str, features_name: str, depth: int) -> str | None:
    if depth > MAX_DEPTH:
        return (
            f"this command nests shells (`sh -c`, `$(...)`, `eval`) more than {MAX_DEPTH} "
            f"deep, too deep to check; run the inner command directly"
        )
    scanned = scan(command)
    for body in scanned.substitutions:
        reason = _check_line(body, features_name, depth + 1)
        if reason:
            return reason
    output: str | None = None
    for simple in simple_commands(scanned.line, scanned.heredocs):
        stdin = simple.stdin if simple.stdin is not None else output if simple.piped else None
        reason = _check_simple(simple, stdin, features_name, depth)
        if reason:
            return reason
        output = _output_of(simple.words, stdin)
    return None


def _output_of(words: list[str], stdin: str | None) -> str | None:
    """What a simple command prints, when that is plain: `echo`/`printf` words, `cat` stdin."""
    program = os.path.basename(words[0]) if words else ""
    if program in {"echo", "printf"}:
        return " ".join(word for word in words[1:] if word not in {"-e", "-n", "-E"})
    return stdin if program == "cat" and len(words) == 1 else None


def _check_simple(simple: Simple, stdin: str | None, features_name: str, depth: int) -> str | None:
    reason = path_reason(simple.writes, "a shell redirection", features_name)
    if reason:
        return reason
    env, argv = _unwrap(simple.words, stdin if simple.piped else None)
    reason = _check_environment(env, argv)
    if reason or not argv:
        return reason
    return _check_argv(argv, stdin, features_name, depth)


# Wrappers that run the rest of their words as a command: short options taking a value,
# long options taking a value, and how many plain words they take before the command.
WRAPPERS: dict[str, tuple[str, tuple[str, ...], int]] = {
    "env": ("uCS", ("--unset", "--chdir", "--split-string"), 0),
    "sudo": (
        "ugCDhprtTUc",
        (
            "--user",
            "--group",
            "--close-from",
            "--chdir",
            "--host",
            "--prompt",
            "--role",
            "--type",
            "--command-timeout",
            "--other-user",
        ),
        0,
    ),
    "doas": ("uC", (), 0),
    "timeout": ("sk", ("--signal", "--kill-after"), 1),
    "nice": ("n", ("--adjustment",), 0),
    "ionice": ("cnpPu", ("--class", "--classdata", "--pid", "--pgid", "--uid"), 0),
    "stdbuf": ("ioe", ("--input", "--output", "--error"), 0),
    "xargs": (
        "adEILnPs",
        (
            "--arg-file",
            "--delimiter",
            "--eof",
            "--replace",
            "--max-lines",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--process-slot-var",
        ),
        0,
    ),
    "command": ("", (), 0),
    "builtin": ("", (), 0),
    "exec": ("a", (), 0),
    "nohup": ("", (), 0),
    "setsid": ("", (), 0),
    "time": ("f", ("--format", "--output"), 0),
    "chronic": ("", (), 0),
    "unbuffer": ("", (), 0),
}
KEYWORDS = {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}"}


def _unwrap(words: list[str], piped: str | None) -> tuple[dict[str, str], list[str]]:
    """Variable assignments and wrappers looked through: (environment, the command run)."""
    env: dict[str, str] = {}
    index = 0
    words = list(words)
    while index < len(words):  # each round drops a word, a wrapper, or `env -S` quoting
        word = words[index]
        assignment = re.match(ASSIGNMENT, word)
        if assignment:
            env[assignment.group(1)] = assignment.group(2)
            index += 1
            continue
        name = os.path.basename(word)
        if name in KEYWORDS:
            index += 1
            continue
        if name not in WRAPPERS:
            break
        values, long_values, plain = WRAPPERS[name]
        rest = words[index + 1 :]
        options = parse_options(rest, values, "", long_values, first_positional_ends=True)
        command = options.positional[plain:]
        if name == "env" and command[:1] == ["-"]:
            command = command[1:]
        split_string = options.value("-S", "--split-string")
        if split_string is not None:
            command = split(split_string) + command
        if name == "xargs" and piped:
            command, piped = command + split(piped), None
        words, index = command, 0
    return env, words[index:]


COMMITTERS = {"git", "pre-commit", "shiftkit", ""}


def _env_reason(name: str, how: str) -> str | None:
    if name == "SKIP":
        return f"{how} SKIP tells pre-commit to skip hooks; {USE_SHIFTKIT}"
    if name == "PRE_COMMIT_ALLOW_NO_CONFIG":
        return (
            f"{how} PRE_COMMIT_ALLOW_NO_CONFIG lets commits through without hooks; {USE_SHIFTKIT}"
        )
    if name.startswith("GIT_CONFIG") and name != "GIT_CONFIG_NOSYSTEM":
        return (
            f"{how} {name} can set git config such as core.hooksPath and point git away "
            f"from the hooks; {USE_SHIFTKIT}"
        )
    return None


def _check_environment(env: dict[str, str], argv: list[str]) -> str | None:
    program = os.path.basename(argv[0]) if argv else ""
    for name in env:
        if name == "PRE_COMMIT_ALLOW_NO_CONFIG" or program in COMMITTERS:
            reason = _env_reason(name, "setting")
            if reason:
                return reason
    return None


def _check_argv(argv: list[str], stdin: str | None, features_name: str, depth: int) -> str | None:
    program = os.path.basename(argv[0])
    args = argv[1:]
    if program in {"sh", "bash", "zsh", "dash", "ksh", "ash", "busybox"}:
        return _check_shell(args, stdin, features_name, depth)
    if program == "eval":
        return _check_line(" ".join(args), features_name, depth + 1)
    if program == "git":
        return check_git(args, features_name, depth, _check_line)
    if program == "shiftkit":
        return check_shiftkit(args)
    if program == "pre-commit":
        return check_pre_commit(args)
    if program == "find":
        return _check_find(args, features_name, depth)
    if program == "chmod":
        return check_chmod(args, features_name)
    if program in {"export", "declare", "typeset", "local", "readonly"}:
        return _check_export(program, args)
    interpreter = re.sub(r"[\d.]+$", "", program)
    if interpreter in INTERPRETERS:
        reason = check_interpreter(interpreter, args, stdin, features_name, depth)
        if reason:
            return reason
    return check_writers(program, args, features_name)


def _check_shell(args: list[str], stdin: str | None, features_name: str, depth: int) -> str | None:
    if args[:1] == ["sh"] or args[:1] == ["bash"]:  # `busybox sh -c ...`
        args = args[1:]
    options = parse_options(args, "oO", "", ("--rcfile", "--init-file"), first_positional_ends=True)
    if "-c" in options.names():
        code = options.positional[0] if options.positional else ""
        return _check_line(code, features_name, depth + 1)
    if (not options.positional or "-s" in options.names()) and stdin:
        return _check_line(stdin, features_name, depth + 1)
    return None  # a script file: not read


def _check_export(program: str, args: list[str]) -> str | None:
    options = parse_options(args)
    exporting = program == "export" or any(name == "-x" for name in options.names())
    if not exporting or "-n" in options.names():
        return None
    for word in options.positional:
        reason = _env_reason(word.partition("=")[0], f"exporting (`{program}`)")
        if reason:
            return reason
    return None


def _check_find(args: list[str], features_name: str, depth: int) -> str | None:
    starts: list[str] = []
    while len(starts) < len(args) and not args[len(starts)].startswith(("-", "(", "!")):
        starts.append(args[len(starts)])
    names = [
        args[i + 1]
        for i, arg in enumerate(args[:-1])
        if arg in {"-name", "-path", "-wholename"} and not re.search(r"[*?\[]", args[i + 1])
    ]
    candidates = starts + names + [os.path.join(s, n) for s in starts for n in names]
    if "-delete" in args:
        reason = path_reason(candidates, "`find -delete`", features_name, removing=True)
        if reason:
            return reason
    for index, arg in enumerate(args):
        if arg not in {"-exec", "-execdir", "-ok", "-okdir"}:
            continue
        end = next((j for j in range(index + 1, len(args)) if args[j] in {";", "+"}), len(args))
        for candidate in candidates or ["{}"]:
            words = [word.replace("{}", candidate) for word in args[index + 1 : end]]
            reason = _check_simple(Simple(words, [], None, False), None, features_name, depth)
            if reason:
                return reason
    return None
