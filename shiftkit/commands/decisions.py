"""Architecture decision records: `NNNN-slug.md` in Nygard's form, and the index line."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

from shiftkit.core.errors import BadInput
from shiftkit.edge.atomic import atomic_write

INDEX = "README.md"


def slugify(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return slug[:60].rstrip("-") or "decision"


def next_number(folder: Path) -> int:
    numbers = [int(p.name[:4]) for p in folder.glob("[0-9][0-9][0-9][0-9]-*.md")]
    return max(numbers, default=0) + 1


def _paragraphs(text: str) -> str:
    """User text as a record holds it: no line-end whitespace, \\n line breaks, nothing
    blank at either end (so the file passes the usual whitespace hooks unchanged)."""
    return "\n".join(line.rstrip() for line in text.splitlines()).strip()


def _one_line(text: str) -> str:
    return " ".join(text.split())


def render(
    number: int, title: str, why: str, decision: str, rejected: list[str], today: str
) -> str:
    rejected_lines = "\n".join(f"- {_paragraphs(item)}" for item in rejected)
    return (
        f"# {number}. {_one_line(title)}\n\n"
        f"Date: {today}\n\n"
        f"## Status\n\nAccepted\n\n"
        f"## Context\n\n{_paragraphs(why)}\n\n"
        f"## Decision\n\n{_paragraphs(decision)}\n\n"
        f"## Consequences\n\nA later session that wants to change this writes a new record that "
        f"supersedes this one.\n\n"
        f"## Rejected alternatives\n\n{rejected_lines}\n"
    )


def decide(
    folder: Path, title: str, why: str, rejected: list[str], decision: str | None = None
) -> Path:
    if not title.strip():
        raise BadInput("TITLE is empty; name the decision, e.g. 'Use SQLite for storage'")
    if not why.strip():
        raise BadInput("--why is empty; say what forces the decision")
    if not rejected or not all(r.strip() for r in rejected):
        raise BadInput("--rejected is empty; name the alternative you did not take, and why")
    folder.mkdir(parents=True, exist_ok=True)
    number = next_number(folder)
    path = folder / f"{number:04d}-{slugify(title)}.md"
    text = render(number, title, why, decision or title, rejected, date.today().isoformat())
    atomic_write(path, text)
    index = folder / INDEX
    try:
        current = index.read_bytes().decode("utf-8")  # line endings as they are
    except FileNotFoundError:
        current = "# Decision records\n\n"
    newline = "\r\n" if current.endswith("\r\n") else "\n"  # the index's own line endings
    if current and not current.endswith("\n"):
        current += newline
    atomic_write(index, current + f"- [{number:04d}]({path.name}) {_one_line(title)}{newline}")
    return path
