"""The bundled price table, read once per process (decision 0060)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

from shiftkit.core import prices
from shiftkit.core.config import ModelPrice

TABLE = Path(__file__).resolve().parent.parent / "data" / "prices.json"


@cache
def _bundled() -> tuple[dict[str, ModelPrice], str]:
    try:
        return prices.parse(TABLE.read_text(encoding="utf-8"))
    except OSError:
        return {}, ""


def book(configured: Sequence[tuple[str, ModelPrice]]) -> prices.Book:
    """The project's prices over the bundled table."""
    bundled, date = _bundled()
    return prices.Book(dict(configured), bundled, date)
