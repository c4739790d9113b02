"""Running verifiers (and init/smoke commands): timeouts, bounded output, failure signatures,
and the cache of passing trees."""

from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path
from typing import NamedTuple

from shiftkit import state
from shiftkit.atomic import atomic_write

TAIL_LINES = 20
TAIL_CHARS = 2000


class Outcome(NamedTuple):
    command: str
    ok: bool
    exit_code: int | None  # None when it timed out
    seconds: float
    output: str

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None

    def tail(self, lines: int = TAIL_LINES, chars: int = TAIL_CHARS) -> str:
        text = "\n".join(self.output.rstrip("\n").splitlines()[-lines:])
        return text[-chars:]

    def summary(self) -> str:
        if self.timed_out:
            return f"timed out after {self.seconds:.0f}s"
        if self.exit_code == 127:
            return "exit 127 (command not found)"
        return "passed" if self.ok else f"exit {self.exit_code}"


def run_command(command: str, cwd: Path, timeout: float) -> Outcome:
    """Run ``command`` with /bin/sh in its own process group; output goes to a file, so a
    background process that keeps the descriptors open cannot hang us."""
    import subprocess
    import tempfile

    start = time.monotonic()
    with tempfile.TemporaryFile() as sink:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", command], cwd=cwd, stdin=subprocess.DEVNULL,
            stdout=sink, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        try:
            code: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            proc.wait()
            code = None
        sink.seek(0)
        output = sink.read().decode("utf-8", "replace")
    return Outcome(command, code == 0, code, time.monotonic() - start, output)


def _kill_group(pid: int) -> None:
    import signal

    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


_VOLATILE = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0xH"),
    (re.compile(r"\b[0-9a-f]{7,40}\b"), "H"),
    (re.compile(r"/tmp/[^\s'\"]+"), "/tmp/P"),
    (re.compile(r"\d+(\.\d+)?"), "N"),
    (re.compile(r"[ \t]+"), " "),
]


def signature(output: str) -> str:
    """A hash of the output with times, numbers, addresses and temp paths blanked out, so the
    same failure twice has the same signature."""
    text = "\n".join(output.strip().splitlines()[-50:])
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return hashlib.sha256(text.strip().encode()).hexdigest()[:16]


def _cache_key(tree: str, command: str) -> str:
    return f"{tree}-{hashlib.sha256(command.encode()).hexdigest()[:16]}"


def is_cached(common_dir: Path, tree: str, command: str) -> bool:
    return (state.repo_state(common_dir) / "passed" / _cache_key(tree, command)).exists()


def record_pass(common_dir: Path, tree: str, command: str) -> None:
    atomic_write(state.repo_state(common_dir) / "passed" / _cache_key(tree, command), command + "\n")
