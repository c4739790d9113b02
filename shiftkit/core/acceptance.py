"""A person's acceptance of a commit forced past every hook (decision record 0082).

A commit that breaks the rules and reached the shared branch anyway (`git commit
--no-verify`, `git push --no-verify`, a push from a machine without shiftkit) stays in every
clone's history: without a way to let it stand, every judge refuses the branch for ever.
`shiftkit accept` is that way: a commit of its own on top of the branch, carrying one
`Shiftkit-Accept: <full commit id> <reason>` trailer per commit it accepts, that demotes what
the accepted commits left untrue and changes nothing else. It is a person's action (rule 11:
under `signed`, signed by a person's key). Every judge then reports an accepted commit's
violations as accepted and refuses on none of them — when the acceptance is among the
commits it judges, descends from the commit it names and itself breaks no rule.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from shiftkit.core.messages import ACCEPT_KEY as ACCEPT_KEY
from shiftkit.core.messages import Rule, Violation, trailers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from shiftkit.core import features

_VALUE = re.compile(r"^([0-9a-f]{40})\s+(\S.*)$")
MADE_BY = "an acceptance is made with `shiftkit accept COMMIT --reason TEXT`"


class Acceptance(NamedTuple):
    commit: str  # the full id of the commit accepted
    reason: str


class Accepted(NamedTuple):
    """A broken commit a person let stand: the commit that accepts it, and why."""

    by: str  # the accepting commit
    reason: str


def value(commit: str, reason: str) -> str:
    """The trailer's value for one acceptance (what `read` reads back)."""
    return f"{commit} {reason}"


def read(message: str | None) -> tuple[list[Acceptance], list[str]]:
    """The acceptances a commit message carries, and the `Shiftkit-Accept` values that do
    not read as ``<full commit id> <reason>``."""
    if not message or ACCEPT_KEY not in message:
        return [], []
    found, malformed = [], []
    for text in trailers(message).get(ACCEPT_KEY, []):
        match = _VALUE.match(text)
        if match:
            found.append(Acceptance(match[1], match[2].strip()))
        else:
            malformed.append(text)
    return found, malformed


def actions(accepted: Sequence[Acceptance]) -> list[str]:
    """The person actions an acceptance is, one per commit it accepts."""
    return [f"acceptance of {a.commit[:7]}: {a.reason}" for a in accepted]


def violations(
    malformed: Sequence[str],
    parents: int,
    rows: Sequence[tuple[str, str]] | None,
    own_files: tuple[str, str],
    pairs: Sequence[tuple[features.Feature, features.Feature]] | None,
    added: Sequence[str],
) -> list[Violation]:
    """Rule 11 over a commit that carries `Shiftkit-Accept`: every value reads, and the
    commit is an acceptance alone — one parent, no path changed but the feature list and
    the progress log (``own_files``), the list changed only by demotions (``pairs``: the
    features that changed, None when the list is not comparable item by item; ``added``:
    features appended). ``rows``: the (status, path) rows the commit changes, None when not
    known to this judge. A trailer beside other work would let that work through unjudged."""
    problems = [
        Violation(
            Rule.PERSON,
            f"the {ACCEPT_KEY} trailer {text!r} does not read as `<full commit id> "
            f"<reason>`; {MADE_BY}",
        )
        for text in malformed
    ]
    beyond = (
        f"a commit carrying {ACCEPT_KEY} is an acceptance alone; {MADE_BY}, never beside other work"
    )
    if parents != 1:
        problems.append(Violation(Rule.PERSON, f"it is not a commit of one parent: {beyond}"))
    outside = sorted({path for _, path in rows or () if path not in own_files})
    if outside:
        shown = ", ".join(outside[:3]) + (
            f" and {len(outside) - 3} more" if len(outside) > 3 else ""
        )
        problems.append(
            Violation(
                Rule.PERSON,
                f"it changes {shown}, and an acceptance changes only {own_files[0]} "
                f"(demotions) and {own_files[1]}: {beyond}",
            )
        )
    if pairs is None or added:
        problems.append(
            Violation(Rule.PERSON, f"it changes {own_files[0]} beyond demotions: {beyond}")
        )
    for old, new in pairs or ():
        if not (old.passes and new == old._replace(passes=False)):
            problems.append(
                Violation(
                    Rule.PERSON,
                    f"{new.id}: it changes the feature beyond a demotion: {beyond}",
                    new.id,
                )
            )
    return problems


def honoured(
    commits: Sequence[tuple[str, str]],
    broken: Callable[[str], bool],
    descends: Callable[[str, str], bool],
) -> dict[str, Accepted]:
    """Which of the judged ``commits`` ((id, message), together) are accepted, and by
    which: an acceptance counts when its own commit is among them and breaks no rule
    (``broken``), and it descends from the commit it names (``descends(older, newer)``).
    Only a broken commit is accepted: accepting one that breaks nothing changes nothing."""
    judged = {oid for oid, _ in commits}
    found: dict[str, Accepted] = {}
    for oid, message in commits:
        named, _ = read(message)
        if not named or broken(oid):
            continue
        for acceptance in named:
            target = acceptance.commit
            if target in found or target not in judged or not broken(target):
                continue
            if descends(target, oid):
                found[target] = Accepted(oid, acceptance.reason)
    return found
