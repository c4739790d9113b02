"""The commit hooks as the pre-commit framework runs them from the hook repository
(`language: python`, decision 0118): from an environment pre-commit built in its store, with
that environment's `bin` put first on PATH and `VIRTUAL_ENV` naming it.

The hook knows that environment for what it is and judges as the local route does
(`.shiftkit/hook`, which pre-commit runs with the caller's environment as it is):

- the caller's PATH and no `VIRTUAL_ENV`, so a verifier finds the project's `python` and
  `pytest`, not the hook environment's;
- and where `shiftkit setup` recorded this clone's judge (the interpreter `.shiftkit/hook`
  runs), the commit is handed to it: the same shiftkit, version and rules as every other hook
  of the clone, whatever `rev` the config pins. With none recorded (CI, a clone never set
  up), the hook environment's shiftkit judges.

Imported on every commit's hook: `os` and `sys` only.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, MutableMapping, Sequence

HOOK_SCRIPT = os.path.join(".shiftkit", "hook")
RUN_MAIN = "import sys; from shiftkit.main import main; sys.exit(main())"


def pre_commit_store(environ: Mapping[str, str]) -> str:
    """Where pre-commit keeps the environments it builds (its own rule: `PRE_COMMIT_HOME`,
    else `XDG_CACHE_HOME/pre-commit`, else `~/.cache/pre-commit`)."""
    home = environ.get("PRE_COMMIT_HOME") or os.path.join(
        environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pre-commit"
    )
    return os.path.realpath(home)


def _inside(path: str, folder: str) -> bool:
    return os.path.commonpath([path, folder]) == folder


def from_pre_commit_env(environ: Mapping[str, str], prefix: str) -> bool:
    """Whether this process is a hook pre-commit runs from an environment of its store: the
    framework's marker, `VIRTUAL_ENV` naming this interpreter's prefix, that prefix in the
    store, and its `bin` first on PATH (an activated venv of the person's is none of these)."""
    venv = environ.get("VIRTUAL_ENV", "")
    if environ.get("PRE_COMMIT") != "1" or not venv:
        return False
    real = os.path.realpath(prefix)
    if os.path.realpath(venv) != real or not _inside(real, pre_commit_store(environ)):
        return False
    first = environ.get("PATH", "").split(os.pathsep, 1)[0]
    return bool(first) and os.path.realpath(first) == os.path.join(real, "bin")


def give_back_caller_environment(environ: MutableMapping[str, str], prefix: str) -> bool:
    """Drop what pre-commit put in for its environment (its `bin` on PATH, `VIRTUAL_ENV`);
    True when it did (this process runs from pre-commit's environment)."""
    if not from_pre_commit_env(environ, prefix):
        return False
    path = environ.get("PATH", "")
    environ["PATH"] = path.split(os.pathsep, 1)[1] if os.pathsep in path else ""
    del environ["VIRTUAL_ENV"]
    return True


def recorded_judge(common_dir: str, executable: str) -> str | None:
    """The interpreter `shiftkit setup` recorded for this clone, when it is there and is not
    ``executable`` (None: nothing recorded, gone, or this one)."""
    try:
        with open(os.path.join(common_dir, "shiftkit", "interpreter"), encoding="utf-8") as f:
            named = f.read().strip()
    except OSError:
        return None
    if not named or not os.access(named, os.X_OK):
        return None
    return None if os.path.abspath(named) == os.path.abspath(executable) else named


def handover_argv(root: str, judge: str, argv: Sequence[str]) -> list[str]:
    """How the recorded judge is run: through `.shiftkit/hook` as the local route runs it
    (its site check first, decision 0091), else that interpreter as the git shims run it."""
    if os.path.isfile(os.path.join(root, HOOK_SCRIPT)):
        return ["sh", HOOK_SCRIPT, "hook", *argv]
    return [judge, "-P", "-c", RUN_MAIN, "hook", *argv]


def judge_here(root: str, git_dir: str | None, argv: Sequence[str]) -> None:
    """Run from pre-commit's environment: give the caller its environment back and, when
    this clone (``git_dir``: its worktree's git dir) records another judge, replace this
    process by it (no return)."""
    if not give_back_caller_environment(os.environ, sys.prefix):
        return
    from shiftkit.edge import verdicts

    judge = recorded_judge(verdicts.common_of(git_dir), sys.executable) if git_dir else None
    if judge is None:
        return
    command = handover_argv(root, judge, argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(root)
    os.execvp(command[0], command)
