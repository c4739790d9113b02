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


def configured(root: Path) -> str | None:
    """The folder an adopted repository's `.shiftkit.toml` names (None: not adopted, or no
    readable setting): the setting stays the one source of where records are."""
    from shiftkit.core import config
    from shiftkit.core.errors import ShiftkitError

    path = root / config.CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    try:
        return config.parse(text, str(path)).decisions
    except ShiftkitError:
        return None


def decisions_folder(root: Path, answer: str = doctree.AUTO) -> str:
    """The folder for decision records at ``root``: ``answer`` when it names one; for
    `auto`, the adopted setting, else docs/decisions unless a documentation tool reads it."""
    if answer.strip() and answer.strip() != doctree.AUTO:
        return doctree.normalise(answer)
    return configured(root) or doctree.choose(trees(root))
