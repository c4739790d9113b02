"""The rules about commit messages: rule 9, the message half of rule 5, trailers and the
override. Kept apart from `rules` so the commit-msg hook imports nothing heavier than `re`.
"""

from __future__ import annotations

import enum
import re

from shiftkit.core.subjects import GENERIC_SUBJECTS as GENERIC_SUBJECTS
from shiftkit.core.subjects import MAX_SUBJECT as MAX_SUBJECT
from shiftkit.core.subjects import SCISSORS as SCISSORS
from shiftkit.core.subjects import message_body as message_body
from shiftkit.core.subjects import subject as subject
from shiftkit.core.subjects import subject_problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence


class Rule(enum.IntEnum):
    """The rules by name (SPEC section 7, and 10-11 of section 11). `re` imports `enum`
    already, so naming them costs the commit-msg hook nothing."""

    SCHEMA = 1  # the list parses, validates, ids unique
    DEFINITIONS = 2  # definitions immutable, features never removed or reordered
    ONE_FLIP = 3  # at most one flip per commit
    VERIFIED = 4  # a flip's verifier (the parent's definition) passed on exactly this tree
    LOGGED = 5  # a flip has its log entry and is named in the message
    CLAIMED = 6  # a flip is of the feature this worktree holds the current claim on
    STATUS = 7  # attempts only grow; blocked cleared only by an unblock
    LOG_APPEND_ONLY = 8  # the log only grows, prunes move entries verbatim
    MESSAGE = 9  # the subject says something
    CONFIG = 10  # an enforcement setting changes only on its own, flipping nothing
    PERSON = 11  # person actions carry what the people policy asks (a signature)
    LEDGER_APPEND_ONLY = 12  # the cost ledger only grows at its end; a merge is a union
    DECISIONS = 13  # a decision record's number names one record
    # a committed feature's oracle, shiftkit's enforcement files and committed decision
    # records change only as a person's action (decision record 0048)
    PROTECTED = 14


OVERRIDABLE = frozenset({Rule.DEFINITIONS, Rule.CLAIMED, Rule.STATUS, Rule.PROTECTED})
OVERRIDE_KEY = "Shiftkit-Override"
# A person's acceptance of a commit forced past the hooks (decision record 0082).
ACCEPT_KEY = "Shiftkit-Accept"
# Trailers whose presence is a person's action (the guard keeps them out of agents' commits).
PERSON_TRAILERS = (OVERRIDE_KEY, ACCEPT_KEY)


class Violation:
    """One broken rule: its number, what is wrong and what to do, and the feature."""

    __slots__ = ("feature", "message", "rule")

    def __init__(self, rule: int, message: str, feature: str | None = None) -> None:
        self.rule = rule
        self.message = message
        self.feature = feature

    def __iter__(self) -> Iterator[int | str | None]:
        return iter((self.rule, self.message, self.feature))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Violation) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"Violation({self.rule!r}, {self.message!r}, {self.feature!r})"

    def __str__(self) -> str:
        """``rule N [ID]: message``; a message that begins ``ID: `` loses that (the id is
        said once)."""
        message, about = self.message, f" [{self.feature}]" if self.feature else ""
        if self.feature and message.startswith(f"{self.feature}: "):
            message = message[len(self.feature) + 2 :]
        return f"rule {self.rule}{about}: {message}"


def check_message(raw: str) -> list[Violation]:
    """Rule 9: a non-empty subject of at most 72 characters that says something."""
    problem = subject_problem(raw)
    return [] if problem is None else [Violation(Rule.MESSAGE, problem)]


def trailers(message: str) -> dict[str, list[str]]:
    """``Key: value`` lines of the message's last paragraph."""
    paragraphs = [p for p in message_body(message).split("\n\n") if p.strip()]
    found: dict[str, list[str]] = {}
    if len(paragraphs) < 2:
        return found
    for line in paragraphs[-1].splitlines():
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9-]*):\s*(.*?)\s*$", line)
        if match:
            found.setdefault(match[1], []).append(match[2])
    return found


def override_reason(message: str | None) -> str | None:
    if message is None:
        return None
    values = [v for v in trailers(message).get(OVERRIDE_KEY, []) if v]
    return values[0] if values else None


# What the hooks and `finish` add to a flip's message: they name the feature for machines, so
# they never count as the message naming it (the commit-msg hook judges before adding them,
# `audit` after; both must read the same words).
MACHINE_TRAILERS = ("Shiftkit-Feature", "Shiftkit-Verified", "Shiftkit-Claim")


def human_text(message: str) -> str:
    """The message as git stores it, without the lines of shiftkit's machine trailers."""
    pattern = re.compile(rf"^(?:{'|'.join(MACHINE_TRAILERS)}):", re.IGNORECASE)
    return "\n".join(line for line in message_body(message).splitlines() if not pattern.match(line))


def rule5_message(flips: Sequence[str], message: str) -> list[Violation]:
    body = human_text(message)
    return [
        Violation(
            5,
            f"{feature_id} becomes passing but the commit message does not name it; "
            f"start the subject with '{feature_id}: '",
            feature_id,
        )
        for feature_id in flips
        if not re.search(rf"(?<![\w.-]){re.escape(feature_id)}(?![\w-])", body)
    ]


def apply_override(
    violations: Sequence[Violation], message: str | None
) -> tuple[list[Violation], list[Violation], str | None]:
    """Split off what a `Shiftkit-Override: <reason>` trailer covers (rules 2, 6, 7 and 14
    only)."""
    reason = override_reason(message)
    overridden = [v for v in violations if reason and v.rule in OVERRIDABLE]
    kept = [v for v in violations if v not in overridden]
    # A settings change explains whatever else it let through: name it first.
    return sorted(kept, key=lambda v: (v.rule != Rule.CONFIG, v.rule)), overridden, reason
