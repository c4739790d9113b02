"""copier's task (`shiftkit bootstrap --operation OP --template SRC --template-ref REF`):
plain `copier copy`, `recopy` and `update` adopt and merge as `shiftkit new` does (decision 0037).

copier never writes over a file a user may have (`_skip_if_exists` in copier.yml). This task
renders the same template, at the same commit, into a scratch folder and merges shiftkit's
part into those files with the code `shiftkit new` adopts with:

- copy into a repository with history: the files copier created (untracked, byte-identical to
  the render) are removed again, so the tree is as it was; a dirty tree is refused there, else
  the adoption runs as for `shiftkit new` (plan, merges, hooks, one commit, undone on failure);
- copy into a new folder or a repository without commits: the scaffold's setup (`bootstrap`),
  after the merges when a file of the user's lacks shiftkit's part;
- copy into a shiftkit project (`recopy`), and `update`: the merges, nothing committed;
- an update's scratch copies (copier runs the task there too): nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

from shiftkit.commands import adopt, bootstrap, render
from shiftkit.core import adoption
from shiftkit.core.config import CONFIG_FILE
from shiftkit.core.errors import BadInput, Refused
from shiftkit.edge import gitio
from shiftkit.edge.atomic import atomic_write

ANSWERS_FILE = ".copier-answers.yml"
OPERATIONS = ("copy", "update")


def run(
    destination: Path,
    operation: str,
    template: str,
    ref: str,
    features_import: str = "",
    quiet: bool = False,
) -> None:
    """``operation``: copier's, which is "copy" for a `recopy` too; each case prints its own
    closing lines, once (copier.yml has no `_message_after_copy`: it cannot tell them apart)."""
    if operation not in OPERATIONS:
        raise BadInput(f"--operation {operation!r}: expected one of {', '.join(OPERATIONS)}")
    destination = destination.resolve()
    top = _is_repository_top(destination)
    if operation == "update" and not top:
        return  # one of copier's scratch renders during an update
    if operation == "update":
        quiet = False  # copier renders an update's final copy quietly, whatever the user asked
    else:
        absolute_source(destination, template)
    if not quiet:
        line = render.recorded_line(destination, Path(template) if template else None, ref)
        print(line, file=sys.stderr, flush=True)
        for said in (render.ci_line(destination), render.hooks_line(destination)):
            if said is not None:
                print(said, file=sys.stderr, flush=True)
    source = render.Source(template, ref or None, True, _recorded_origin(destination, ref))
    settled = settle_decisions(destination, source, quiet) if operation == "copy" else None
    answers = render.recorded_answers(destination)
    if operation == "copy" and (not top or gitio.head_oid(destination) is None):
        if lacking_shiftkit(destination):  # a folder with files of the user's: copier kept them
            merge_into(
                destination,
                settled or adopt.render(destination, answers, source=source, defaults=True),
            )
        bootstrap.bootstrap(destination, features_import)
        if not quiet:
            print(bootstrap.ready_message(destination))
        return
    rendered = settled or adopt.render(destination, answers, source=source, defaults=True)
    adopted = gitio.read_blobs(destination, [f"HEAD:{CONFIG_FILE}"])[0] is not None
    if operation == "update" or adopted:
        merge_into(destination, rendered)
        if operation == "copy":
            bootstrap.adopted_already(destination)
        else:
            print(
                f"{destination}: updated from the template, nothing committed; review the "
                f"changes (`git diff`) and commit what you keep (the hooks judge that commit)"
            )
        return
    copied = (destination / ANSWERS_FILE).read_bytes()
    created = created_by_copy(destination, rendered)
    rendered[ANSWERS_FILE] = (copied, rendered.get(ANSWERS_FILE, (b"", 0o644))[1])
    remove(destination, created)
    dirty = gitio.status_lines(destination)
    if dirty:
        raise Refused(
            f"{destination}: the work tree has uncommitted changes ({dirty[0][3:]} ...); "
            f"the template's files were removed again, the tree is as it was; commit or stash "
            f"your changes, then copy again"
        )
    data: dict[str, object] = {**answers, "features_import": features_import}
    adopt.adopt(destination, data, source=source, defaults=True, rendered=rendered, quiet=quiet)


def settle_decisions(
    destination: Path, source: render.Source, quiet: bool
) -> dict[str, tuple[bytes, int]] | None:
    """A copy answered `decisions: auto` (the default: copier cannot look at the destination)
    rendered no decision records and named no folder. Here the folder is chosen as `shiftkit
    new` chooses it (decision 0107), recorded in the answers file for `copier update`, and
    the files copier wrote re-rendered with it. Returns that render (None: nothing to do)."""
    from shiftkit.core import doctree
    from shiftkit.edge import doctree as found

    answers = render.recorded_answers(destination)
    if str(answers.get("decisions", "")).strip() != doctree.AUTO:
        return None
    folder = found.decisions_folder(destination, committed=True)
    as_copied = adopt.render(destination, answers, source=source, defaults=True)
    settled = adopt.render(
        destination, {**answers, "decisions": folder}, source=source, defaults=True
    )
    _record_answer(destination, "decisions", folder)
    for path, (content, mode) in settled.items():
        target = destination / path
        before = as_copied.get(path)
        if path == ANSWERS_FILE or target.is_symlink():
            continue
        if before is None and not target.exists():  # (the records: copier rendered none)
            atomic_write(target, content)
            target.chmod(mode)
        elif before is not None and before[0] != content and _holds(target, before[0]):
            atomic_write(target, content)  # copier's own file, naming the folder now
    line = doctree.why(found.trees(destination))
    if line and not quiet and folder != doctree.DEFAULT:
        print(line, file=sys.stderr, flush=True)
    return settled


def _holds(target: Path, content: bytes) -> bool:
    return target.is_file() and target.read_bytes() == content


def _record_answer(destination: Path, key: str, value: str) -> None:
    """Set one answer's line in copier's answers file, the rest as copier wrote it."""
    import re

    import yaml

    answers = destination / ANSWERS_FILE
    text = answers.read_text(encoding="utf-8")
    line = yaml.safe_dump({key: value}, allow_unicode=True).rstrip("\n")
    fixed, count = re.subn(rf"(?m)^{re.escape(key)}:.*$", lambda _: line, text, count=1)
    atomic_write(answers, fixed if count else text.rstrip("\n") + "\n" + line + "\n")


def _recorded_origin(destination: Path, ref: str) -> dict[str, str]:
    """The source the answers file records, for the scratch render: what the template names
    from it (`shiftkit_requirement`: AGENTS.md, the workflow) comes out as in copier's copy,
    not as copier's throwaway clone (decision 0068)."""
    recorded = render.recorded_answers_raw(destination)
    source, commit = recorded.get("_src_path"), ref or recorded.get("_commit")
    if not (isinstance(source, str) and source and isinstance(commit, str) and commit):
        return {}
    return {"template_origin": source, "template_origin_ref": commit}


def absolute_source(destination: Path, template: str) -> None:
    """copier records a template path as given; a relative one (`copier copy src app`) names
    nothing from the project's folder, where `copier update` reads it. copier cloned it,
    though, and git records a clone's origin as an absolute path: the answers file gets that
    path before anything is committed. Only when the clone does not name it (no git source)
    is it said, once, at the copy."""
    source = str(render.recorded_answers_raw(destination).get("_src_path") or "")
    if not _relative_local(source):
        return
    found = _cloned_from(Path(template), source) if template else None
    answers = destination / ANSWERS_FILE
    if found is not None:
        import re

        import yaml

        text = answers.read_text(encoding="utf-8")
        line = yaml.safe_dump({"_src_path": str(found)}, allow_unicode=True).rstrip("\n")
        fixed, count = re.subn(r"(?m)^_src_path:.*$", lambda _: line, text, count=1)
        if count:
            atomic_write(answers, fixed)
            return
    print(
        f"shiftkit: {ANSWERS_FILE} records the template as {source!r}, a path relative to "
        f"where copier ran, which `copier update` cannot find from {destination}; copy "
        f"from an absolute path or a URL, or set `_src_path` in {ANSWERS_FILE} to one",
        file=sys.stderr,
    )


def _cloned_from(clone: Path, relative: str) -> Path | None:
    """The absolute path copier's clone of the template came from, when it ends in
    ``relative`` (a clone of that source, not of something else)."""
    if not (clone / ".git").exists():
        return None
    url = gitio.run(["config", "--get", "remote.origin.url"], clone, check=False).stdout.strip()
    origin = Path(url)
    wanted = Path(relative)
    if not origin.is_absolute() or not (origin / ".git").exists():
        return None
    tail = [part for part in wanted.parts if part not in (".",)]
    if ".." in tail or list(origin.parts[-len(tail) :]) != tail:
        return None
    return origin


def _relative_local(source: str) -> bool:
    if not source or Path(source).is_absolute() or "://" in source:
        return False
    if source.startswith(("gh:", "gl:", "git@", "~")):
        return False
    return ":" not in source.split("/", 1)[0]  # host:path is scp-like git


# What each mergeable file holds once shiftkit's part is in it.
SIGNS = {
    "AGENTS.md": "<!-- shiftkit:begin -->",
    "CLAUDE.md": "<!-- shiftkit:begin -->",
    ".pre-commit-config.yaml": "shiftkit-commit-msg",
    ".claude/settings.json": ".shiftkit/hook guard",
    ".codex/hooks.json": ".shiftkit/hook guard",
    ".gitattributes": "merge=shiftkit-features",
    ".gitignore": "__pycache__",
}


def lacking_shiftkit(destination: Path) -> bool:
    """Whether a mergeable file is there without shiftkit's part (copier skipped the user's
    file), so a fresh copy needs the render to merge; without it, the copy is all copier's."""
    for name, sign in SIGNS.items():
        path = destination / name
        readable = path.is_file() and not path.is_symlink()
        if readable and sign not in path.read_text(encoding="utf-8", errors="replace"):
            return True
    return False


def _is_repository_top(destination: Path) -> bool:
    proc = gitio.run(["rev-parse", "--show-toplevel"], destination, check=False)
    return proc.returncode == 0 and Path(proc.stdout.strip()).resolve() == destination


def created_by_copy(destination: Path, rendered: dict[str, tuple[bytes, int]]) -> list[str]:
    """The files this copy wrote: rendered, not in git's index, byte-identical to the render
    (copier's answers file: whenever it is not in the index, as it records the source)."""
    tracked = set(gitio.out(["ls-files", "-z"], destination).split("\0"))
    created = []
    for path, (content, _) in sorted(rendered.items()):
        target = destination / path
        if path in tracked or target.is_symlink() or not target.is_file():
            continue
        if path == ANSWERS_FILE or target.read_bytes() == content:
            created.append(path)
    return created


def remove(destination: Path, paths: list[str]) -> None:
    """Remove these files, and the folders they leave empty."""
    for path in paths:
        target = destination / path
        target.unlink()
        for folder in target.relative_to(destination).parents:
            if folder == Path("."):
                break
            try:
                (destination / folder).rmdir()
            except OSError:
                break  # not empty: the user's, or holds the user's files


def merge_into(destination: Path, rendered: dict[str, tuple[bytes, int]]) -> None:
    """shiftkit's part merged into the files copier skipped because they exist."""
    names = sorted(name for name in adoption.MERGES if name in rendered)
    existing, odd = adopt.what_is_there(destination, names)
    steps = adoption.plan(
        {name: rendered[name][0] for name in names}, existing, odd, adopted=True, overwrite=False
    )
    for step in steps:
        if step.content is not None:
            target = destination / step.path
            atomic_write(target, step.content)
            if step.action == adoption.CREATE:
                target.chmod(rendered[step.path][1])
            print(f"{step.action:>10}  {step.path}")


def task(
    destination: Path,
    operation: str,
    template: str,
    template_ref: str,
    features_import: str,
    quiet: bool,
) -> None:
    """The template's task (`shiftkit bootstrap`): given copier's `operation`, the adoption or
    merge of shiftkit's part (`run`, decision 0037); else `bootstrap.bootstrap`. (Here, not
    in `bootstrap`: adopt -> bootstrap -> template_task -> adopt was an import circle.)"""
    if operation:
        run(destination, operation, template, template_ref, features_import, quiet)
    else:
        bootstrap.bootstrap(destination, features_import)
