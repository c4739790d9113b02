"""Locating a shiftkit project and reading or writing its files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from shiftkit.core import config as config_mod
from shiftkit.core import features
from shiftkit.core.errors import BadInput
from shiftkit.edge import gitio
from shiftkit.edge.atomic import atomic_write


@dataclass(frozen=True)
class Project:
    root: Path
    config: config_mod.Config

    @property
    def features_path(self) -> Path:
        return self.root / self.config.features

    @property
    def progress_path(self) -> Path:
        return self.root / self.config.progress

    @property
    def archive_path(self) -> Path:
        return self.root / self.config.log.archive

    @property
    def decisions_path(self) -> Path:
        return self.root / self.config.decisions


def find(cwd: Path | str | None = None) -> Project:
    root = gitio.toplevel(cwd)
    return Project(root=root, config=committed_config(root))


def committed_config(root: Path) -> config_mod.Config:
    """HEAD's `.shiftkit.toml`, the one the rules judge by: an uncommitted edit of the file
    changes nothing until a person commits it. The work tree's before there is one."""
    committed = gitio.read_blobs(root, [f"HEAD:{config_mod.CONFIG_FILE}"])[0]
    working = load_config(root)  # still checked, so a typo is reported where it is made
    if committed is None:
        return working
    judge = config_mod.parse(committed, f"{config_mod.CONFIG_FILE} (as committed at HEAD)")
    if working != judge:
        import sys

        print(
            f"shiftkit: note: {config_mod.CONFIG_FILE} has uncommitted changes; the committed "
            f"settings apply until they are committed (by a person, for enforcement keys)",
            file=sys.stderr,
        )
    return judge


def read_text(path: Path, name: str, hint: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput(f"{name}: file not found; {hint}") from None
    except UnicodeDecodeError:
        raise BadInput(f"{name}: not UTF-8 text") from None
    except IsADirectoryError:
        raise BadInput(f"{name}: is a directory, expected a file") from None
    except OSError as exc:  # unreadable: permissions, a dangling link, an I/O error
        raise BadInput(
            f"{name}: cannot be read ({exc.strerror or exc}); fix its permissions"
        ) from None


def read_features(project: Project) -> features.FeatureList:
    name = project.config.features
    text = read_text(
        project.features_path,
        name,
        "scaffold a project with `shiftkit new DIR` or set 'shiftkit.features' in .shiftkit.toml",
    )
    return parse_checked(text, name, project.root)


def parse_checked(
    text: str, name: str, root: Path, blob: str | None = None
) -> features.FeatureList:
    """A feature list, fully checked once per content: a text whose blob id (``blob``, or
    computed as git does) passed before is recorded in the common git dir, as the hooks
    record the lists they validated, and is only parsed."""
    import json

    from shiftkit.edge import state

    oid = blob or _blob_id(text.encode("utf-8", "surrogateescape"))
    if oid in _PARSED:
        return _PARSED[oid]
    common = gitio.git_dirs(root)[1]
    if state.is_validated(common, oid):
        checked = features.from_document(json.loads(text))
    else:
        checked = features.loads(text, name)
        state.mark_validated(common, oid)
    _PARSED.clear()  # (one list kept: a process reads the same list again and again)
    _PARSED[oid] = checked
    return checked


_PARSED: dict[str, features.FeatureList] = {}


def read_features_at(root: Path, rev: str, name: str) -> features.FeatureList | None:
    """The feature list committed at ``rev`` (None when there is none), checked once."""
    spec = f"{rev}:{name}"
    oid = gitio.run(["rev-parse", "-q", "--verify", spec], root, check=False).stdout.strip()
    if oid in _PARSED:
        return _PARSED[oid]  # (a 5,000-feature list is a megabyte to read again)
    found = gitio.read_blobs_with_ids(root, [spec])[0]
    if found is None:
        return None
    return parse_checked(found[1], f"{name} at {rev}", root, found[0])


def _blob_id(data: bytes) -> str:
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def write_features(project: Project, feature_list: features.FeatureList) -> None:
    atomic_write(project.features_path, features.dumps(feature_list))


def load_config(root: Path) -> config_mod.Config:
    path = root / config_mod.CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return config_mod.Config()
    except UnicodeDecodeError:
        raise BadInput(f"{config_mod.CONFIG_FILE}: not UTF-8 text") from None
    except IsADirectoryError:
        raise BadInput(f"{config_mod.CONFIG_FILE}: is a directory, expected a file") from None
    except OSError as exc:
        raise BadInput(
            f"{config_mod.CONFIG_FILE}: cannot be read ({exc.strerror or exc})"
        ) from None
    return config_mod.parse(text, config_mod.CONFIG_FILE)
