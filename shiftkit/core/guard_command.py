"""The guard on one shell line: each simple command is unwrapped (`env`, `sudo`, `timeout`,
`xargs`, ...), its environment checked, and it is judged by what it runs: shells and `eval`
read again (to `MAX_DEPTH`), git, `find`, `export`, and the programs that write files."""

from __future__ import annotations

import os
import re

from shiftkit.core import guard_worktrees, own_refs
from shiftkit.core.guard_git import (
    check_git,
    redirect_reason,
    redirects,
    subcommand,
    subcommand_options,
    worktree_target,
)
from shiftkit.core.guard_install import pip_call, pip_reason
from shiftkit.core.guard_options import parse_options
from shiftkit.core.guard_paths import USE_SHIFTKIT, Site, path_reason
from shiftkit.core.guard_programs import (
    INTERPRETERS,
    check_chmod,
    check_interpreter,
    check_pre_commit,
    check_shiftkit,
    check_writers,
)
from shiftkit.core.guard_shell import (
    ASSIGNMENT,
    HEREDOC_START,
    SUBSTITUTION,
    UNREADABLE,
    Scan,
    Simple,
    marked,
    scan,
    simple_commands,
    split,
)
from shiftkit.core.guard_trailers import (
    MACHINE_TRAILER,
    PERSON_TRAILER,
    READS_MESSAGE,
    export_reason,
    trailer_reason,
    unreadable_reason,
)

MAX_DEPTH = 8  # nested `sh -c`, `$(...)`, `eval`: deeper than this is denied, not parsed


def check_command(command: str, site: Site | str = "features.json") -> str | None:
    """Why this shell command must not run, or None (`site`: the project, or only the feature
    list's name)."""
    guard_worktrees.start_line()
    named = own_refs.named_in(command)
    if named:
        return named
    return _check_line(command, Site(site) if isinstance(site, str) else site, 0)


def _check_line(command: str, site: Site, depth: int) -> str | None:
    if depth > MAX_DEPTH:
        return (
            f"this command nests shells (`sh -c`, `$(...)`, `eval`) more than {MAX_DEPTH} "
            f"deep, too deep to check; run the inner command directly"
        )
    scanned = scan(command)
    for body in scanned.substitutions:
        reason = _check_line(body, site, depth + 1)
        if reason:
            return reason
    output: str | None = None
    walk = Walk(site.cwd)
    commands = simple_commands(scanned.line, scanned.heredocs)
    names_trailer = any(p.search(command) for p in (PERSON_TRAILER, MACHINE_TRAILER))
    for simple in commands:  # the worktrees this line makes are this project's (0063)
        _, argv = unwrap(simple.words, None)
        if argv and os.path.basename(argv[0]) == "git" and subcommand(argv[1:]) == "worktree":
            args = argv[1:]
            place = worktree_target(args[args.index("worktree") + 1 :], site.at(walk.sure[0]))
            if place is not None:
                guard_worktrees.add(place)
    messages = _marked_commands(command, scanned, commands)
    message_input: str | None = None
    for number, simple in enumerate(commands):
        walk.enter(simple)
        if names_trailer:
            reason = _trailer_reason(command, simple)
            if reason:
                return reason
        if messages:
            reason, message_input = _message_reason(messages[number], message_input, command)
            if reason:
                return reason
        stdin = simple.stdin if simple.stdin is not None else output if simple.piped else None
        for place in walk.places():
            reason = _check_simple(simple, stdin, site.at(place), depth, walk.env)
            if reason:
                return reason
        following = commands[number + 1] if number + 1 < len(commands) else None
        walk.after(simple, site, piped=simple.piped or (following is not None and following.piped))
        output = _output_of(simple.words, stdin)
    return None


class Walk:
    """Where the commands of one line run and what they set, as far as the line shows:
    `cd`/`pushd` move (after `&&` surely; after `;`, `||` or a new line the old place stays
    possible, as the `cd` may have failed), a subshell's moves end with it, and variables
    assigned alone (`HOME=/tmp/x; git ...`) or exported reach the commands after them."""

    __slots__ = ("env", "stack", "sure", "unsure")

    def __init__(self, cwd: str | None) -> None:
        self.sure: list[str | None] = [cwd]  # where the command runs when every `cd` worked
        self.unsure: list[str | None] = []  # where it runs when a `cd` before `&&` failed
        self.stack: list[tuple[list[str | None], list[str | None]]] = []
        self.env: dict[str, str] = {}

    def enter(self, simple: Simple) -> None:
        while len(self.stack) < simple.group:  # a subshell opens: its moves end with it
            self.stack.append((list(self.sure), list(self.unsure)))
        while len(self.stack) > simple.group:
            self.sure, self.unsure = self.stack.pop()
        if simple.joined != "&&":
            self.sure, self.unsure = _union(self.sure, self.unsure), []

    def places(self) -> list[str | None]:
        return self.sure

    def after(self, simple: Simple, site: Site, piped: bool) -> None:
        env, argv = unwrap(simple.words, None)
        program = os.path.basename(argv[0]) if argv else ""
        if not argv:
            self.env.update(env)
        elif program in {"export", "declare", "typeset"}:
            self.env.update(
                (word.partition("=")[0], word.partition("=")[2])
                for word in argv[1:]
                if not word.startswith("-")
            )
        elif program in {"cd", "pushd", "popd"} and not piped:
            words = [word for word in argv[1:] if word not in {"-L", "-P", "-e", "--"}]
            target = words[0] if words and program != "popd" else "~"
            moved = [site.at(place).place(target) for place in self.sure]
            self.unsure = _union(self.unsure, self.sure)
            self.sure = _union(moved, [])


def _trailer_reason(command: str, simple: Simple) -> str | None:
    """A git command that writes a commit message, on a line that names a person trailer."""
    _, argv = unwrap(simple.words, None)
    if not argv or os.path.basename(argv[0]) != "git":
        return None
    return trailer_reason(command, subcommand(argv[1:]))


def _marked_commands(command: str, scanned: Scan, commands: list[Simple]) -> list[Simple]:
    """The line's commands with the text the shell makes marked (`guard_shell.marked`), when
    a git command on it could write a message; else none."""
    if "git" not in command or not any(mark in command for mark in "$`|"):
        return []  # (no git to write a message, or nothing the shell makes or pipes in)
    if not any(_writes_message(simple) for simple in commands):
        return []
    readable = [_shows_its_text(body) for body in scanned.substitutions]
    messages = simple_commands(marked(scanned, readable), scanned.heredocs)
    return messages if len(messages) == len(commands) else []


def _writes_message(simple: Simple) -> bool:
    _, argv = unwrap(simple.words, None)
    if not argv or os.path.basename(argv[0]) != "git":
        return False
    return subcommand(argv[1:]) in READS_MESSAGE


def _shows_its_text(body: str) -> bool:
    """`$(cat <<'EOF' ... EOF)`: the text is the here-document's, which the line shows (with
    an unquoted delimiter, only when the shell expands nothing in it)."""
    inner = scan(body)
    commands = simple_commands(inner.line, inner.heredocs)
    if len(commands) != 1 or inner.substitutions:
        return False
    only = commands[0]
    if only.words not in (["cat"], ["cat", "-"]) or only.stdin is None or only.writes:
        return False
    return _literal_heredoc(body) or not re.search(r"[$`\\]", only.stdin)


def _literal_heredoc(text: str) -> bool:
    """Every here-document on this text has a quoted delimiter (`<<'EOF'`, `<<\\EOF`)."""
    starts = list(re.finditer(HEREDOC_START, text))
    return bool(starts) and all(
        start.group(2) is not None or start.group(3) is not None or "\\" in start.group(0)
        for start in starts
    )


def _message_reason(
    simple: Simple, before: str | None, command: str
) -> tuple[str | None, str | None]:
    """Why this command (as `_marked_commands` marked it) writes a git message the guard
    cannot read, and what it prints (`before`: what the command before it printed)."""
    stdin = simple.stdin if simple.stdin is not None else before if simple.piped else None
    _, argv = unwrap(simple.words, stdin if simple.piped else None)
    printed = _output_of(simple.words, stdin)
    if not argv or os.path.basename(argv[0]) != "git":
        return None, printed
    sub, options = subcommand_options(argv[1:])
    unknown = (
        (simple.piped and stdin is None)
        or (stdin is not None and UNREADABLE in stdin)
        or (
            simple.stdin is not None
            and not simple.piped
            and re.search(r"[$`]", simple.stdin) is not None
            and not _literal_heredoc(command)
        )
    )
    return unreadable_reason(sub, options, unknown), printed


def _union(first: list[str | None], second: list[str | None]) -> list[str | None]:
    places = list(dict.fromkeys([*first, *second]))
    return places if len(places) <= 8 else [None]


def _output_of(words: list[str], stdin: str | None) -> str | None:
    """What a simple command prints, when that is plain: `echo`/`printf` words, `cat` stdin."""
    program = os.path.basename(words[0]) if words else ""
    if program in {"echo", "printf"}:
        return " ".join(word for word in words[1:] if word not in {"-e", "-n", "-E"})
    return stdin if program == "cat" and len(words) == 1 else None


def _check_simple(
    simple: Simple, stdin: str | None, site: Site, depth: int, line_env: dict[str, str]
) -> str | None:
    reason = path_reason(simple.writes, "a shell redirection", site)
    if reason:
        return reason
    env, argv = unwrap(simple.words, stdin if simple.piped else None)
    reason = _check_environment(env, argv)
    if reason or not argv:
        return reason
    if simple.piped and stdin is None and _runs_its_input(argv):
        return (
            f"`{os.path.basename(argv[0])}` would run as code what the command before it prints "
            f"(`base64 -d | sh`, `curl ... | python3`), which the guard cannot read; write "
            f"the script to a file in the project and run that, or run the commands themselves"
        )
    return _check_argv(argv, stdin, site, depth, {**line_env, **env})


SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "ash"}


def _runs_its_input(argv: list[str]) -> bool:
    """Whether this command runs its standard input as code: a shell with no script and no
    `-c` (or with `-s`), an interpreter with no code, module or script (or `-`)."""
    program = os.path.basename(argv[0])
    if program in SHELLS:
        options = parse_options(
            argv[1:], "oO", "", ("--rcfile", "--init-file"), first_positional_ends=True
        )
        names = options.names()
        return "-c" not in names and (not options.positional or "-s" in names)
    interpreter = re.sub(r"[\d.]+$", "", program)
    if interpreter not in INTERPRETERS:
        return False
    code_letters, values = INTERPRETERS[interpreter]
    options = parse_options(argv[1:], values, "", ("--eval", "--print"), first_positional_ends=True)
    code_options = {"-" + letter for letter in code_letters} | {"--eval", "--print", "-m"}
    given = any(option in code_options for option, _ in options.given)
    return not given and options.positional[:1] in ([], ["-"])


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


def unwrap(words: list[str], piped: str | None) -> tuple[dict[str, str], list[str]]:
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
    argv = words[index:]
    if argv and is_hook_script(argv[0]):  # `.shiftkit/hook add ...` runs `shiftkit add ...`
        argv = ["shiftkit", *argv[1:]]
    return env, argv


def is_hook_script(word: str) -> bool:
    """The project's `.shiftkit/hook` (`./.shiftkit/hook`, `$CLAUDE_PROJECT_DIR/.shiftkit/hook`):
    the script passes its arguments to shiftkit, so it is judged as `shiftkit` would be."""
    return (
        re.search(r"(?:^|/)\.shiftkit/hook$", os.path.normpath(word.replace("\\", "/"))) is not None
    )


COMMITTERS = {"git", "pre-commit", "shiftkit", ""}
SHIFTKIT_READS = {"", "status", "list", "next", "show", "cost", "audit", "guard", "help", "doctor"}


def _env_reason(name: str, how: str) -> str | None:
    if name == "SKIP":
        return f"{how} SKIP tells pre-commit to skip hooks; {USE_SHIFTKIT}"
    if name == "PRE_COMMIT_ALLOW_NO_CONFIG":
        return (
            f"{how} PRE_COMMIT_ALLOW_NO_CONFIG lets commits through without hooks; {USE_SHIFTKIT}"
        )
    return None


def _export_reason(name: str, how: str) -> str | None:
    editor = export_reason(name, how)
    if editor:
        return editor
    if redirects(name):
        return (
            f"{how} {name} points every later git command at other config (where "
            f"core.hooksPath can be set), another repository or other programs; set it only "
            f"for a command that reads (`{name}=... git log`); {USE_SHIFTKIT}"
        )
    return _env_reason(name, how)


def _check_environment(env: dict[str, str], argv: list[str]) -> str | None:
    program = os.path.basename(argv[0]) if argv else ""
    for name in env:
        if name == "PRE_COMMIT_ALLOW_NO_CONFIG" or program in COMMITTERS:
            reason = _env_reason(name, "setting")
            if reason:
                return reason
    return None


def _check_argv(
    argv: list[str], stdin: str | None, site: Site, depth: int, env: dict[str, str]
) -> str | None:
    if argv[0].startswith(SUBSTITUTION):
        return (
            "a program named by a command substitution (`$(...)`) cannot be checked; "
            "name the program itself"
        )
    named = re.fullmatch(r"\$\{?(\w+)\}?", argv[0])
    if named and named.group(1) in env:  # `G=git; $G config ...`: the program it names
        argv = [env[named.group(1)], *argv[1:]]
    program = os.path.basename(argv[0])
    args = argv[1:]
    if program in {"sh", "bash", "zsh", "dash", "ksh", "ash", "busybox"}:
        return _check_shell(args, stdin, site, depth)
    if program == "eval":
        return _check_line(" ".join(args), site, depth + 1)
    if program == "git":
        return check_git(args, site, depth, _check_line, env)
    if program == "shiftkit":
        return check_shiftkit(args) or _shiftkit_redirect(args, env)
    if program == "pre-commit":
        return check_pre_commit(args) or redirect_reason(env, "pre-commit", args[0] if args else "")
    if program == "find":
        return _check_find(args, site, depth)
    if program == "chmod":
        return check_chmod(args, site)
    if program in {"export", "declare", "typeset", "local", "readonly"}:
        return _check_export(program, args)
    pip = pip_call(argv)
    if pip is not None:
        root = site.root if site.cwd is None or not site.cwd.startswith("/") else site.cwd
        if root is not None and site.cwd and not site.cwd.startswith("/"):
            root = os.path.join(root, site.cwd)
        reason = pip_reason(*pip, root)
        if reason:
            return reason
    interpreter = re.sub(r"[\d.]+$", "", program)
    if interpreter in INTERPRETERS:
        reason = check_interpreter(interpreter, args, stdin, site, depth)
        if reason:
            return reason
    return check_writers(program, args, site)


def _check_shell(args: list[str], stdin: str | None, site: Site, depth: int) -> str | None:
    if args[:1] == ["sh"] or args[:1] == ["bash"]:  # `busybox sh -c ...`
        args = args[1:]
    options = parse_options(args, "oO", "", ("--rcfile", "--init-file"), first_positional_ends=True)
    if "-c" in options.names():
        code = options.positional[0] if options.positional else ""
        return _check_line(code, site, depth + 1)
    if options.positional and is_hook_script(options.positional[0]):  # `sh .shiftkit/hook add`
        return check_shiftkit(options.positional[1:])
    if (not options.positional or "-s" in options.names()) and stdin:
        return _check_line(stdin, site, depth + 1)
    return None  # a script file: not read


def _check_export(program: str, args: list[str]) -> str | None:
    options = parse_options(args)
    exporting = program == "export" or any(name == "-x" for name in options.names())
    if not exporting or "-n" in options.names():
        return None
    for word in options.positional:
        reason = _export_reason(word.partition("=")[0], f"exporting (`{program}`)")
        if reason:
            return reason
    return None


def _shiftkit_redirect(args: list[str], env: dict[str, str]) -> str | None:
    sub = next((arg for arg in args if not arg.startswith("-")), "")
    return redirect_reason(env, "shiftkit", "" if sub in SHIFTKIT_READS else sub or "")


def _check_find(args: list[str], site: Site, depth: int) -> str | None:
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
        reason = path_reason(candidates, "`find -delete`", site, removing=True)
        if reason:
            return reason
    for index, arg in enumerate(args):
        if arg not in {"-exec", "-execdir", "-ok", "-okdir"}:
            continue
        end = next((j for j in range(index + 1, len(args)) if args[j] in {";", "+"}), len(args))
        for candidate in candidates or ["{}"]:
            words = [word.replace("{}", candidate) for word in args[index + 1 : end]]
            reason = _check_simple(Simple(words, [], None, False), None, site, depth, {})
            if reason:
                return reason
    return None
