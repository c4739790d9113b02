"""Counted nouns in messages: "1 session", "2 sessions"."""

from __future__ import annotations


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """``count`` and the noun, in the singular for exactly one (plural: ``singular + "s"``)."""
    return f"{count} {singular if count == 1 else plural or singular + 's'}"
