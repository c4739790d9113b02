"""The `pre-commit-hooks` fixers run on a text, for tests: the real package's entry points
(the code behind `end-of-file-fixer`, `trailing-whitespace-fixer` and `mixed-line-ending`),
each on a temporary file, exactly as the hooks run them."""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

from pre_commit_hooks import end_of_file_fixer, mixed_line_ending, trailing_whitespace_fixer

FIXERS = {
    "end-of-file-fixer": end_of_file_fixer.main,
    "trailing-whitespace": trailing_whitespace_fixer.main,
    "mixed-line-ending": mixed_line_ending.main,
}


def fixed(text: str, name: str = "file.txt") -> dict[str, str]:
    """What each fixer would make of ``text`` in a file called ``name``, for those that
    change it (an empty dict: all three leave it unchanged)."""
    changed = {}
    with tempfile.TemporaryDirectory(prefix="shiftkit-fixers-") as folder:
        path = Path(folder) / name
        for hook, main in FIXERS.items():
            path.write_bytes(text.encode("utf-8"))
            with contextlib.redirect_stdout(io.StringIO()):
                main([str(path)])
            after = path.read_bytes().decode("utf-8")
            if after != text:
                changed[hook] = after
    return changed
