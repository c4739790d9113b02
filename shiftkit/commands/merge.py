"""`shiftkit merge-features BASE OURS THEIRS` and `shiftkit merge-log BASE OURS THEIRS`:
git's merge drivers for the feature list and the progress log."""

from __future__ import annotations

from pathlib import Path

from shiftkit.core import merge
from shiftkit.core.errors import ShiftkitError
from shiftkit.edge import gitio, project, state
from shiftkit.edge.atomic import atomic_write

HINT = "git passes the three versions to merge"


def merge_features(base: Path, ours: Path, theirs: Path) -> None:
    """Merge the three versions into OURS. git runs the driver at the top of the work tree,
    so the lists the hooks and commands validated before are known there by their blob ids:
    only what differs from one of those is checked (`merge.merge_texts`), and a list checked
    in full here is recorded the same way."""
    texts = [project.read_text(path, str(path), HINT) for path in (ours, theirs, base)]
    common = _common_dir()
    blobs = [_blob_id(text) for text in texts]
    known = [common is not None and state.is_validated(common, blob) for blob in blobs]
    ours_version = merge.Version(texts[0], str(ours), known[0])
    theirs_version = merge.Version(texts[1], str(theirs), known[1])
    # No common ancestor: git passes an empty file.
    base_version = merge.Version(texts[2], str(base), known[2]) if texts[2].strip() else None
    merged = merge.merge_texts(base_version, ours_version, theirs_version)
    if common is not None:
        for version in merged.validated:
            state.mark_validated(common, _blob_id(version.text))
    atomic_write(ours, merged.text)


def merge_log(base: Path, ours: Path, theirs: Path) -> None:
    """Merge the three versions of the progress log into OURS, entry by entry
    (`progress.merge`)."""
    from shiftkit.core import progress

    texts = [project.read_text(path, str(path), HINT) for path in (base, ours, theirs)]
    atomic_write(ours, progress.merge(*texts))


def _common_dir() -> Path | None:
    """The common git dir of the repository here, if there is one."""
    try:
        return gitio.git_dirs(Path.cwd())[1]
    except (ShiftkitError, OSError):
        return None


def _blob_id(text: str) -> str:
    """The id git gives a file holding ``text`` (as the hooks record validated lists)."""
    import hashlib

    data = text.encode("utf-8", "surrogateescape")
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
