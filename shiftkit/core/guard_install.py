"""The guard on shiftkit's own installation and on the git settings that run programs or decide
signatures (decision 0063): the judge is not the agent's to replace.

`cp /bin/true $VENV/bin/shiftkit` made every hook and the stop check "pass"; a `.pth` file or
`sitecustomize.py` in site-packages runs code in every shiftkit process; `pip install -e` of
another package into shiftkit's environment shadows it. Paths are judged two ways: by their
ending, wherever they are (`bin/shiftkit`, `bin/python*`, site-packages' `.pth` files,
`sitecustomize.py`, `usercustomize.py`, `site-packages/shiftkit*`), which needs no knowledge of
the installation and covers `$VENV/...`; and by place, under the installation the running
shiftkit reports (`configure`: its package folder, its environment's prefix, its interpreter).
"""

from __future__ import annotations

import os
import re

from shiftkit.core.guard_options import parse_options

LABEL = "shiftkit's installation (the judge: its package, entry points, interpreter, site-packages)"
INSTEAD = (
    "shiftkit's installation judges the work and is a person's to change (`pip install` of "
    "shiftkit by a person, then `shiftkit setup`); install the project's own dependencies into "
    "the project's environment, never shiftkit's: stop and ask a person"
)
_SITE = {"site-packages", "dist-packages"}
_INTERPRETER = re.compile(r"python[\d.]*")
_places: tuple[str, ...] = ()  # absolute folders and files of the running installation
_prefix: str | None = None  # its environment, when it has one of its own (a venv)
_path_pip_is_ours = False  # the PATH's `pip`/`python` are that environment's


def configure(package: str, prefix: str | None, interpreter: str, path_pip_is_ours: bool) -> None:
    """The running installation (set by the guard's command before judging)."""
    global _places, _prefix, _path_pip_is_ours
    places = [package, interpreter]
    if prefix is not None:
        places += [os.path.join(prefix, "bin"), os.path.join(prefix, "lib")]
    _places = tuple(os.path.normpath(p) for p in places if p)
    _prefix = os.path.normpath(prefix) if prefix else None
    _path_pip_is_ours = path_pip_is_ours


def _by_ending(parts: list[str]) -> bool:
    if not parts:
        return False
    name = parts[-1]
    if name in {"sitecustomize.py", "usercustomize.py"}:
        return True
    in_site = [i for i, part in enumerate(parts) if part in _SITE]
    if in_site:
        after = parts[in_site[-1] + 1 :]
        if after[:1] and (after[0].endswith(".pth") or after[0].lower().startswith("shiftkit")):
            return True
        if after[:1] and after[0].startswith("__editable__") and "shiftkit" in after[0]:
            return True
    if len(parts) >= 2 and parts[-2] == "bin":
        return name == "shiftkit" or _INTERPRETER.fullmatch(name) is not None
    return False


def unknown_folder_installation(parts: list[str]) -> bool:
    """Whether a path whose folder the shell makes when it runs (``parts[0]``) could be a file
    of shiftkit's installation: by ending, or a `.pth` straight inside that folder (it may be
    site-packages)."""
    return _by_ending(parts) or (len(parts) == 2 and parts[1].endswith(".pth"))


def is_installation(path: str, absolute: str | None) -> bool:
    """Whether this shell word (``absolute``: its absolute form, when known) names a file of
    shiftkit's installation."""
    parts = [p for p in os.path.normpath(path).split("/") if p not in ("", ".")]
    if _by_ending(parts):
        return True
    if absolute is None:
        return False
    target = os.path.normpath(absolute)
    return any(target == place or target.startswith(place + "/") for place in _places)


PIP_WRITES = {"install", "uninstall", "download"}


def _ours(absolute: str | None) -> bool:
    """Whether this absolute path is in the running installation or its environment."""
    if absolute is None:
        return False
    target = os.path.normpath(absolute)
    places = (*_places, *((_prefix,) if _prefix else ()))
    return any(target == place or target.startswith(place + "/") for place in places)


def pip_reason(program: str, args: list[str], root: str | None = None) -> str | None:
    """Why this pip run (`pip ...`, `python -m pip ...`, `uv pip ...`) must not: it writes
    into shiftkit's environment — named by path (the program, `--target`, `--prefix`,
    `--python`; relative ones from ``root``), or by name while the PATH's pip is that
    environment's."""
    action = next((a for a in args if not a.startswith("-")), "")
    if action not in {"install", "uninstall"}:
        return None
    options = parse_options(args, "t", "", ("--target", "--prefix", "--root", "--python"))
    into = options.value("-t", "--target", "--prefix", "--root", "--python")
    named = into if into is not None else program
    if into is None and "/" not in program:
        if _path_pip_is_ours:
            return (
                f"`{os.path.basename(program)} {action}` runs the PATH's pip, which is shiftkit's "
                f"environment ({_prefix}): it writes into {LABEL}; {INSTEAD}"
            )
        return None  # the PATH's pip: another environment, the project's (decision 0063)
    absolute = named if named.startswith("/") else None
    if absolute is None and root is not None and not named.startswith(("~", "$")):
        absolute = os.path.join(root, named)
    if _ours(absolute):
        return f"`pip {action}` into {named} writes into {LABEL}; {INSTEAD}"
    return None


def pip_call(argv: list[str]) -> tuple[str, list[str]] | None:
    """(the program naming the environment, pip's arguments) when this runs pip."""
    program = os.path.basename(argv[0]) if argv else ""
    if re.fullmatch(r"pip[\d.]*", program):
        return argv[0], argv[1:]
    if program == "uv" and argv[1:2] == ["pip"]:
        return argv[0], argv[2:]
    if _INTERPRETER.fullmatch(program) and len(argv) > 2 and argv[1] == "-m" and argv[2] == "pip":
        return argv[0], argv[3:]
    return None


# git settings that run a program on git's calls or decide whose signature is good: a
# person's (the commit hooks and `signed` depend on them).
PROGRAM_KEYS = {
    "user.signingkey",
    "core.fsmonitor",
    "core.sshcommand",
    "core.pager",
    "core.askpass",
    "core.alternaterefscommand",
    "diff.external",
    "credential.helper",
    "ssh.variant",
    "uploadpack.packobjectshook",
    "interactive.difffilter",
}
PROGRAM_PATTERNS = re.compile(
    r"^(gpg\..*|diff\..+\.(textconv|command)|merge\..+\.driver|filter\..+\.(clean|smudge|process|"
    r"required)|remote\..+\.(uploadpack|receivepack)|pager\..+|credential\..+\.helper)$"
)


def config_reason(key: str, how: str) -> str | None:
    """Why setting this git config key is a person's: it runs a program or decides which
    signatures are good."""
    lowered = key.lower()
    if lowered in PROGRAM_KEYS or PROGRAM_PATTERNS.match(lowered):
        return (
            f"{how} sets {key}, which runs a program on git's calls or decides whose signature "
            f"is good; git's config is a person's to change: stop and ask a person"
        )
    return None
