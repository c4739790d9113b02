"""Money per model: the prices a project configures (`[shiftkit.prices]`) over the bundled,
dated table (``shiftkit/data/prices.json``, a subset of LiteLLM's, decision 0060). Pure."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import NamedTuple

from shiftkit.core.config import ModelPrice

_DATED = re.compile(
    r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$"
)  # claude-sonnet-4-5-20250929, gpt-…-2026-04-23


class Book(NamedTuple):
    """The configured prices over the bundled ones; ``get`` as a mapping's."""

    configured: Mapping[str, ModelPrice]
    bundled: Mapping[str, ModelPrice]
    date: str = ""

    def get(self, model: str, default: ModelPrice | None = None) -> ModelPrice | None:
        """The configured price of ``model``, else the bundled one, else (a dated name) the
        bundled price of the model without its date."""
        for table in (self.configured, self.bundled):
            if model in table:
                return table[model]
        undated = _DATED.sub("", model)
        return self.bundled.get(undated, default) if undated != model else default


def parse(text: str) -> tuple[dict[str, ModelPrice], str]:
    """The bundled table's models and its date; an unreadable table is empty (money is then
    unknown, never wrong)."""
    try:
        document = json.loads(text)
    except ValueError:
        return {}, ""
    models = document.get("models") if isinstance(document, dict) else None
    if not isinstance(models, dict):
        return {}, ""
    found = {}
    for model, entry in models.items():
        try:
            found[model] = ModelPrice(*(float(entry[key]) for key in ModelPrice._fields))
        except (KeyError, TypeError, ValueError):
            continue
    date = document.get("date")
    return found, date if isinstance(date, str) else ""
