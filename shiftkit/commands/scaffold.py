"""`shiftkit new`: a new scaffold (copier with the bundled template), or shiftkit adopted
into an existing repository."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from shiftkit.commands import render
from shiftkit.commands.bootstrap import read_import
from shiftkit.core.errors import BadInput, Refused
from shiftkit.edge import gitio


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
    source = render.choose_source(template, vcs_ref, trust, release)
    answers: dict[str, object] = dict(data)
    if skip_answered:
        # copier's copy asks every question; answered ones are passed on as data instead.
        answers = {**render.recorded_answers(destination), **answers}
    from shiftkit.commands import adopt

    folder = decisions_default(destination, answers, quiet)
    if adopt.is_adoption(destination):
        # No task runs (the adoption renders into a scratch folder): the line is said here.
        local = Path(source.path) if Path(source.path).is_dir() else None
        adopt.adopt(
            destination,
            answers,
            defaults=defaults,
            overwrite=overwrite,
            quiet=quiet,
            source=source,
            template_line=lambda version: render.recorded_line(
                destination, local, source.vcs_ref, version
            ),
            user_defaults=folder,
        )
    else:
        # copier's "Copying from template version" line is dropped; the task says which.
        asked_in = destination.parent if destination.parent.is_dir() else Path.home()
        offer = {} if defaults else signing_offer(asked_in)
        render.copy_template(
            destination,
            answers,
            source=source,
            defaults=defaults,
            quiet=quiet,
            overwrite=overwrite,
            user_defaults={**offer, **folder},
        )


def decisions_default(
    destination: Path, answers: dict[str, object], quiet: bool
) -> dict[str, object]:
    """The decision records' folder for this destination (decision 0107): an answer of
    `auto` is settled here (in ``answers``); with no answer, the folder detected is returned
    as the question's default, and said when it is not docs/decisions."""
    from shiftkit.core import doctree
    from shiftkit.edge import doctree as found

    answered = str(answers.get("decisions", "")).strip()
    folder = found.decisions_folder(destination, answered or doctree.AUTO)
    if answered:
        answers["decisions"] = folder
        return {}
    if not quiet and folder != doctree.DEFAULT and found.configured(destination) is None:
        line = doctree.why(found.trees(destination))
        if line:
            print(line, file=sys.stderr, flush=True)
    return {"decisions": folder}


def signing_offer(cwd: Path) -> dict[str, object]:
    """The template's defaults for a person with an SSH signing key configured in git
    (`gpg.format = ssh`, `user.signingkey`): the `signed` policy and that key as the allowed
    signer, offered in the questions (a default, not an answer); {} otherwise."""

    def config(key: str) -> str:
        return gitio.run(["config", "--get", key], cwd, check=False).stdout.strip()

    if config("gpg.format") != "ssh":
        return {}
    key = config("user.signingkey")
    ident = gitio.run(["var", "GIT_COMMITTER_IDENT"], cwd, check=False).stdout
    email = ident.partition("<")[2].partition(">")[0].strip()
    if key.startswith("key::"):
        key = key[len("key::") :]
    if not key.startswith(("ssh-", "ecdsa-", "sk-")):
        path = Path(key).expanduser()
        public = path if path.suffix == ".pub" else path.with_name(path.name + ".pub")
        try:
            key = public.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return {}
    words = key.split()
    if len(words) < 2 or not email:
        return {}
    return {"people_policy": "signed", "people_signer": f"{email} {words[0]} {words[1]}"}


def _refuse_without_shiftkit_on_path() -> None:
    if shutil.which("shiftkit") is None:
        raise Refused(
            "`shiftkit` is not on PATH, and the scaffold's setup and its commit hooks run it; "
            f"put this one's folder ({Path(sys.executable).parent}) on PATH, or install it "
            "where your shell finds it (e.g. `pipx install .` in a clone of shiftkit), then run "
            "this again"
        )


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
