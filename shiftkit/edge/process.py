"""A verifier run ends when the verifier's own process exits (issue 35 item 5; decision record
0099).

A verifier that starts a background process (a dev server, `sleep 600 &`) and does not stop it
must not hang the judge or leave the process behind. The command runs in its own process group
(`start_new_session`). Untraced, the wait ends when the shell exits. Under strace (read sets),
strace waits for every tracee, orphans too, so the shell is wrapped (`WRAPPER`) to write its own
exit status to a file when it exits; once that file holds it, the rest of the group is ended
and strace, left alone, writes its records out and exits. Either way the group is ended after:
SIGTERM, a short grace, SIGKILL. The timeout ends everything, as before.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

# `sh -c WRAPPER shiftkit-verify COMMAND STATUS`: COMMAND runs as `sh -c COMMAND` would (no
# positional parameters), and the shell's exit status reaches STATUS as it exits.
WRAPPER = (
    "__shiftkit_status=$2; __shiftkit_command=$1; shift 2; trap 'echo $? > \"$__shiftkit_status\"'"
    ' EXIT; eval "$__shiftkit_command"'
)
GRACE = 0.5  # seconds between SIGTERM and SIGKILL for what the verifier left behind
TRACER_GRACE = 5.0  # seconds strace gets to write out and exit once its tracees are gone


def run(
    command: str,
    cwd: Path,
    env: dict[str, str],
    sink: IO[bytes],
    timeout: float,
    prefix: Sequence[str] = (),
) -> int | None:
    """Run ``command`` with /bin/sh (under ``prefix``, a tracer's argv, when given) in its own
    process group, output to ``sink``; its exit code once its own process exited, None when
    ``timeout`` passed first. What it left running is ended either way."""
    if not prefix:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", command],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            code: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
        end_group(proc.pid)
        proc.wait()
        return code
    import tempfile

    with tempfile.TemporaryDirectory(prefix="shiftkit-exit-") as folder:
        status = Path(folder) / "status"
        proc = subprocess.Popen(
            [*prefix, "/bin/sh", "-c", WRAPPER, "shiftkit-verify", command, str(status)],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        return _wait_traced(proc, status, timeout)


def _wait_traced(proc: subprocess.Popen[bytes], status: Path, timeout: float) -> int | None:
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        if proc.poll() is not None:
            end_group(proc.pid)
            written = _status(status)
            return written if written is not None else proc.returncode
        written = _status(status)
        if written is not None:
            end_group(proc.pid, keep=proc.pid)  # (strace itself writes out and exits)
            try:
                proc.wait(timeout=TRACER_GRACE)
            except subprocess.TimeoutExpired:
                end_group(proc.pid)
                proc.wait()
            return written
        if time.monotonic() > deadline:
            end_group(proc.pid)
            proc.wait()
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _status(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None  # (None while it is being written)


def group_members(group: int) -> list[int]:
    """The processes whose process group is ``group`` (read from /proc)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path("/proc", entry, "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()  # (after the command's name)
        if len(fields) > 2 and fields[2] == str(group) and fields[0] != "Z":
            members.append(int(entry))
    return members


def end_group(group: int, keep: int | None = None) -> None:
    """End every process of process group ``group`` but ``keep``: SIGTERM, up to `GRACE`
    seconds to go, then SIGKILL. Nothing to do when the group is gone."""
    if keep is None:
        for sent in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(group, sent)
            except (ProcessLookupError, PermissionError):
                return
            if sent == signal.SIGTERM and not _gone(group, keep):
                continue
            return
        return
    for sent in (signal.SIGTERM, signal.SIGKILL):
        for pid in group_members(group):
            if pid != keep:
                try:
                    os.kill(pid, sent)
                except (ProcessLookupError, PermissionError):
                    pass
        if _gone(group, keep):
            return


def _gone(group: int, keep: int | None) -> bool:
    """Whether every member of ``group`` but ``keep`` ended within `GRACE` seconds."""
    deadline = time.monotonic() + GRACE
    while time.monotonic() < deadline:
        if all(pid == keep for pid in group_members(group)):
            return True
        time.sleep(0.01)
    return False
