"""An MkDocs hook: every decision record under the nav's "Decisions" section, in number order,
after its index, so a record added by `shiftkit decide` is in the nav without an edit of
mkdocs.yml (decision record 0094)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SECTION = "Decisions"
FOLDER = "decisions"


def on_config(config: Any) -> Any:
    records = sorted(Path(config["docs_dir"], FOLDER).glob("[0-9][0-9][0-9][0-9]-*.md"))
    for entry in config["nav"] or []:
        if isinstance(entry, dict) and SECTION in entry:
            index = [item for item in entry[SECTION] if not str(item).startswith(f"{FOLDER}/0")]
            entry[SECTION] = index + [f"{FOLDER}/{path.name}" for path in records]
    return config
