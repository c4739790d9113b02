"""Reading the protocol's files: regular files only. A FIFO, a device (a link to /dev/zero) or a
socket where the feature list, the log or the settings belong would make a read wait forever
or never end; it is refused at once instead, as an OSError the callers already report in one
line (decision 0031)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from shiftkit.core.errors import BadInput

NOT_REGULAR = "not a regular file (a FIFO, a device or a socket); replace it with a file"


def read_text(path: Path | str, errors: str = "strict") -> str:
    """The UTF-8 text of a regular file (line ends read as `Path.read_text` reads them).
    Opening does not wait on a FIFO (O_NONBLOCK), and anything but a regular file is refused
    before a byte is read."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, NOT_REGULAR, str(path))
        handle = open(fd, encoding="utf-8", errors=errors)  # noqa: SIM115 (closed below)
    except BaseException:
        os.close(fd)
        raise
    with handle:
        return handle.read()


def read_optional(path: Path) -> str:
    """A protocol file's text, "" when it does not exist; anything else that keeps it from
    being read is one line (BadInput) naming it."""
    try:
        return read_text(path)
    except FileNotFoundError:
        return ""
    except IsADirectoryError:
        raise BadInput(f"{path.name}: a folder where a file belongs; move it away") from None
    except UnicodeDecodeError as exc:
        raise BadInput(
            f"{path.name}: not UTF-8 text (byte {exc.start}); shiftkit reads and writes it as "
            f"UTF-8: fix or remove that byte"
        ) from None
    except OSError as exc:  # a FIFO or a device (files.NOT_REGULAR), permissions, I/O
        raise BadInput(f"{path.name}: cannot be read ({exc.strerror or exc})") from None
