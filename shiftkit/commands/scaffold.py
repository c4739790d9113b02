"""`shiftkit new` (copier with the bundled template) and the template's bootstrap task."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from shiftkit.core import features
from shiftkit.core.config import CONFIG_FILE
from shiftkit.core.errors import BadInput, Refused
from shiftkit.core.resources import TEMPLATE_REPOSITORY, template_root
from shiftkit.edge import gitio, project
from shiftkit.edge.atomic import atomic_write

FIRST_COMMIT_SUBJECT = "Scaffold the project with shiftkit"


def parse_data(pairs: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``--data KEY=VALUE`` pairs, checked against the template's questions."""
    questions = question_names()
    data: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise BadInput(f"--data {pair!r}: expected KEY=VALUE, e.g. --data project_name=todo")
        if key not in questions:
            raise BadInput(
                f"--data {pair!r}: unknown question {key!r}; known: {', '.join(sorted(questions))}"
            )
        data[key] = value
    return data


def question_names() -> set[str]:
    import yaml

    spec = yaml.safe_load((template_root() / "copier.yml").read_text(encoding="utf-8"))
    return {key for key in spec if not key.startswith("_")}


class Source(NamedTuple):
    """What copier renders from, and what the answers file records for `copier update`."""

    path: str
    vcs_ref: str | None
    trusted: bool  # shiftkit's own template: its task (`shiftkit bootstrap`) may run
    record: dict[str, str]  # the hidden answers that name the recorded origin, if any


def choose_source(
    template: str | None, vcs_ref: str | None, trust: bool, release: str | None
) -> Source:
    """``--template``/``--vcs-ref`` as given; else the checkout the code runs from (a git
    repository: its working state, or REF); else the copy bundled in the package, recorded
    as the published repository at the release's tag, or fetched from there at REF."""
    if template is not None:
        return Source(template, vcs_ref, trust, {})
    root = template_root()
    if (root / ".git").exists():
        # The template that matches the running code, not copier's default (the newest tag).
        return Source(str(root), vcs_ref or "HEAD", True, {})
    if vcs_ref is not None:
        return Source(TEMPLATE_REPOSITORY, vcs_ref, True, {})
    if release is None:
        from importlib.metadata import version

        release = version("shiftkit")
    origin = {"template_origin": TEMPLATE_REPOSITORY, "template_origin_ref": f"v{release}"}
    return Source(str(root), None, True, origin)


def new(
    destination: Path,
    data: dict[str, str],
    *,
    defaults: bool,
    features_file: Path | None = None,
    quiet: bool = False,
    template: str | None = None,
    vcs_ref: str | None = None,
    overwrite: bool = False,
    skip_answered: bool = False,
    trust: bool = False,
    release: str | None = None,  # the running version (default: the installed package's)
) -> None:
    """A new scaffold in ``destination``, or shiftkit adopted into it when it holds files.
    Every check that can refuse runs before anything is written."""
    destination = destination.resolve()
    if destination.exists() and not destination.is_dir():
        raise BadInput(f"{destination}: exists and is not a directory")
    if destination.is_dir():
        _refuse_dirty_repository(destination)
    _refuse_without_shiftkit_on_path()
    if features_file is not None:
        # Fail on a bad list before anything is written.
        read_import(features_file)
        data = {**data, "features_import": str(features_file.resolve())}
    if not defaults and not sys.stdin.isatty():
        raise BadInput(
            "no terminal to ask the template's questions on; "
            "pass --defaults (with --data KEY=VALUE for the answers you want)"
        )
    source = choose_source(template, vcs_ref, trust, release)
    answers: dict[str, object] = dict(data)
    if skip_answered:
        # copier's copy asks every question; answered ones are passed on as data instead.
        answers = {**recorded_answers(destination), **answers}
    from shiftkit.commands import adopt

    if adopt.is_adoption(destination):
        adopt.adopt(
            destination, answers, defaults=defaults, overwrite=overwrite, quiet=quiet, source=source
        )
    else:
        copy_template(
            destination, answers, source=source, defaults=defaults, quiet=quiet, overwrite=overwrite
        )


def copy_template(
    destination: Path,
    answers: dict[str, object],
    *,
    source: Source,
    defaults: bool,
    quiet: bool = False,
    overwrite: bool = False,
    skip_tasks: bool = False,
) -> None:
    """copier's copy of the template into ``destination``; ``skip_tasks``: render only,
    without the setup task (adoption renders into a scratch folder)."""
    import warnings

    import copier

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", copier.errors.DirtyLocalWarning)
            copier.run_copy(
                source.path,
                destination,
                data={**source.record, **answers},
                defaults=defaults,
                vcs_ref=source.vcs_ref,
                overwrite=overwrite,
                unsafe=source.trusted,  # the template's own task: git init, hooks, first commit
                quiet=quiet,
                skip_tasks=skip_tasks,
            )
    except copier.errors.UnsafeTemplateError:
        raise BadInput(
            f"the template at {source.path} runs tasks on your machine; "
            f"pass --trust if you trust it"
        ) from None
    except copier.errors.TaskError as exc:
        raise Refused(
            f"the template's setup task failed (exit {exc.returncode}); see above"
        ) from None
    except (copier.errors.CopierError, ValueError) as exc:
        message = " ".join(str(exc).split())
        raise BadInput(f"template answers: {message}") from None


def _refuse_without_shiftkit_on_path() -> None:
    if shutil.which("shiftkit") is None:
        raise Refused(
            "`shiftkit` is not on PATH, and the scaffold's setup and its commit hooks run it; "
            "install it where your shell finds it (e.g. `pipx install shiftkit`), then run "
            "this again"
        )


def recorded_answers(destination: Path) -> dict[str, object]:
    """The answers a project's `.copier-answers.yml` holds for the template's questions."""
    import yaml

    try:
        text = (destination / ".copier-answers.yml").read_text(encoding="utf-8")
        answers = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    if not isinstance(answers, dict):
        return {}
    questions = question_names()
    return {key: value for key, value in answers.items() if key in questions}


def _refuse_dirty_repository(destination: Path) -> None:
    proc = gitio.run(["rev-parse", "--show-toplevel"], destination, check=False)
    if proc.returncode != 0 or Path(proc.stdout.strip()).resolve() != destination:
        return
    dirty = gitio.status_lines(destination)
    if dirty:
        raise Refused(
            f"{destination}: the work tree has uncommitted changes ({dirty[0][3:]} ...); "
            f"commit or stash them before scaffolding"
        )


def read_import(path: Path) -> features.FeatureList:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput(f"{path}: file not found") from None
    except (UnicodeDecodeError, IsADirectoryError):
        raise BadInput(f"{path}: not a UTF-8 text file") from None
    return features.loads_any(text, str(path))


def extend(
    base: features.FeatureList, extra: features.FeatureList, source: str
) -> features.FeatureList:
    """Append ``extra`` after ``base``; ids must not clash."""
    for feature in extra.features:
        if base.get(feature.id) is not None:
            raise BadInput(f"{source}: id {feature.id!r} is already used in the feature list")
    combined = features.FeatureList(base.features + extra.features, base.schema_ref)
    # The round trip re-checks ids and dependencies across both lists.
    return features.loads(features.dumps(combined), source)


# -- the template's task -------------------------------------------------------------------


def template_paths(destination: Path) -> set[str]:
    """The files a scaffold is made of, as paths relative to its root: the template's file
    names rendered with the answers the copy recorded."""
    import jinja2
    import yaml

    answers_file = destination / ".copier-answers.yml"
    try:
        answers = yaml.safe_load(answers_file.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        answers = {}
    context = {**answers, "_copier_conf": {"answers_file": ".copier-answers.yml"}}
    base = template_root() / "template"
    paths = {".copier-answers.yml"}
    for path in base.rglob("*"):
        if path.is_dir():
            continue
        relative = jinja2.Template(path.relative_to(base).as_posix()).render(context)
        if any(not part for part in relative.split("/")):
            continue  # a conditional name that rendered empty: not part of this scaffold
        paths.add(relative.removesuffix(".jinja"))
    return paths


def bootstrap(destination: Path, features_import: str = "") -> None:
    """git init when needed, import features, install the hooks, make the scaffold's commit."""
    destination = destination.resolve()
    proc = gitio.run(["rev-parse", "--show-toplevel"], destination, check=False)
    fresh = proc.returncode != 0 or Path(proc.stdout.strip()).resolve() != destination
    if fresh:
        gitio.run(["init", "-q"], destination)
    elif gitio.read_blobs(destination, [f"HEAD:{CONFIG_FILE}"])[0] is not None:
        adopted_already(destination)
        return
    cfg = project.load_config(destination)
    has_history = gitio.head_oid(destination) is not None
    if has_history:
        ours = template_paths(destination)
        foreign = [line[3:] for line in gitio.status_lines(destination) if line[3:] not in ours]
        if foreign:
            raise Refused(
                f"{destination}: uncommitted changes outside the scaffold ({foreign[0]} ...); "
                f"commit or stash them, then run `shiftkit bootstrap` here"
            )
    init_script = destination / "init.sh"
    if init_script.exists():
        init_script.chmod(init_script.stat().st_mode | 0o111)
    if features_import:
        features_path = destination / cfg.features
        current = features.loads(features_path.read_text(encoding="utf-8"), cfg.features)
        combined = extend(current, read_import(Path(features_import)), features_import)
        atomic_write(features_path, features.dumps(combined))
    if has_history:
        paths = sorted(p for p in template_paths(destination) if (destination / p).exists())
        gitio.run(["add", "--", *paths], destination)
    else:
        gitio.run(["add", "-A"], destination)
    install_pre_commit(destination)
    from shiftkit.commands.install import configure_merge_driver, install_guard_hooks

    configure_merge_driver(destination)
    install_guard_hooks(destination)
    if not gitio.has_identity(destination):
        raise Refused(
            "git does not know who you are, so the first commit cannot be made; run "
            "`git config --global user.name NAME` and `git config --global user.email EMAIL`, "
            "then `shiftkit bootstrap` in the project"
        )
    commit = subprocess.run(
        ["git", "commit", "-q", "-m", FIRST_COMMIT_SUBJECT],
        cwd=destination,
    )
    if commit.returncode != 0:
        raise Refused("the scaffold's first commit was refused (see the hook output above)")


def adopted_already(destination: Path) -> None:
    """`copier recopy`, or a second `shiftkit new` here: shiftkit is committed already. Set up
    what this clone lacks and commit nothing: the re-rendered files are a person's to review."""
    from shiftkit.commands import setup

    setup.setup(destination, gitio.common_dir(destination))
    print(
        f"shiftkit: {destination} is a shiftkit project already ({CONFIG_FILE} is committed); "
        f"hooks set up, nothing committed: review the re-rendered files (`git diff`) and "
        f"commit what you keep"
    )


def install_pre_commit(root: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "install"],
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
