"""`shiftkit guard`: the PreToolUse hook of Claude Code and of Codex CLI (`Bash`, and
`apply_patch`, whose patch is judged by the files it names). It denies the ways around the commit
hooks, person actions, and edits that would change a feature's status by hand. Best effort: the
commit hooks and `audit` are the real guards; this one only catches the attempt early, with the
reason and the shiftkit command to use instead (decisions 0008 and 0009).

Contract (the same for both harnesses): exit 2 with the reason on stderr blocks the tool call;
exit 0 with nothing on stdout allows it.

The reading is in the core, one module per job: `guard_shell` (a shell line's words),
`guard_options` (getopt), `guard_paths` (protected files), `guard_git`, `guard_programs`,
`guard_command` (one line, unwrapped and dispatched) and `guard_files` (file-tool calls). This
module reads the files a decision needs and speaks the hook's contract.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

from shiftkit.core.guard_command import MAX_DEPTH, check_command
from shiftkit.core.guard_files import (
    FILE_TOOLS,
    PATCH_TOOL,
    apply_edits,
    check_file_edit,
    patch_key,
    payload_problem,
)
from shiftkit.core.guard_patch import check_patch, looks_like_patch
from shiftkit.core.guard_paths import (
    INSTEAD,
    Grounds,
    Site,
    label,
    path_kind,
    protected_kind,
    record_kind,
)
from shiftkit.core.guard_shell import split_commands
from shiftkit.edge import files

TYPE_CHECKING = False  # (typing is not imported on the guard's path: decision 0070)
if TYPE_CHECKING:
    from typing import Any

LEDGER_FILE = ".shiftkit/ledger.jsonl"  # (core.ledger.LEDGER_FILE: json and datetime unneeded)

__all__ = [
    "MAX_DEPTH",
    "Site",
    "check_command",
    "check_file_edit",
    "decide",
    "run_hook",
    "split_commands",
]


def _tool_path_kind(path: Path, root: Path | None, site: Site) -> str | None:
    """Which protected file a file tool (or a patch) would write at ``path``: the shell
    words' rule (`path_kind`) plus the records (progress log, archive, ledger)."""
    features_name = site.features
    if root is not None:
        try:
            relative: str | None = path.resolve().relative_to(root.resolve()).as_posix()
        except (ValueError, OSError, RuntimeError):
            relative = None
        if relative is not None:
            return (
                path_kind(relative, Site(features_name))
                or record_kind(relative, site)
                or protected_kind(relative, site)
            )
        kind = path_kind(path.as_posix(), Site(features_name))
        return kind if kind not in {"features", "config", "signers"} else None
    by_name = {os.path.basename(features_name): "features", ".shiftkit.toml": "config"}
    by_name.update({os.path.basename(r): "records" for r in site.records if r})
    if path.name in by_name:  # no project known: judge by the name alone
        return by_name[path.name]
    if path.parent.name == ".shiftkit" and path.name == "allowed_signers":
        return "signers"
    return path_kind(path.as_posix(), Site(features_name))


def decide(payload: dict[str, Any], root: Path | None, names: str | Site) -> str | None:
    """The reason to deny this tool call, or None to allow it (`names`: the feature list's
    name, or the project's protected names as a Site)."""
    site = Site(names) if isinstance(names, str) else names
    features_name = site.features
    problem = payload_problem(payload)
    if problem:
        return problem
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        return None
    if tool == "Bash":
        command = tool_input["command"]
        if root is not None:
            configure_worktrees(root)
        reason = check_command(command, _where(site, root, payload.get("cwd")))
        if reason is None and looks_like_patch(command):  # `apply_patch <<'EOF'` in a shell
            reason = _check_patch(command, root, site, payload.get("cwd"))
        return reason
    if tool == PATCH_TOOL:
        text = tool_input[patch_key(tool_input)]
        return _check_patch(text, root, site, payload.get("cwd"))
    if tool not in FILE_TOOLS:
        return None
    file_path = tool_input[FILE_TOOLS[tool]]
    path = Path(file_path)
    if root is not None and not path.is_absolute():
        path = root / path
    kind = _tool_path_kind(path, root, site)
    if kind is None:
        return None
    if kind != "features":
        return f"`{tool}` on {file_path} changes {label(kind, site)} by hand; " + (INSTEAD[kind])
    if tool == "NotebookEdit":
        return f"`NotebookEdit` on {features_name} changes it by hand; {INSTEAD['features']}"
    return _check_features_edit(tool, tool_input, path, features_name)


def _check_patch(text: str, root: Path | None, site: Site, cwd: Any) -> str | None:
    """A Codex patch, judged file by file as a Write of each path it names would be; a patch
    touching the feature list is denied whole (its hunks are not applied to be compared)."""
    base = Path(cwd) if isinstance(cwd, str) and cwd and "\0" not in cwd else root

    def kind_of(named: str) -> str | None:
        path = Path(named).expanduser()
        if base is not None and not path.is_absolute():
            path = base / path
        return _tool_path_kind(path, root, site)

    def say(verb: str, named: str, kind: str) -> str:
        shown = label(kind, site)
        what = named if os.path.normpath(named) == shown else f"{named} ({shown})"
        return f"`apply_patch` {verb} {what} by hand; {INSTEAD[kind]}"

    return check_patch(text, kind_of, say)


def _where(site: Site, root: Path | None, cwd: Any) -> Site:
    """The site at the project root, and where in it the call runs (the payload's cwd)."""
    if root is None:
        return site
    top = os.path.realpath(root)
    located = site.moved(top, None)
    if not isinstance(cwd, str) or not cwd or "\0" in cwd:
        return located.at("")
    place = located.place(os.path.realpath(cwd))
    return located.at(place if place is not None else "")


def _check_features_edit(
    tool: str, tool_input: dict[str, Any], path: Path, features_name: str
) -> str | None:
    try:
        current: str | None = files.read_text(path)
    except (OSError, UnicodeDecodeError):
        current = None
    if tool == "Write":
        proposed = tool_input.get("content")
        return check_file_edit(
            current, proposed if isinstance(proposed, str) else None, str(proposed), features_name
        )
    edits = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
    if not isinstance(edits, list):
        return f"the {tool} call's edits are not a list, so they cannot be checked; denied"
    edit_text = json.dumps(edits)
    if current is None:
        return check_file_edit(None, None, edit_text, features_name)
    proposed = apply_edits(current, [e for e in edits if isinstance(e, dict)])
    return check_file_edit(current, proposed, edit_text, features_name)


# -- the hook ----------------------------------------------------------------------------------

NAMES_GUARDED_TOOL = r'"tool_name"\s*:\s*"(?:Bash|Write|Edit|MultiEdit|NotebookEdit|apply_patch)"'


# Claude Code kills the hook after its timeout (30 s in the template's settings) and then lets
# the call through; the guard decides well before that, or denies (decision 0031).
DEADLINE = 20.0


def linked_worktrees(root: Path) -> list[str]:
    """This repository's worktrees other than ``root`` (read from the git dir's files, not by
    running git: the guard starts no process): each linked one's `gitdir` file, and the main
    one when ``root`` is linked."""
    try:
        dot_git = root / ".git"
        if dot_git.is_dir():
            common = dot_git
        else:
            own = Path(dot_git.read_text(encoding="utf-8").partition("gitdir:")[2].strip())
            own = own if own.is_absolute() else root / own
            common = (own / (own / "commondir").read_text(encoding="utf-8").strip()).resolve()
        found = [str(common.parent)] if common.name == ".git" else []
        for entry in (common / "worktrees").glob("*/gitdir"):
            found.append(os.path.dirname(entry.read_text(encoding="utf-8").strip()))
    except (OSError, ValueError):
        return []
    return [path for path in found if os.path.normpath(path) != os.path.normpath(root)]


def configure_worktrees(root: Path) -> None:
    from shiftkit.core import guard_worktrees

    guard_worktrees.configure(linked_worktrees(root))


def configure_installation() -> None:
    """Tell the guard where the running shiftkit is installed (decision 0063): its package,
    its environment (when it has one of its own), its interpreter, and whether the PATH's
    `pip` and `python` are that environment's."""
    import sys

    import shiftkit
    from shiftkit.core import guard_install

    package = os.path.dirname(os.path.abspath(shiftkit.__file__))
    prefix = sys.prefix if sys.prefix != sys.base_prefix else None
    ours = False
    if prefix is not None:
        found = [on_path(name) for name in ("pip", "python")]
        ours = any(
            path is not None and os.path.dirname(path) == os.path.join(prefix, "bin")
            for path in found
        )
    guard_install.configure(package, prefix, sys.executable, ours)


def on_path(name: str) -> str | None:
    """The program `name` the PATH runs, as `shutil.which` finds it (shutil is not
    imported for one lookup: decision 0070)."""
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or os.curdir, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def run_with_deadline(
    raw: bytes,
    locate: Callable[[str | None], tuple[Path | None, str | Site]],
    seconds: float = DEADLINE,
    say: Callable[[str], None] | None = None,
) -> tuple[int, str]:
    """`run_hook`, watched: past `seconds` the process prints one shiftkit: line and exits 2
    (deny), whatever the decision is waiting on. An interval timer's signal interrupts a
    blocking read as a watchdog thread would, without starting one before every tool call
    (decision 0070); off the main thread, where no signal handler can be set, a thread."""
    import signal
    import sys

    configure_installation()

    def expire(*_: object) -> None:
        line = (
            f"shiftkit: guard: no decision within {seconds:g} s (a file that never ends, a "
            f"FIFO, a command too large to read in time); denied. Check the project's files "
            f"with `shiftkit status`"
        )
        (say or (lambda text: print(text, file=sys.stderr, flush=True)))(line)
        os._exit(2)

    try:
        previous = signal.signal(signal.SIGALRM, expire)
    except ValueError:  # not the main thread
        return _run_watched(raw, locate, seconds, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return run_hook(raw, locate)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _run_watched(
    raw: bytes,
    locate: Callable[[str | None], tuple[Path | None, str | Site]],
    seconds: float,
    expire: Callable[[], None],
) -> tuple[int, str]:
    import threading

    done = threading.Event()

    def watchdog() -> None:
        if not done.wait(seconds):
            expire()

    threading.Thread(target=watchdog, daemon=True).start()
    try:
        return run_hook(raw, locate)
    finally:
        done.set()


def run_hook(
    raw: bytes, locate: Callable[[str | None], tuple[Path | None, str | Site]]
) -> tuple[int, str]:
    """The hook's exit code and its one stderr line (or ""), for the raw stdin bytes.
    `locate(cwd)` gives the project root (or None) and the feature list's name (or the
    protected names, as a Site)."""
    text = raw.decode("utf-8", errors="replace")
    if not text.strip():
        return 0, ""
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError) as exc:
        why = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
        if re.search(NAMES_GUARDED_TOOL, text):
            return 2, (
                f"shiftkit: guard: the hook input is not JSON ({why}) but names a shell "
                f"or file tool; denied because the call cannot be checked"
            )
        return 0, f"shiftkit: guard: the hook input is not JSON ({why}); allowing"
    if not isinstance(payload, dict):
        return 0, "shiftkit: guard: the hook input is not a JSON object; allowing"
    problem = payload_problem(payload)
    if problem:
        return 2, f"shiftkit: guard: {problem}"
    cwd = payload.get("cwd")
    root, features_name = locate(cwd if isinstance(cwd, str) and cwd and "\0" not in cwd else None)
    reason = decide(payload, root, features_name)
    if reason is None:
        return 0, ""
    return 2, "shiftkit guard: " + " ".join(reason.split())


def guard_site(cwd: str | None) -> tuple[Path | None, str | Site]:
    """The project root and the names the guard protects, or (None, the default list name).
    Found without click, `subprocess` or TOML once the settings were read (decision 0070)."""
    from shiftkit.core.errors import ShiftkitError
    from shiftkit.edge import gitio, locate

    try:
        top = locate.worktree_root(cwd or os.getcwd())
        if top is None:
            return None, "features.json"
        root = Path(top)
        git_dir, common = gitio.git_dirs(root)
        settings, config_text = locate.guard_settings(top, str(git_dir), str(common))
    except (ShiftkitError, OSError, ValueError):
        return None, "features.json"
    try:  # every tool call is a sign of life: the claim's heartbeat
        from shiftkit.edge import heartbeat

        held = heartbeat.beat(git_dir, common)
        if held is not None and settings.remote and settings.claims_enabled:
            from shiftkit.edge import remote

            cfg = locate.committed_config(top)[0]
            remote.keep_alive(root, git_dir, common, cfg.claims)
    except (ShiftkitError, OSError, ValueError):
        pass
    records = (settings.progress, settings.archive, LEDGER_FILE)
    return root, Site(
        settings.features,
        records,
        None,
        None,
        *_guard_ground(root, config_text, settings.features if config_text else None),
        claims=settings.ref_prefix,
        merging=lambda: _merging(git_dir),
    )


def _merging(git_dir: Path) -> bool:
    """A merge is in progress in this work tree: MERGE_HEAD, and no cherry-pick or revert
    (whose prepared message, also MERGE_MSG, carries the picked commit's trailers)."""
    marks = (git_dir / name for name in ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD"))
    merge, pick, revert = (mark.is_file() for mark in marks)
    return merge and not pick and not revert


def _guard_ground(
    root: Path, config_text: str | None, features: str | None
) -> tuple[Grounds, Callable[[str], bool]]:
    """Rule 14's ground at HEAD for the guard, read when first needed (from HEAD's settings
    as `guard_site` read them), and whether a path is committed at HEAD."""
    from shiftkit.edge import protection

    return (
        Grounds(lambda: protection.head_ground(root, config_text, features, read=False)),
        lambda path: protection.committed(root, path),
    )


def hook_input() -> bytes:
    """The hook's JSON as bytes: stdin, unless it is a terminal (or closed)."""
    import sys

    if sys.stdin is None or sys.stdin.isatty():
        return b""
    return sys.stdin.buffer.read()


def guard_cmd(raw: bytes, warn: Callable[[str], None]) -> int:
    """`shiftkit guard` on the hook's input `raw`: its verdict within the deadline
    ($SHIFTKIT_GUARD_DEADLINE may shorten it, never lengthen), the reason on `warn`."""
    try:
        seconds = float(os.environ.get("SHIFTKIT_GUARD_DEADLINE", DEADLINE))
    except ValueError:
        seconds = DEADLINE
    if not 0 < seconds <= DEADLINE:  # (nan too) a test may shorten it, never lengthen
        seconds = DEADLINE
    code, message = run_with_deadline(raw, guard_site, seconds)
    if message:
        warn(message)
    return code  # 2 (USAGE): Claude Code blocks the call and shows the reason to the model
