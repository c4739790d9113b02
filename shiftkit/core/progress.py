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
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from itertools import repeat
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
# A header line after a line break: what `parse` splits on. HEADER's own pattern, groups and
# all, found after the "\n" before it: a literal start the regex engine searches for quickly,
# where HEADER's `^` is tried at every character of the text.
_NEXT_HEADER = re.compile(
    r"\n(?=" + HEADER.pattern.removeprefix("^").removesuffix("$") + r"(?:\n|\Z))"
)
# What `trailing-whitespace` strips at the end of a line (bytes.rstrip's ASCII whitespace).
_LINE_END_SPACE = re.compile(r"[ \t\r\x0b\x0c]+$", re.MULTILINE)
_SPACES = " \t\r\x0b\x0c"


def _has_line_end_space(text: str) -> bool:
    """Whether a line of ``text`` ends in whitespace that `_tidy_lines` removes: substring
    searches, far quicker over a long text than the regular expression (the rare characters
    are looked for alone first, which is quicker still)."""
    return (
        (text != "" and text[-1] in _SPACES)
        or " \n" in text
        or any(c in text and c + "\n" in text for c in _SPACES[1:])
    )


def _tidy_lines(text: str) -> str:
    """``text`` without whitespace at the end of its lines and without trailing blank lines."""
    if _has_line_end_space(text):
        text = _LINE_END_SPACE.sub("", text)
    return text.rstrip("\n")


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


# An Entry from its five fields in a tuple, as `Entry._make` builds it (without its call).
_new_entry = partial(tuple.__new__, Entry)


class _Split(NamedTuple):
    """A text as one split on its header lines leaves it: the head, then by column each
    entry's header fields (the outcome not yet stripped) and its piece of the text, up to
    the line break before the next entry (the last one's: to the end of the text)."""

    head: str
    times: list[str]
    features: list[str]
    outcomes: list[str]
    bases: list[str]
    pieces: list[str]


def _split(text: str) -> _Split:
    # A line break put in front, so that a header on the first line is found like the others.
    parts = _NEXT_HEADER.split("\n" + text)
    if len(parts) == 1:
        return _Split(text, [], [], [], [], [])
    return _Split(
        (parts[0] + "\n")[1:], parts[1::5], parts[2::5], parts[3::5], parts[4::5], parts[5::5]
    )


def parse(text: str) -> Log:
    """The head and the entries: an entry runs from a line HEADER matches to the next one."""
    return _entries(_split(text))


def _entries(split: _Split) -> Log:
    texts = split.pieces[:]
    texts[:-1] = map(str.__add__, texts[:-1], repeat("\n"))
    fields = zip(
        split.times, split.features, map(str.strip, split.outcomes), split.bases, texts, strict=True
    )
    return Log(split.head, tuple(map(_new_entry, fields)))


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
    split = _split(text)
    return text if _is_tidy(text, split) else _tidied(_entries(split))


def _tidied(log: Log) -> str:
    head = _tidy_lines(log.head)
    parts = ([head + "\n"] if head.strip() else []) + [entry.clean for entry in log.entries]
    return "\n".join(parts)


def _is_tidy(text: str, split: _Split) -> bool:
    """Whether `tidy` leaves ``text`` as it is, told without building the tidied text.

    With no whitespace at a line end, `_tidy_lines` of a part is the part without its
    trailing line breaks, so the text is tidy when each part ends in the line breaks `tidy`
    gives it: the head (when it holds more than whitespace) in a blank line, each entry but
    the last in a blank line, that is its piece in one newline, and the last entry, its
    piece, in one newline."""
    if _has_line_end_space(text):
        return False
    head, pieces = split.head, split.pieces
    if not pieces:
        return text == (text.rstrip("\n") + "\n" if text.strip() else "")
    return (
        (head == head.rstrip("\n") + "\n\n" if head.strip() else head == "")
        and all(map(str.endswith, pieces, repeat("\n")))
        and not any(map(str.endswith, pieces, repeat("\n\n")))
    )


class _Columns(NamedTuple):
    """A tidy log or archive by column: its text and head, and each entry's feature, time and
    clean text (`Entry.clean`)."""

    text: str
    head: str
    features: list[str]
    times: list[str]
    cleans: list[str]


def _tidy_columns(text: str) -> _Columns:
    """`tidy(text)`, by column. In a tidy text each entry's piece is its clean text: one split,
    and nothing is built per entry."""
    split = _split(text)
    if _is_tidy(text, split):
        return _Columns(text, split.head, split.features, split.times, split.pieces)
    tidied = _tidied(_entries(split))
    return _of_log(tidied, parse(tidied))


def _of_log(text: str, log: Log) -> _Columns:
    entries = log.entries
    return _Columns(
        text,
        log.head,
        [e.feature for e in entries],
        [e.time for e in entries],
        [e.clean for e in entries],
    )


def append(text: str, entry_text: str) -> str:
    """The log with one more entry after a blank line: the old text is an exact prefix of
    the new one."""
    if text and not text.endswith("\n"):
        text += "\n"
    if text and not text.endswith("\n\n"):
        text += "\n"
    return text + entry_text


def insert(text: str, position: int, entry_text: str) -> str:
    """The log with one more entry after its first ``position`` characters (the log as it
    was at an earlier commit, of which ``text`` is an append): what follows is kept, after a
    blank line. The log of each later commit then stays an append of the one before it."""
    head = append(text[:position], entry_text)
    rest = text[position:].lstrip("\n")
    return append(head, rest) if rest else head


def merge(base: str, ours: str, theirs: str) -> str:
    """Three versions of the log merged entry by entry (git's merge driver, decision records
    0046 and 0066): every entry of ours, and each entry theirs added (not in the base) that
    ours lacks, in the order of their header times (a stable sort: entries of one minute keep
    ours first, then theirs in their order). The part of ours already in time order before
    the first entry of theirs is kept verbatim. A line-wise union merge would fold two
    entries that share a header line (two clones demoting one feature from one base in the
    same minute) into one, losing both: rule 8 then refuses the merge. An entry of the base
    that ours no longer has was moved to the archive by a prune on our side, and stays there."""
    mine = parse(ours)
    seen = {entry.key for entry in mine.entries}
    old = {entry.key for entry in parse(base).entries}
    added: list[Entry] = []
    for entry in parse(theirs).entries:
        if entry.key not in seen and entry.key not in old:
            added.append(entry)
            seen.add(entry.key)
    if not added:
        return ours
    combined = sorted([*mine.entries, *added], key=lambda entry: entry.time)
    kept = 0
    while kept < len(mine.entries) and combined[kept] is mine.entries[kept]:
        kept += 1
    if kept == len(mine.entries):
        merged = ours
    else:
        merged = mine.head + "".join(entry.text for entry in mine.entries[:kept])
    for entry in combined[kept:]:
        merged = append(merged, entry.clean)
    return merged


def due(log: Log, keep: int, block: int) -> bool:
    return len(log.entries) > keep + block


class Pruned(NamedTuple):
    log_text: str
    archive_text: str
    moved: tuple[Entry, ...]


def plan(
    text: str,
    archive: Callable[[], str],
    keep: int,
    block: int,
    blocked_ids: Iterable[str],
    archive_name: str,
) -> tuple[str, str | None]:
    """The log as shiftkit writes it: `tidy(text)`, and when a prune is `due`, pruned, with the
    archive's new text (read with ``archive()`` only then; else None). The same texts as
    `tidy`, `parse` and `prune` give, worked out by column from one split of each file when
    it is tidy already, as what shiftkit wrote is: nothing is built per entry."""
    log = _tidy_columns(text)
    if len(log.cleans) <= keep + block:
        return log.text, None
    archive_text = archive()
    old_archive = archive_text if archive_text.strip() else ARCHIVE_HEAD
    log_text, new_archive, _ = _pruned(
        log, _tidy_columns(old_archive), keep, blocked_ids, archive_name
    )
    return log_text, new_archive


def prune(
    log: Log, archive_text: str, keep: int, blocked_ids: Iterable[str], archive_name: str
) -> Pruned:
    """Cut the log back to its newest ``keep`` entries, moving the rest to the end of the
    archive (unchanged by `key`: only blank lines and line-end whitespace are tidied); the
    newest entry about each blocked feature stays in the log."""
    old_archive = archive_text if archive_text.strip() else ARCHIVE_HEAD
    log_text, new_archive, moved = _pruned(
        _of_log("", log), _tidy_columns(old_archive), keep, blocked_ids, archive_name
    )
    return Pruned(log_text, new_archive, tuple(log.entries[i] for i in moved))


def _pruned(
    log: _Columns, archive: _Columns, keep: int, blocked_ids: Iterable[str], archive_name: str
) -> tuple[str, str, Sequence[int]]:
    """The pruned log's text, the archive's, and the positions of the moved entries."""
    count = len(log.cleans)
    cut = max(0, count - keep)
    retained: set[int] = set()
    for feature_id in set(blocked_ids):
        if feature_id in log.features[cut:]:
            continue
        for position in range(cut - 1, -1, -1):
            if log.features[position] == feature_id:
                retained.add(position)
                break
    moved = [i for i in range(cut) if i not in retained] if retained else range(cut)
    kept = [*sorted(retained), *range(cut, count)]
    moved_cleans = [log.cleans[i] for i in moved] if retained else log.cleans[:cut]
    features, times = archive.features, archive.times
    # A prune interrupted after writing the archive already put these entries there: the
    # archive ends with them and holds exactly that many more than the log's index line
    # counts. (Ending with them alone is not enough: an entry can repeat word for word.)
    # Clean texts compare as keys do: a clean text is its key and a newline.
    interrupted = (
        len(features) == _indexed_count(Log(log.head, ())) + len(moved)
        and archive.cleans[len(features) - len(moved) :] == moved_cleans
    )
    new_archive = archive.text
    if moved and not interrupted:
        new_archive = append(new_archive, "\n".join(moved_cleans))
        # Read back, the archive holds the entries it held and then the moved ones, with the
        # same fields (docs/decisions/0022): each moved entry starts a line of its own, and
        # its clean text differs from its text only in line-end whitespace and blank lines,
        # which neither a header's fields nor where an entry starts depend on.
        features = features + [log.features[i] for i in moved]
        times = times + [log.times[i] for i in moved]
    head = "\n\n".join(
        part
        for part in (Log(log.head, ()).preamble.strip("\n"), _index(features, times, archive_name))
        if part
    )
    return "\n".join([head + "\n", *(log.cleans[i] for i in kept)]), new_archive, moved


def _indexed_count(log: Log) -> int:
    """How many entries the log's index line says the archive holds (0 without one)."""
    match = re.match(rf"{re.escape(INDEX_PREFIX)}(\d+) ", log.index_line or "")
    return int(match[1]) if match else 0


def index_line(archived: Sequence[Entry], archive_name: str) -> str:
    """Derived from the archive itself each time, never from an earlier index line."""
    return _index([e.feature for e in archived], [e.time for e in archived], archive_name)


def _index(features: Sequence[str], times: Sequence[str], archive_name: str) -> str:
    # (one id when the least is the greatest; the earliest time starts with the earliest
    # date, the latest with the latest)
    low, high = (min(features), max(features)) if features else ("-", "-")
    span_ids = low if low == high else f"{low}..{high}"
    span_dates = (
        f"{min(times)[:10]}..{max(times)[:10]}"
        if len(times) > 1
        else (times[0][:10] if times else "-")
    )
    return (
        f"{INDEX_PREFIX}{len(times)} earlier entries archived in {archive_name} "
        f"({span_ids}, {span_dates})"
    )


def newest_entries(log: Log, count: int) -> tuple[Entry, ...]:
    return log.entries[-count:] if count > 0 else ()
