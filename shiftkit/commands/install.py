"""`shiftkit install-hooks`: plain git hook shims for repositories without the pre-commit
framework."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from shiftkit.core.errors import Refused
from shiftkit.core.resources import hooks_dir
from shiftkit.edge import framework_env, gitio

HOOKS = ("pre-commit", "commit-msg")
GUARD_HOOKS = ("reference-transaction", "pre-push")
MARKER = "shiftkit"
# How an installed shim runs shiftkit: by the absolute path of the interpreter that installed
# it, never by a name looked up on PATH when the hook runs (decision 0030), with `-P` so the
# work tree git runs hooks in is not first on Python's path: a `shiftkit/` folder there is
# not what runs (decision 0070; shims from before run `-m shiftkit` alone). The shims run the
# entry point by `-c`, as `.shiftkit/hook` does: `-m` imports runpy first, 5 ms of every
# commit's reference-transaction hook (decision 0122); shims from before, `-P -m shiftkit`.
RUN_MAIN = framework_env.RUN_MAIN
RECORDED = re.compile(
    rf"\bexec (?:'([^']+)'|(\S+)) (-P )?(?:-m shiftkit|-c {re.escape(shlex.quote(RUN_MAIN))}) "
)


def shiftkit_command() -> str:
    """The absolute command the merge drivers run: this interpreter with `-P -m shiftkit`."""
    return f"{shlex.quote(os.path.abspath(sys.executable))} -P -m shiftkit"


def shim_command() -> str:
    """The absolute command the shims run: this interpreter with `-P -c RUN_MAIN`."""
    return f"{shlex.quote(os.path.abspath(sys.executable))} -P -c {shlex.quote(RUN_MAIN)}"


def shim_text(name: str) -> str:
    """The bundled shim with its `shiftkit` calls pinned to `shim_command()`."""
    python = shlex.quote(os.path.abspath(sys.executable))
    text = (hooks_dir() / name).read_text(encoding="utf-8")
    text = text.replace("command -v shiftkit", f"command -v {python}")
    text = text.replace("# (site check)\n", (hooks_dir() / SITE_CHECK).read_text(encoding="utf-8"))
    return text.replace("exec shiftkit ", f"exec {shim_command()} ")


def recorded_python(text: str) -> str | None:
    """The interpreter an installed shim runs shiftkit with; None: a shim that looks shiftkit
    up on PATH (from before decision 0030), or not shiftkit's."""
    match = RECORDED.search(text)
    return (match.group(1) or match.group(2)) if match else None


def isolated(text: str) -> bool:
    """Whether an installed shim runs shiftkit with `-P` (decision 0070): a shim from before
    runs a `shiftkit/` folder at the project root instead, so `setup` rewrites it."""
    match = RECORDED.search(text)
    return match is not None and match.group(3) is not None


INTERPRETER = "interpreter"  # in the common git dir's shiftkit/: what `.shiftkit/hook` runs


def interpreter_record(common_dir: Path) -> Path:
    return common_dir / "shiftkit" / INTERPRETER


def recorded_interpreter(common_dir: Path) -> str | None:
    """The interpreter `.shiftkit/hook` runs shiftkit with in this clone, if it is recorded
    and still there (decision 0058)."""
    try:
        named = interpreter_record(common_dir).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return named if named and os.access(named, os.X_OK) else None


SITE_CHECK = "site-check"  # the shell lines each hook runs before Python (decision 0091)
SITE_RECORD = "site"  # in the common git dir's shiftkit/: what the site check compares


def record_site(common_dir: Path) -> Path:
    """Record the text of this interpreter's `.pth` and `*customize.py` files (as their sum)
    and the folders they are in, for the site check of every hook (decision 0091)."""
    import site

    from shiftkit.edge.atomic import atomic_write

    folders = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    listed = ":".join(folder for folder in folders if not {":", "\n"} & set(folder))
    # The sum as the hooks compute it: the function the site check defines, run by `sh`.
    path = common_dir / "shiftkit" / SITE_RECORD
    try:
        script = (hooks_dir() / SITE_CHECK).read_text(encoding="utf-8")
    except OSError:
        return path  # (an installation without its hook scripts has no site check to feed)
    summed = subprocess.run(
        ["sh", "-c", f'{script}\nshiftkit_site_sum "$1"', "sh", listed],
        capture_output=True,
        text=True,
    )
    atomic_write(path, f"{listed}\n{summed.stdout.strip()}\n")
    return path


def record_interpreter(common_dir: Path) -> Path:
    """Record this interpreter for the agent harnesses' hook script, `.shiftkit/hook`: it
    runs `<interpreter> -m shiftkit`, so a hook works whatever PATH the harness's shell has."""
    from shiftkit.edge.atomic import atomic_write

    path = interpreter_record(common_dir)
    atomic_write(path, os.path.abspath(sys.executable) + "\n")
    # (The site check starts when a person records the site: `shiftkit setup
    # --trust-installation`. Recorded by every setup, it failed closed on honest changes of a
    # shared environment — a `pip install` into it — before a person could look: 0091.)
    return path


HOOK_SCRIPT = ".shiftkit/hook"  # the committed script the harnesses run shiftkit's hooks by
# git's config key of each merge driver `.gitattributes` names: (its name, the command it runs)
MERGE_DRIVERS = {
    "merge.shiftkit-features": ("shiftkit feature-list merge", "merge-features"),
    "merge.shiftkit-log": ("shiftkit progress-log merge", "merge-log"),
}
DRIVER_ARGUMENTS = "%O %A %B"
# A driver from a project without the hook script: this interpreter, as the shims pin it.
PINNED_DRIVER = re.compile(
    rf"^(?:'([^']+)'|(\S+)) -P -m shiftkit merge-(?:features|log) {DRIVER_ARGUMENTS}$"
)


def driver_command(root: Path, subcommand: str) -> str:
    """How git runs shiftkit's merge driver in this clone: never by `shiftkit` on PATH (a
    venv not on it made every merge of the list a conflict without markers). git runs a
    driver at the top of the work tree (a linked worktree's too, and under `git -C`), so the
    relative `.shiftkit/hook` is found there, survives a moved clone, and runs shiftkit by
    the interpreter `setup` recorded, as the harnesses' hooks do; `sh`, so a checkout that
    lost the executable bit still merges. A project without that script (from before
    decision 0058): this interpreter's absolute path, as the git hooks' shims pin it."""
    if (root / HOOK_SCRIPT).is_file():
        return f"sh {HOOK_SCRIPT} {subcommand} {DRIVER_ARGUMENTS}"
    return f"{shiftkit_command()} {subcommand} {DRIVER_ARGUMENTS}"


def driver_ok(root: Path, key: str, configured: str) -> bool:
    """Whether the configured driver for `key` (`merge.shiftkit-features.driver`) runs
    shiftkit as `driver_command` would: a bare `shiftkit merge-features …` (as set up
    before) does not, nor one pinned to an interpreter that is gone."""
    subcommand = MERGE_DRIVERS[key.removesuffix(".driver")][1]
    if configured == driver_command(root, subcommand):
        return True
    pinned = PINNED_DRIVER.match(configured)
    if pinned is None or f" {subcommand} " not in configured:
        return False
    python = pinned.group(1) or pinned.group(2)
    return not (root / HOOK_SCRIPT).is_file() and os.access(python, os.X_OK)


def configure_merge_driver(root: Path) -> None:
    """The `merge=shiftkit-features` and `merge=shiftkit-log` attributes need their drivers
    in git's config."""
    for section, (name, subcommand) in MERGE_DRIVERS.items():
        gitio.run(["config", f"{section}.name", name], root)
        gitio.run(["config", f"{section}.driver", driver_command(root, subcommand)], root)


def hooks_path(root: Path) -> Path:
    configured = gitio.run(["config", "--get", "core.hooksPath"], root, check=False).stdout.strip()
    if configured:
        raise Refused(
            f"core.hooksPath is set to {configured!r}, so git does not run hooks from .git/hooks; "
            f"shiftkit will not write there. Unset it (`git config --unset core.hooksPath`) or "
            f'call `shiftkit hook pre-commit` and `shiftkit hook commit-msg "$1"` from those hooks'
        )
    target = Path(gitio.out(["rev-parse", "--git-path", "hooks"], root).strip())
    target = target if target.is_absolute() else root / target
    target.mkdir(parents=True, exist_ok=True)
    return target


def place(target: Path, name: str, force: bool) -> Path:
    destination = target / name
    if destination.exists() and MARKER not in destination.read_text(errors="replace"):
        if not force:
            raise Refused(
                f"{destination} exists and is not shiftkit's (the pre-commit framework's, or "
                f"your own); rerun with --force to replace it (it is kept as {name}.pre-shiftkit)"
            )
        shutil.copy2(destination, target / f"{name}.pre-shiftkit")
    destination.write_text(shim_text(name), encoding="utf-8")
    destination.chmod(0o755)
    return destination


def install(root: Path, force: bool) -> list[Path]:
    """The plain commit-hook shims and the guard hooks."""
    target = hooks_path(root)
    installed = [place(target, name, force) for name in HOOKS]
    installed += install_guard_hooks(root, force)
    configure_merge_driver(root)
    return installed


def install_guard_hooks(root: Path, force: bool = False) -> list[Path]:
    """The reference-transaction and pre-push shims, which the pre-commit framework does not
    manage: beside its hooks or the plain shims; and the interpreter `.shiftkit/hook` runs."""
    target = hooks_path(root)
    placed = [place(target, name, force) for name in GUARD_HOOKS]
    record_interpreter(gitio.common_dir(root))
    return placed


def install_pre_commit(root: Path) -> None:
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "pre_commit", "install"),
            # Named here, not by `default_install_hook_types` in the user's config: their hooks
            # without `stages` would run at commit-msg too (decision 0037).
            *("--hook-type", "pre-commit", "--hook-type", "commit-msg"),
        ],
        cwd=root,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        detail = (proc.stdout + proc.stderr).strip().splitlines()
        raise Refused(
            f"`pre-commit install` failed: {detail[-1] if detail else proc.returncode}; "
            f"is the pre-commit package installed next to shiftkit?"
        )


def install_cmd(force: bool, say: Callable[[str], None]) -> None:
    """`shiftkit install-hooks` in the project found from here, saying each hook installed."""
    from shiftkit.edge import project

    for path in install(project.find().root, force):
        say(f"installed {path}")
