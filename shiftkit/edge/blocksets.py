"""Measuring which Python code blocks a verifier run executed (decision record 0116; the pure
part is `shiftkit.core.blocks`): coverage.py, started in every Python process of the run by a
private `sitecustomize` (`BOOT`) first on `PYTHONPATH`, writes each process's executed lines;
after a pass they become, per repository file, the blocks executed with their fingerprints.

The measurement is trusted only when it is complete: every process of the run that opened a
committed Python file (strace's record, one file per process) must have written coverage data
with the tracer it started still in place at its exit. Otherwise — another interpreter version,
`python -I`, a process killed, pytest-cov or a debugger replacing the tracer, a non-Python
program reading code — the run has no block set and the gate falls back to its files.

On only while `SHIFTKIT_BLOCKS=on` (the gate's granularity is being measured: issue 37).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Collection, Mapping
from pathlib import Path

from shiftkit.core import blocks

SWITCH = "SHIFTKIT_BLOCKS"
_HOME = "SHIFTKIT_COVERAGE_HOME"
_PYTHON = "SHIFTKIT_COVERAGE_PYTHON"
_DISTURBED = "disturbed."

BOOT = '''"""shiftkit: measure the code blocks this process executes (decision record 0116)."""
import os as _os
import sys as _sys


def _shiftkit_measure():
    here = _os.path.dirname(_os.path.abspath(__file__))
    _sys.path[:] = [p for p in _sys.path if _os.path.abspath(p or ".") != here]
    home = _os.environ.get("SHIFTKIT_COVERAGE_HOME", "")
    if not home or _os.environ.get("SHIFTKIT_COVERAGE_PYTHON") != "%d.%d" % _sys.version_info[:2]:
        return
    had = home in _sys.path
    if not had:
        _sys.path.append(home)
    try:
        import atexit
        import coverage

        if _sys.version_info >= (3, 12):
            _os.environ["COVERAGE_CORE"] = "sysmon"
        started = coverage.process_startup()
        tracer = _sys.gettrace()
    except Exception:
        return
    finally:
        if not had:
            _sys.path[:] = [p for p in _sys.path if p != home]
    folder = _os.path.dirname(_os.environ.get("COVERAGE_PROCESS_START", ""))

    def _check():
        # (a tracer replaced meanwhile — pytest-cov, a debugger — missed lines: say so)
        if started is None or _sys.gettrace() is not tracer:
            open(_os.path.join(folder, "disturbed.%d" % _os.getpid()), "w").close()

    atexit.register(_check)


def _shiftkit_chain():
    ours = _sys.modules.pop("sitecustomize", None)
    try:
        import sitecustomize  # noqa: F401  (the next one on the path: shiftkit's imports, a user's)
    except ImportError:
        if ours is not None:
            _sys.modules["sitecustomize"] = ours


_shiftkit_measure()
_shiftkit_chain()
'''

RC = """[run]
parallel = True
data_file = {data}
include =
    {root}/*
    {real}/*
disable_warnings =
    no-data-collected
    module-not-imported
    module-not-measured
    couldnt-parse
    no-ctracer
    already-imported
    no-sysmon
"""

_PID = re.compile(r"\.pid(\d+)\.")


def enabled() -> bool:
    return os.environ.get(SWITCH, "").strip().lower() == "on"


def _home() -> str | None:
    """The folder `coverage` is imported from (this interpreter's), or None without it."""
    try:
        import coverage
    except ImportError:
        return None
    return str(Path(coverage.__file__).resolve().parent.parent)


def prefix(directory: Path, root: Path) -> tuple[str, ...]:
    """The argv that runs the verifier's shell with every Python process measured into
    ``directory`` (``root``: the checkout, the only code measured); () when coverage is not
    importable here."""
    home = _home()
    if home is None:
        return ()
    boot = directory / "boot"
    boot.mkdir(exist_ok=True)
    (boot / "sitecustomize.py").write_text(BOOT, encoding="utf-8")
    rc = directory / "coverage.rc"
    rc.write_text(
        RC.format(data=directory / "data" / ".coverage", root=root, real=os.path.realpath(root)),
        encoding="utf-8",
    )
    (directory / "data").mkdir(exist_ok=True)
    assignments = {
        "COVERAGE_PROCESS_START": str(rc),
        _HOME: home,
        _PYTHON: "{}.{}".format(*sys.version_info[:2]),
    }
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in assignments.items())
    script = f'PYTHONPATH="$0${{PYTHONPATH:+:$PYTHONPATH}}" {exports} exec "$@"'
    return ("/bin/sh", "-c", script, str(boot))


def collect(
    directory: Path,
    root: Path,
    sources: Mapping[str, str],
    needed: Collection[int],
) -> dict[str, dict[str, str]] | None:
    """Per repository path, the blocks the run executed with their fingerprints (``sources``:
    the judged tree's text of each committed Python file, by repository path); None unless
    every process of ``needed`` (those that opened committed Python files) wrote data with its
    tracer undisturbed."""
    import coverage

    folder = directory / "data"
    if not folder.is_dir() or any(p.name.startswith(_DISTURBED) for p in folder.iterdir()):
        return None
    lines: dict[str, set[int]] = {}
    measured: set[int] = set()
    tops = {str(root).rstrip("/") + "/", os.path.realpath(root).rstrip("/") + "/"}
    for data_file in folder.glob(".coverage.*"):
        found = _PID.search(data_file.name)
        if found is None:
            continue
        data = coverage.CoverageData(basename=str(data_file))
        try:
            data.read()
        except Exception:
            return None
        measured.add(int(found.group(1)))
        for path in data.measured_files():
            top = next((t for t in tops if path.startswith(t)), None)
            if top is not None:
                lines.setdefault(path[len(top) :], set()).update(data.lines(path) or ())
    if not set(needed) <= measured:
        return None
    found_blocks: dict[str, dict[str, str]] = {}
    for path, hit in lines.items():
        source = sources.get(path)
        ran = blocks.executed(source, hit) if source is not None else None
        if ran is not None:
            found_blocks[path] = ran
    return found_blocks
