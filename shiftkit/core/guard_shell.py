"""The guard's reading of a shell line: `scan` (quote-aware: drops comments, pulls out
command substitutions and here-documents), `shlex` (words and operators), `simple_commands`
(words, redirections, stdin). Best effort: no expansion."""

from __future__ import annotations

import re
import shlex

SUBSTITUTION = "__shiftkit_substitution__"
UNREADABLE = "__shiftkit_unreadable__"  # (`marked`: text the shell makes when it runs)
READABLE = "__shiftkit_text__"  # (`marked`: a substitution whose text the line shows)
HEREDOC = "__shiftkit_heredoc_"
HEREDOC_START = r"<<(-?)[ \t]*(?:'([^'\n]*)'|\"([^\"\n]*)\"|\\?([^\s;&|()<>'\"]+))"
OPERATOR = r"&>>|&>|>>|>\||>&|<<<|<<|<>|<&|>|<|\|\||\|&|&&|;;|\||&|;|\(|\)"
WRITE_REDIRECTS = {">", ">>", ">|", "&>", "&>>", "<>"}
PIPES = {"|", "|&"}
ASSIGNMENT = r"(?s)^([A-Za-z_][A-Za-z0-9_]*)\+?=(.*)$"


class Scan:
    """A shell line after `scan` (plain classes: a NamedTuple costs milliseconds to import)."""

    __slots__ = ("heredocs", "line", "substitutions")

    def __init__(self, line: str, substitutions: list[str], heredocs: list[str]) -> None:
        self.line = line  # comments dropped, substitutions and here-documents as markers
        self.substitutions = substitutions  # bodies of `$(...)` and backticks: run too
        self.heredocs = heredocs  # here-document bodies, by marker number


class Simple:
    """One simple command: its words without redirections, the files its redirections write
    (`>`, `>>`, `&>`, `<>`...), its here-document or here-string, whether it reads a pipe, the
    operator before it (`&&`, `;`, ...: "" for the first) and how many subshells it is in."""

    __slots__ = ("group", "joined", "piped", "stdin", "words", "writes")

    def __init__(
        self,
        words: list[str],
        writes: list[str],
        stdin: str | None,
        piped: bool,
        joined: str = "",
        group: int = 0,
    ) -> None:
        self.words = words
        self.writes = writes
        self.stdin = stdin
        self.piped = piped
        self.joined = joined
        self.group = group


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


def scan(command: str) -> Scan:
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


def simple_commands(line: str, heredocs: list[str]) -> list[Simple]:
    commands: list[Simple] = []
    current = Simple([], [], None, False)
    joined, group = "", 0
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
            joined = text
        elif text not in "()":
            joined = text
        group = max(0, group + (text == "(") - (text == ")"))
        current = Simple([], [], None, text in PIPES, joined, group)
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
    scanned = scan(command)
    return [
        simple.words for simple in simple_commands(scanned.line, scanned.heredocs) if simple.words
    ]


def split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def marked(scanned: Scan, readable: list[bool]) -> str:
    """The scanned line with the text the shell makes when it runs marked UNREADABLE: `$NAME`,
    `${...}`, `$1`, `$'...'`, and each command substitution not `readable` (by number; a
    readable one becomes READABLE). Single quotes and backslashes keep `$` literal. Only marks
    are added, so the line splits into the same commands and words as `scanned.line`."""
    line, out, quote, index, number = scanned.line, [], "", 0, 0
    while index < len(line):
        char = line[index]
        if quote == "'":
            quote = "" if char == "'" else quote
        elif char == "\\":
            out.append(line[index : index + 2])
            index += 2
            continue
        elif line.startswith(SUBSTITUTION, index):
            known = number < len(readable) and readable[number]
            out.append(READABLE if known else UNREADABLE)
            number, index = number + 1, index + len(SUBSTITUTION)
            continue
        elif char == "$" and re.match(r"[\w{@*#?!$'\"-]", line[index + 1 : index + 2]):
            if not (quote == '"' and line[index + 1] in "'\""):  # (`"$"` and `"$'"`: a `$`)
                out.append(UNREADABLE)
        elif quote == '"':
            quote = "" if char == '"' else quote
        elif char in "'\"":
            quote = char
        out.append(char)
        index += 1
    return "".join(out)
