"""The template's task (`shiftkit bootstrap`): git init when needed, the imported features,
the hooks, and the scaffold's (or the adoption's) first commit."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from shiftkit.core import features
from shiftkit.core.config import CONFIG_FILE
from shiftkit.core.errors import BadInput, Refused
from shiftkit.core.resources import template_root
from shiftkit.edge import gitio, project
from shiftkit.edge.atomic import atomic_write

FIRST_COMMIT_SUBJECT = "Scaffold the project with shiftkit"


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


def template_paths(destination: Path) -> set[str]:
    """The files a scaffold is made of, as paths relative to its root: the template's file
    names rendered with the answers the copy recorded."""
    import jinja2
    import yaml

    from shiftkit.core import doctree

    answers_file = destination / ".copier-answers.yml"
    try:
        answers = yaml.safe_load(answers_file.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        answers = {}
    context = {
        "decisions": doctree.DEFAULT,  # (a project made before the question: decision 0107)
        **answers,
        "_copier_conf": {"answers_file": ".copier-answers.yml"},
    }
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
    if has_history:
        infer_code(destination)
        cfg = project.load_config(destination)
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
    from shiftkit.commands.install import (
        configure_merge_driver,
        install_guard_hooks,
        install_pre_commit,
    )

    install_pre_commit(destination)

    configure_merge_driver(destination)
    install_guard_hooks(destination)
    if not gitio.has_identity(destination):
        raise Refused(
            "git does not know who you are, so the first commit cannot be made; run "
            "`git config --global user.name NAME` and `git config --global user.email EMAIL`, "
            "then `shiftkit bootstrap` in the project"
        )
    sign = signs_first_commit(destination)
    commit = subprocess.run(
        ["git", "commit", "-q", *(["-S"] if sign else []), "-m", FIRST_COMMIT_SUBJECT],
        cwd=destination,
    )
    if commit.returncode != 0:
        raise Refused("the scaffold's first commit was refused (see the hook output above)")


def signs_first_commit(destination: Path) -> bool:
    """Under the `signed` policy the first commit sets it, and `audit --strict` proves the
    rest from its signature (decision record 0101): signed when git has a signing key, said
    when it has none."""
    from shiftkit.core.config import parse_or_default

    settings = destination / CONFIG_FILE
    text = settings.read_text(encoding="utf-8") if settings.is_file() else None
    if parse_or_default(text).people.policy != "signed":
        return False
    key = gitio.run(["config", "--get", "user.signingkey"], destination, check=False)
    if key.stdout.strip():
        return True
    print(
        "note: the `signed` policy's first commit is not signed (git has no signing key: "
        "`git config user.signingkey`), so `shiftkit audit --strict` cannot prove it; sign it "
        "before you push: `git commit --amend --no-edit -S`"
    )
    return False


def infer_code(destination: Path) -> None:
    """On adoption with `code` left to the template (`auto`): the repository's packages and
    tests, from its tracked files (decision record 0086). Nothing found: left as it was."""
    from shiftkit.core import ground

    settings = destination / CONFIG_FILE
    text = settings.read_text(encoding="utf-8")
    if ground.AUTO_LINE not in text:
        return
    tracked = gitio.out(["ls-files", "-z"], destination).split("\0")
    globs = ground.infer(path for path in tracked if path)
    if globs:
        import json

        line = f"code = {json.dumps(globs)}"
        atomic_write(settings, text.replace(ground.AUTO_LINE, line, 1))


def ready_message(destination: Path) -> str:
    """What a new scaffold says last (copier's `copy` of a new project, `shiftkit new`)."""
    import shlex

    lines = [
        f"Your shiftkit project is ready in {destination}.",
        f"Next: cd {shlex.quote(str(destination))} && shiftkit start",
    ]
    hooks = [name for name in HARNESS_HOOKS if (destination / name).is_file()]
    if hooks:
        runs = "runs" if len(hooks) == 1 else "run"
        lines.append(
            f"(an agent session does this itself: {' and '.join(hooks)} {runs} "
            f"`shiftkit start --brief`"
            + ("; Codex CLI runs its hooks once you trust them" if CODEX_HOOKS in hooks else "")
            + ")."
        )
    return "\n".join(lines)


CODEX_HOOKS = ".codex/hooks.json"
HARNESS_HOOKS = (".claude/settings.json", CODEX_HOOKS)


def adopted_already(destination: Path) -> None:
    """`copier recopy`, or a second `shiftkit new` here: shiftkit is committed already. Set up
    what this clone lacks and commit nothing: the re-rendered files are a person's to review."""
    from shiftkit.commands import setup

    setup.setup(destination, gitio.common_dir(destination))
    print(
        f"{destination} is a shiftkit project already ({CONFIG_FILE} is committed); "
        f"hooks set up, nothing committed: review the re-rendered files (`git diff`) and "
        f"commit what you keep"
    )


def import_cmd(
    source: Path, output: Path | None, write: Callable[[str], None], warn: Callable[[str], None]
) -> None:
    """`shiftkit import`: `source` in the current format, written as is on `write` (standard
    output) or to `output` (said on `warn`)."""
    from shiftkit.edge.atomic import atomic_write

    text = features.dumps(read_import(source))
    if output is None:
        write(text)
    else:
        atomic_write(output, text)
        warn(f"wrote {output}")
