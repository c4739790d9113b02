"""The rules of SPEC section 7 as pure functions.

The commit hooks, `finish` and `audit` all call these; no rule is written twice.
Each returns a list of violations, empty when the change is acceptable.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple, Sequence

if TYPE_CHECKING:
    from shiftkit import features

MAX_SUBJECT = 72
GENERIC_SUBJECTS = frozenset(
    {
        "wip", "fix", "fixes", "fixed", "update", "updates", "updated", "change", "changes",
        "changed", "edit", "edits", "stuff", "misc", "tmp", "temp", "test", "tests", "commit",
        "save", "progress", "work", "more", "minor", "cleanup", "done", "refactor", "todo",
    }
)  # fmt: skip


class Violation(NamedTuple):
    rule: int
    message: str
    feature: str | None = None

    def __str__(self) -> str:
        about = f" [{self.feature}]" if self.feature else ""
        return f"rule {self.rule}{about}: {self.message}"


def trusted_items(text: str | None) -> list[Any] | None:
    """The feature items of a list known to be valid, for incremental validation."""
    import json

    try:
        document = json.loads(text) if text is not None else None
    except json.JSONDecodeError:
        return None
    items = document.get("features") if isinstance(document, dict) else None
    return items if isinstance(items, list) else None


def check_list(
    text: str | None, source: str, trusted: Sequence[Any] | None = None, known_valid: bool = False
) -> tuple[features.FeatureList | None, list[Violation]]:
    """Rule 1: the list parses, validates against the packaged schema, ids are unique.

    ``known_valid``: this exact text passed rule 1 before (a cache hit), so it is only parsed.
    """
    import json

    from shiftkit import features
    from shiftkit.errors import BadInput

    if known_valid and text is not None:
        return features.from_document(json.loads(text)), []
    if text is None:
        return None, [
            Violation(1, f"{source} is missing from the commit; restore it with "
                         f"`git checkout HEAD -- {source}`")
        ]  # fmt: skip
    try:
        return features.loads(text, source, trusted), []
    except BadInput as exc:
        return None, [Violation(1, f"{exc.message}; fix the file and commit again")]


def message_body(raw: str) -> str:
    """The message as git will store it: no comment lines, nothing below the scissors."""
    kept = []
    for line in raw.splitlines():
        if line.startswith("# ------------------------ >8 ------------------------"):
            break
        if line.startswith("#"):
            continue
        kept.append(line)
    return "\n".join(kept).strip()


def subject(message: str) -> str:
    body = message_body(message)
    return body.splitlines()[0].strip() if body else ""


def check_message(raw: str) -> list[Violation]:
    """Rule 9: a non-empty subject of at most 72 characters that says something."""
    first = subject(raw)
    if not first:
        return [Violation(9, "the commit message is empty; say what changed")]
    if len(first) > MAX_SUBJECT:
        return [
            Violation(9, f"the subject is {len(first)} characters; keep it to {MAX_SUBJECT} "
                         f"and put the detail in the body")
        ]  # fmt: skip
    words = re.sub(r"[^\w\s]", " ", first.lower()).split()
    if not words or (len(words) == 1 and words[0] in GENERIC_SUBJECTS):
        return [
            Violation(9, f"the subject {first!r} says nothing; write what changed and why, "
                         f"e.g. 'F012: add the todo list endpoint'")
        ]  # fmt: skip
    return []


# -- the rules over a change: parents' state, the proposed state, the message ----------------

PRE_COMMIT = frozenset({1, 3, 4, 5, 8})  # need the staged tree (5: the log entry)
COMMIT_MSG = frozenset({1, 2, 5, 6, 7, 9})  # need the message (5: naming the feature)
ALL = frozenset(range(1, 10))
OVERRIDABLE = frozenset({2, 6, 7})
OVERRIDE_KEY = "Shiftkit-Override"


class Side(NamedTuple):
    """One parent's state (HEAD's, for an ordinary commit)."""

    features: features.FeatureList | None
    log: str | None
    archive: str | None


class Proposed(NamedTuple):
    """The state being committed: the staged tree, or a commit's tree in `audit`."""

    features_text: str | None
    log: str | None
    archive: str | None


class Report(NamedTuple):
    violations: list[Violation]
    overridden: list[Violation]
    flips: list[str]
    override_reason: str | None
    staged: features.FeatureList | None


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


def flipped(parents: Sequence[Side], staged: features.FeatureList) -> list[str]:
    """Features that existed, and pass now but in none of the parents (a merge is not a new
    flip). A feature new in this commit is no flip: rule 2 refuses it if it passes."""
    result = []
    for feature in staged.features:
        if not feature.passes:
            continue
        before = [p.features.get(feature.id) for p in parents if p.features]
        existing = [f for f in before if f is not None]
        if existing and not any(f.passes for f in existing):
            result.append(feature.id)
    return result


def rule2_definitions(parents: Sequence[Side], staged: features.FeatureList) -> list[Violation]:
    """Committed features stay, in order, with identical definitions; new ones are appended,
    never already passing."""
    problems: list[Violation] = []
    positions = {f.id: i for i, f in enumerate(staged.features)}
    known_anywhere: set[str] = set()
    for parent in parents:
        if parent.features is None:
            continue
        last = -1
        for old in parent.features.features:
            known_anywhere.add(old.id)
            index = positions.get(old.id)
            if index is None:
                problems.append(Violation(2, f"{old.id} was removed; committed features are never "
                                             f"removed (mark it with a note in the log instead)", old.id))
                continue
            new = staged.features[index]
            if new.definition() != old.definition():
                changed = [name for name, a, b in zip(_DEFINITION_NAMES, old.definition(),
                                                      new.definition()) if a != b]
                problems.append(Violation(2, f"{old.id}: the definition field(s) {', '.join(changed)} "
                                             f"changed; definitions are immutable once committed — "
                                             f"append a new feature instead", old.id))
            if index < last:
                problems.append(Violation(2, f"{old.id} moved; features are never reordered "
                                             f"(priority order is part of the record)", old.id))
            last = max(last, index)
        if len(parents) == 1:
            appended_from = len(parent.features.features)
            for index, feature in enumerate(staged.features[:appended_from]):
                if feature.id not in parent.features.by_id:
                    problems.append(Violation(2, f"{feature.id} was inserted at position {index}; "
                                                 f"new features are appended at the end", feature.id))
    if any(p.features is not None for p in parents):
        for feature in staged.features:
            if feature.id not in known_anywhere and feature.passes:
                problems.append(Violation(2, f"{feature.id} is new and already passing; append it "
                                             f"with \"passes\": false and finish it with "
                                             f"`shiftkit finish`", feature.id))
    return _unique(problems)


_DEFINITION_NAMES = ("id", "category", "description", "steps", "verify", "core", "depends_on")


def rule3_one_flip(flips: Sequence[str]) -> list[Violation]:
    if len(flips) <= 1:
        return []
    return [Violation(3, f"{len(flips)} features become passing in one commit ({', '.join(flips)}); "
                         f"one feature per commit — commit them one at a time with `shiftkit finish`")]


def rule4_verified(flips: Sequence[str], staged: features.FeatureList,
                   verification: Any) -> list[Violation]:  # fmt: skip
    """``verification(feature)`` returns None when the feature's verifier passed on exactly
    this tree, or why not."""
    problems = []
    for feature_id in flips:
        reason = verification(staged.by_id[feature_id])
        if reason is not None:
            problems.append(Violation(4, f"{feature_id} becomes passing but {reason}; only "
                                         f"`shiftkit finish` (or a verified tree) may flip it", feature_id))
    return problems


def new_entries(parents: Sequence[Side], log_text: str | None) -> list[Any]:
    from shiftkit import progress

    if log_text is None:
        return []
    seen: set[str] = set()
    for parent in parents:
        if parent.log:
            seen.update(e.text for e in progress.parse(parent.log).entries)
        if parent.archive:
            seen.update(e.text for e in progress.parse(parent.archive).entries)
    return [e for e in progress.parse(log_text).entries if e.text not in seen]


def rule5_log(flips: Sequence[str], entries: Sequence[Any], log_name: str) -> list[Violation]:
    named = {e.feature for e in entries}
    return [
        Violation(5, f"{feature_id} becomes passing without a new entry about it in {log_name}; "
                     f"`shiftkit finish` writes it", feature_id)
        for feature_id in flips if feature_id not in named
    ]  # fmt: skip


def rule5_message(flips: Sequence[str], message: str) -> list[Violation]:
    body = message_body(message)
    return [
        Violation(5, f"{feature_id} becomes passing but the commit message does not name it; "
                     f"start the subject with '{feature_id}: '", feature_id)
        for feature_id in flips if not re.search(rf"(?<![\w.-]){re.escape(feature_id)}(?![\w-])", body)
    ]  # fmt: skip


def rule6_claimed(flips: Sequence[str], claimed: str | None, claims_enabled: bool) -> list[Violation]:
    if not claims_enabled:
        return []
    return [
        Violation(6, f"{feature_id} becomes passing but this worktree "
                     f"{'holds no claim' if claimed is None else f'has claimed {claimed}'}; "
                     f"claim it with `shiftkit claim {feature_id}` and finish it", feature_id)
        for feature_id in flips if feature_id != claimed
    ]  # fmt: skip


def rule7_status(parents: Sequence[Side], staged: features.FeatureList,
                 entries: Sequence[Any]) -> list[Violation]:  # fmt: skip
    unblocked = {e.feature for e in entries if e.outcome.startswith("unblocked")}
    problems = []
    for feature in staged.features:
        for parent in parents:
            old = parent.features.get(feature.id) if parent.features else None
            if old is None:
                continue
            cleared = old.blocked is not None and feature.blocked is None
            if (feature.attempts < old.attempts or cleared) and feature.id not in unblocked:
                what = "attempts went down" if feature.attempts < old.attempts else "blocked was cleared"
                problems.append(Violation(7, f"{feature.id}: {what} without `shiftkit unblock` "
                                             f"(which leaves a log entry)", feature.id))
                break
    return problems


def rule8_log(parents: Sequence[Side], proposed: Proposed, log_name: str,
              archive_name: str) -> list[Violation]:  # fmt: skip
    from shiftkit import progress

    problems: list[Violation] = []
    staged_log = proposed.log or ""
    staged_archive = proposed.archive or ""
    for parent in parents:
        old_log = parent.log or ""
        if staged_log.startswith(old_log):
            continue
        if len(parents) > 1:
            # A merge keeps every parent's entry, in the log or the archive.
            kept = {e.text for e in progress.parse(staged_log).entries}
            kept |= {e.text for e in progress.parse(staged_archive).entries}
            if any(e.text not in kept for e in progress.parse(old_log).entries):
                problems.append(Violation(8, f"the merge lost entries of {log_name}"))
            continue
        old, new = progress.parse(old_log), progress.parse(staged_log)
        if new.preamble != old.preamble:
            problems.append(Violation(8, f"the preamble of {log_name} changed; it is written once"))
            continue
        new_texts = [e.text for e in new.entries]
        old_texts = [e.text for e in old.entries]
        removed = [t for t in old_texts if t not in new_texts]
        survivors = [t for t in old_texts if t in new_texts]
        in_order = new_texts[: len(survivors)] == survivors
        archive_ok = staged_archive.startswith(parent.archive or "") and staged_archive.endswith(
            "".join(removed)
        )
        if not removed or not in_order or not archive_ok:
            problems.append(Violation(8, f"{log_name} was rewritten, not appended to; only a prune "
                                         f"may remove entries, and they must move verbatim to the "
                                         f"end of {archive_name} (`shiftkit log --prune`)"))
    return problems


def evaluate(
    parents: Sequence[Side],
    proposed: Proposed,
    *,
    rules_to_check: frozenset[int],
    names: tuple[str, str, str],
    message: str | None = None,
    claimed: str | None = None,
    claims_enabled: bool = True,
    verification: Any = None,
    trusted: Sequence[Any] | None = None,
    known_valid: bool = False,
) -> Report:
    """Every rule in ``rules_to_check`` over one change. ``names`` is (features, log, archive)."""
    features_name, log_name, archive_name = names
    violations: list[Violation] = []
    if 9 in rules_to_check and message is not None:
        violations += check_message(message)
    if 8 in rules_to_check and any(proposed.log != p.log or proposed.archive != p.archive
                                   for p in parents):  # fmt: skip
        violations += rule8_log(parents, proposed, log_name, archive_name)
    establishing = all(p.features is None for p in parents)
    staged: features.FeatureList | None = None
    if not (establishing and proposed.features_text is None):
        # (no feature list before or after: nothing to check)
        staged, problems = check_list(proposed.features_text, features_name, trusted, known_valid)
        violations += problems
    flips: list[str] = []
    if staged is not None:
        # The commit that first adds the list establishes it: nothing in it is a flip.
        flips = [] if establishing else flipped(parents, staged)
        entries = new_entries(parents, proposed.log) if flips or 7 in rules_to_check else []
        violations += rule3_one_flip(flips) if 3 in rules_to_check else []
        if 4 in rules_to_check and verification is not None and len(flips) == 1:
            violations += rule4_verified(flips, staged, verification)
        if 5 in rules_to_check:
            violations += rule5_log(flips, entries, log_name)
        if 5 in rules_to_check and message is not None:
            violations += rule5_message(flips, message)
        if 2 in rules_to_check:
            violations += rule2_definitions(parents, staged)
        if 6 in rules_to_check:
            violations += rule6_claimed(flips, claimed, claims_enabled)
        if 7 in rules_to_check:
            violations += rule7_status(parents, staged, entries)
    reason = override_reason(message)
    overridden = [v for v in violations if reason and v.rule in OVERRIDABLE]
    kept = [v for v in violations if v not in overridden]
    return Report(sorted(kept, key=lambda v: v.rule), overridden, flips, reason, staged)


def _unique(items: list[Violation]) -> list[Violation]:
    seen: set[Violation] = set()
    result = []
    for item in items:
        if item not in seen:
            seen.add(item)
            result.append(item)
    return result
