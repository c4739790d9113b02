"""The progress log: entries with a machine-readable header, appended at unit boundaries,
pruned losslessly in blocks to the archive.

Layout as shiftkit writes it (`tidy`): no line ends in whitespace, one blank line between the
head and each entry, exactly one newline at the end of the file — what `end-of-file-fixer`,
`trailing-whitespace` and `mixed-line-ending` leave unchanged. Entries are compared by `key`,
which ignores the blank lines between them and the whitespace at the end of their lines: merges,
those fixers and hand edits change exactly that.

Pure functions over text; the callers read and write the files.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

HEADER = re.compile(
    r"^## (?P<time>\d{4}-\d\d-\d\d \d\d:\d\d UTC) \| (?P<feature>[^|\s]+) \| "
    r"(?P<outcome>[^|\n]+?) \| (?P<base>[0-9a-f]{4,40}|-)[ \t\r\x0b\x0c]*$",
    re.MULTILINE,
)
INDEX_PREFIX = "[shiftkit] "
ARCHIVE_HEAD = (
    "# Progress archive — entries moved out of the progress log by shiftkit, oldest first\n"
)
# What `trailing-whitespace` strips at the end of a line (bytes.rstrip's ASCII whitespace).
_LINE_END_SPACE = re.compile(r"[ \t\r\x0b\x0c]+$", re.MULTILINE)


def _tidy_lines(text: str) -> str:
    """``text`` without whitespace at the end of its lines and without trailing blank lines."""
    return _LINE_END_SPACE.sub("", text).rstrip("\n")


# `audit` compares the same entries commit after commit (the archive keeps every one): each
# entry's key is worked out once.
_entry_key = functools.lru_cache(maxsize=1 << 14)(_tidy_lines)


class Entry(NamedTuple):
    time: str
    feature: str
    outcome: str
    base: str
    text: str  # the whole block, verbatim: header line, body, any blank lines after it

    @property
    def key(self) -> str:
        """The entry as the rules compare it: without the blank lines after it and the
        whitespace at the end of its lines, which merges, fixers and hand edits change."""
        return _entry_key(self.text)

    @property
    def clean(self) -> str:
        """The entry as shiftkit writes it: its key and one newline."""
        return self.key + "\n"

    @property
    def body(self) -> str:
        return self.text.split("\n", 1)[1].strip("\n") if "\n" in self.text else ""


class Log(NamedTuple):
    head: str  # everything before the first entry: preamble and the index line
    entries: tuple[Entry, ...]

    @property
    def preamble(self) -> str:
        """The head without the index line, blank lines around it and line-end whitespace."""
        lines = [line for line in self.head.splitlines() if not line.startswith(INDEX_PREFIX)]
        return _tidy_lines("\n".join(lines)).lstrip("\n") + "\n"

    @property
    def index_line(self) -> str | None:
        for line in self.head.splitlines():
            if line.startswith(INDEX_PREFIX):
                return line.rstrip()
        return None

    def text(self) -> str:
        return self.head + "".join(entry.text for entry in self.entries)


def parse(text: str) -> Log:
    starts = [match.start() for match in HEADER.finditer(text)]
    if not starts:
        return Log(text, ())
    entries = []
    for position, start in enumerate(starts):
        end = starts[position + 1] if position + 1 < len(starts) else len(text)
        block = text[start:end]
        match = HEADER.match(block)
        assert match is not None
        entries.append(
            Entry(match["time"], match["feature"], match["outcome"].strip(), match["base"], block)
        )
    return Log(text[: starts[0]], tuple(entries))


def parse_after(before: Log, before_text: str, text: str) -> Log:
    """`parse(text)` for a ``text`` that starts with ``before_text`` (whose parse is
    ``before``), reading only what follows it: an archive only grows at its end, and `audit`
    reads every version of it. Headers start lines, so the ones in ``before_text`` (which ends
    with a line break) are the same in ``text``; its last entry runs on to the next header."""
    if not before_text or not before_text.endswith("\n") or not text.startswith(before_text):
        return parse(text)
    after = parse(text[len(before_text) :])
    if not before.entries:
        return Log(before_text + after.head, after.entries)
    last = before.entries[-1]
    last = last._replace(text=last.text + after.head)
    return Log(before.head, (*before.entries[:-1], last, *after.entries))


def format_entry(time: str, feature: str, outcome: str, base: str, body: str) -> str:
    """One entry: its header line and body, ending with one newline (no blank line: `append`
    puts one before the next entry). No line ends in whitespace; every line break is \\n."""
    # An empty outcome would leave a header that no longer parses, merging the entry into
    # the one before it.
    outcome = " ".join(outcome.replace("|", "/").split()) or "-"
    lines = [line.rstrip() for line in body.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    # A body line that looks like a header would split the entry when read back.
    safe = [(" " + line) if HEADER.match(line) else line for line in lines]
    block = f"## {time} | {feature} | {outcome} | {base}\n"
    if safe:
        block += "\n".join(safe) + "\n"
    return block


def tidy(text: str) -> str:
    """The log (or archive) laid out as shiftkit writes it, entries unchanged by `key`: no
    line-end whitespace, one blank line before each entry, one newline at the end."""
    log = parse(text)
    head = _tidy_lines(log.head)
    parts = ([head + "\n"] if head.strip() else []) + [entry.clean for entry in log.entries]
    return "\n".join(parts)


def append(text: str, entry_text: str) -> str:
    """The log with one more entry after a blank line: the old text is an exact prefix of
    the new one."""
    if text and not text.endswith("\n"):
        text += "\n"
    if text and not text.endswith("\n\n"):
        text += "\n"
    return text + entry_text


def due(log: Log, keep: int, block: int) -> bool:
    return len(log.entries) > keep + block


class Pruned(NamedTuple):
    log_text: str
    archive_text: str
    moved: tuple[Entry, ...]


def prune(
    log: Log, archive_text: str, keep: int, blocked_ids: Iterable[str], archive_name: str
) -> Pruned:
    """Cut the log back to its newest ``keep`` entries, moving the rest to the end of the
    archive (unchanged by `key`: only blank lines and line-end whitespace are tidied); the
    newest entry about each blocked feature stays in the log."""
    entries = log.entries
    cut = max(0, len(entries) - keep)
    older, newest = entries[:cut], entries[cut:]
    retained: set[int] = set()
    for feature_id in set(blocked_ids):
        if any(e.feature == feature_id for e in newest):
            continue
        for position in range(len(older) - 1, -1, -1):
            if older[position].feature == feature_id:
                retained.add(position)
                break
    moved = tuple(e for i, e in enumerate(older) if i not in retained)
    kept = tuple(e for i, e in enumerate(older) if i in retained) + newest
    new_archive = tidy(archive_text) if archive_text.strip() else ARCHIVE_HEAD
    # A prune interrupted after writing the archive already put these entries there: the
    # archive ends with them and holds exactly that many more than the log's index line
    # counts. (Ending with them alone is not enough: an entry can repeat word for word.)
    archived = parse(new_archive).entries
    interrupted = (
        moved
        and len(archived) == _indexed_count(log) + len(moved)
        and [e.key for e in archived[len(archived) - len(moved) :]] == [e.key for e in moved]
    )
    if moved and not interrupted:
        new_archive = append(new_archive, "\n".join(e.clean for e in moved))
        archived = parse(new_archive).entries
    head = "\n\n".join(
        part for part in (log.preamble.strip("\n"), index_line(archived, archive_name)) if part
    )
    return Pruned("\n".join([head + "\n", *(e.clean for e in kept)]), new_archive, moved)


def _indexed_count(log: Log) -> int:
    """How many entries the log's index line says the archive holds (0 without one)."""
    match = re.match(rf"{re.escape(INDEX_PREFIX)}(\d+) ", log.index_line or "")
    return int(match[1]) if match else 0


def index_line(archived: Sequence[Entry], archive_name: str) -> str:
    """Derived from the archive itself each time, never from an earlier index line."""
    ids = sorted({e.feature for e in archived})
    dates = sorted(e.time[:10] for e in archived)
    span_ids = f"{ids[0]}..{ids[-1]}" if len(ids) > 1 else (ids[0] if ids else "-")
    span_dates = f"{dates[0]}..{dates[-1]}" if len(dates) > 1 else (dates[0] if dates else "-")
    return (
        f"{INDEX_PREFIX}{len(archived)} earlier entries archived in {archive_name} "
        f"({span_ids}, {span_dates})"
    )


def newest_entries(log: Log, count: int) -> tuple[Entry, ...]:
    return log.entries[-count:] if count > 0 else ()
