"""The feature list's definitions as a person reads and extends them: `shiftkit validate`,
`shiftkit show` and `shiftkit add` (the only change to definitions allowed)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from shiftkit.commands import views
from shiftkit.core import features
from shiftkit.core.errors import BadInput
from shiftkit.edge import project

Say = Callable[[str], None]


def validate(path: Path | None, say: Say) -> None:
    """Check the project's feature list (or the one at `path`) against the schema."""
    if path is None:
        proj = project.find()
        feature_list = project.read_features(proj)
        name = proj.config.features
    else:
        text = project.read_text(path, str(path), "give the path of a feature list")
        feature_list = features.loads(text, str(path))
        name = str(path)
    say(f"{name}: valid, {len(feature_list.features)} features")


def show(feature_id: str, as_json: bool, say: Say) -> None:
    """One feature of the project's list in full (or as JSON)."""
    proj = project.find()
    feature_list = project.read_features(proj)
    feature = features.require(feature_list, feature_id, proj.config.features)
    if as_json:
        say(json.dumps(features.feature_to_dict(feature), indent=2, ensure_ascii=False))
    else:
        from shiftkit.commands import cost
        from shiftkit.core.errors import ShiftkitError
        from shiftkit.edge import gitio
        from shiftkit.edge.context import Context

        try:  # (the ledger's count; the list's own when git cannot say where the ledger is)
            dirs = gitio.git_dir(proj.root), gitio.common_dir(proj.root)
        except (ShiftkitError, OSError):
            tried = None
        else:
            tried = cost.attempts_of(Context(proj, *dirs), feature.id)
        say(views.feature_text(feature, proj.config.verify, tried))


def add(
    feature_id: str | None,
    description: str,
    steps: tuple[str, ...],
    verify_cmd: str | None,
    category: str,
    core: bool,
    depends_on: tuple[str, ...],
    oracle_paths: tuple[str, ...],
    say: Say,
) -> None:
    """Append a feature to the project's list (default id: the next free F number), written
    but not committed."""
    proj = project.find()
    feature_list = project.read_features(proj)
    new_id = feature_id or features.next_free_id(feature_list)
    if feature_list.get(new_id) is not None:
        raise BadInput(f"--id {new_id!r}: already used in {proj.config.features}; pick another id")
    feature = features.Feature(
        id=new_id,
        category=category,
        description=description,
        steps=steps,
        verify=verify_cmd,
        core=core,
        depends_on=depends_on,
        oracle=oracle_paths,
    )
    text = features.dumps(feature_list.append(feature))
    try:
        checked = features.loads(text, proj.config.features)
    except BadInput as exc:
        raise BadInput(f"the new feature is invalid: {exc.message}") from None
    project.write_features(proj, checked)
    say(
        f"added {new_id}: {description} (not committed yet: commit {proj.config.features}, "
        f'e.g. `git commit -m "Add {new_id}" {proj.config.features}`)'
    )
