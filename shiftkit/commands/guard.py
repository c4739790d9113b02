"""`shiftkit guard`: Claude Code's PreToolUse hook. It denies the ways around the commit
hooks, person actions, and edits that would change a feature's status by hand. Best effort: the
commit hooks and `audit` are the real guards; this one only catches the attempt early, with the
reason and the shiftkit command to use instead (decisions 0008 and 0009).

Contract: exit 2 with the reason on stderr blocks the tool call; exit 0 allows it.

A shell line goes through three steps: `_scan` (quote-aware: drops comments, pulls out command
substitutions and here-documents), `shlex` (words and operators), `_simple_commands` (words,
redirections, stdin). Each simple command is unwrapped (`env`, `sudo`, `timeout`, `xargs`, ...)
and checked by what it runs.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

STATUS_FIELDS = ("passes", "attempts", "blocked")
MAX_DEPTH = 8  # nested `sh -c`, `$(...)`, `eval`: deeper than this is denied, not parsed

USE_SHIFTKIT = (
    "commit with `shiftkit finish` (verifies and commits) or a plain `git commit` "
    "so the hooks run; give up an attempt with `shiftkit revert`"
)
PERSON = "stop and ask a person"
INSTEAD = {
    "features": "status fields change only through `shiftkit finish`, `shiftkit revert` or a "
    "person's `shiftkit unblock`; new features are appended with `shiftkit add`",
    "hooks": f"the commit hooks are what make a shift's work count; {USE_SHIFTKIT}",
    "gitdir": f"it holds the commit hooks and the history; {USE_SHIFTKIT}",
    "gitconfig": f"git's config decides which hooks run, and changing it is a person's action; "
    f"{USE_SHIFTKIT}",
    "state": "shiftkit's local state (verify cache, claims) is written only by shiftkit: "
    "`shiftkit verify`, `shiftkit claim`, `shiftkit release`, `shiftkit finish`",
    "config": f"changing the configuration is a person's action; {PERSON}",
    "signers": f"it lists who may take person actions; changing it is a person's action; {PERSON}",
}
LABELS = {
    "hooks": ".git/hooks (the commit hooks)",
    "gitdir": ".git",
    "gitconfig": ".git/config",
    "state": ".git/shiftkit (shiftkit's local state)",
    "config": ".shiftkit.toml",
    "signers": ".shiftkit/allowed_signers",
}
TEMP_DIRS = ("/tmp/", "/var/tmp/", "/private/tmp/", "/dev/shm/", "/dev/null")

# -- reading a shell line ----------------------------------------------------------------------

SUBSTITUTION = "__shiftkit_substitution__"
HEREDOC = "__shiftkit_heredoc_"
HEREDOC_START = r"<<(-?)[ \t]*(?:'([^'\n]*)'|\"([^\"\n]*)\"|\\?([^\s;&|()<>'\"]+))"
OPERATOR = r"&>>|&>|>>|>\||>&|<<<|<<|<>|<&|>|<|\|\||\|&|&&|;;|\||&|;|\(|\)"
WRITE_REDIRECTS = {">", ">>", ">|", "&>", "&>>", "<>"}
PIPES = {"|", "|&"}
ASSIGNMENT = r"(?s)^([A-Za-z_][A-Za-z0-9_]*)\+?=(.*)$"


class Scan:
    """A shell line after `_scan` (plain classes: a NamedTuple costs milliseconds to import)."""

    __slots__ = ("heredocs", "line", "substitutions")

    def __init__(self, line: str, substitutions: list[str], heredocs: list[str]) -> None:
        self.line = line  # comments dropped, substitutions and here-documents as markers
        self.substitutions = substitutions  # bodies of `$(...)` and backticks: run too
        self.heredocs = heredocs  # here-document bodies, by marker number


class Simple:
    """One simple command: its words without redirections, the files its redirections write
    (`>`, `>>`, `&>`, `<>`...), its here-document or here-string, and whether it reads a pipe."""

    __slots__ = ("piped", "stdin", "words", "writes")

    def __init__(self, words: list[str], writes: list[str], stdin: str | None, piped: bool) -> None:
        self.words = words
        self.writes = writes
        self.stdin = stdin
        self.piped = piped


def _substitution(command: str, start: int) -> tuple[str, int]:
    """The body of the `$(...)` or backtick substitution at start, and the index after it."""
    if command[start] == "`":
        end = start + 1
        while end < len(command) and command[end] != "`":
            end += 2 if command[end] == "\\" else 1
        return command[start + 1 : end], end + 1
    depth, quote, index = 1, "", start + 2
    while index < len(command):
        char = command[index]
        if char == "\\" and quote != "'":
            index += 1
        elif quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "()":
            depth += 1 if char == "(" else -1
            if depth == 0:
                return command[start + 2 : index], index + 1
        index += 1
    return command[start + 2 :], len(command)


def _read_heredocs(
    command: str, index: int, pending: list[tuple[str, bool]], bodies: list[str]
) -> int:
    """Consume the here-document bodies that start at index; return the index after them."""
    for delimiter, strip_tabs in pending:
        lines: list[str] = []
        while index < len(command):
            end = command.find("\n", index)
            end = len(command) if end < 0 else end
            line, index = command[index:end], end + 1
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                break
            lines.append(line)
        bodies.append("\n".join(lines))
    pending.clear()
    return min(index, len(command))


def _scan(command: str) -> Scan:
    out: list[str] = []
    substitutions: list[str] = []
    bodies: list[str] = []
    pending: list[tuple[str, bool]] = []
    quote, index = "", 0
    while index < len(command):
        char = command[index]
        if quote == "'":
            quote = "" if char == "'" else quote
        elif char == "\\":
            if command[index + 1 : index + 2] != "\n":  # a line continuation disappears
                out.append(command[index : index + 2])
            index += 2
            continue
        elif char == "`" or command.startswith("$(", index):
            body, index = _substitution(command, index)
            substitutions.append(body)
            out.append(SUBSTITUTION)
            continue
        elif quote == '"':
            quote = "" if char == '"' else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or command[index - 1] in " \t\n;&|()<>"):
            end = command.find("\n", index)
            index = len(command) if end < 0 else end
            continue
        elif char == "\n":
            out.append(" ; ")
            index = _read_heredocs(command, index + 1, pending, bodies)
            continue
        elif command.startswith("<<<", index):
            out.append("<<<")
            index += 3
            continue
        elif command.startswith("<<", index):
            match = re.compile(HEREDOC_START).match(command, index)
            if match:
                delimiter = match.group(2) or match.group(3) or match.group(4) or ""
                pending.append((delimiter, match.group(1) == "-"))
                out.append(f" << {HEREDOC}{len(bodies) + len(pending) - 1} ")
                index = match.end()
                continue
        out.append(char)
        index += 1
    bodies.extend("" for _ in pending)
    return Scan("".join(out), substitutions, bodies)


def _tokens(line: str) -> list[str]:
    for closing in ("", '"', "'"):
        lexer = shlex.shlex(line + closing, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace = " \t\r\n"
        lexer.whitespace_split = True
        lexer.commenters = ""
        try:
            return list(lexer)
        except ValueError:  # an unclosed quote: try closing it, as the shell would wait for it
            continue
    return line.split()


def _items(line: str) -> list[tuple[str, bool]]:
    """Tokens as (text, is_operator), punctuation runs split into the shell's operators."""
    items: list[tuple[str, bool]] = []
    for token in _tokens(line):
        if token and all(char in ";&|()<>" for char in token):
            items.extend((op, True) for op in re.findall(OPERATOR, token))
        else:
            items.append((token, False))
    return items


def _simple_commands(line: str, heredocs: list[str]) -> list[Simple]:
    commands: list[Simple] = []
    current = Simple([], [], None, False)
    items = _items(line)
    index = 0
    while index < len(items):
        text, is_operator = items[index]
        index += 1
        if not is_operator:
            current.words.append(text)
            continue
        if "<" in text or ">" in text:
            operand = items[index][0] if index < len(items) and not items[index][1] else None
            index += 0 if operand is None else 1
            if current.words and current.words[-1].isdigit():
                current.words.pop()  # a file descriptor: `2>`, `1>>`
            _redirect(current, text, operand, heredocs)
            continue
        if current.words or current.writes:
            commands.append(current)
        current = Simple([], [], None, text in PIPES)
    if current.words or current.writes:
        commands.append(current)
    return commands


def _redirect(command: Simple, operator: str, operand: str | None, heredocs: list[str]) -> None:
    if operand is None:
        return
    if operator in WRITE_REDIRECTS or (
        operator == ">&" and not operand.isdigit() and operand != "-"
    ):
        command.writes.append(operand)
    elif operator == "<<" and operand.startswith(HEREDOC):
        number = operand[len(HEREDOC) :]
        if number.isdigit() and int(number) < len(heredocs):
            command.stdin = heredocs[int(number)]
    elif operator == "<<<":
        command.stdin = operand


def split_commands(command: str) -> list[list[str]]:
    """Simple commands of a shell line, as words (best effort: no expansion)."""
    scan = _scan(command)
    return [simple.words for simple in _simple_commands(scan.line, scan.heredocs) if simple.words]


# -- options -----------------------------------------------------------------------------------


class Options:
    """Parsed options: `given` as ("-n", None), ("--message", "x"), ("-m", "x"); positionals."""

    __slots__ = ("given", "positional")

    def __init__(self, given: list[tuple[str, str | None]], positional: list[str]) -> None:
        self.given = given
        self.positional = positional

    def names(self) -> list[str]:
        return [name for name, _ in self.given]

    def value(self, *names: str) -> str | None:
        return next((value for name, value in self.given if name in names), None)


def _parse_options(
    args: list[str],
    values: str = "",
    optional: str = "",
    long_values: tuple[str, ...] = (),
    first_positional_ends: bool = False,
) -> Options:
    """getopt-style: `values` are short options that take an argument (attached or next),
    `optional` take one only attached; long options in `long_values` (or an unambiguous
    abbreviation) take the next word unless written `--name=value`."""
    options = Options([], [])
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--":
            options.positional.extend(args[index:])
            break
        if arg.startswith("--"):
            name, equals, value = arg.partition("=")
            takes = not equals and len(name) > 3 and any(v.startswith(name) for v in long_values)
            if takes and index < len(args):
                value, index = args[index], index + 1
            options.given.append((name, value if equals or takes else None))
        elif arg.startswith("-") and len(arg) > 1:
            index = _short_cluster(arg, args, index, values, optional, options)
        else:
            options.positional.append(arg)
            if first_positional_ends:
                options.positional.extend(args[index:])
                break
    return options


def _short_cluster(
    arg: str, args: list[str], index: int, values: str, optional: str, options: Options
) -> int:
    for position, letter in enumerate(arg[1:], start=2):
        rest = arg[position:]
        if letter in values:
            if not rest and index < len(args):
                rest, index = args[index], index + 1
            options.given.append(("-" + letter, rest))
            return index
        if letter in optional:
            options.given.append(("-" + letter, rest or None))
            return index
        options.given.append(("-" + letter, None))
    return index


def _abbreviates(arg: str, option: str, shortest: int) -> bool:
    """git accepts any unambiguous prefix of a long option."""
    return len(arg) >= shortest and option.startswith(arg)


# -- paths -------------------------------------------------------------------------------------


def _git_kind(parts: list[str]) -> str | None:
    if len(parts) >= 2 and parts[0] == "worktrees":
        parts = parts[2:]
    if not parts:
        return "gitdir"
    if parts[0] in {"hooks", "shiftkit"}:
        return "hooks" if parts[0] == "hooks" else "state"
    if parts in (["config"], ["config.worktree"]):
        return "gitconfig"
    return None


def _path_kind(path: str, features_name: str) -> str | None:
    """Which protected file this shell word names, if any: 'features', 'hooks', 'gitdir',
    'gitconfig', 'state', 'config' or 'signers'. Relative paths count from the project root
    (or a subfolder: `../`); absolute paths by their ending, except in temporary folders."""
    text = path.strip()
    if not text or text.startswith(SUBSTITUTION):
        return None
    absolute = text.startswith(("/", "~", "$"))
    parts = [part for part in os.path.normpath(text).split("/") if part not in ("", ".")]
    while parts and parts[0] == ".." and not absolute:
        parts.pop(0)
    if ".git" in parts and (absolute or parts[0] == ".git"):
        kind = _git_kind(parts[parts.index(".git") + 1 :])
        if kind:
            return kind
    if absolute and (text + "/").startswith(TEMP_DIRS):
        return None
    if not absolute or len(parts) > 1:
        features = [p for p in os.path.normpath(features_name).split("/") if p not in ("", ".")]
        for kind, ending in (
            ("features", features),
            ("config", [".shiftkit.toml"]),
            ("signers", [".shiftkit", "allowed_signers"]),
            ("signers", [".shiftkit"]),
        ):
            if ending and parts[-len(ending) :] == ending and (absolute or parts == ending):
                return kind
    return None


def _label(kind: str, features_name: str) -> str:
    return features_name if kind == "features" else LABELS[kind]


def _path_reason(
    paths: list[str], how: str, features_name: str, removing: bool = False
) -> str | None:
    for path in paths:
        kind = _path_kind(path, features_name)
        if kind is None or (kind == "gitdir" and not removing):
            continue
        verb = "removes" if removing else "writes"
        label = _label(kind, features_name)
        named = path if os.path.normpath(path) == label else f"{path} ({label})"
        return f"{how} {verb} {named} by hand; {INSTEAD[kind]}"
    return None


def _into(target: str, sources: list[str]) -> list[str]:
    """What a copy, move or link writes: the target, and when it is a folder, each source's
    name inside it."""
    folder = target.endswith("/") or target.rstrip("/") in ("", ".", "..")
    folder = folder or _path_kind(target, "") in {"hooks", "gitdir", "state"}
    if not folder:
        return [target]
    return [target] + [os.path.join(target, os.path.basename(s.rstrip("/"))) for s in sources]


# -- checking a shell line ---------------------------------------------------------------------


def check_command(command: str, features_name: str = "features.json") -> str | None:
    """Why this shell command must not run, or None."""
    return _check_line(command, features_name, 0)


def _check_line(command: str, features_name: str, depth: int) -> str | None:
    if depth > MAX_DEPTH:
        return (
            f"this command nests shells (`sh -c`, `$(...)`, `eval`) more than {MAX_DEPTH} "
            f"deep, too deep to check; run the inner command directly"
        )
    scan = _scan(command)
    for body in scan.substitutions:
        reason = _check_line(body, features_name, depth + 1)
        if reason:
            return reason
    output: str | None = None
    for simple in _simple_commands(scan.line, scan.heredocs):
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
    reason = _path_reason(simple.writes, "a shell redirection", features_name)
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
        options = _parse_options(rest, values, "", long_values, first_positional_ends=True)
        command = options.positional[plain:]
        if name == "env" and command[:1] == ["-"]:
            command = command[1:]
        split = options.value("-S", "--split-string")
        if split is not None:
            command = _split(split) + command
        if name == "xargs" and piped:
            command, piped = command + _split(piped), None
        words, index = command, 0
    return env, words[index:]


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


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
        return _check_git(args, features_name, depth)
    if program == "shiftkit":
        return _check_shiftkit(args)
    if program == "pre-commit":
        return _check_pre_commit(args)
    if program == "find":
        return _check_find(args, features_name, depth)
    if program == "chmod":
        return _check_chmod(args, features_name)
    if program in {"export", "declare", "typeset", "local", "readonly"}:
        return _check_export(program, args)
    interpreter = re.sub(r"[\d.]+$", "", program)
    if interpreter in INTERPRETERS:
        reason = _check_interpreter(interpreter, args, stdin, features_name, depth)
        if reason:
            return reason
    return _check_writers(program, args, features_name)


def _check_shell(args: list[str], stdin: str | None, features_name: str, depth: int) -> str | None:
    if args[:1] == ["sh"] or args[:1] == ["bash"]:  # `busybox sh -c ...`
        args = args[1:]
    options = _parse_options(
        args, "oO", "", ("--rcfile", "--init-file"), first_positional_ends=True
    )
    if "-c" in options.names():
        code = options.positional[0] if options.positional else ""
        return _check_line(code, features_name, depth + 1)
    if (not options.positional or "-s" in options.names()) and stdin:
        return _check_line(stdin, features_name, depth + 1)
    return None  # a script file: not read


def _check_export(program: str, args: list[str]) -> str | None:
    options = _parse_options(args)
    exporting = program == "export" or any(name == "-x" for name in options.names())
    if not exporting or "-n" in options.names():
        return None
    for word in options.positional:
        reason = _env_reason(word.partition("=")[0], f"exporting (`{program}`)")
        if reason:
            return reason
    return None


def _check_shiftkit(args: list[str]) -> str | None:
    options = _parse_options(args, "", "", (), first_positional_ends=True)
    sub = options.positional[0] if options.positional else ""
    if sub in {"unblock", "override"}:
        return (
            f"`shiftkit {sub}` is a person's action, not an agent's; {PERSON} to run "
            f"`shiftkit {sub}` (record what is in the way with `shiftkit note`, or give up "
            f"the attempt with `shiftkit revert --reason`)"
        )
    if sub in {"claim", "release"} and "--steal" in options.positional[1:]:
        return (
            f"`shiftkit {sub} --steal` takes over another session's claim: a person's "
            f"action; {PERSON} to run `shiftkit {sub} --steal` once that session is gone, "
            f"and meanwhile take another feature with `shiftkit next`/`shiftkit claim`"
        )
    return None


def _check_pre_commit(args: list[str]) -> str | None:
    options = _parse_options(args, "c", "", ("--config",), first_positional_ends=True)
    if options.positional[:1] == ["uninstall"]:
        return f"`pre-commit uninstall` removes the commit hooks; {USE_SHIFTKIT}"
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
        reason = _path_reason(candidates, "`find -delete`", features_name, removing=True)
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


CHMOD_MODE = r"^(?:[0-7]{1,4}|(?:[ugoa]*[-+=][rwxXst]*)(?:,[ugoa]*[-+=][rwxXst]*)*)$"


def _disables(mode: str) -> bool:
    if mode.isdigit():
        return len(mode) >= 3 and not int(mode[-3]) & 1
    clauses = mode.split(",")
    return any(("-" in c and re.search(r"[rx]", c)) or ("=" in c and "x" not in c) for c in clauses)


def _check_chmod(args: list[str], features_name: str) -> str | None:
    words = [a for a in args if not a.startswith("--") and a not in {"-R", "-v", "-c", "-f"}]
    if not words or not re.match(CHMOD_MODE, words[0]) or not _disables(words[0]):
        return None
    for path in words[1:]:
        if _path_kind(path, features_name) in {"hooks", "gitdir"}:
            return (
                f"`chmod {words[0]}` on {path} disables the commit hooks (.git/hooks); "
                f"{INSTEAD['hooks']}"
            )
    return None


# -- programs that write files -----------------------------------------------------------------


def _check_writers(program: str, args: list[str], features_name: str) -> str | None:
    if program in {"rm", "unlink", "shred", "rmdir", "srm"}:
        options = _parse_options(args, "nsu" if program == "shred" else "")
        return _path_reason(options.positional, f"`{program}`", features_name, removing=True)
    if program in {"cp", "mv", "ln", "install", "rsync"}:
        return _check_copy(program, args, features_name)
    writes = _written(program, args)
    return _path_reason(writes, f"`{program}`", features_name)


def _check_copy(program: str, args: list[str], features_name: str) -> str | None:
    values = {"install": "tSmogZ", "rsync": "eBfT"}.get(program, "tS")
    options = _parse_options(args, values, "", ("--target-directory", "--suffix", "--mode"))
    sources = list(options.positional)
    if not sources:
        return None
    target = options.value("-t", "--target-directory")
    if target is None:
        target = sources.pop() if len(sources) > 1 or program != "ln" else "."
    if program == "mv":
        reason = _path_reason(sources, "`mv`", features_name, removing=True)
        if reason:
            return reason
    return _path_reason(_into(target, sources), f"`{program}`", features_name)


def _written(program: str, args: list[str]) -> list[str]:
    """Files a program writes in place, by its options (empty when it only reads)."""
    if program in {"tee", "sponge", "truncate"}:
        return _parse_options(args, "sr" if program == "truncate" else "").positional
    if program == "dd":
        return [arg[3:] for arg in args if arg.startswith("of=")]
    if program in {"sed", "gsed"}:
        options = _parse_options(args, "efl", "i", ("--expression", "--file", "--line-length"))
        in_place = any(n == "-i" or n.startswith("--i") for n in options.names())
        scripted = any(n in {"-e", "-f", "--expression", "--file"} for n in options.names())
        return options.positional[0 if scripted else 1 :] if in_place else []
    if program in {"perl", "ruby"}:
        options = _parse_options(args, "eErIx", "i0lMmCdD")
        if "-i" not in options.names():
            return []
        coded = any(n in {"-e", "-E"} for n in options.names())
        return options.positional[0 if coded else 1 :]
    if program in {"awk", "gawk"}:
        options = _parse_options(args, "fvi")
        in_place = options.value("-i") in {"inplace", "inplace.awk"}
        return options.positional[0 if options.value("-f") else 1 :] if in_place else []
    if program == "yq":
        options = _parse_options(args)
        in_place = any(n in {"-i", "--inplace"} for n in options.names())
        return options.positional[1:] if in_place else []
    return _written_by_tools(program, args)


def _written_by_tools(program: str, args: list[str]) -> list[str]:
    if program == "patch":
        options = _parse_options(args, "pioDBrFzVYg", "", ("--output", "--input"))
        return options.positional[:1] + [
            v for n, v in options.given if n in {"-o", "--output"} and v
        ]
    if program in {"curl", "wget"}:
        options = _parse_options(
            args,
            "oOdHXuAe" if program == "curl" else "OoaPe",
            "",
            ("--output", "--output-document", "--data", "--header"),
        )
        flag = {"curl": ("-o", "--output"), "wget": ("-O", "--output-document")}[program]
        return [v for n, v in options.given if n in flag and v]
    if program in {"ed", "ex", "vi", "vim", "nvim", "nano", "emacs", "pico"}:
        options = _parse_options(args, "cSuTsWwt", "", ("--cmd",))
        return [] if "-R" in options.names() else options.positional
    return []


# -- interpreters ------------------------------------------------------------------------------

# Per interpreter: the short options that give code, and all short options taking a value.
INTERPRETERS = {
    "python": ("c", "cmWXQ"),
    "pypy": ("c", "cmWX"),
    "node": ("ep", "eprC"),
    "nodejs": ("ep", "eprC"),
    "ruby": ("e", "erIECFx"),
    "perl": ("eE", "eEIMmx"),
    "php": ("r", "rfdcz"),
    "deno": ("", ""),
    "bun": ("e", "erp"),
}
WRITE_CODE = (
    r"""open\s*\([^)]*,\s*(?:mode\s*=\s*)?['"][^'"]*[wax+]"""
    r"""|mode\s*=\s*['"][^'"]*[wax+]|inplace\s*=\s*True"""
    r"""|\.write_(?:text|bytes)\s*\(|\.writelines?\s*\(|\.truncate\s*\(|\.unlink\s*\("""
    r"""|\.rename\s*\(|\bdump\s*\(|\bos\.(?:replace|rename|remove|unlink|truncate|open)\b"""
    r"""|\bshutil\.(?:copy\w*|move|rmtree)\b|writeFile|appendFile|createWriteStream"""
    r"""|\bfs\w*\.(?:promises\.)?(?:write|append|rename|copy|unlink|rm|truncate)"""
    r"""|\bFile\.(?:write|delete|rename)|\bFile\.open\s*\([^)]*['"][wa]|\bIO\.write"""
    r"""|\bFileUtils\.|file_put_contents|fopen\s*\([^)]*['"][wax]|['"]\+?>"""
)


def _mentioned(text: str, features_name: str) -> str | None:
    """The kind of protected file the text names, if any."""
    names = {
        "features": os.path.basename(features_name),
        "hooks": ".git/hooks",
        "gitconfig": ".git/config",
        "state": ".git/shiftkit",
        "config": ".shiftkit.toml",
        "signers": "allowed_signers",
    }
    return next((kind for kind, name in names.items() if name in text), None)


def _check_interpreter(
    name: str, args: list[str], stdin: str | None, features_name: str, depth: int
) -> str | None:
    code_letters, values = INTERPRETERS[name]
    options = _parse_options(
        args, values, "", ("--eval", "--print"), first_positional_ends=name in {"python", "pypy"}
    )
    module = options.value("-m") if name in {"python", "pypy"} else None
    if module == "shiftkit":
        return _check_shiftkit(options.positional)
    code_options = {"-" + letter for letter in code_letters} | {"--eval", "--print"}
    codes = [value or "" for option, value in options.given if option in code_options]
    if not codes and options.positional[:1] == ["eval"]:
        codes = options.positional[1:2]
    if not codes and module is None and options.positional[:1] in ([], ["-"]):
        codes = [stdin or ""]
    code = "\n".join(codes)
    kind = _mentioned(code + " " + " ".join(options.positional), features_name)
    if kind and re.search(WRITE_CODE, code):
        return (
            f"`{name}` code that opens {_label(kind, features_name)} for writing changes it "
            f"by hand; {INSTEAD[kind]}"
        )
    return None


# -- git ---------------------------------------------------------------------------------------

GIT_GLOBAL_VALUES = {
    "-C",
    "-c",
    "--config-env",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--attr-source",
    "--list-cmds",
}
# Per subcommand: short options taking a value, optional-attached ones, long ones taking one.
GIT_OPTIONS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "commit": (
        "mFcCt",
        "Su",
        (
            "--message",
            "--file",
            "--reuse-message",
            "--reedit-message",
            "--fixup",
            "--squash",
            "--author",
            "--date",
            "--template",
            "--cleanup",
            "--trailer",
            "--pathspec-from-file",
        ),
    ),
    "merge": (
        "mFsX",
        "S",
        ("--message", "--file", "--strategy", "--strategy-option", "--cleanup", "--into-name"),
    ),
    "pull": (
        "sXo",
        "S",
        (
            "--strategy",
            "--strategy-option",
            "--upload-pack",
            "--depth",
            "--deepen",
            "--shallow-since",
            "--shallow-exclude",
            "--server-option",
            "--recurse-submodules",
        ),
    ),
    "push": ("o", "", ("--push-option", "--repo", "--receive-pack", "--exec")),
    "am": (
        "pC",
        "S",
        (
            "--directory",
            "--exclude",
            "--include",
            "--patch-format",
            "--resolvemsg",
            "--quoted-cr",
            "--empty",
        ),
    ),
    "revert": ("m", "S", ("--mainline", "--strategy", "--strategy-option", "--cleanup")),
    "config": ("f", "", ("--file", "--blob", "--type", "--default", "--comment", "--value")),
    "update-ref": ("m", "", ("--message",)),
}
NO_VERIFY = {"commit", "merge", "am", "cherry-pick", "revert", "pull", "push"}
MOVES_HISTORY = {
    "rebase": "replays commits without the commit hooks",
    "cherry-pick": "commits without the pre-commit hook",
    "commit-tree": "makes commits without any hook",
    "filter-branch": "rewrites history without the commit hooks",
    "filter-repo": "rewrites history without the commit hooks",
    "replace": "swaps commits for others behind the hooks' back",
}


def _check_git(args: list[str], features_name: str, depth: int) -> str | None:
    index = 0
    while index < len(args) and args[index].startswith("-"):
        name, equals, value = args[index].partition("=")
        index += 1
        if name in GIT_GLOBAL_VALUES and not equals and index < len(args):
            value, index = args[index], index + 1
        if name in {"-c", "--config-env"}:
            key, _, setting = value.partition("=")
            reason = _git_setting(key, setting, f"`git {name} {key}=...`", features_name, depth)
            if reason:
                return reason
    if index >= len(args) or args[index + 1 : index + 2] in (["-h"], ["--help"]):
        return None
    sub, rest = args[index], args[index + 1 :]
    values, optional, long_values = GIT_OPTIONS.get(sub, ("", "", ()))
    options = _parse_options(rest, values, optional, long_values)
    if sub in MOVES_HISTORY:
        return _check_history(sub, options)
    reason = _check_no_verify(sub, options)
    return reason or _check_git_write(sub, options, features_name, depth)


def _check_no_verify(sub: str, options: Options) -> str | None:
    names = options.names()
    if sub in NO_VERIFY and any(_abbreviates(n, "--no-verify", 6) for n in names):
        return f"`git {sub} --no-verify` skips the commit hooks; {USE_SHIFTKIT}"
    if sub in {"commit", "am"} and "-n" in names:
        return f"`git {sub} -n` (--no-verify) skips the commit hooks; {USE_SHIFTKIT}"
    if sub == "commit" and any(_abbreviates(n, "--amend", 4) for n in names):
        return (
            f"`git commit --amend` rewrites a commit the hooks already judged; make a new "
            f"commit instead: {USE_SHIFTKIT}"
        )
    rebasing = [v for n, v in options.given if n == "-r" or _abbreviates(n, "--rebase", 5)]
    if sub == "pull" and rebasing and rebasing[-1] not in {"false", "no"}:
        return (
            f"`git pull --rebase` replays commits without the commit hooks; use "
            f"`git pull --no-rebase` (a merge) instead; {USE_SHIFTKIT}"
        )
    return None


def _check_history(sub: str, options: Options) -> str | None:
    names = options.names()
    if sub in {"rebase", "cherry-pick"} and names and set(names) <= {"--abort", "--quit"}:
        return None  # leaving a rebase or cherry-pick in progress changes no history
    if sub == "replace" and not options.positional and set(names) <= {"-l", "--list", "--format"}:
        return None
    return f"`git {sub}` {MOVES_HISTORY[sub]}; {USE_SHIFTKIT}" + (
        " (`--abort` is allowed)" if sub in {"rebase", "cherry-pick"} else ""
    )


def _check_git_write(sub: str, options: Options, features_name: str, depth: int) -> str | None:
    names = options.names()
    if sub == "config":
        return _check_git_config(options, features_name, depth)
    if sub == "update-index" and any(
        _abbreviates(n, "--skip-worktree", 4) or _abbreviates(n, "--assume-unchanged", 4)
        for n in names
    ):
        return (
            f"`git update-index --skip-worktree/--assume-unchanged` hides changes from the "
            f"commit hooks; {USE_SHIFTKIT}"
        )
    if sub == "update-ref":
        refs = options.positional[:1]
        if "--stdin" in names or (refs and not refs[0].startswith(SAFE_REFS)):
            where = "a claim" if refs and refs[0].startswith("refs/shiftkit/") else "a branch"
            return (
                f"`git update-ref` moves {where} without the hooks or shiftkit; claims change "
                f"through `shiftkit claim`/`shiftkit release`, branches through commits: "
                f"{USE_SHIFTKIT}"
            )
    if sub in {"rm", "mv"} and not {"-n", "--dry-run"} & set(names):
        return _path_reason(options.positional, f"`git {sub}`", features_name, removing=True)
    return None


SAFE_REFS = ("refs/tags/", "refs/remotes/", "refs/notes/")
CONFIG_READS = {
    "--get",
    "--get-all",
    "--get-regexp",
    "--get-urlmatch",
    "--list",
    "-l",
    "--get-color",
    "--get-colorbool",
}
CONFIG_WRITES = {
    "--add",
    "--replace-all",
    "--unset",
    "--unset-all",
    "--rename-section",
    "--remove-section",
    "--edit",
    "-e",
}
CONFIG_ACTIONS = {"get", "list", "set", "unset", "rename-section", "remove-section", "edit"}


def _check_git_config(options: Options, features_name: str, depth: int) -> str | None:
    names, words = set(options.names()), list(options.positional)
    action = words.pop(0) if words and words[0] in CONFIG_ACTIONS else ""
    if names & CONFIG_READS or action in {"get", "list"}:
        return None
    editing = action == "edit" or bool(names & {"--edit", "-e"})
    if not (editing or names & CONFIG_WRITES or action or len(words) >= 2):
        return None  # `git config KEY` reads
    if editing:
        return (
            f"`git config --edit` changes git's config by hand ({LABELS['gitconfig']}); "
            f"{INSTEAD['gitconfig']}"
        )
    key = words[0] if words else ""
    if names & {"--remove-section", "--rename-section"} or "section" in action:
        key += ".hookspath" if key.lower() == "core" else ".path"
    value = words[1] if len(words) > 1 else "true"
    return _git_setting(key, value, f"`git config {key}`", features_name, depth)


def _git_setting(key: str, value: str, how: str, features_name: str, depth: int) -> str | None:
    lowered = key.lower()
    if lowered == "core.hookspath":
        return (
            f"{how} sets core.hooksPath and points git away from the commit hooks; {USE_SHIFTKIT}"
        )
    if lowered.startswith(("include.", "includeif.")):
        return (
            f"{how} sets {key}, pulling in config that can redirect the hooks "
            f"(core.hooksPath); {INSTEAD['gitconfig']}"
        )
    if lowered.startswith("merge.shiftkit"):
        return f"{how} changes the features.json merge driver; {INSTEAD['gitconfig']}"
    if lowered.startswith("alias.") and value:
        body = value[1:] if value.startswith("!") else "git " + value
        reason = _check_line(body, features_name, depth + 1)
        if reason:
            return f"{how} defines an alias that would do what is denied here: {reason}"
    return None


# -- file tools --------------------------------------------------------------------------------

FILE_TOOLS = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}


def _apply_edits(current: str, edits: list[dict[str, Any]]) -> str | None:
    text = current
    for edit in edits:
        old, new = edit.get("old_string", ""), edit.get("new_string", "")
        if not isinstance(old, str) or not isinstance(new, str) or old not in text:
            return None
        text = text.replace(old, new) if edit.get("replace_all") else text.replace(old, new, 1)
    return text


def check_file_edit(
    current: str | None, proposed: str | None, edit_text: str, features_name: str
) -> str | None:
    """Why this change of the feature list must not be made by hand, or None."""
    before = _features(current)
    after = _features(proposed)
    if after is None:
        if any(f'"{name}"' in edit_text for name in STATUS_FIELDS):
            return (
                f"this edit touches a status field of {features_name} "
                f"({', '.join(STATUS_FIELDS)}); use `shiftkit finish`, `revert` or `unblock`"
            )
        return None
    old_by_id = {item.get("id"): item for item in before or [] if isinstance(item, dict)}
    for item in after:
        if not isinstance(item, dict):
            continue
        old = old_by_id.get(item.get("id"))
        if old is None:
            if item.get("passes") is True:
                return (
                    f"{item.get('id')} would be appended already passing; append it with "
                    f'"passes": false (`shiftkit add`) and finish it with `shiftkit finish`'
                )
            continue
        for name in STATUS_FIELDS:
            if old.get(name) != item.get(name):
                return (
                    f"this edit changes {item.get('id')}'s {name!r} in {features_name} by "
                    f"hand; status fields change only through `shiftkit finish`, "
                    f"`shiftkit revert` or `shiftkit unblock`"
                )
    new_ids = {item.get("id") for item in after if isinstance(item, dict)}
    removed = [i for i in old_by_id if i not in new_ids]
    if removed:
        return f"this edit removes {removed[0]} from {features_name}; features are never removed"
    return None


def _features(text: str | None) -> list[Any] | None:
    if text is None:
        return None
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(document, dict) and isinstance(document.get("features"), list):
        return list(document["features"])
    return list(document) if isinstance(document, list) else None


def _tool_path_kind(path: Path, root: Path | None, features_name: str) -> str | None:
    if root is not None:
        try:
            relative: str | None = path.resolve().relative_to(root.resolve()).as_posix()
        except (ValueError, OSError, RuntimeError):
            relative = None
        if relative is not None:
            return _path_kind(relative, features_name)
        kind = _path_kind(path.as_posix(), features_name)
        return kind if kind not in {"features", "config", "signers"} else None
    by_name = {os.path.basename(features_name): "features", ".shiftkit.toml": "config"}
    if path.name in by_name:  # no project known: judge by the name alone
        return by_name[path.name]
    if path.parent.name == ".shiftkit" and path.name == "allowed_signers":
        return "signers"
    return _path_kind(path.as_posix(), features_name)


def _describe(value: Any) -> str:
    if value is None:
        return "missing"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__
    )


def payload_problem(payload: dict[str, Any]) -> str | None:
    """Why a Bash or file-tool call cannot be checked (it is then denied), or None."""
    tool = payload.get("tool_name")
    if not isinstance(tool, str) or (tool != "Bash" and tool not in FILE_TOOLS):
        return None
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return (
            f"the {tool} call's tool_input is {_describe(tool_input)}, not an object, so it "
            f"cannot be checked; denied"
        )
    key = "command" if tool == "Bash" else FILE_TOOLS[tool]
    value = tool_input.get(key)
    if not isinstance(value, str) or (tool != "Bash" and (not value or "\0" in value)):
        return (
            f"the {tool} call's {key} is {_describe(value)}, not a usable string, so it "
            f"cannot be checked; denied"
        )
    return None


def decide(payload: dict[str, Any], root: Path | None, features_name: str) -> str | None:
    """The reason to deny this tool call, or None to allow it."""
    problem = payload_problem(payload)
    if problem:
        return problem
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        return None
    if tool == "Bash":
        return check_command(tool_input["command"], features_name)
    if tool not in FILE_TOOLS:
        return None
    file_path = tool_input[FILE_TOOLS[tool]]
    path = Path(file_path)
    if root is not None and not path.is_absolute():
        path = root / path
    kind = _tool_path_kind(path, root, features_name)
    if kind is None:
        return None
    if kind != "features":
        return (
            f"`{tool}` on {file_path} changes {_label(kind, features_name)} by hand; "
            + (INSTEAD[kind])
        )
    if tool == "NotebookEdit":
        return f"`NotebookEdit` on {features_name} changes it by hand; {INSTEAD['features']}"
    return _check_features_edit(tool, tool_input, path, features_name)


def _check_features_edit(
    tool: str, tool_input: dict[str, Any], path: Path, features_name: str
) -> str | None:
    try:
        current: str | None = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        current = None
    if tool == "Write":
        proposed = tool_input.get("content")
        return check_file_edit(
            current, proposed if isinstance(proposed, str) else None, str(proposed), features_name
        )
    edits = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
    if not isinstance(edits, list):
        return f"the {tool} call's edits are not a list, so they cannot be checked; denied"
    edit_text = json.dumps(edits)
    if current is None:
        return check_file_edit(None, None, edit_text, features_name)
    proposed = _apply_edits(current, [e for e in edits if isinstance(e, dict)])
    return check_file_edit(current, proposed, edit_text, features_name)


# -- the hook ----------------------------------------------------------------------------------

NAMES_GUARDED_TOOL = r'"tool_name"\s*:\s*"(?:Bash|Write|Edit|MultiEdit|NotebookEdit)"'


def run_hook(
    raw: bytes, locate: Callable[[str | None], tuple[Path | None, str]]
) -> tuple[int, str]:
    """The hook's exit code and its one stderr line (or ""), for the raw stdin bytes.
    `locate(cwd)` gives the project root (or None) and the feature list's name."""
    text = raw.decode("utf-8", errors="replace")
    if not text.strip():
        return 0, ""
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError) as exc:
        why = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
        if re.search(NAMES_GUARDED_TOOL, text):
            return 2, (
                f"shiftkit: guard: the hook input is not JSON ({why}) but names a shell "
                f"or file tool; denied because the call cannot be checked"
            )
        return 0, f"shiftkit: guard: the hook input is not JSON ({why}); allowing"
    if not isinstance(payload, dict):
        return 0, "shiftkit: guard: the hook input is not a JSON object; allowing"
    problem = payload_problem(payload)
    if problem:
        return 2, f"shiftkit: guard: {problem}"
    cwd = payload.get("cwd")
    root, features_name = locate(cwd if isinstance(cwd, str) and cwd and "\0" not in cwd else None)
    reason = decide(payload, root, features_name)
    if reason is None:
        return 0, ""
    return 2, "shiftkit guard: " + " ".join(reason.split())
