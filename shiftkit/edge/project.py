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
    return features.loads(text, name)


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
