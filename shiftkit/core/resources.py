"""Where the bundled template (and the schema inside it) lives, installed or in a checkout."""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent.parent  # shiftkit/, above core/


def template_root() -> Path:
    """The directory holding ``copier.yml`` and ``template/``.

    A wheel carries them as ``shiftkit/_template``; an editable install or a checkout
    uses the repository root, so there is a single copy of every template file.
    """
    bundled = _PACKAGE_DIR / "_template"
    if (bundled / "copier.yml").is_file():
        return bundled
    return _PACKAGE_DIR.parent


def schema_path() -> Path:
    return template_root() / "template" / ".shiftkit" / "features.schema.json"


def hooks_dir() -> Path:
    """The plain git hook shims, for repositories without the pre-commit framework."""
    return template_root() / "hooks"
