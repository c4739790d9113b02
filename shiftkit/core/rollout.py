"""Codex CLI's usage: its session rollouts and `codex exec --json` events. Pure: text in.

A rollout (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``) is one JSON object per line,
``{"timestamp", "type", "payload"}``: ``session_meta`` (the session's ``id`` and ``cwd``),
``turn_context`` (the ``model`` of the turns after it) and ``event_msg`` lines, among them
``payload.type == "token_count"`` with ``info.total_token_usage`` (cumulative for the session)
and ``info.last_token_usage``. Codex writes the same totals on several lines (and ``info`` may
be null), so a model response is a *change* of the totals, and its usage the difference
(decision 0040). Codex 0.169 also writes one ``token_usage_record`` line per model response,
named by its ``response_id``, with that response's ``usage``: where a rollout has them, they
are the responses, each once by its id. Tokens map to the ledger's kinds as OpenAI bills them:
``input`` is input less cached input, ``cache_read`` the cached input, ``output`` the output
tokens — reasoning tokens are part of them, as OpenAI's usage object and the rollout's own
``total_tokens`` = input + output show (decision 0040, revised with a real rollout).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from shiftkit.core import jsonbound
from shiftkit.core.errors import BadInput
from shiftkit.core.ledger import MAX_TOKENS, Message, Usage, time_key, transcript_messages

ROLLOUT_TYPES = ("session_meta", "turn_context", "event_msg", "response_item", "compacted")
UNKNOWN_MODEL = "unknown"


class Tokens(NamedTuple):
    """Codex's TokenUsage, as read."""

    input: int = 0
    cached: int = 0
    output: int = 0
    reasoning: int = 0

    def usage(self) -> Usage:
        """The ledger's kinds: ``output`` is ``output_tokens``, which holds the reasoning
        tokens already (``reasoning`` is a breakdown of it, never added)."""
        cached = min(self.cached, self.input)
        return Usage(self.input - cached, cached, 0, self.output)

    def minus(self, other: Tokens) -> Tokens:
        return Tokens(*(a - b for a, b in zip(self, other, strict=True)))


def _objects(text: str) -> Iterator[dict[str, Any]]:
    """The lines of ``text`` that are JSON objects; anything else (a line being written, bytes
    that are no JSON, numbers Python will not convert, nesting past its limit) is skipped."""
    for line in text.splitlines():
        if not line.lstrip().startswith("{"):
            continue
        try:
            value = jsonbound.loads(line, "rollout")
        except BadInput:
            continue
        if isinstance(value, dict):
            yield value


def is_rollout(text: str) -> bool:
    """Whether ``text`` is a Codex rollout (else a Claude Code transcript): its first line
    that says is a ``{"type", "payload"}`` line of a rollout's kinds."""
    for value in _objects(text):
        kind = value.get("type")
        if kind in ROLLOUT_TYPES and "payload" in value:
            return True
        if "message" in value or kind in ("user", "assistant", "system", "summary"):
            return False
    return False


def meta(text: str) -> tuple[str | None, str | None]:
    """(session id, cwd) of the rollout's ``session_meta`` line (None where it has none)."""
    for value in _objects(text):
        payload = value.get("payload")
        if value.get("type") != "session_meta" or not isinstance(payload, dict):
            continue
        ident, cwd = payload.get("id"), payload.get("cwd")
        return (
            ident if isinstance(ident, str) and ident.strip() else None,
            cwd if isinstance(cwd, str) and cwd else None,
        )
    return None, None


def _count(value: object) -> int | None:
    """A count of tokens (a missing one is 0); None: not a whole number from 0 to the bound."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        return None
    return value


def tokens_of(value: object) -> Tokens | None:
    """Codex's TokenUsage object read; None when it is not one or holds a count that is not
    one (the whole reading is then unusable: a field read as 0 in a cumulative total would be
    counted again at the next line)."""
    if not isinstance(value, dict):
        return None
    read = [
        _count(value.get(key))
        for key in (
            "input_tokens",
            "cached_input_tokens",
            "output_tokens",
            "reasoning_output_tokens",
        )
    ]
    counts = [count for count in read if count is not None]
    if len(counts) != len(read):
        return None
    return Tokens(counts[0], counts[1], counts[2], counts[3])


def _model(payload: dict[str, Any]) -> str | None:
    model = payload.get("model")
    return model.strip() if isinstance(model, str) and model.strip() else None


def records(text: str, session: str = "") -> list[Message] | None:
    """The model responses of a rollout's ``token_usage_record`` lines, each once by its
    ``response_id`` (a copy of a line adds nothing); None when the rollout has none (an older
    Codex: `turns` reads its ``token_count`` lines instead)."""
    found: list[Message] = []
    model: str | None = None
    seen: set[str] = set()
    any_record = False
    for value in _objects(text):
        payload = value.get("payload")
        if not isinstance(payload, dict):
            continue
        if value.get("type") == "turn_context":
            model = _model(payload) or model
            continue
        if value.get("type") != "token_usage_record":
            continue
        any_record = True
        response = payload.get("response_id")
        at = value.get("timestamp")
        spent = tokens_of(payload.get("usage"))
        if not isinstance(response, str) or not response or response in seen:
            continue
        if spent is None or not isinstance(at, str) or not time_key(at):
            continue
        seen.add(response)
        if spent.usage().tokens:
            ident = f"{session or 'codex'}#{response}"
            found.append(
                Message(ident, _model(payload) or model or UNKNOWN_MODEL, at, spent.usage())
            )
    return found if any_record else None


def turns(text: str, session: str = "") -> list[Message]:
    """The model responses of a rollout, each once: its ``token_usage_record`` lines where it
    has them (`records`); else each ``token_count`` line whose cumulative
    totals were not read before is a response, its usage the difference from the last
    totals read; a line repeating totals (streamed again, or a copy of the file's lines),
    without ``info``, with counts that are no counts or a time that is no zoned ISO time is
    skipped. Totals that fall (a session whose count began again) start anew: the response
    is the new totals. The model is the latest ``turn_context``'s before it."""
    by_record = records(text, session)
    if by_record is not None:
        return by_record
    found: list[Message] = []
    model: str | None = None
    previous: Tokens | None = None
    seen: set[Tokens] = set()  # every reading of the totals: one seen before is a repeat
    for value in _objects(text):
        payload = value.get("payload")
        if not isinstance(payload, dict):
            continue
        if value.get("type") == "turn_context":
            model = _model(payload) or model
            continue
        if value.get("type") != "event_msg" or payload.get("type") != "token_count":
            continue
        info = payload.get("info")
        at = value.get("timestamp")
        if not isinstance(info, dict) or not isinstance(at, str) or not time_key(at):
            continue
        total = tokens_of(info.get("total_token_usage"))
        if total is None or total in seen:
            continue
        seen.add(total)
        spent = total if previous is None else total.minus(previous)
        if min(spent[:3]) < 0:  # the totals fell: a new count from zero
            spent = total
        previous = total
        if not spent.usage().tokens:
            continue
        ident = f"{session or 'codex'}#{len(found) + 1}"
        found.append(Message(ident, model or UNKNOWN_MODEL, at, spent.usage()))
    return found


# -- `codex exec --json` ----------------------------------------------------------------------


class ExecRun(NamedTuple):
    """What `codex exec --json` printed: its thread (the session) and the turns' usage."""

    thread_id: str | None
    usage: Usage
    turns: int


def exec_events(stdout: str) -> ExecRun | None:
    """The thread id (``thread.started``) and summed usage (``turn.completed``, and
    ``turn.failed`` where it carries one) of `codex exec --json` output; None when it printed
    neither."""
    thread: str | None = None
    total = Usage()
    count = 0
    for value in _objects(stdout):
        kind = value.get("type")
        if kind == "thread.started":
            ident = value.get("thread_id")
            if isinstance(ident, str) and ident.strip():
                thread = ident.strip()
        elif kind in ("turn.completed", "turn.failed"):  # (a failed turn was spent too)
            spent = tokens_of(value.get("usage"))
            if spent is not None:
                total = total + spent.usage()
                count += 1
    if thread is None and not count:
        return None
    return ExecRun(thread, Usage(*(min(kind, MAX_TOKENS) for kind in total)), count)


def usage_messages(texts: Iterable[str], session: str = "") -> list[Message]:
    """The model responses of a session's files, each file read as what its lines say it is:
    a Codex rollout (`turns`) or a Claude Code transcript (``transcript_messages``: the main
    one and its subagents', each message id once)."""
    claude: list[str] = []
    found: list[Message] = []
    for text in texts:
        if is_rollout(text):
            found.extend(turns(text, session))
        else:
            claude.append(text)
    found.extend(transcript_messages(claude))
    return sorted(found, key=lambda m: (time_key(m.at), m.id))
