"""The I/O edge of shiftkit.core.doctree: a repository's documentation trees, read from its
files, and the decision records' folder for an adoption (decision record 0107)."""

from __future__ import annotations

from pathlib import Path

from shiftkit.core import doctree


def sphinx_confs(root: Path) -> list[str]:
    """Each `conf.py` right in docs/ or doc/, or one folder below (docs/source/conf.py)."""
    found: list[str] = []
    for top in doctree.SPHINX_ROOTS:
        folder = root / top
        if not folder.is_dir() or folder.is_symlink():
            continue
        for conf in [folder / "conf.py", *sorted(folder.glob("*/conf.py"))]:
            if conf.is_file():
                found.append(conf.relative_to(root).as_posix())
    return found


def mkdocs_text(root: Path) -> str | None:
    for name in doctree.MKDOCS_FILES:
        try:
            return (root / name).read_text(encoding="utf-8", errors="replace")
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            continue
    return None


def trees(root: Path) -> tuple[doctree.Tree, ...]:
    if not root.is_dir():
        return ()
    return doctree.trees(sphinx_confs(root), mkdocs_text(root))


def configured(root: Path, committed: bool = False) -> str | None:
    """The folder an adopted repository's `.shiftkit.toml` names (None: not adopted, or no
    readable setting): the setting stays the one source of where records are. ``committed``:
    the file as HEAD holds it (a copy in progress has just written one of its own)."""
    from shiftkit.core import config
    from shiftkit.core.errors import ShiftkitError

    text: str | None
    if committed:
        from shiftkit.edge import gitio

        head = gitio.head_oid(root) if root.is_dir() else None
        text = (
            None if head is None else gitio.read_blobs(root, [f"{head}:./{config.CONFIG_FILE}"])[0]
        )
    else:
        try:
            text = (root / config.CONFIG_FILE).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = None
    if text is None:
        return None
    try:
        folder = config.parse(text, config.CONFIG_FILE).decisions
    except ShiftkitError:
        return None
    return None if folder.strip() == doctree.AUTO else folder


def decisions_folder(root: Path, answer: str = doctree.AUTO, committed: bool = False) -> str:
    """The folder for decision records at ``root``: ``answer`` when it names one; for
    `auto`, the adopted setting (``committed``: as HEAD holds it), else docs/decisions
    unless a documentation tool reads it."""
    if answer.strip() and answer.strip() != doctree.AUTO:
        return doctree.normalise(answer)
    return configured(root, committed) or doctree.choose(trees(root))
