"""Reading the protocol's files: regular files only. A FIFO, a device (a link to /dev/zero) or a
socket where the feature list, the log or the settings belong would make a read wait forever
or never end; it is refused at once instead, as an OSError the callers already report in one
line (decision 0031)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

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
