"""Running verifiers (and init/smoke commands): timeouts, bounded output, failure signatures,
and the cache of passing trees."""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from shiftkit.core import runner_files, verdict
from shiftkit.edge import state
from shiftkit.edge.atomic import atomic_write

TAIL_LINES = 20
TAIL_CHARS = 2000


class Outcome(NamedTuple):
    command: str
    ok: bool
    exit_code: int | None  # None when it timed out
    seconds: float
    output: str
    reason: str = ""  # why a run that exited 0 is no pass (`judge_result`)
    note: str = ""  # what the run judged beside the tree: "oracle restored from ..." (0081)

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None

    def tail(self, lines: int = TAIL_LINES, chars: int = TAIL_CHARS) -> str:
        text = "\n".join(self.output.rstrip("\n").splitlines()[-lines:])
        return text[-chars:]

    def last_lines(self, lines: int = 5, chars: int = 600) -> str:
        """The last non-blank lines: what a failure's report quotes."""
        kept = [line for line in self.output.splitlines() if line.strip()][-lines:]
        return "\n".join(kept)[-chars:]

    def summary(self) -> str:
        said = self._verdict()
        return f"{said}; {self.note}" if self.note else said

    def _verdict(self) -> str:
        if self.timed_out:
            return f"timed out after {self.seconds:.0f}s"
        if self.reason and not self.ok:
            return self.reason
        if self.exit_code == 127:
            return "exit 127 (command not found)"
        return "passed" if self.ok else f"exit {self.exit_code}"


def run_command(
    command: str,
    cwd: Path,
    timeout: float,
    env: dict[str, str] | None = None,
    prefix: Sequence[str] = (),
    *,
    leave_running: bool = False,
) -> Outcome:
    """Run ``command`` with /bin/sh in its own process group until the shell itself exits
    (`process.run_until_own_exit`, decision record 0095): what it leaves running in the group
    is ended then, unless ``leave_running`` (`init`, the smoke test and `env_reset`, which may
    start the app or services the session and the verifiers use). Output goes to a file, so
    a background process that keeps the descriptors open cannot hang us. ``env``: default
    `verifier_environment` with the `env` setting of the project at ``cwd``. ``prefix``: argv
    the shell runs under (a tracer: `readsets.Measure.prefix`)."""
    import tempfile

    from shiftkit.edge import imports, overlay_venv, process, runner

    if env is None:
        env = verifier_environment(os.environ, named_variables(cwd))
    env = overlay_venv.variables(cwd, env)  # (an installing `init`'s private environment)
    # (pytest plugins: a person's installation, none the tree declares: 0097)
    env = runner.variables(env, runner.tree_plugins(cwd, clean_environment()))
    env = imports.variables(cwd, env)  # (in a checkout: imports from it, not the work tree)
    start = time.monotonic()
    with tempfile.TemporaryFile() as sink:
        code = process.run_until_own_exit(
            command, cwd, env, sink, timeout, prefix, leave_running=leave_running
        )
        sink.seek(0)
        output = sink.read().decode("utf-8", "replace")
    return Outcome(command, code == 0, code, time.monotonic() - start, output)


# -- what the verifier's own report says (decision record 0051) --------------------------------


def run_verifier(
    command: str,
    cwd: Path,
    timeout: float,
    env: dict[str, str] | None = None,
    junit: str = "",
    prefix: Sequence[str] = (),
    exact: bool = False,
) -> Outcome:
    """A verifier's run, judged by its report as well as its exit code: a pytest command
    (`verdict.runs_pytest`) is asked for a JUnit XML report in a folder of our own; any other
    command, when ``junit`` (the setting) names where it writes one, is read there (the file
    removed before and after). A run that exits 0 passes only when `judge_result` agrees.
    ``exact`` (re-verification): a pytest command that passed runs again exactly as the
    person wrote it, which must pass too — code cannot tell the judge from the person by the
    arguments shiftkit adds (decision record 0097)."""
    if verdict.runs_pytest(command):
        import tempfile

        with tempfile.TemporaryDirectory(prefix="shiftkit-report-") as folder:
            report = Path(folder) / "junit.xml"
            ran = run_command(verdict.with_report(command, str(report)), cwd, timeout, env, prefix)
            found = read_report(report, NO_PYTEST_REPORT)
            judged = judge_result(ran._replace(command=command), found, cwd)
        if not exact or not judged.ok:
            return judged
        return as_written(judged, run_command(command, cwd, timeout, env))
    if not junit:
        return run_command(command, cwd, timeout, env, prefix)
    report = cwd / junit
    _remove(report)
    try:
        ran = run_command(command, cwd, timeout, env, prefix)
        missing = f"the verifier wrote no JUnit XML report at {junit} (the `junit` setting)"
        return judge_result(ran, read_report(report, missing), cwd)
    finally:
        _remove(report)


def as_written(judged: Outcome, plain: Outcome) -> Outcome:
    """``judged`` (a pass with shiftkit's report arguments) as the run of the command exactly
    as written (``plain``) confirms it: a pass only when both passed."""
    if plain.ok:
        return judged._replace(seconds=judged.seconds + plain.seconds)
    reason = f"run exactly as written (without shiftkit's report arguments) it {plain.summary()}"
    return plain._replace(
        command=judged.command,
        reason=reason,
        output=f"{plain.output.rstrip()}\nshiftkit: {reason}\n",
    )


NO_PYTEST_REPORT = (
    "the verifier wrote no pytest report (pytest did not run, or ran without its junitxml plugin)"
)


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        pass  # (a folder there: reading it fails, which says so)


def read_report(path: Path, missing: str) -> verdict.Report | str:
    """The JUnit XML report at ``path``, or why there is none to read (``missing``: the reason
    when there is no file)."""
    try:
        with path.open("rb") as handle:
            data = handle.read(verdict.REPORT_LIMIT + 1)
    except FileNotFoundError:
        return missing
    except OSError as exc:
        return f"the verifier's report could not be read ({exc.strerror})"
    if len(data) > verdict.REPORT_LIMIT:
        return f"the verifier's report is larger than {verdict.REPORT_LIMIT >> 20} MiB"
    try:
        return verdict.read_report(data.decode("utf-8", "replace"))
    except verdict.BadReport as exc:
        return f"the verifier's report is not JUnit XML: {exc}"


def judge_result(
    outcome: Outcome, report: verdict.Report | str, cwd: Path | None = None
) -> Outcome:
    """``outcome`` as its report judges it: a run that exited 0 fails when ``report`` is a
    reason (no report, an unreadable one) or `verdict.refusal` finds one; the reason is its
    summary and the last line of its output. ``cwd``: where the run's test files are read
    (the skips their source marks are the person's: `declared_skips`)."""
    if not outcome.ok:
        return outcome
    if isinstance(report, str):
        reason: str | None = report
    else:
        declared = declared_skips(cwd, report) if cwd is not None else ()
        selects = verdict.person_selects(outcome.command)
        reason = verdict.refusal(report, outcome.output, declared, selects)
    if reason is None:
        return outcome
    return outcome._replace(
        ok=False, reason=reason, output=f"{outcome.output.rstrip()}\nshiftkit: {reason}\n"
    )


def declared_skips(cwd: Path, report: verdict.Report) -> frozenset[str]:
    """The skipped tests of ``report`` whose source marks them skipped or expected to fail
    (`core.declared`), as a person left it: in a temporary checkout (the assembled tree, the
    oracle as defined) the file there; in the work tree the file as HEAD holds it, not as the
    agent may have just edited it."""
    from shiftkit.core import declared
    from shiftkit.edge import gitio, imports

    in_checkout = imports.work_tree_of(cwd) is not None
    found: set[str] = set()
    sources: dict[str, str | None] = {}
    for shown, file, classname, name in report.skips:
        if not file or file.startswith("/") or ".." in Path(file).parts:
            continue
        if file not in sources:
            if in_checkout:
                try:
                    sources[file] = (cwd / file).read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    sources[file] = None
            else:
                try:
                    sources[file] = gitio.read_blobs(cwd, [f"HEAD:./{file}"])[0]
                except (gitio.GitFailed, OSError):
                    sources[file] = None
        source = sources[file]
        if source is not None and declared.declares(
            source, name, declared.class_chain(file, classname)
        ):
            found.add(shown)
    return frozenset(found)


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


def cache_path(common_dir: Path, tree: str, command: str) -> Path:
    """Where a pass of ``command`` at ``tree`` is recorded (its time: the file's)."""
    return state.repo_state(common_dir) / "passed" / _cache_key(tree, command)


def is_cached(common_dir: Path, tree: str, command: str) -> bool:
    return cache_path(common_dir, tree, command).is_file()


def record_pass(common_dir: Path, tree: str, command: str) -> None:
    atomic_write(
        state.repo_state(common_dir) / "passed" / _cache_key(tree, command), command + "\n"
    )


# -- what the verifier sees: the work tree, or a temporary checkout of exactly the tree ------

GIT_LOCATION_VARIABLES = (
    "GIT_INDEX_FILE",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_PREFIX",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
)


def cache_command(command: str, verify_in: str) -> str:
    """The cache's key for a command: a pass in a checkout is not a pass in the work tree."""
    return command if verify_in == "worktree" else f"[{verify_in}] {command}"


def hidden_paths(root: Path) -> list[str]:
    """Tracked files whose work tree content git is told to ignore (`update-index
    --skip-worktree` or `--assume-unchanged`): a verifier would see what no tree holds."""
    from shiftkit.edge import gitio

    listing = gitio.out(["ls-files", "-v", "-z"], root)
    return [entry[2:] for entry in listing.split("\0") if entry[:1] == "S" or entry[:1].islower()]


def unstaged_paths(root: Path) -> list[str]:
    """Tracked files with unstaged changes and untracked files git does not ignore: what the
    work tree holds beyond the index."""
    from shiftkit.edge import gitio

    changed = gitio.out(["diff", "--name-only", "-z"], root).split("\0")
    untracked = gitio.out(["ls-files", "--others", "--exclude-standard", "-z"], root).split("\0")
    return [path for path in changed + untracked if path]


def run_in_checkout(
    root: Path,
    tree: str,
    command: str,
    init: str,
    timeout: float,
    isolated: bool = False,
    junit: str = "",
    tip: str | None = None,
    exact: bool = False,
) -> Outcome:
    """``command`` (after ``init``) in a temporary worktree of ``tree`` as judged at ``tip``
    (`temporary_checkout`), removed after; ``isolated``: with `isolated_environment`;
    ``junit``, ``exact``: as `run_verifier`'s."""
    with temporary_checkout(root, tree, tip) as target, environment_for(root, isolated) as env:
        prepared = prepare_checkout(target, init, timeout, env)
        if prepared is not None:
            return prepared._replace(command=command)
        return run_in(target, command, timeout, env, junit, exact=exact)


# What an isolated run keeps of the environment: the locale and the terminal, nothing else.
KEPT_VARIABLES = ("LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TERM", "TZ")
SYSTEM_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


def isolated_path(path: str, repository: str, home: str) -> str:
    """PATH rebuilt from fixed locations (decision record 0044): the entries it started with
    that are absolute and lie neither in the repository nor under the user's home (where the
    code being judged, or an earlier verifier, can put a program: `~/.local/bin`, a pinned
    install in the CI runner's temp folder), then the system's folders."""
    import posixpath

    def inside(entry: str, folder: str) -> bool:
        folder = posixpath.normpath(folder) if folder else ""
        return bool(folder) and folder != "/" and (entry + "/").startswith(folder + "/")

    kept: list[str] = []
    for entry in path.split(os.pathsep):
        entry = posixpath.normpath(entry) if entry else ""
        if not posixpath.isabs(entry) or inside(entry, repository) or inside(entry, home):
            continue
        if entry not in kept:
            kept.append(entry)
    kept += [folder for folder in SYSTEM_PATH if folder not in kept]
    return os.pathsep.join(kept)


def isolated_environment(
    base: dict[str, str] | os._Environ[str],
    repository: Path,
    home: Path,
    named: Sequence[str] = (),
) -> dict[str, str]:
    """The environment of an isolated init or verifier: the locale and terminal of ``base``,
    ``home`` (a fresh, throwaway folder) as HOME and TMPDIR's parent, and `isolated_path`.
    No token, no git or Python variable, no shiftkit setting reaches the code being judged,
    and nothing it writes under HOME outlives the run."""
    env = {key: base[key] for key in (*KEPT_VARIABLES, *named) if key in base}
    env["HOME"] = str(home)
    env["TMPDIR"] = str(home / "tmp")
    env["PATH"] = isolated_path(base.get("PATH", ""), str(repository), base.get("HOME", ""))
    return env


@contextmanager
def environment_for(root: Path, isolated: bool) -> Iterator[dict[str, str] | None]:
    """None (the usual `clean_environment`), or an isolated environment whose HOME is a fresh
    folder, removed after."""
    if not isolated:
        yield None
        return
    import shutil
    import tempfile

    home = Path(tempfile.mkdtemp(prefix="shiftkit-home-"))
    (home / "tmp").mkdir()
    try:
        yield isolated_environment(os.environ, root, home, named_variables(root))
    finally:
        shutil.rmtree(home, ignore_errors=True)


# What every verifier and `init` keeps of the caller's environment (decision record 0088):
# where programs are, the user, temp, locale and terminal. Nothing else — no PYTEST_*,
# PYTHON*, LD_*, COVERAGE_*, VIRTUAL_ENV, no token — so a variable in an agent's shell
# cannot change a verdict, and a hook, `finish`, the harnesses and CI judge alike.
PERSON_VARIABLES = ("PATH", "HOME", "TMPDIR", "USER", "LOGNAME", *KEPT_VARIABLES)


def verifier_environment(
    base: dict[str, str] | os._Environ[str], named: Sequence[str] = ()
) -> dict[str, str]:
    """The environment of a verifier or `init`: `PERSON_VARIABLES` (and any `LC_*`) of
    ``base``, and the variables the settings name (`env`)."""
    wanted = {*PERSON_VARIABLES, *named}
    return {key: value for key, value in base.items() if key in wanted or key.startswith("LC_")}


_NAMED: dict[tuple[str, float], tuple[str, ...]] = {}
_CODE: dict[tuple[str, float], bool] = {}


def named_variables(folder: Path) -> tuple[str, ...]:
    """The `env` setting of the project at ``folder`` (its `.shiftkit.toml`, as the file there
    holds it: in a checkout, the assembled tree's, a person's); none when unreadable."""
    from shiftkit.core import config
    from shiftkit.core.errors import BadInput

    path = Path(folder) / config.CONFIG_FILE
    try:
        key = (str(path), path.stat().st_mtime)
        if key not in _NAMED:
            parsed = config.parse(path.read_text(encoding="utf-8"))
            _NAMED[key], _CODE[key] = parsed.env, bool(parsed.code)
        return _NAMED[key]
    except (OSError, ValueError, BadInput):
        return ()


def sets_code(folder: Path) -> bool:
    """Whether the project at ``folder`` sets `code` (its `.shiftkit.toml` as the file there
    holds it: in a checkout, the assembled tree's, a person's)."""
    path = Path(folder) / ".shiftkit.toml"
    named_variables(folder)
    try:
        return _CODE.get((str(path), path.stat().st_mtime), False)
    except OSError:
        return False


def clean_environment() -> dict[str, str]:
    """Our environment without git's location variables (a hook's GIT_INDEX_FILE would
    point the checkout's git at the wrong index)."""
    return {key: value for key, value in os.environ.items() if key not in GIT_LOCATION_VARIABLES}


@contextmanager
def temporary_checkout(root: Path, tree: str, tip: str | None = None) -> Iterator[Path]:
    """A temporary worktree of the tree a verdict on ``tree`` runs on — its files under
    `code` over the person's state at ``tip`` (default HEAD; `assemble.assembled`) —
    detached at a throwaway commit of it, so `git status` there compares with that tree;
    removed after."""
    import shutil
    import tempfile

    from shiftkit.edge import assemble, gitio, imports, overlay_venv

    env = clean_environment()
    tree = assemble.assembled(root, tree, tip)
    parent = gitio.head_oid(root)
    holder = gitio.run(
        [
            "commit-tree",
            tree,
            *(["-p", parent] if parent else []),
            "-m",
            "shiftkit: a temporary commit to verify this tree",
        ],
        root,
        env={**_TEMP_IDENTITY},
        clean_env=env,
    ).stdout.strip()
    workdir = Path(tempfile.mkdtemp(prefix="shiftkit-verify-"))
    target = workdir / "tree"
    try:
        with worktrees_changing(root):
            gitio.run(
                ["worktree", "add", "--detach", "-q", str(target), holder], root, clean_env=env
            )
        imports.register(target, root)
        yield target
    finally:
        imports.forget(target)
        overlay_venv.forget(target)
        _BUILT.pop(str(target), None)
        with worktrees_changing(root):
            gitio.run(
                ["worktree", "remove", "--force", str(target)], root, check=False, clean_env=env
            )
            shutil.rmtree(workdir, ignore_errors=True)
            gitio.run(["worktree", "prune"], root, check=False, clean_env=env)


def checkout_changes(target: Path) -> list[str]:
    """What differs in a temporary checkout from the tree it holds: changed or deleted tracked
    files, and every file git does not track — ignored ones too — outside runner caches and
    environments (`runner_files`, decision record 0052): a file the tree does not hold must
    not help its verifier. What `init` built there with `code` set (`built_by_init`) is the
    person's build step, not a change."""
    built = _BUILT.get(str(target), frozenset())
    return [path for path in tracked_changes(target) + added_files(target) if path not in built]


def tracked_changes(target: Path) -> list[str]:
    """The tracked files of a checkout that were changed or deleted."""
    from shiftkit.edge import gitio

    tracked = gitio.run(
        ["status", "--porcelain", "-z", "--untracked-files=no"],
        target,
        clean_env=clean_environment(),
    ).stdout
    return [entry[3:] for entry in tracked.split("\0") if len(entry) > 3 and entry[2] == " "]


def added_files(target: Path) -> list[str]:
    """The files a checkout holds beyond its tree, runner caches and environments left out."""
    return [path for path in untracked(target) if not runner_files.is_runner_output(path)]


# checkout -> what its `init` built there (files beside the tree: a C extension's `.so`), kept
# only when the project sets `code`: `init` is then the person's (decision record 0098)
_BUILT: dict[str, frozenset[str]] = {}
_WORKTREES = threading.Lock()


@contextmanager
def worktrees_changing(root: Path) -> Iterator[None]:
    """One change to ``root``'s worktrees at a time, across threads and shiftkit processes (a
    background verifier beside a `finish`): git reads every worktree's files to add one, and
    a remove or prune deletes them under it ("failed to read .git/worktrees/tree/commondir")."""
    import fcntl

    from shiftkit.edge import gitio

    with _WORKTREES, open(gitio.common_dir(root) / "shiftkit-worktrees.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def built_by_init(target: Path) -> frozenset[str]:
    return _BUILT.get(str(target), frozenset())


def untracked(target: Path) -> list[str]:
    """Every path git does not track in ``target``, ignored ones too; a folder that holds
    nothing tracked is one entry ending in `/`."""
    from shiftkit.edge import gitio

    listing = gitio.run(
        ["ls-files", "--others", "--directory", "--no-empty-directory", "-z"],
        target,
        clean_env=clean_environment(),
    ).stdout
    return [path for path in listing.split("\0") if path]


def drop_caches(target: Path) -> None:
    """Remove the pure caches (`runner_files.is_pure_cache`) `init` left in a checkout."""
    import shutil

    for path in untracked(target):
        if runner_files.is_pure_cache(path):
            where = target / path
            if where.is_dir() and not where.is_symlink():
                shutil.rmtree(where, ignore_errors=True)
            else:
                where.unlink(missing_ok=True)


def restore_checkout(target: Path) -> None:
    """Put a temporary checkout back to its tree, keeping runner caches and environments and
    what `init` built (`built_by_init`)."""
    from shiftkit.edge import gitio

    env = clean_environment()
    built = ["/" + path for path in sorted(built_by_init(target))]
    kept = [word for line in [*runner_files.gitignore_lines(), *built] for word in ("-e", line)]
    gitio.run(["reset", "-q", "--hard"], target, clean_env=env)
    gitio.run(["clean", "-f", "-d", "-x", "-q", *kept], target, clean_env=env)


def _changed_tree(outcome: Outcome, what: str, changes: list[str]) -> Outcome:
    listed = ", ".join(changes[:5]) + (f" and {len(changes) - 5} more" if len(changes) > 5 else "")
    return outcome._replace(
        ok=False,
        exit_code=outcome.exit_code or 1,
        reason=f"{what} changed the checkout it was judging ({listed})",
        output=(
            f"{what} changed the checkout it was judging ({listed}): what is verified must be "
            f"the committed tree itself, and only runner caches and environments may be "
            f"written there (__pycache__/, .venv/, node_modules/, ...; an ignored file counts)\n"
            + outcome.output
        ),
    )


def prepare_checkout(
    target: Path, init: str, timeout: float, env: dict[str, str] | None = None
) -> Outcome | None:
    """Run ``init`` in a temporary checkout; None when it passed and left the tree as it was
    (the pure caches it wrote then dropped), else the failure to report in the verifier's
    place. ``env``: default `clean_environment`."""
    from shiftkit.edge import overlay_venv

    _BUILT.pop(str(target), None)
    if not init:
        return None
    # (what `init` installs goes to a private environment, never the developer's: 0098)
    overlay_venv.make(
        target,
        env if env is not None else verifier_environment(os.environ, named_variables(target)),
    )
    prepared = run_command(init, target, timeout, env, leave_running=True)
    if not prepared.ok:
        return prepared._replace(
            output=(
                f"init ({init}) failed in the temporary checkout: {prepared.summary()}\n"
                + prepared.output
            ),
        )
    changed, added = tracked_changes(target), added_files(target)
    if changed or (added and not sets_code(target)):
        return _changed_tree(prepared, f"init ({init})", changed + added)
    # (with `code` set, `init` is the person's: what it builds from the judged code — a C
    # extension beside its sources — is its build step, kept for every verifier here: 0098)
    _BUILT[str(target)] = frozenset(added)
    drop_caches(target)
    return None


def run_in(
    target: Path,
    command: str,
    timeout: float,
    env: dict[str, str] | None = None,
    junit: str = "",
    prefix: Sequence[str] = (),
    exact: bool = False,
) -> Outcome:
    """``command`` in a prepared temporary checkout (`run_verifier`, ``junit`` the setting); a
    verifier that leaves the checkout other than the tree it judged has failed (the checkout
    is then put back). ``env``: default `clean_environment`; ``prefix``: as `run_command`'s;
    ``exact``: as `run_verifier`'s."""
    outcome = run_verifier(command, target, timeout, env, junit, prefix, exact)
    changes = checkout_changes(target)
    if not changes:
        return outcome
    restore_checkout(target)
    return _changed_tree(outcome, "the verifier", changes)


_TEMP_IDENTITY = {
    "GIT_AUTHOR_NAME": "shiftkit",
    "GIT_AUTHOR_EMAIL": "verify@shiftkit.invalid",
    "GIT_COMMITTER_NAME": "shiftkit",
    "GIT_COMMITTER_EMAIL": "verify@shiftkit.invalid",
}
