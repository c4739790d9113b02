"""The ledger: what each unit of work cost. Pure: entries in, text out, and back.

One JSON object per line, keys sorted, appended at unit boundaries and never edited, so a
merge of two branches is the union of their lines (git's ``union`` driver) and the totals of a
merge are the sums of both sides. Three kinds of entry:

* ``unit``: a claim that ended — its feature, when it was claimed and when it ended, and how
  (``passed``, ``failed``, ``blocked``, ``released``, ``abandoned``), with the failure signature;
* ``verify``: one run of a feature's verifier, its result and seconds;
* ``usage``: tokens by kind (and money when known) of one model in one session, attributed to
  the feature claimed at the time, or to none: "coordination" (a session that found nothing to
  take), "idle" (one that claimed nothing and did not look), else "unattributed" (checks, usage
  outside any known session's claims) — counted, never dropped; `cost.bucket` names the row.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from shiftkit.core import jsonbound
from shiftkit.core.errors import BadInput

LEDGER_FILE = ".shiftkit/ledger.jsonl"
KINDS = ("unit", "verify", "usage")
OUTCOMES = ("passed", "failed", "blocked", "released", "abandoned")
UNATTRIBUTED = "unattributed"
COORDINATION = "coordination"  # usage of a session that looked for work and found none
IDLE = "idle"  # usage of a session that claimed nothing and did not look
PURPOSES = (COORDINATION, IDLE)
SYNTHETIC_MODEL = "<synthetic>"


class Usage(NamedTuple):
    """Tokens by kind: fresh input, cache reads, cache writes, output."""

    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0

    def __add__(self, other: object) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(*(a + b for a, b in zip(self, other, strict=True)))

    def minus(self, other: Usage) -> Usage:
        """What this has beyond ``other``, kind by kind (never below zero)."""
        return Usage(*(max(a - b, 0) for a, b in zip(self, other, strict=True)))

    @property
    def tokens(self) -> int:
        return sum(self)


class Entry(NamedTuple):
    kind: str
    id: str
    at: str  # when the unit ended, the verifier ran, or the usage happened (ISO, UTC)
    feature: str | None = None  # None: unattributed usage
    session: str | None = None
    outcome: str | None = None  # unit
    claimed_at: str | None = None  # unit
    signature: str | None = None  # unit: the failure signature, when one was seen
    ok: bool | None = None  # verify
    seconds: float | None = None  # verify
    model: str | None = None  # usage
    usage: Usage = Usage()  # usage
    usd: float | None = None  # usage: money, when the harness reported it
    source: str | None = None  # usage: "transcript", "result" or "manual"
    purpose: str | None = None  # usage without a feature: "coordination" or "idle"


_TYPES: dict[str, tuple[type, ...]] = {
    "feature": (str,),
    "session": (str,),
    "outcome": (str,),
    "claimed_at": (str,),
    "signature": (str,),
    "ok": (bool,),
    "seconds": (int, float),
    "model": (str,),
    "usd": (int, float),
    "source": (str,),
    "purpose": (str,),
}


# The line breaks of str.splitlines() that json.dumps leaves as they are (it escapes the ones
# below U+0020): escaped, so one entry is one line for every reader, `parse` and rule 12 too.
_RAW_BREAKS = {ord(char): f"\\u{ord(char):04x}" for char in "\x85\u2028\u2029"}


def dumps_entry(entry: Entry) -> str:
    """One line (no newline): the entry's set fields, keys sorted, compact."""
    value: dict[str, Any] = {"kind": entry.kind, "id": entry.id, "at": entry.at}
    for key in _TYPES:
        item = getattr(entry, key)
        if item is not None:
            value[key] = item
    if entry.kind == "usage":
        value.update(entry.usage._asdict())
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.translate(_RAW_BREAKS)


def dumps(entries: Iterable[Entry]) -> str:
    return "".join(dumps_entry(e) + "\n" for e in entries)


_AMOUNTS = ("seconds", "usd")  # money and time: finite, never negative (a smaller bill)
# Upper bounds no real entry comes near: a larger number is a typo or a forgery, and past
# ~1e308 it would not even convert to a float in `shiftkit cost` (decision 0031).
MAX_TOKENS = 10**15
MAX_AMOUNT = 10**12


def _amount(value: float) -> bool:
    return math.isfinite(value) and 0 <= value <= MAX_AMOUNT


def count_problem(name: str, value: int) -> str | None:
    """Why this is not a count of tokens an entry may hold (None when it is)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return f"{name!s} must be a count of tokens"
    if value > MAX_TOKENS:
        return (
            f"{name!s} must be a count of tokens up to {MAX_TOKENS:,} (got a number of "
            f"{len(str(value)) if value < 10**4000 else 'over 4000'} digits)"
        )
    return None


def parse_entry(line: str, where: str) -> Entry:
    value = jsonbound.loads(line, where, max_length=jsonbound.MAX_LINE)
    if not isinstance(value, dict):
        raise BadInput(f"{where}: not a JSON object")
    kind, ident, at = value.get("kind"), value.get("id"), value.get("at")
    if kind not in KINDS or not isinstance(ident, str) or not isinstance(at, str):
        raise BadInput(f"{where}: needs 'kind' (one of {', '.join(KINDS)}), 'id' and 'at'")
    fields: dict[str, Any] = {}
    for key, kinds in _TYPES.items():
        item = value.get(key)
        if item is None:
            continue
        if not isinstance(item, kinds) or (isinstance(item, bool) and bool not in kinds):
            raise BadInput(f"{where}: '{key}' has the wrong type")
        if key in _AMOUNTS and not (isinstance(item, int | float) and _amount(item)):
            # (JSON has no NaN or infinity, but Python's json reads and writes them)
            raise BadInput(
                f"{where}: '{key}' must be a finite amount, 0 or more, up to {MAX_AMOUNT:,}"
            )
        fields[key] = item
    counts = []
    for key in Usage._fields:
        item = value.get(key, 0)
        problem = count_problem(f"'{key}'", item)
        if problem:
            raise BadInput(f"{where}: {problem}")
        counts.append(item)
    return Entry(kind, ident, at, usage=Usage(*counts), **fields)


def parse(text: str, source: str = LEDGER_FILE) -> list[Entry]:
    """Every entry of a ledger's text; a line that is not an entry is an error naming it."""
    return [
        parse_entry(line, f"{source} line {number}")
        for number, line in enumerate(text.splitlines(), 1)
        if line.strip()
    ]


def merged(*groups: Iterable[Entry]) -> list[Entry]:
    """The entries of several sources, each id once (the first seen wins)."""
    seen: dict[str, Entry] = {}
    for group in groups:
        for entry in group:
            seen.setdefault(entry.id, entry)
    return list(seen.values())


def read_lines(
    texts: Iterable[tuple[str, str]], known: Iterable[Entry] = ()
) -> tuple[list[Entry], list[str]]:
    """The entries of several (source, text) ledgers read line by line, each id once, and
    one problem per line left out (``"<source> line N: why"``): a line that is not an entry
    (bounded: `jsonbound`), or one whose id an entry of ``known`` or an earlier line holds
    with other contents (a reader by id would count only one of them). The same line in two
    sources (a clone's usage ref and its fetched copy) is one entry and no problem."""
    seen = {entry.id: (entry, "the committed ledger") for entry in known}
    entries: list[Entry] = []
    problems: list[str] = []
    for source, text in texts:
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            where = f"{source} line {number}"
            try:
                entry = parse_entry(line, where)
            except BadInput as exc:
                problems.append(exc.message)
                continue
            prior = seen.get(entry.id)
            if prior is None:
                seen[entry.id] = (entry, where)
                entries.append(entry)
            elif prior[0] != entry:
                shown = entry.id if len(entry.id) <= 40 else entry.id[:39] + "…"
                problems.append(
                    f"{where}: the id {shown!r} is recorded already, with other contents, "
                    f"at {prior[1]} (read by id, only that one counts)"
                )
    return entries, problems


def append_problems(parent_texts: Sequence[str | None], staged: str | None) -> list[str]:
    """Why a staged ledger is not its parents' ledgers plus new lines (empty when it is): with
    one parent, the old text must be kept as it is and new lines go at the end; a merge keeps
    every line of every parent. New lines must be entries."""
    staged_text = staged or ""
    staged_lines = staged_text.splitlines()
    present = set(staged_lines)
    problems: list[str] = []
    for parent in parent_texts:
        old = parent or ""
        if len(parent_texts) == 1 and not staged_text.startswith(old):
            problems.append(
                "lines written before were changed or removed; the ledger only grows at its "
                "end (shiftkit appends to it at unit boundaries)"
            )
        elif any(line not in present for line in old.splitlines()):
            problems.append("the merge lost lines of a parent's ledger; merge it as a union")
    if problems:
        return problems
    known = {line for parent in parent_texts for line in (parent or "").splitlines()}
    seen: set[str] = set()
    for number, line in enumerate(staged_lines, 1):
        if line in known or not line.strip():
            continue
        try:
            entry = parse_entry(line, f"line {number}")
        except BadInput as exc:
            return [f"{exc.message}: every line is an entry shiftkit wrote"]
        # Read by id, the first line wins: a second line with a recorded id (a zeroed copy)
        # would hide the first from `shiftkit cost`, or be hidden by it.
        if entry.id in seen or _recorded(entry.id, parent_texts):
            return [f"line {number}: the id {entry.id!r} is recorded already; ids are unique"]
        seen.add(entry.id)
    return problems


def _recorded(entry_id: str, texts: Sequence[str | None]) -> bool:
    """Whether an entry of ``texts`` has this id: only lines holding it are parsed."""
    needle = json.dumps(entry_id, ensure_ascii=False)
    for text in texts:
        if text is None or needle not in text:
            continue
        for line in text.splitlines():
            if needle in line:
                try:
                    if parse_entry(line, "").id == entry_id:
                        return True
                except BadInput:
                    continue
    return False


# -- usage from Claude Code transcripts ---------------------------------------------------------


class Message(NamedTuple):
    """One model response in a transcript: its id, model, time and usage."""

    id: str
    model: str
    at: str
    usage: Usage


def transcript_messages(texts: Iterable[str]) -> list[Message]:
    """The model responses of transcripts (the main one and its subagents'), each message id
    once: streaming writes one message on several lines, and subagent transcripts repeat
    messages of the main one. Per id, each kind of token counts its largest value (the final
    snapshot) and the time is the earliest. ``<synthetic>`` messages (made up by the harness,
    never billed) and lines that are not JSON (a line being written) are skipped."""
    found: dict[str, Message] = {}
    for text in texts:
        for line in text.splitlines():
            message = _message_of(line)
            if message is None:
                continue
            before = found.get(message.id)
            if before is None:
                found[message.id] = message
                continue
            found[message.id] = Message(
                message.id,
                before.model,
                min(before.at, message.at, key=time_key),
                Usage(*(max(a, b) for a, b in zip(before.usage, message.usage, strict=True))),
            )
    return sorted(found.values(), key=lambda m: (time_key(m.at), m.id))


def _message_of(line: str) -> Message | None:
    if '"usage"' not in line:
        return None
    try:
        value = jsonbound.loads(line, "transcript")
    except BadInput:  # (a line being written, numbers past the bound, deep nests)
        return None
    if not isinstance(value, dict):
        return None
    message = value.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("usage"), dict):
        return None
    model = message.get("model")
    if not isinstance(model, str) or model == SYNTHETIC_MODEL:
        return None
    ident = message.get("id") or value.get("requestId") or value.get("uuid")
    at = value.get("timestamp")
    if not isinstance(ident, str) or not isinstance(at, str) or _parse_time(at) is None:
        return None
    usage = message["usage"]
    return Message(
        ident,
        model,
        at,
        Usage(
            _count(usage.get("input_tokens")),
            _count(usage.get("cache_read_input_tokens")),
            _count(usage.get("cache_creation_input_tokens")),
            _count(usage.get("output_tokens")),
        ),
    )


def _count(value: object) -> int:
    counted = isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_TOKENS
    return value if counted and isinstance(value, int) else 0


def _parse_time(text: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def time_key(text: str) -> float:
    parsed = _parse_time(text)
    return parsed.timestamp() if parsed is not None else 0.0


class Interval(NamedTuple):
    """A claim's time: from claiming to its end (None: still open)."""

    feature: str
    start: str
    end: str | None


def intervals(
    entries: Iterable[Entry], open_claim: Interval | None = None, session: str | None = None
) -> list[Interval]:
    """The claims' times (units that ended, and the open one); with ``session``, only the
    units of that session."""
    found = [
        Interval(e.feature, e.claimed_at, e.at)
        for e in entries
        if e.kind == "unit"
        and e.feature
        and e.claimed_at
        and (session is None or e.session == session)
    ]
    return [*found, *([open_claim] if open_claim else [])]


def session_feature(when: str, claims: Sequence[Interval]) -> str | None:
    """The feature a session's message at ``when`` worked for (decision record 0065): the
    claim held then; before it, the claim the session took next (its orientation); after the
    last one, that one (its wrap-up). None only for a session that held no claim."""
    inside = feature_at(when, claims)
    if inside is not None or not claims:
        return inside
    moment = time_key(when)
    later = [c for c in claims if time_key(c.start) > moment]
    if later:
        return min(later, key=lambda c: time_key(c.start)).feature
    return max(claims, key=lambda c: time_key(c.end or c.start)).feature


def feature_at(when: str, claims: Sequence[Interval]) -> str | None:
    """The feature claimed at ``when`` (the latest claim taken, if several), else None."""
    moment = time_key(when)
    best: Interval | None = None
    for claim in claims:
        start = time_key(claim.start)
        end = time_key(claim.end) if claim.end is not None else float("inf")
        if start <= moment < end and (best is None or start >= time_key(best.start)):
            best = claim
    return best.feature if best else None


Key = tuple[str | None, str]  # (feature or None, model)


def attribute(
    messages: Iterable[Message], claims: Sequence[Interval], whole_session: bool = False
) -> dict[Key, Usage]:
    """Usage per (feature claimed at the message's time, model); None: outside any claim.
    ``whole_session``: ``claims`` are one session's, and every message of it lands on one of
    them (`session_feature`)."""
    which = session_feature if whole_session else feature_at
    totals: dict[Key, Usage] = {}
    for message in messages:
        key = (which(message.at, claims), message.model)
        totals[key] = totals.get(key, Usage()) + message.usage
    return totals


def recorded(entries: Iterable[Entry], session: str, source: str) -> dict[Key, Usage]:
    """What the ledger already holds for a session from one source, per (feature, model)."""
    totals: dict[Key, Usage] = {}
    for e in entries:
        if e.kind == "usage" and e.session == session and e.source == source:
            key = (e.feature, e.model or "?")
            totals[key] = totals.get(key, Usage()) + e.usage
    return totals


def news(now: Mapping[Key, Usage], before: Mapping[Key, Usage]) -> list[tuple[Key, Usage]]:
    """What is new since the last recording, per (feature, model): recording again the same
    transcript adds nothing, a longer one adds only its new part."""
    # Per model, never more than the transcript grew by: a message recorded before under one
    # feature (or none) and attributed to another now is not counted twice.
    room: dict[str, Usage] = {}
    for model in {k[1] for k in now}:
        grown = sum((u for k, u in now.items() if k[1] == model), Usage())
        had = sum((u for k, u in before.items() if k[1] == model), Usage())
        room[model] = grown.minus(had)
    result = []
    for key in sorted(now, key=lambda k: (k[0] or "", k[1])):
        extra = now[key].minus(before.get(key, Usage()))
        extra = Usage(*(min(a, b) for a, b in zip(extra, room[key[1]], strict=True)))
        if extra.tokens:
            room[key[1]] = room[key[1]].minus(extra)
            result.append((key, extra))
    return result
