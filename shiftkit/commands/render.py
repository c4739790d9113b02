"""Rendering shiftkit's template with copier: where it comes from, the questions, the copy."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import NamedTuple, TextIO

from shiftkit.core.errors import BadInput, Refused
from shiftkit.core.resources import template_root


def parse_data(pairs: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``--data KEY=VALUE`` pairs, checked against the template's questions."""
    questions = question_names(asked_only=True)
    multiselect = multiselect_questions()
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
        if key in multiselect and not value.lstrip().startswith("["):
            value = "[" + ", ".join(part.strip() for part in value.split(",") if part) + "]"
        data[key] = value  # a list question takes `a,b` as well as copier's `[a, b]`
    return data


def _spec() -> dict[str, object]:
    import yaml

    spec = yaml.safe_load((template_root() / "copier.yml").read_text(encoding="utf-8"))
    return spec if isinstance(spec, dict) else {}


def question_names(asked_only: bool = False) -> set[str]:
    """The template's questions; ``asked_only``: without the hidden ones (`when: false`),
    which shiftkit answers itself (`--features` sets `features_import`)."""
    return {
        key
        for key, question in _spec().items()
        if not key.startswith("_")
        and not (asked_only and isinstance(question, dict) and question.get("when") is False)
    }


def multiselect_questions() -> set[str]:
    """The questions whose answer is a list (copier's `multiselect`)."""
    return {
        key
        for key, question in _spec().items()
        if isinstance(question, dict) and question.get("multiselect") is True
    }


class Source(NamedTuple):
    """What copier renders from, and what the answers file records for `copier update`."""

    path: str
    vcs_ref: str | None
    trusted: bool  # shiftkit's own template: its task (`shiftkit bootstrap`) may run
    record: dict[str, str]  # the hidden answers that name the recorded origin, if any


def choose_source(
    template: str | None, vcs_ref: str | None, trust: bool, release: str | None = None
) -> Source:
    """``--template``/``--vcs-ref`` as given; else the checkout the code runs from (a git
    repository: its working state, or REF); else the copy bundled in the package, recorded
    as the source it was built from at the commit it was built from (decision 0068), or
    fetched from there at REF. (``release``: unused, kept for callers.)"""
    if template is not None:
        return Source(template, vcs_ref, trust, {})
    root = template_root()
    if (root / ".git").exists():
        # The template that matches the running code, not copier's default (the newest tag).
        return Source(str(root), vcs_ref or "HEAD", True, {})
    installed = installed_origin()
    if vcs_ref is not None:
        if installed is None:
            raise BadInput(
                "--vcs-ref: this shiftkit does not know the source it was built from; "
                "pass --template SRC (a clone of shiftkit, or its git URL) as well"
            )
        return Source(installed[0], vcs_ref, True, {})
    if installed is None:
        return Source(str(root), None, True, {})
    origin = {"template_origin": installed[0], "template_origin_ref": installed[1]}
    return Source(str(root), None, True, origin)


ORIGIN_FILE = "shiftkit-origin.json"  # (hatch_build.py's ORIGIN)


def bundled_origin() -> dict[str, object]:
    """What the build wrote beside the bundled template: the commit, whether the bundled
    files had uncommitted changes, the checkout's path (hatch_build.py); {} without one."""
    import json

    try:
        info = json.loads((template_root() / ORIGIN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def installed_origin() -> tuple[str, str] | None:
    """The source this shiftkit's bundled template was built from, as `copier update` can
    use it, and its commit: the git URL pip installed from (PEP 610's `direct_url.json`) at
    that commit, else the checkout the build ran in at the commit it built; None when the
    build recorded none (decision 0068)."""
    from importlib.metadata import PackageNotFoundError, distribution

    from shiftkit.core import jsonbound
    from shiftkit.core.errors import BadInput

    try:
        text = distribution("shiftkit").read_text("direct_url.json")
        info = jsonbound.loads(text, "direct_url.json") if text else None
    except (PackageNotFoundError, BadInput):
        info = None
    return origin_of(info if isinstance(info, dict) else {}, bundled_origin())


def origin_of(info: dict[str, object], built: dict[str, object]) -> tuple[str, str] | None:
    """A git URL at the commit pip installed; else the build's checkout at the build's commit
    (its full id: exactly the template bundled, whatever the checkout holds now)."""
    url, vcs = info.get("url"), info.get("vcs_info")
    if isinstance(url, str) and isinstance(vcs, dict) and vcs.get("vcs") == "git":
        commit = vcs.get("commit_id")
        if isinstance(commit, str):
            return url, commit
    commit, source = built.get("commit"), built.get("source")
    if isinstance(commit, str) and isinstance(source, str):
        return source, commit
    return None


def bundled_note(template: Path | None) -> str:
    """What the template line adds when the bundled copy is rendered: that its build recorded
    no source, that it had uncommitted template changes, or that its checkout no longer holds
    its commit (moved or rewritten) — `copier update` cannot diff from a commit it cannot find."""
    root = template_root()
    if template is None or root.name != "_template" or template.resolve() != root.resolve():
        return ""  # (a checkout or another source: copier's own record is exact)
    built = bundled_origin()
    if not built:
        return "; this build recorded no source: `copier update` needs --template SRC --vcs-ref REF"
    from shiftkit.edge import gitio

    commit, source = str(built.get("commit", "")), str(built.get("source", ""))
    if built.get("dirty"):
        return (
            f"; built from {source} with uncommitted template changes: `copier update` "
            f"takes {commit[:12]} without them as its base"
        )
    recorded = installed_origin()
    if recorded is None or recorded[0] != source:
        return ""  # installed from a git URL: that URL at its commit
    path = Path(source)
    found = (path / ".git").exists() and gitio.run(
        ["cat-file", "-e", f"{commit}^{{commit}}"], path, check=False
    ).returncode == 0
    if found:
        return ""
    return (
        f"; {source} no longer holds {commit[:12]} (moved or rewritten): `copier update` "
        f"needs --template SRC --vcs-ref REF"
    )


VERSION_LINE = re.compile(r'^__version__ = "([^"]+)"$', re.MULTILINE)


def template_version(template: Path, ref: str | None = None) -> str | None:
    """The shiftkit version a template source is part of: ``__version__`` in its
    ``shiftkit/__init__.py`` (at ``ref`` in a git checkout), or, for the copy bundled in the
    package, the package's own; None when the source holds neither (decision 0042)."""
    from shiftkit.edge import gitio

    if ref and (template / ".git").exists():
        shown = gitio.run(["show", f"{ref}:shiftkit/__init__.py"], template, check=False)
        text = shown.stdout if shown.returncode == 0 else ""
    else:
        candidates = [template / "shiftkit" / "__init__.py"]
        if template.name == "_template":
            candidates.append(template.parent / "__init__.py")
        found = [path for path in candidates if path.is_file()]
        text = found[0].read_text(encoding="utf-8", errors="replace") if found else ""
    match = VERSION_LINE.search(text)
    return match.group(1) if match else None


def template_line(source: str, commit: str, version: str | None) -> str:
    """What a copy says of its template, once: where from, which commit, which version. The
    version is shiftkit's (`shiftkit --version`, the workflow's `shiftkit==` pin); copier's
    own "Copying from template version" guess from git tags is not shown (decision 0042)."""
    where = f"template: {source} at {commit}" if commit else f"template: {source}"
    return f"{where} (shiftkit {version})" if version else where


WORKFLOW = ".github/workflows/shiftkit-audit.yml"
_INSTALL = re.compile(r'/bin/pip" install --quiet "([^"]+)"')


def ci_line(destination: Path) -> str | None:
    """One line when the rendered workflow installs shiftkit from the package index because
    the template's recorded source is a path no CI runner can reach (`ci_install: auto`)."""
    try:
        text = (destination / WORKFLOW).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    found = _INSTALL.search(text)
    if found is None or not found.group(1).startswith("shiftkit=="):
        return None
    answers = recorded_answers_raw(destination)
    if answers.get("ci_install", "auto") != "auto":
        return None
    return (
        f"ci: the template's source ({answers.get('_src_path') or 'a local copy'}) is a path "
        f"no CI runner can reach, so {WORKFLOW} installs {found.group(1)} from the package "
        f"index (it installs once that release is published there); to install from a URL "
        f"a runner reaches, answer ci_install with a pip requirement "
        f"(`copier update --data ci_install='git+URL@COMMIT'`)"
    )


def hooks_line(destination: Path) -> str | None:
    """One line when the commit hooks come from the shiftkit repository (`hook_source:
    repository`, the default for a source CI reaches: decision 0118), not the installed
    shiftkit."""
    answers = recorded_answers_raw(destination)
    if answers.get("hook_source") != "repository":
        return None
    rev = str(answers.get("hook_rev") or "").strip()
    return (
        f"hooks: .pre-commit-config.yaml runs shiftkit's hooks from "
        f"{str(answers.get('hook_repository') or '').strip()} at {rev[:12]}, which pre-commit "
        f"installs wherever they run (CI included); where `shiftkit setup` ran, they hand each "
        f"commit to the shiftkit it recorded (`copier update --data hook_source=local`: the "
        f"installed shiftkit only)"
    )


def recorded_answers_raw(destination: Path) -> dict[str, object]:
    """Everything a project's `.copier-answers.yml` holds, copier's own keys included."""
    import yaml

    try:
        answers = yaml.safe_load((destination / ".copier-answers.yml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    return answers if isinstance(answers, dict) else {}


def recorded_line(
    destination: Path, template: Path | None, ref: str | None = None, version: str | None = None
) -> str:
    """The template line for a project, from what its answers file records for
    `copier update`; the version read from ``template`` (the copy copier rendered), else
    ``version`` (what the render computed: a URL source is a clone gone by now)."""
    answers = recorded_answers_raw(destination)
    if template is not None:
        version = template_version(template, ref) or version
    source = str(answers.get("_src_path") or (template or "the template"))
    return template_line(source, str(answers.get("_commit") or ""), version) + bundled_note(
        template
    )


COLOUR = re.compile(r"\x1b\[[0-9;]*m")


class _WithoutCopiersVersion:
    """Standard error as copier writes it, minus its "Copying from template version ..."
    line: a guess from the template's git tags (None for the bundled copy, `0.0.0.post...`
    in a clone without tags). The template's task says the version instead. copier colours
    its `create`/`conflict` words whatever the stream: plain text when it is no terminal
    (or NO_COLOR is set)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._dropped = False
        self._plain = _plain_stream(stream)

    def write(self, text: str) -> int:
        if self._plain:
            text = COLOUR.sub("", text)
            if not text:
                return 0
        if text.lstrip("\n").startswith("Copying from template version"):
            self._dropped = True
            return len(text)
        if self._dropped and text == "\n":  # print()'s line end of the dropped line
            self._dropped = False
            return len(text)
        self._dropped = False
        return self._stream.write(text)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def _plain_stream(stream: TextIO) -> bool:
    import os

    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):
        terminal = False
    return not terminal or bool(os.environ.get("NO_COLOR"))


def copy_template(
    destination: Path,
    answers: dict[str, object],
    *,
    source: Source,
    defaults: bool,
    quiet: bool = False,
    overwrite: bool = False,
    skip_tasks: bool = False,
    user_defaults: dict[str, object] | None = None,
) -> str | None:
    """copier's copy of the template into ``destination``; ``skip_tasks``: render only,
    without the setup task (adoption renders into a scratch folder); ``user_defaults``: the
    questions' defaults (still asked). Returns the shiftkit version the template belongs to
    (its hidden `shiftkit_version`), which a URL source gives no other way."""
    import contextlib
    import warnings

    import copier

    try:
        with (
            warnings.catch_warnings(),
            contextlib.redirect_stderr(_WithoutCopiersVersion(sys.stderr)),  # type: ignore[type-var]
        ):
            warnings.simplefilter("ignore", copier.errors.DirtyLocalWarning)
            worker = copier.run_copy(
                source.path,
                destination,
                data={**source.record, **answers},
                defaults=defaults,
                vcs_ref=source.vcs_ref,
                overwrite=overwrite,
                unsafe=source.trusted,  # the template's own task: git init, hooks, first commit
                quiet=quiet,
                skip_tasks=skip_tasks,
                user_defaults=user_defaults or None,
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
    version = worker.answers.combined.get("shiftkit_version")
    return str(version) if version else None


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
