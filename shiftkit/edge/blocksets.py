"""Measuring which Python code blocks a verifier run executed (decision records 0116, 0119;
the pure part is `shiftkit.core.blocks`): a private `sitecustomize` (`BOOT`) first on
`PYTHONPATH` records, in every Python process of the run, the checkout's lines it executes —
by `sys.monitoring` on Python 3.12+, by coverage.py before (asked for with
`SHIFTKIT_BLOCKS=on`); after a pass they become, per repository file, the blocks executed
with their fingerprints.

The measurement is trusted only when it is complete: every process of the run that opened a
committed Python file (strace's record, one file per process) must have written its data with
its measurement still in place at its exit. Otherwise — an interpreter nothing measures,
`python -I`, a process killed, pytest-cov or a debugger replacing coverage's tracer, a
non-Python program reading code — the run has no block set and the gate uses its files.

On unless `SHIFTKIT_BLOCKS=off`.
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


def _shiftkit_record(folder):
    # Python 3.12+: sys.monitoring, no import. Each code object reports its start once; one
    # under the checkout then reports each of its lines once (DISABLE after the first), so
    # the cost is one call per code object and per checkout line executed, not per event.
    monitoring = _sys.monitoring
    tool = next((t for t in (3, 4, 1, 2) if monitoring.get_tool(t) is None), None)
    if tool is None:
        return
    monitoring.use_tool_id(tool, "shiftkit")
    named = _os.environ.get("SHIFTKIT_BLOCKS_ROOTS", "").split(_os.pathsep)
    roots = tuple(r + "/" for r in named if r)
    seen = {}
    absolute = {}
    disable = monitoring.DISABLE
    line_event = monitoring.events.LINE

    def _started(code, offset):
        name = code.co_filename
        if name.startswith("<"):
            return disable  # (<frozen importlib._bootstrap>, <string>: no file of the checkout)
        if not name.startswith("/"):
            # (a script run by a relative path: resolved now, the process may chdir later)
            name = absolute.setdefault(name, _os.path.abspath(name))
        if name.startswith(roots):
            monitoring.set_local_events(tool, code, line_event)
        return disable

    def _line(code, number):
        seen.setdefault(code.co_filename, set()).add(number)
        return disable

    monitoring.register_callback(tool, monitoring.events.PY_START, _started)
    monitoring.register_callback(tool, line_event, _line)
    monitoring.set_events(tool, monitoring.events.PY_START)

    def _save():
        pid = _os.getpid()
        if monitoring.get_tool(tool) != "shiftkit":
            open(_os.path.join(folder, "disturbed.%d" % pid), "w").close()
            return
        monitoring.set_events(tool, 0)
        rows = ["%s\\t%s" % (absolute.get(name, name), " ".join(map(str, sorted(lines))))
                for name, lines in list(seen.items()) if "\\n" not in name]
        part = _os.path.join(folder, ".lines-part.%d" % pid)
        with open(part, "w", encoding="utf-8", errors="surrogateescape") as out:
            out.write("\\n".join(rows))
        _os.replace(part, _os.path.join(folder, "lines.pid%d.txt" % pid))

    import atexit

    atexit.register(_save)


def _shiftkit_cover(folder):
    # Before 3.12, with `SHIFTKIT_BLOCKS=on` and the interpreter shiftkit runs on: coverage.py
    # (its C tracer), imported from shiftkit's environment for this moment only.
    home = _os.environ.get("SHIFTKIT_COVERAGE_HOME", "")
    if not home or _os.environ.get("SHIFTKIT_COVERAGE_PYTHON") != "%d.%d" % _sys.version_info[:2]:
        return
    had = home in _sys.path
    if not had:
        _sys.path.append(home)
    try:
        import atexit
        import coverage

        # (coverage's own .pth may have started it already: that one is ours too)
        started = coverage.process_startup() or coverage.Coverage.current()
        tracer = _sys.gettrace()
    except Exception:
        return
    finally:
        if not had:
            _sys.path[:] = [p for p in _sys.path if p != home]

    def _check():
        # (a tracer replaced meanwhile — pytest-cov, a debugger — missed lines: say so)
        if started is None or _sys.gettrace() is not tracer:
            open(_os.path.join(folder, "disturbed.%d" % _os.getpid()), "w").close()

    atexit.register(_check)


def _shiftkit_measure():
    here = _os.path.dirname(_os.path.abspath(__file__))
    _sys.path[:] = [p for p in _sys.path if _os.path.abspath(p or ".") != here]
    folder = _os.environ.get("SHIFTKIT_BLOCKS_DATA", "")
    if not folder:
        return
    if _sys.version_info >= (3, 12):
        _shiftkit_record(folder)
    else:
        _shiftkit_cover(folder)


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

# The interpreter names a verifier's command calls through PATH: each one found on PATH gets a
# shim (`SHIM`) first on PATH, so the recorder survives the command's own `PYTHONPATH=...`.
PYTHON_NAMES = ("python", "python3", *(f"python3.{minor}" for minor in range(8, 20)))

SHIM = """#!/bin/sh
# shiftkit (decision record 0119): a verifier's own PYTHONPATH= replaced the recorder's folder;
# put it first again, then run the {name} found on PATH after this folder.
case ":${{PYTHONPATH:-}}:" in
  *:{boot}:*) ;;
  *) PYTHONPATH={boot}${{PYTHONPATH:+:$PYTHONPATH}}; export PYTHONPATH ;;
esac
IFS=:
for folder in $PATH; do
  [ "$folder" = {shims} ] && continue
  if [ -f "$folder/{name}" ] && [ -x "$folder/{name}" ]; then
    unset IFS
    exec "$folder/{name}" "$@"
  fi
done
echo "{name}: not found" >&2
exit 127
"""


def enabled() -> bool:
    """Block sets are measured and used unless ``SHIFTKIT_BLOCKS=off`` (decision 0119)."""
    return os.environ.get(SWITCH, "").strip().lower() != "off"


def _coverage_wanted() -> bool:
    # (coverage's per-process start — an import of ~140 ms and a database — is over the cost
    # bar; before 3.12 it is the only way, so it is asked for by name)
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
    ``directory`` (``root``: the checkout, the only code measured): Python 3.12+ processes by
    `sys.monitoring`, older ones by coverage.py when ``SHIFTKIT_BLOCKS=on`` and it is
    importable here."""
    boot = directory / "boot"
    boot.mkdir(exist_ok=True)
    (boot / "sitecustomize.py").write_text(BOOT, encoding="utf-8")
    data = directory / "data"
    data.mkdir(exist_ok=True)
    roots = dict.fromkeys((str(root).rstrip("/"), os.path.realpath(root)))
    assignments = {
        "SHIFTKIT_BLOCKS_DATA": str(data),
        "SHIFTKIT_BLOCKS_ROOTS": os.pathsep.join(roots),
    }
    home = _home() if _coverage_wanted() else None
    if home is not None:
        rc = directory / "coverage.rc"
        rc.write_text(
            RC.format(data=data / ".coverage", root=root, real=os.path.realpath(root)),
            encoding="utf-8",
        )
        assignments |= {
            "COVERAGE_PROCESS_START": str(rc),
            _HOME: home,
            _PYTHON: "{}.{}".format(*sys.version_info[:2]),
        }
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in assignments.items())
    shims = _shims(directory / "shims", boot)
    if shims is not None:
        exports += f' PATH={shlex.quote(str(shims))}"{os.pathsep}$PATH"'
    script = f'PYTHONPATH="$0${{PYTHONPATH:+:$PYTHONPATH}}" {exports} exec "$@"'
    return ("/bin/sh", "-c", script, str(boot))


def _shims(folder: Path, boot: Path) -> Path | None:
    """A shim for each of `PYTHON_NAMES` on PATH (a name PATH lacks stays missing, so a
    verifier's `command -v python3.9` answers as before); None when there is none. A command
    that runs an interpreter by its path (`.venv/bin/python`, a console script's shebang) and
    sets `PYTHONPATH` itself is not measured: its run keeps file-level sets."""
    import shutil

    found = [name for name in PYTHON_NAMES if shutil.which(name) is not None]
    if not found:
        return None
    folder.mkdir(exist_ok=True)
    for name in found:
        shim = folder / name
        text = SHIM.format(name=name, boot=shlex.quote(str(boot)), shims=shlex.quote(str(folder)))
        shim.write_text(text, encoding="utf-8")
        shim.chmod(0o755)
    return folder


def wrote_data(directory: Path) -> bool:
    """Whether any process of the run wrote block data (else there is nothing to read)."""
    folder = directory / "data"
    return folder.is_dir() and any(
        p.name.startswith(("lines.", ".coverage.")) for p in folder.iterdir()
    )


def _recorded(data_file: Path) -> dict[str, set[int]] | None:
    """A `sys.monitoring` record: absolute path → the lines executed there."""
    try:
        text = data_file.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return None
    found: dict[str, set[int]] = {}
    for row in text.splitlines():
        path, _, numbers = row.partition("\t")
        if not numbers.replace(" ", "").isdigit():
            return None
        found.setdefault(path, set()).update(int(n) for n in numbers.split())
    return found


def _covered(data_file: Path) -> dict[str, set[int]] | None:
    """A coverage.py data file: absolute path → the lines executed there."""
    import coverage

    data = coverage.CoverageData(basename=str(data_file))
    try:
        data.read()
        return {path: set(data.lines(path) or ()) for path in data.measured_files()}
    except Exception:
        return None


def collect(
    directory: Path,
    root: Path,
    sources: Mapping[str, str],
    needed: Collection[int],
) -> dict[str, dict[str, str]] | None:
    """Per repository path, the blocks the run executed with their fingerprints (``sources``:
    the judged tree's text of each committed Python file, by repository path); None unless
    every process of ``needed`` (those that opened committed Python files) wrote data with its
    measurement undisturbed."""
    folder = directory / "data"
    if not folder.is_dir() or any(p.name.startswith(_DISTURBED) for p in folder.iterdir()):
        return None
    lines: dict[str, set[int]] = {}
    measured: set[int] = set()
    tops = {str(root).rstrip("/") + "/", os.path.realpath(root).rstrip("/") + "/"}
    for data_file in folder.iterdir():
        found = _PID.search(data_file.name)
        if found is None:
            continue
        reader = _recorded if data_file.name.startswith("lines.") else _covered
        executed = reader(data_file)
        if executed is None:
            return None
        measured.add(int(found.group(1)))
        for path, hit in executed.items():
            top = next((t for t in tops if path.startswith(t)), None)
            if top is not None:
                lines.setdefault(path[len(top) :], set()).update(hit)
    if not set(needed) <= measured:
        return None
    found_blocks: dict[str, dict[str, str]] = {}
    for path, hit in lines.items():
        source = sources.get(path)
        ran = blocks.executed(source, hit) if source is not None else None
        if ran is not None:
            found_blocks[path] = ran
    return found_blocks
