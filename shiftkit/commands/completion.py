"""Shell completion of feature ids (click's protocol: `_SHIFTKIT_COMPLETE=bash_source`).

Reads the work tree's feature list as plain JSON, without the schema check, and never raises:
a completion that fails offers nothing rather than printing a traceback into the shell.
"""

from __future__ import annotations

import json


def feature_ids(kind: str, prefix: str) -> list[tuple[str, str]]:
    """(id, description) of the features of ``kind`` whose id starts with ``prefix``."""
    try:
        from shiftkit.core import features
        from shiftkit.edge import gitio, project

        root = gitio.toplevel()
        path = root / project.load_config(root).features
        document = json.loads(path.read_text(encoding="utf-8"))
        return features.completion_candidates(document, kind, prefix)
    except Exception:  # a broken project, no git, no list: nothing to offer
        return []
