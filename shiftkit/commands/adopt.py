"""Adopting shiftkit in an existing directory: `shiftkit new DIR` on a folder with files.

The template is rendered into a scratch folder, each file is planned (created, merged into
the user's own, or refused) before anything is written, then written, and the scaffold's
setup (`bootstrap`: hooks, merge driver, one commit) runs. A failure at any point after
the first write puts every file, the index, git's config and hooks back as they were."""

from __future__ import annotations

import shlex
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from shiftkit.commands import bootstrap
from shiftkit.commands import render as rendering
from shiftkit.core import adoption
from shiftkit.core.errors import Refused, ShiftkitError
from shiftkit.edge import rollback
from shiftkit.edge.atomic import atomic_write


def is_adoption(destination: Path) -> bool:
    """A directory that already holds something (an empty one is scaffolded as new)."""
    return destination.is_dir() and any(destination.iterdir())


def render(
    destination: Path,
    data: dict[str, object],
    *,
    source: rendering.Source,
    defaults: bool,
    user_defaults: dict[str, object] | None = None,
) -> dict[str, tuple[bytes, int]]:
    """The template's files as they would be in ``destination``: path -> (content, mode)
    (``user_defaults``: the questions' defaults there, e.g. the decision records' folder)."""
    return rendered_with_version(
        destination, data, source=source, defaults=defaults, user_defaults=user_defaults
    )[0]


def rendered_with_version(
    destination: Path,
    data: dict[str, object],
    *,
    source: rendering.Source,
    defaults: bool,
    user_defaults: dict[str, object] | None = None,
) -> tuple[dict[str, tuple[bytes, int]], str | None]:
    """`render`, and the shiftkit version the template belongs to."""
    with tempfile.TemporaryDirectory(prefix="shiftkit-adopt-") as scratch:
        # The folder's name is the project name's default, so render under the same name.
        target = Path(scratch) / destination.name
        version = rendering.copy_template(
            target,
            data,
            source=source,
            defaults=defaults,
            quiet=True,
            skip_tasks=True,
            user_defaults=user_defaults,
        )
        files = {
            path.relative_to(target).as_posix(): (path.read_bytes(), path.stat().st_mode & 0o7777)
            for path in sorted(target.rglob("*"))
            if path.is_file() and not path.is_symlink()
        }
        return files, version


def _hooks_run_twice(existing: dict[str, bytes]) -> str:
    """Said once, at adoption: the user's hooks without `stages` now also run at the
    commit-msg stage shiftkit installs, and the one line that keeps them at one (decision
    0069: shiftkit does not change what the user's file means)."""
    from shiftkit.core.adopt_merge import hooks_without_stages

    text = existing.get(".pre-commit-config.yaml")
    if text is None:
        return ""
    ids = hooks_without_stages(text.decode("utf-8", errors="replace"))
    if not ids:
        return ""
    named = ", ".join(ids[:4]) + (f" and {len(ids) - 4} more" if len(ids) > 4 else "")
    return (
        f"note: your hooks without `stages` here ({named}) now also run at the commit-msg "
        f"stage, twice a commit where their files match, unless their own repository's "
        f"manifest limits their stages; add `default_stages: [pre-commit]` to "
        f".pre-commit-config.yaml (or `stages:` to each) to run them once"
    )


def what_is_there(destination: Path, names: list[str]) -> tuple[dict[str, bytes], dict[str, str]]:
    """The regular files of these names in ``destination``, and the names that are
    something else there (with what)."""
    existing: dict[str, bytes] = {}
    odd: dict[str, str] = {}
    for name in names:
        path = destination / name
        for parent in list(reversed(Path(name).parents))[1:]:
            folder = destination / parent
            if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
                odd[name] = f"{parent.as_posix()} is not a plain folder"
                break
        else:
            if path.is_symlink():
                odd[name] = "a symbolic link"
            elif path.is_dir():
                odd[name] = "a directory"
            elif path.exists() and not path.is_file():
                odd[name] = "not a regular file"
            elif path.is_file():
                existing[name] = path.read_bytes()
    return existing, odd


def adopt(
    destination: Path,
    data: dict[str, object],
    *,
    source: rendering.Source,
    defaults: bool,
    overwrite: bool = False,
    quiet: bool = False,
    rendered: dict[str, tuple[bytes, int]] | None = None,
    template_line: Callable[[str | None], str] | None = None,
    user_defaults: dict[str, object] | None = None,
) -> None:
    """``destination``: an existing, non-empty directory; a repository's tree must be clean
    (checked by the caller, before this). ``rendered``: the template's files, when the caller
    rendered them already (copier's task). ``template_line``: what to say of the template
    (given the version the render found), once the answers file is written, before the
    closing lines."""
    from shiftkit.edge import gitio

    if not gitio.has_identity(destination):
        raise Refused(
            "git does not know who you are, so the adoption's commit cannot be made; run "
            "`git config --global user.name NAME` and `git config --global user.email EMAIL`"
        )
    version = None
    if rendered is None:
        rendered, version = rendered_with_version(
            destination, data, source=source, defaults=defaults, user_defaults=user_defaults
        )
    existing, odd = what_is_there(destination, sorted(rendered))
    steps = adoption.plan(
        {name: content for name, (content, _) in rendered.items()},
        existing,
        odd,
        adopted=(destination / ".shiftkit.toml").is_file(),
        overwrite=overwrite,
    )
    writes = [step for step in steps if step.content is not None]
    features_import = str(data.get("features_import", ""))
    if not writes and not features_import:
        if not quiet:
            print(f"{destination}: shiftkit is already adopted here; nothing to change")
        return
    with rollback.undo_on_failure(destination, [step.path for step in writes]):
        try:
            for step in writes:
                target = destination / step.path
                assert step.content is not None
                atomic_write(target, step.content)
                if step.action != adoption.MERGE:
                    target.chmod(rendered[step.path][1])
            bootstrap.bootstrap(destination, features_import)
        except ShiftkitError as exc:
            raise ShiftkitError(
                f"{exc.message}; adoption undone, the directory is as it was", exc.exit_code
            ) from None
    if not quiet:
        if template_line is not None:  # (copier's task said both lines itself)
            print(template_line(version), file=sys.stderr, flush=True)
            hooks = rendering.hooks_line(destination)
            if hooks is not None:
                print(hooks, file=sys.stderr, flush=True)
        for step in steps:
            if step.action != adoption.SAME:
                print(f"{step.action:>10}  {step.path}", file=sys.stderr)
        twice = _hooks_run_twice(existing)
        if twice:
            print(twice, file=sys.stderr)
        print(
            f"shiftkit is adopted in {destination}, your files merged, not replaced.\n"
            f"Next: cd {shlex.quote(str(destination))} && shiftkit start"
        )
