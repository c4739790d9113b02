"""A shell command run until its own process exits, and the process group it leaves behind
ended (decision record 0095).

A verifier may leave processes running (a test that starts a server with `cmd &` or
`subprocess.Popen` and never stops it). The verdict is the shell's: the run ends when the shell
itself exits, with its exit code, and whatever it left in its process group is ended then —
SIGTERM, and SIGKILL after a grace. Under a tracer (strace, `readsets.Measure.prefix`), which
waits for every process it traces, the shell tells its pid first (a wrapper writes ``$$`` to a
file and `exec`s the command's shell, so the pid stays the verifier's own through any `exec`),
and when that process has exited its leftovers — the group, and whatever else the tracer still
follows — are ended but not the tracer: strace then writes out its files and exits by itself,
with the shell's exit code.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

GRACE = 2.0  # seconds between SIGTERM and SIGKILL (and for a tracer to exit by itself)
TICK = 0.01  # the longest sleep between two looks at a process
GONE = ("Z", "X")  # the states of a process that has exited (a zombie waits only to be reaped)
# The shell a tracer starts: it says its pid (``$1``: a file), then becomes the command's own
# shell (``$2``), as untraced: `/bin/sh -c COMMAND`, no positional parameters of ours.
WRAPPER = 'echo $$ >"$1"; exec /bin/sh -c "$2"'


def run_until_own_exit(
    command: str,
    cwd: Path,
    env: Mapping[str, str],
    output: IO[bytes],
    timeout: float,
    prefix: Sequence[str] = (),
    leave_running: bool = False,
) -> int | None:
    """Run ``command`` with /bin/sh in a new session (its own process group), stdout and stderr
    to ``output``, until the shell exits; its exit code (negative: the signal that ended it),
    None when it ran past ``timeout`` seconds (its group then killed). What it left in its group
    is ended, unless ``leave_running`` (an `init` that starts the app for the smoke test and
    the session; honoured untraced only: a tracer waits for every process it follows).
    ``prefix``: the argv of a tracer the shell runs under."""
    if prefix:
        return _traced(command, cwd, env, output, timeout, prefix)
    proc = _start(["/bin/sh", "-c", command], cwd, env, output)
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc.pid)
        proc.wait()
        return None
    if not leave_running:
        end_group(proc.pid)
    return code


def _start(
    argv: Sequence[str], cwd: Path, env: Mapping[str, str], output: IO[bytes]
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        env=env,
        stdout=output,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _traced(
    command: str,
    cwd: Path,
    env: Mapping[str, str],
    output: IO[bytes],
    timeout: float,
    prefix: Sequence[str],
) -> int | None:
    import tempfile

    deadline = time.monotonic() + timeout
    with tempfile.TemporaryDirectory(prefix="shiftkit-run-") as folder:
        said = Path(folder) / "pid"
        argv = [*prefix, "/bin/sh", "-c", WRAPPER, "shiftkit-verifier", str(said), command]
        tracer = _start(argv, cwd, env, output)
        shell: tuple[int, str] | None = None  # (pid, start time): the verifier's own process
        pause = 0.001
        while tracer.poll() is None:
            if shell is None:
                shell = _said_pid(said)
            elif not _alive(*shell):
                break
            if time.monotonic() >= deadline:
                kill_group(tracer.pid)
                tracer.wait()
                return None
            time.sleep(pause)
            pause = min(pause * 2, TICK)
    if tracer.returncode is None:
        # The shell has exited; its leftovers keep the tracer waiting. They go (those that
        # left the group too: still traced), the tracer stays: it writes out its files and
        # exits with the shell's code.
        end_group(tracer.pid, spare=tracer.pid, tracer=tracer.pid)
        try:
            tracer.wait(timeout=GRACE)
        except subprocess.TimeoutExpired:
            end_group(tracer.pid)
            tracer.wait()
    return tracer.returncode


def _said_pid(path: Path) -> tuple[int, str] | None:
    """The pid the wrapper wrote (once its line is whole) and that process's start time."""
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return None
    if not text.endswith("\n") or not text.strip().isdigit():
        return None
    pid = int(text)
    found = _stat(pid)
    return (pid, found[3]) if found is not None else (pid, "")


def _alive(pid: int, started: str) -> bool:
    """Whether ``pid`` is still the process that started at ``started`` and has not exited
    (a zombie has: it waits only to be reaped)."""
    found = _stat(pid)
    return found is not None and found[0] not in GONE and found[3] == started


def _stat(pid: int) -> tuple[str, int, int, str] | None:
    """(state, parent pid, process group, start time) of ``pid`` from /proc; None when gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = data.rpartition(")")[2].split()  # (the name before it may hold anything)
    try:
        return fields[0], int(fields[1]), int(fields[2]), fields[19]
    except (IndexError, ValueError):
        return None


def live_members(
    pgid: int, spare: int | None = None, tracer: int | None = None
) -> list[int] | None:
    """The processes of group ``pgid``, and those ``tracer`` traces, that have not exited, but
    ``spare``; None when there is no /proc to read them from."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    found = []
    for name in names:
        if not name.isdigit() or int(name) == spare:
            continue
        stat = _stat(int(name))
        if stat is None or stat[0] in GONE:
            continue
        if stat[2] == pgid or (tracer is not None and _tracer_of(int(name)) == tracer):
            found.append(int(name))
    return found


def _tracer_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"TracerPid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def end_group(
    pgid: int, spare: int | None = None, grace: float = GRACE, tracer: int | None = None
) -> None:
    """End every process of group ``pgid`` but ``spare`` — and every process ``tracer`` traces,
    which it waits for wherever it went (`setsid`, `start_new_session=True`): SIGTERM, and
    SIGKILL to those left after ``grace`` seconds; returns when none is left (or one more grace
    after SIGKILL, for a process stuck in the kernel). Zombies count as gone: the orphans' new
    parent reaps them."""
    left = live_members(pgid, spare, tracer)
    if left is None:
        _end_whole_group(pgid, grace)  # (no /proc: a system strace does not run on)
        return
    told: set[int] = set()
    pause = 0.001
    deadline = time.monotonic() + grace
    while left:
        if time.monotonic() < deadline:
            _send([pid for pid in left if pid not in told], signal.SIGTERM)
            told.update(left)
        elif time.monotonic() < deadline + grace:
            _send(left, signal.SIGKILL)
        else:
            return
        time.sleep(pause)
        pause = min(pause * 2, TICK)
        left = live_members(pgid, spare, tracer)


def _send(pids: Sequence[int], sig: signal.Signals) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _end_whole_group(pgid: int, grace: float) -> None:
    deadline = time.monotonic() + grace
    try:
        os.killpg(pgid, signal.SIGTERM)
        while time.monotonic() < deadline:
            time.sleep(TICK)
            os.killpg(pgid, 0)
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_group(pgid: int) -> None:
    """SIGKILL every process of group ``pgid`` at once (a run past its timeout)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
