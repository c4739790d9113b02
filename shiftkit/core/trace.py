"""Reading strace's record of a verifier run: the paths it looked at and the directories it
listed (decision record 0053).

The record is strace's ``-ff -y`` output (one file per process, file descriptors decoded to
their paths, ``AT_FDCWD</cwd>`` included) for the file syscalls (``trace=%file``) and
``getdents``. Pure: the text of one process's file in, absolute normalised paths out.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from typing import NamedTuple

# The syscalls whose first argument is a directory descriptor the path is relative to.
_AT_CALLS = frozenset(
    {
        "openat",
        "openat2",
        "newfstatat",
        "fstatat64",
        "statx",
        "faccessat",
        "faccessat2",
        "readlinkat",
        "execveat",
        "mkdirat",
        "mknodat",
        "unlinkat",
        "renameat",
        "renameat2",
        "linkat",
        "fchmodat",
        "fchmodat2",
        "fchownat",
        "futimesat",
        "utimensat",
        "name_to_handle_at",
        "inotify_add_watch",
    }
)
_LISTING = frozenset({"getdents", "getdents64"})
# The syscalls that reach a file's content (the others see its name, type, size, mode).
_CONTENT = frozenset(
    {"open", "openat", "openat2", "creat", "execve", "execveat", "readlink", "readlinkat"}
)
_DIRFD = re.compile(r"(?:AT_FDCWD|-?\d+)(?:<((?:[^>\\]|\\.)*)>)?")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_RETURNED_PATH = re.compile(r"^-?\d+<((?:[^>\\]|\\.)*)>")
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|[0-7]{1,3}|.)")
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "v": "\v", "f": "\f", "a": "\a", "b": "\b"}


class Seen(NamedTuple):
    """What one process's record shows: every path it named (``looked``), those whose
    content it reached (``opened``: opened, executed, a link read) and the directories it
    read (``listed``), absolute and normalised."""

    looked: frozenset[str]
    listed: frozenset[str]
    opened: frozenset[str] = frozenset()


def unescape(text: str) -> str:
    """strace's C escapes undone (the text read as latin-1, one character a byte), the bytes
    decoded as UTF-8 (undecodable bytes kept as surrogates, as the file system gives them)."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] == "x" and len(code) == 3:
            return chr(int(code[1:], 16))
        if code[0] in "01234567":
            return chr(int(code, 8) & 0xFF)
        return _SIMPLE.get(code, code)

    raw = _ESCAPE.sub(one, text) if "\\" in text else text
    return raw.encode("latin-1", "replace").decode("utf-8", "surrogateescape")


def _resolved(path: str, directory: str | None) -> str | None:
    if path.startswith("/"):
        return posixpath.normpath(path)
    if directory is None or not path:
        return None
    return posixpath.normpath(posixpath.join(directory, path))


def read_process(lines: Iterable[str], cwd: str) -> Seen:
    """The paths one process's strace lines name. ``cwd``: the directory relative paths of
    syscalls without a directory argument (open, stat, execve…) are taken against until the
    process shows its own (an ``AT_FDCWD</…>``)."""
    looked: set[str] = set()
    listed: set[str] = set()
    opened: set[str] = set()
    for line in lines:
        name, paren, rest = line.partition("(")
        if not paren or not name.isidentifier():
            continue  # ("+++ exited", "--- SIGCHLD", a resumed or truncated line)
        args, equals, result = rest.rpartition(") = ")
        if not equals:
            continue
        if name in _LISTING:
            fd = _DIRFD.match(args)
            if fd and fd.group(1) is not None:
                listed.add(posixpath.normpath(unescape(fd.group(1))))
            continue
        directory: str | None = cwd
        if name in _AT_CALLS:
            fd = _DIRFD.match(args)
            if fd is None:
                continue
            if fd.group(1) is not None:
                directory = unescape(fd.group(1))
                if fd.group(0).startswith("AT_FDCWD"):
                    cwd = directory
            else:
                directory = None
            args = args[fd.end() :]
        quoted = _QUOTED.search(args)
        if quoted is None:
            continue
        path = _resolved(unescape(quoted.group(1)), directory)
        returned = _RETURNED_PATH.match(result)
        content = name in _CONTENT
        if returned is not None:  # (an open: the path the descriptor really is)
            real = posixpath.normpath(unescape(returned.group(1)))
            looked.add(real)
            opened.add(real)
        if path is not None:
            looked.add(path)
            if content:
                opened.add(path)
    return Seen(frozenset(looked), frozenset(listed), frozenset(opened))


def merge(seen: Iterable[Seen]) -> Seen:
    looked: set[str] = set()
    listed: set[str] = set()
    opened: set[str] = set()
    for one in seen:
        looked |= one.looked
        listed |= one.listed
        opened |= one.opened
    return Seen(frozenset(looked), frozenset(listed), frozenset(opened))
