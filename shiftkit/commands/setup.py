"""`shiftkit setup`: what a clone needs and git does not carry — the commit hooks, the
reference-transaction and pre-push hooks, and the feature list's merge driver.

Idempotent: it installs only what is missing. `missing` is the check `shiftkit start` makes
on every session, so it costs one `git config` and a few small reads.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from shiftkit.commands import install
from shiftkit.core.errors import OK, REFUSED
from shiftkit.edge import gitio

Say = Callable[[str], None]

PRE_COMMIT_CONFIG = ".pre-commit-config.yaml"
AGENT_HOOK = "the interpreter for .shiftkit/hook"
DRIVER_KEYS = tuple(f"{section}.driver" for section in install.MERGE_DRIVERS)


def _settings(root: Path) -> tuple[str, bool]:
    """(core.hooksPath or "", whether both merge drivers are configured to run shiftkit as
    `install.driver_command` does), in one git call."""
    proc = gitio.run(
        ["config", "--get-regexp", r"^(core\.hookspath|merge\.shiftkit-(features|log)\.driver)$"],
        root,
        check=False,
    )
    hooks_path, drivers = "", set()
    for line in proc.stdout.splitlines():
        key, _, value = line.partition(" ")
        if key.lower() == "core.hookspath":
            hooks_path = value.strip()
        elif key in DRIVER_KEYS and install.driver_ok(root, key, value.strip()):
            drivers.add(key)
    return hooks_path, len(drivers) == len(DRIVER_KEYS)


def _hook_ok(path: Path, markers: tuple[str, ...]) -> bool:
    """An executable hook that is the pre-commit framework's or shiftkit's; a shiftkit shim
    must run shiftkit by a recorded interpreter that still exists (decision 0030), with `-P`
    (decision 0070)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    if not os.access(path, os.X_OK) or not any(marker in text for marker in markers):
        return False
    if "pre-commit" in markers and "pre_commit" in text:  # the framework's own script
        return True
    python = install.recorded_python(text)
    return python is not None and os.access(python, os.X_OK) and install.isolated(text)


def missing(root: Path, common_dir: Path) -> list[str]:
    """What this clone lacks, by name: hooks git would not run shiftkit from, and the merge
    driver `.gitattributes` names."""
    hooks_path, driver = _settings(root)
    hooks = Path(hooks_path) if hooks_path else common_dir / "hooks"
    hooks = hooks if hooks.is_absolute() else root / hooks
    lacking = [
        f"{name} hook"
        for name in install.HOOKS
        # the pre-commit framework's own script, or shiftkit's plain shim
        if not _hook_ok(hooks / name, ("pre-commit", install.MARKER))
    ]
    lacking += [
        f"{name} hook"
        for name in install.GUARD_HOOKS
        if not _hook_ok(hooks / name, (install.MARKER,))
    ]
    if not driver:
        lacking.append("merge drivers")
    if install.recorded_interpreter(common_dir) is None:
        lacking.append(AGENT_HOOK)
    return lacking


def setup(
    root: Path, common_dir: Path, force: bool = False, trust_installation: bool = False
) -> list[str]:
    """Install what `missing` names; what was done, one line each (empty: nothing to do).
    The installation judging this clone is recorded the first time (and when a person says
    `trust_installation`); a different one is said, not recorded (decision 0063)."""
    from shiftkit.edge import installation, session

    session.clone_id(common_dir)  # this clone's random id, made once (claims name it)
    lacking = missing(root, common_dir)
    done = []
    if trust_installation or installation.recorded(common_dir) is None:
        installation.record(common_dir)
        install.record_site(common_dir)
        done.append(
            "the record of this shiftkit installation (package, program, interpreter, the "
            "interpreter's .pth and sitecustomize files)"
        )
    framework = (root / PRE_COMMIT_CONFIG).is_file()
    if framework and any(f"{name} hook" in lacking for name in install.HOOKS):
        install.install_pre_commit(root)  # both hook types, named explicitly
        done.append("pre-commit and commit-msg hooks (pre-commit framework)")
    shims = install.GUARD_HOOKS if framework else (*install.HOOKS, *install.GUARD_HOOKS)
    for name in shims:
        if f"{name} hook" in lacking:
            done.append(f"{name} hook: {install.place(install.hooks_path(root), name, force)}")
    if "merge drivers" in lacking:
        install.configure_merge_driver(root)
        done.append(f"merge drivers ({', '.join(DRIVER_KEYS)})")
    if AGENT_HOOK in lacking:
        done.append(f"{AGENT_HOOK}: {install.record_interpreter(common_dir)}")
    return done


def setup_cmd(force: bool, trust_installation: bool, say: Say, warn: Say) -> int:
    """`shiftkit setup` in the project found from here: install what is missing, say it, and
    refuse (1) when the installation judging this clone is not the running one."""
    from shiftkit.commands import advice
    from shiftkit.edge import installation, project

    root = project.find().root
    common = gitio.common_dir(root)
    problem = None if trust_installation else installation.problem(common)
    done = setup(root, common, force, trust_installation)
    for line in done:
        say(f"installed {line}")
    if problem:
        warn(f"shiftkit: {problem}")
        return REFUSED
    if not done:
        say("setup: nothing to do, the hooks and the merge drivers are in place")
    advice.codex_trust(root, warn)
    return OK
