"""Locating a shiftkit project and reading or writing its files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from shiftkit.core import config as config_mod
from shiftkit.core import features
from shiftkit.core.errors import BadInput
from shiftkit.edge import files, gitio
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
        return files.read_text(path)
    except FileNotFoundError:
        raise BadInput(f"{name}: file not found; {hint}") from None
    except UnicodeDecodeError:
        raise BadInput(f"{name}: not UTF-8 text") from None
    except IsADirectoryError:
        raise BadInput(f"{name}: is a directory, expected a file") from None
    except OSError as exc:  # unreadable: permissions, a dangling link, an I/O error, a FIFO
        fix = "" if exc.strerror == files.NOT_REGULAR else "; fix its permissions"
        raise BadInput(f"{name}: cannot be read ({exc.strerror or exc}){fix}") from None


def read_features(project: Project) -> features.FeatureList:
    name = project.config.features
    text = read_text(
        project.features_path,
        name,
        "scaffold a project with `shiftkit new DIR` or set 'shiftkit.features' in .shiftkit.toml",
    )
    return parse_checked(text, name, project.root, against_head=True)


def parse_checked(
    text: str, name: str, root: Path, blob: str | None = None, against_head: bool = False
) -> features.FeatureList:
    """A feature list, fully checked once per content: a text whose blob id (``blob``, or
    computed as git does) passed before has its `features.Table` recorded in the common git
    dir and is not parsed at all until an item is asked for. A new text is checked (with
    ``against_head``: only its items that differ from HEAD's list, when HEAD's is known
    valid) and recorded."""
    import json

    from shiftkit.edge import state

    oid = blob or blob_id(text)
    if oid in _PARSED:
        return _PARSED[oid]
    common = gitio.git_dirs(root)[1]
    checked = state.recorded_list(common, oid, text)
    if checked is None:
        head = read_features_at(root, "HEAD", name) if against_head else None
        checked = features.loads_against(text, head) if head is not None else None
        if checked is None:
            if state.is_validated(common, oid):
                parsed = features.from_document(json.loads(text))
            elif head is not None:
                parsed = features.loads(text, name, features.as_document(head), head.text)
            else:
                parsed = features.loads(text, name)
            items = parsed.items
            checked = features.FeatureList.from_text(
                text,
                features.table_of(items),
                features.item_spans(text, items),
                parsed.schema_ref,
                items=items,
            )
        state.record_checked(common, oid, checked)
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


def blob_id(text: str) -> str:
    """The id git gives ``text`` as a blob."""
    import hashlib

    data = text.encode("utf-8", "surrogateescape")
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def write_features(project: Project, feature_list: features.FeatureList) -> None:
    text = features.dumps(feature_list)
    atomic_write(project.features_path, text)
    if feature_list.checked and feature_list.text == text:
        # Changed by shiftkit item by item, each change checked: the next reader (and the
        # commit hook) need not check it again.
        from shiftkit.edge import state

        state.record_checked(gitio.git_dirs(project.root)[1], blob_id(text), feature_list)


def load_config(root: Path) -> config_mod.Config:
    path = root / config_mod.CONFIG_FILE
    try:
        text = files.read_text(path)
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
