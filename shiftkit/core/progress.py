"""The progress log: entries with a machine-readable header, appended at unit boundaries,
pruned losslessly in blocks to the archive.

Pure functions over text; the callers read and write the files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

HEADER = re.compile(
    r"^## (?P<time>\d{4}-\d\d-\d\d \d\d:\d\d UTC) \| (?P<feature>[^|\s]+) \| "
    r"(?P<outcome>[^|\n]+?) \| (?P<base>[0-9a-f]{4,40}|-)[ \t]*$",
    re.MULTILINE,
)
INDEX_PREFIX = "[shiftkit] "
ARCHIVE_HEAD = (
    "# Progress archive — entries moved out of the progress log by shiftkit, oldest first\n"
)


class Entry(NamedTuple):
    time: str
    feature: str
    outcome: str
    base: str
    text: str  # the whole block, verbatim: header line, body, trailing blank line

    @property
    def key(self) -> str:
        """The entry without its trailing blank lines, which merges may fold."""
        return self.text.rstrip("\n")

    @property
    def body(self) -> str:
        return self.text.split("\n", 1)[1].strip("\n") if "\n" in self.text else ""


class Log(NamedTuple):
    head: str  # everything before the first entry: preamble and the index line
    entries: tuple[Entry, ...]

    @property
    def preamble(self) -> str:
        lines = [line for line in self.head.splitlines() if not line.startswith(INDEX_PREFIX)]
        return "\n".join(lines).strip("\n") + "\n"

    @property
    def index_line(self) -> str | None:
        for line in self.head.splitlines():
            if line.startswith(INDEX_PREFIX):
                return line
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


def format_entry(time: str, feature: str, outcome: str, base: str, body: str) -> str:
    # An empty outcome would leave a header that no longer parses, merging the entry into
    # the one before it.
    outcome = " ".join(outcome.replace("|", "/").split()) or "-"
    text = body.strip("\n")
    lines = [line for line in text.splitlines()]
    # A body line that looks like a header would split the entry when read back.
    safe = [(" " + line) if HEADER.match(line) else line for line in lines]
    block = f"## {time} | {feature} | {outcome} | {base}\n"
    if safe:
        block += "\n".join(safe) + "\n"
    return block + "\n"


def append(text: str, entry_text: str) -> str:
    """The log with one more entry: the old text is an exact prefix of the new one."""
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
    """Cut the log back to its newest ``keep`` entries, moving the rest verbatim to the
    end of the archive; the newest entry about each blocked feature stays in the log."""
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
    if not archive_text:
        archive_text = ARCHIVE_HEAD + "\n"
    new_archive = archive_text
    moved_text = "".join(entry.text for entry in moved)
    # A prune interrupted after writing the archive already put these entries there: the
    # archive ends with them and holds exactly that many more than the log's index line
    # counts. (Ending with them alone is not enough: an entry can repeat word for word.)
    interrupted = (
        moved
        and archive_text.endswith(moved_text)
        and len(parse(archive_text).entries) == _indexed_count(log) + len(moved)
    )
    if moved and not interrupted:
        # One block, verbatim: padding between entries that were not separated by a blank
        # line would change them (rule 8 wants them at the end of the archive as they were).
        new_archive = append(new_archive, moved_text)
    archived = parse(new_archive).entries
    head = log.preamble + "\n" + index_line(archived, archive_name) + "\n\n"
    return Pruned(head + "".join(e.text for e in kept), new_archive, moved)


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
