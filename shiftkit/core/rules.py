"""The rules of SPEC section 7 as pure functions.

The commit hooks, `finish` and `audit` all call these; no rule is written twice.
Each returns a list of violations, empty when the change is acceptable.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from shiftkit.core import acceptance
from shiftkit.core.messages import OVERRIDABLE as OVERRIDABLE
from shiftkit.core.messages import Rule as Rule
from shiftkit.core.messages import Violation as Violation
from shiftkit.core.messages import apply_override as apply_override
from shiftkit.core.messages import check_message as check_message
from shiftkit.core.messages import message_body as message_body
from shiftkit.core.messages import override_reason as override_reason
from shiftkit.core.messages import rule5_message as rule5_message
from shiftkit.core.messages import trailers as trailers

if TYPE_CHECKING:
    from typing import TypeAlias

    from shiftkit.core import features, progress, protected

    # (before, after) of each feature a change touched
    Pairs: TypeAlias = list[tuple[features.Feature, features.Feature]]
    # None when the feature's verifier passed on exactly the judged tree, else why not
    Verification: TypeAlias = Callable[[features.Feature | None], str | None]
    # None when the commit's signature is good, else why not
    Signature: TypeAlias = Callable[[], str | None]


def check_list(
    text: str | None,
    source: str,
    trusted: Mapping[str, Any] | None = None,
    known_valid: bool = False,
    trusted_text: str | None = None,
    trusted_list: features.FeatureList | None = None,
    checked: features.FeatureList | None = None,
) -> tuple[features.FeatureList | None, list[Violation]]:
    """Rule 1: the list parses, validates against the packaged schema, ids are unique.

    ``known_valid``: this exact text passed rule 1 before (a cache hit), so it is only parsed;
    ``checked``: it is that list, already read. ``trusted_list``: a parent's checked list,
    so only the items that differ from it are checked.
    """
    import json

    from shiftkit.core import features
    from shiftkit.core.errors import BadInput

    if checked is not None and text is not None:
        return checked, []
    if known_valid and text is not None:
        return features.from_document(json.loads(text)), []
    if text is None:
        return None, [
            Violation(
                1,
                f"{source} is missing from the commit; restore it with "
                f"`git checkout HEAD -- {source}`",
            )
        ]
    if trusted_list is not None:
        fast = features.loads_against(text, trusted_list)
        if fast is not None:
            return fast, []
        trusted, trusted_text = features.as_document(trusted_list), trusted_list.text
    try:
        return features.loads(text, source, trusted, trusted_text), []
    except BadInput as exc:
        return None, [Violation(1, f"{exc.message}; fix the file and commit again")]


# -- the rules over a change: parents' state, the proposed state, the message ----------------

ALL = frozenset(Rule)


class Side(NamedTuple):
    """One parent's state (HEAD's, for an ordinary commit)."""

    features: features.FeatureList | None
    log: str | None
    archive: str | None


class MergeBase(NamedTuple):
    """For each parent of a merge after the first, the feature lists at its common ancestors
    with the first parent (`git merge-base --all`: a criss-cross merge has several; None: an
    ancestor without a valid list). No ancestor — an unrelated history — or no `MergeBase`
    given: that parent brings no pass."""

    bases: tuple[tuple[features.FeatureList | None, ...], ...]


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
    person_actions: list[str]
    remarks: tuple[str, ...] = ()  # the flips that restore a pass earned before (`remarks`)


class Changed(NamedTuple):
    """The paths a change touches, for rule 14: (status, path) rows — "A", "M" or "D", a
    rename as its two halves — the (old, new) texts of the rows `protected.texts_needed`
    names, and the parent's settings that decide the ground (its default oracle, its
    project-wide verify command, its decision folder). ``ground``: the parent's ground when
    the caller has it already (the hooks' cache)."""

    rows: tuple[tuple[str, str], ...] = ()
    texts: Mapping[str, tuple[str | None, str | None]] = {}
    default: tuple[str, ...] = ()
    verify: str = ""
    decisions: str = "docs/decisions"
    ground: protected.Ground | None = None


class Judge(NamedTuple):
    """What the parent says about a change beyond its files: the enforcement settings the
    change alters, whether it alters the allowed signers, the people policy, and the paths
    the change touches (rule 14; None: not known to this judge)."""

    config_changes: tuple[str, ...] = ()
    config_problem: str | None = None  # the proposed .shiftkit.toml is invalid
    signers_changed: bool = False
    policy: str = "trailer"
    changed: Changed | None = None


NO_CHANGE = Judge()  # a change that touches no setting, under the default policy


class _Unset(enum.Enum):
    """No pairs given: the rule computes them."""

    UNSET = 0


_UNSET = _Unset.UNSET


def flipped(
    parents: Sequence[Side], staged: features.FeatureList, pairs: Pairs | _Unset | None = _UNSET
) -> list[str]:
    """Features that existed, and pass now but in none of the parents (a merge is not a new
    flip). A feature new in this commit is no flip: rule 2 refuses it if it passes."""
    if pairs is _UNSET:
        pairs = aligned_changes(parents, staged)
    if pairs is not None:
        return [new.id for old, new in pairs if new.passes and not old.passes]
    result = []
    lists = [p.features for p in parents if p.features is not None]
    for item in staged.items:
        if item.get("passes") is not True:
            continue
        before = [lst.items[i] for lst in lists if (i := lst.position(item["id"])) is not None]
        if before and not any(old.get("passes") is True for old in before):
            result.append(item["id"])
    return result


def merge_flips(
    parents: Sequence[Side], staged: features.FeatureList, base: MergeBase | None
) -> list[str]:
    """A merge's flips: the features that pass in the result but would not by the merge
    driver's rule, so the merge itself must earn them as a flip (rules 3 to 6). Each parent
    after the first is taken with its common ancestors with the first parent. Demotions win:
    a feature that passed at a common ancestor, and that either side has demoted since, stays
    demoted. A pass comes from a parent's side: the first parent's, or another parent's own
    flip since their common ancestors — judged when it was committed. Every parent is a
    judge (decision record 0028): a parent with no common ancestor with the first (an
    unrelated history) brings no pass, and when such a parent holds a list, the first
    parent's passes are no more earned than its own — nothing since a common ancestor was
    judged on both sides. A feature no parent has is rule 2's."""
    from shiftkit.core import features

    lists = [p.features for p in parents]
    related = [
        bool(base and index - 1 < len(base.bases) and base.bases[index - 1])
        for index in range(1, len(parents))
    ]
    # (a parent without a list is not in protocol history: it judges no pass)
    first_judged = all(ok or lst is None for ok, lst in zip(related, lists[1:], strict=True))
    result = []
    for item in staged.items:
        feature_id = item["id"]
        if item.get("passes") is not True:
            continue
        status = [
            None
            if lst is None or lst.position(feature_id) is None
            else features.passes(lst, feature_id)
            for lst in lists
        ]
        if all(s is None for s in status):
            continue
        demoted, earned = False, status[0] is True and first_judged
        for index in range(1, len(parents)):
            ancestors = base.bases[index - 1] if related[index - 1] and base else ()
            passed_before = any(
                lst is not None and features.passes(lst, feature_id) for lst in ancestors
            )
            if ancestors and passed_before and (status[0] is False or status[index] is False):
                demoted = True
            if ancestors and not passed_before and status[index] is True:
                earned = True
        if demoted or not earned:
            result.append(feature_id)
    return result


def unrelated_history(parents: Sequence[Side], base: MergeBase | None) -> bool:
    """Whether a merge joins a parent with no common ancestor with its first parent: a second
    root brought into protocol history, a person's action (decision record 0027)."""
    if len(parents) < 2 or base is None:
        return False
    return any(not bases for bases in base.bases[: len(parents) - 1])


def rule2_root(staged: features.FeatureList) -> list[Violation]:
    """Roots bring nothing (decision record 0027): a commit that establishes the list (a root
    of protocol history, the adopting commit included, or one re-adding a list its parents
    lack) holds every feature open — not passing, no attempts, not blocked. Work verified
    elsewhere comes in as a person's override."""
    problems = []
    for feature in staged.features:
        held = [
            what
            for what, present in (
                ("passing", feature.passes),
                (f"{feature.attempts} attempts", feature.attempts > 0),
                ("blocked", feature.blocked is not None),
            )
            if present
        ]
        if held:
            problems.append(
                Violation(
                    Rule.DEFINITIONS,
                    f"{feature.id} arrives {', '.join(held)} in a commit that establishes "
                    f"the list (a new root of its history); a list starts with every feature "
                    f"open — finish each with `shiftkit finish`, or import verified work as a "
                    f"person (`shiftkit override`)",
                    feature.id,
                )
            )
    return problems


def aligned_changes(
    parents: Sequence[Side], staged: features.FeatureList
) -> list[tuple[features.Feature, features.Feature]] | None:
    """For one parent whose features keep their positions (the common commit): the pairs
    (before, after) that differ. None when a slower, general comparison is needed."""
    if len(parents) != 1 or parents[0].features is None:
        return None
    from shiftkit.core import features

    parent = parents[0].features
    positions = features.changed_positions(parent, staged)
    if positions is not None:
        aligned = [(parent.at(i), staged.at(i)) for i in positions]
        if any(old.id != new.id for old, new in aligned):
            return None
        return aligned
    old_items, new_items = parents[0].features.items, staged.items
    if len(new_items) < len(old_items):
        return None
    pairs = []
    for index, old in enumerate(old_items):
        new = new_items[index]
        if old == new:
            continue
        if old.get("id") != new.get("id"):
            return None
        pairs.append((parents[0].features.get(old["id"]), staged.get(new["id"])))
    return [(a, b) for a, b in pairs if a is not None and b is not None]


def rule2_definitions(
    parents: Sequence[Side], staged: features.FeatureList, pairs: Pairs | _Unset | None = _UNSET
) -> list[Violation]:
    """Committed features stay, in order, with identical definitions; new ones are appended,
    never already passing."""
    if all(p.features is None for p in parents):
        return []
    if pairs is _UNSET:
        pairs = aligned_changes(parents, staged)
    if pairs is not None:
        parent = parents[0].features
        assert parent is not None
        problems = [
            _definition_changed(old, new)
            for old, new in pairs
            if old.definition() != new.definition()
        ]
        from shiftkit.core import features

        table = staged.table
        problems += [
            _new_and_passing(feature_id)
            for feature_id, flags in zip(
                table.ids[len(parent) :], table.flags[len(parent) :], strict=True
            )
            if flags & features.PASSES
        ]
        return problems
    return _rule2_general(parents, staged)


def _definition_changed(old: features.Feature, new: features.Feature) -> Violation:
    from shiftkit.core.features import DEFINITION_FIELDS

    changed = [
        name
        for name, a, b in zip(DEFINITION_FIELDS, old.definition(), new.definition(), strict=True)
        if a != b
    ]
    return Violation(
        2,
        f"{old.id}: the definition field(s) {', '.join(changed)} changed; "
        f"definitions are immutable once committed — append a new feature "
        f"instead",
        old.id,
    )


def _new_and_passing(feature_id: str) -> Violation:
    return Violation(
        2,
        f"{feature_id} is new and already passing; append it with "
        f'"passes": false and finish it with `shiftkit finish`',
        feature_id,
    )


def _rule2_general(parents: Sequence[Side], staged: features.FeatureList) -> list[Violation]:
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
                problems.append(
                    Violation(
                        2,
                        f"{old.id} was removed; committed features are never "
                        f"removed (mark it with a note in the log instead)",
                        old.id,
                    )
                )
                continue
            new = staged.features[index]
            if new.definition() != old.definition():
                problems.append(_definition_changed(old, new))
            if index < last:
                problems.append(
                    Violation(
                        2,
                        f"{old.id} moved; features are never reordered "
                        f"(priority order is part of the record)",
                        old.id,
                    )
                )
            last = max(last, index)
        if len(parents) == 1:
            for index, feature in enumerate(staged.features[: len(parent.features)]):
                if parent.features.get(feature.id) is None:
                    problems.append(
                        Violation(
                            2,
                            f"{feature.id} was inserted at position {index}; "
                            f"new features are appended at the end",
                            feature.id,
                        )
                    )
    problems += [
        _new_and_passing(f.id) for f in staged.features if f.id not in known_anywhere and f.passes
    ]
    return _unique(problems)


def rule3_one_flip(flips: Sequence[str]) -> list[Violation]:
    """At most one feature is earned per commit; ``flips`` here are the flips that are not
    re-marks (`remarks`: passes earned before, restored by a repair)."""
    if len(flips) <= 1:
        return []
    return [
        Violation(
            3,
            f"{len(flips)} features become passing in one commit ({', '.join(flips)}); "
            f"one feature per commit — commit them one at a time with `shiftkit finish`",
        )
    ]


# -- re-marks: a repair restores passes earned before (decision record 0055) ---------------

DEMOTED = "demoted"  # how the outcome of a demotion's log entry begins
REMARKED = "re-marked"  # how the outcome of a re-mark's log entry begins


def earned_before(texts: Sequence[str | None]) -> set[str]:
    """The features a demotion entry of these texts (a log and its archive) names: each
    passed once — rule 5 lets a demotion entry in only with the demotion it tells of."""
    from shiftkit.core import progress

    found: set[str] = set()
    for text in texts:
        if text and f"| {DEMOTED}" in text:
            found |= {
                e.feature for e in progress.parse(text).entries if e.outcome.startswith(DEMOTED)
            }
    return found


def remarks(
    parents: Sequence[Side], flips: Sequence[str], entries: Sequence[progress.Entry]
) -> list[str]:
    """The flips that are re-marks: a new log entry of the change re-marks the feature
    (its outcome begins "re-marked") and a parent's log or archive holds a demotion entry
    about it — a pass earned before, lost to a regression. A re-mark needs no claim and is
    not the commit's one flip (rule 3), but its verifier must pass on the tree (rule 4) and
    the message names it (rule 5), like any flip's."""
    marked = {e.feature for e in entries if e.outcome.startswith(REMARKED)}
    candidates = [f for f in flips if f in marked]
    if not candidates:
        return []
    earned = earned_before([text for p in parents for text in (p.log, p.archive)])
    return [f for f in candidates if f in earned]


def rule5_demotions(
    parents: Sequence[Side], staged: features.FeatureList, entries: Sequence[progress.Entry]
) -> list[Violation]:
    """A new demotion entry in the log comes with its demotion: the feature passed in a
    parent — any parent: a merge demotes what the side it takes in marked passing — and
    does not in the commit (else the entry would make a pass out of nothing for
    `remarks`). An entry about a feature a parent's log already tells was demoted adds
    nothing `remarks` could use (a demotion on top of one folded into an earlier commit,
    decision record 0083)."""
    problems = []
    told: set[str] | None = None
    for entry in entries:
        if not entry.outcome.startswith(DEMOTED):
            continue
        passed = any(
            p.features is not None
            and (before := p.features.get(entry.feature)) is not None
            and before.passes
            for p in parents
        )
        if not passed:
            if told is None:
                told = earned_before([text for p in parents for text in (p.log, p.archive)])
            passed = entry.feature in told
        after = staged.get(entry.feature)
        if not passed or after is None or after.passes:
            problems.append(
                Violation(
                    Rule.LOGGED,
                    f"a new entry of the log says {entry.feature} was demoted, but this "
                    f"commit does not demote it; only the commit that demotes a passing "
                    f"feature writes that entry",
                    entry.feature,
                )
            )
    return problems


def parent_feature(parents: Sequence[Side], feature_id: str) -> features.Feature | None:
    for parent in parents:
        if parent.features is not None and (found := parent.features.get(feature_id)) is not None:
            return found
    return None


def rule4_definition_unchanged(
    parents: Sequence[Side], flips: Sequence[str], staged: features.FeatureList
) -> list[Violation]:
    """A feature's definition change and its flip never share a commit, override or not:
    otherwise the commit would choose the verifier that judges it."""
    problems = []
    for feature_id in flips:
        old, new = parent_feature(parents, feature_id), staged.get(feature_id)
        if old is not None and new is not None and old.definition() != new.definition():
            problems.append(
                Violation(
                    Rule.VERIFIED,
                    f"{feature_id} becomes passing in the commit "
                    f"that changes its definition; a definition change and its "
                    f"flip never share a commit",
                    feature_id,
                )
            )
    return problems


def rule4_verified(
    flips: Sequence[str], parents: Sequence[Side], verification: Verification
) -> list[Violation]:
    """``verification(feature)`` returns None when the feature's verifier passed on exactly
    this tree, or why not. The verifier is the parent's definition, never the commit's."""
    problems = []
    for feature_id in flips:
        reason = verification(parent_feature(parents, feature_id))
        if reason is not None:
            problems.append(
                Violation(
                    4,
                    f"{feature_id} becomes passing but {reason}; only "
                    f"`shiftkit finish` (or a verified tree) may flip it",
                    feature_id,
                )
            )
    return problems


def new_entries(parents: Sequence[Side], log_text: str | None) -> list[progress.Entry]:
    from shiftkit.core import progress

    if log_text is None or all(parent.log == log_text for parent in parents):
        return []
    fresh = _appended(parents, log_text)
    if fresh is None:
        seen: set[str] = set()
        for parent in parents:
            if parent.log:
                seen.update(e.key for e in progress.parse(parent.log).entries)
        fresh = [e for e in progress.parse(log_text).entries if e.key not in seen]
    archives = [p.archive for p in parents if p.archive]
    # An archived entry holds its header line: an entry whose header is in no archive is
    # new without parsing the archives (which grow with the project's whole history).
    if any(e.key.split("\n", 1)[0] in text for e in fresh for text in archives):
        archived = {e.key for text in archives for e in progress.parse(text).entries}
        fresh = [e for e in fresh if e.key not in archived]
    return fresh


def _appended(parents: Sequence[Side], log_text: str) -> list[progress.Entry] | None:
    """The entries appended to one parent's log, parsing only what was appended, when none
    of them repeats a header line of the old log (else None: compare every entry)."""
    from shiftkit.core import progress

    old = parents[0].log if len(parents) == 1 else None
    if not old or not old.endswith("\n") or not log_text.startswith(old):
        return None
    added = progress.parse(log_text[len(old) :])
    if added.head.strip() or any(e.key.split("\n", 1)[0] in old for e in added.entries):
        return None  # (text before the first new entry changes the last old one)
    return list(added.entries)


def rule5_log(
    flips: Sequence[str], entries: Sequence[progress.Entry], log_name: str
) -> list[Violation]:
    named = {e.feature for e in entries}
    return [
        Violation(
            5,
            f"{feature_id} becomes passing without a new entry about it in {log_name}; "
            f"`shiftkit finish` writes it",
            feature_id,
        )
        for feature_id in flips
        if feature_id not in named
    ]


def rule6_claimed(
    flips: Sequence[str],
    claimed: str | None,
    claims_enabled: bool,
    claim_problem: str | None = None,
) -> list[Violation]:
    """``claim_problem``: why the worktree's claim record is not the claim ref's current
    object (released, stolen, or broken), when it is not."""
    if not claims_enabled:
        return []
    if claim_problem is not None:
        return [
            Violation(Rule.CLAIMED, f"{feature_id} becomes passing but {claim_problem}", feature_id)
            for feature_id in flips
        ]
    return [
        Violation(
            6,
            f"{feature_id} becomes passing but this worktree "
            f"{'holds no claim' if claimed is None else f'has claimed {claimed}'}; "
            f"claim it with `shiftkit claim {feature_id}` and finish it",
            feature_id,
        )
        for feature_id in flips
        if feature_id != claimed
    ]


def rule7_status(
    parents: Sequence[Side],
    staged: features.FeatureList,
    entries: Sequence[progress.Entry],
    pairs: Pairs | _Unset | None = _UNSET,
) -> list[Violation]:
    """`attempts` only grows and `blocked` is only cleared through `shiftkit unblock`."""
    unblocked = {e.feature for e in entries if e.outcome.startswith("unblocked")}
    pairs = changed_pairs(parents, staged, pairs)
    problems = []
    for old, new in pairs:
        cleared = old.blocked is not None and new.blocked is None
        if (new.attempts < old.attempts or cleared) and new.id not in unblocked:
            what = "attempts went down" if new.attempts < old.attempts else "blocked was cleared"
            problems.append(
                Violation(
                    7,
                    f"{new.id}: {what} without `shiftkit unblock` (which leaves a log entry)",
                    new.id,
                )
            )
    return _unique(problems)


def changed_pairs(
    parents: Sequence[Side], staged: features.FeatureList, pairs: Pairs | _Unset | None = _UNSET
) -> Pairs:
    """(before, after) of every feature some parent has: the aligned changes when they can
    be had, else every feature against each parent that has it."""
    if pairs is _UNSET:
        pairs = aligned_changes(parents, staged)
    if pairs is None:
        pairs = [
            (old, new)
            for new in staged.features
            for p in parents
            if p.features is not None and (old := p.features.get(new.id)) is not None
        ]
    return pairs


def unblocked_features(
    parents: Sequence[Side], staged: features.FeatureList, pairs: Pairs | _Unset | None = _UNSET
) -> list[str]:
    """Features whose attempts went down or whose block was cleared: an unblock."""
    pairs = changed_pairs(parents, staged, pairs)
    found = [
        new.id
        for old, new in pairs
        if new.attempts < old.attempts or (old.blocked is not None and new.blocked is None)
    ]
    return list(dict.fromkeys(found))


def rule10_config(
    judge: Judge,
    flips: Sequence[str],
    parents: Sequence[Side],
    staged: features.FeatureList | None,
    config_name: str,
) -> list[Violation]:
    """An enforcement setting changes only in a commit of its own that flips nothing; a moved
    feature list holds the old list unchanged."""
    problems = []
    if judge.config_problem is not None:
        problems.append(Violation(Rule.CONFIG, f"{judge.config_problem}; fix {config_name}"))
    if judge.config_changes and flips:
        problems.append(
            Violation(
                Rule.CONFIG,
                f"this commit changes {', '.join(judge.config_changes)} "
                f"in {config_name} and flips {', '.join(flips)}; a change of the "
                f"enforcement settings flips nothing: commit it on its own, "
                f"as a person",
            )
        )
    before = parents[0].features
    moved = "features" in judge.config_changes and before is not None and staged is not None
    if moved and list(staged.items) != list(before.items):  # type: ignore[union-attr]
        problems.append(
            Violation(
                Rule.CONFIG,
                "the feature list was moved to a file that does not hold the old list "
                "unchanged; move it as it is, then change it in later commits",
            )
        )
    return problems


def person_actions(
    judge: Judge,
    unblocked: Sequence[str],
    overridden: Sequence[Violation],
    reason: str | None,
    unrelated: bool = False,
    added: Sequence[str] = (),
) -> list[str]:
    """What in this change only a person may do (SPEC section 11): appending features is
    one (decision record 0050)."""
    actions = []
    if added:
        shown = ", ".join(added[:5]) + (f" and {len(added) - 5} more" if len(added) > 5 else "")
        actions.append(f"features added (their definitions are a person's): {shown}")
    if unrelated:
        actions.append("merge of an unrelated history (a second root)")
    if overridden:
        rules_hit = ", ".join(str(int(r)) for r in sorted({v.rule for v in overridden}))
        actions.append(f"override of rule(s) {rules_hit}: {reason}")
    actions += [f"unblock of {feature_id}" for feature_id in unblocked]
    if judge.config_changes:
        actions.append(f"enforcement settings changed: {', '.join(judge.config_changes)}")
    if judge.signers_changed:
        actions.append("allowed signers changed")
    return actions


def rule11_person(
    judge: Judge, actions: Sequence[str], signature: Signature | None
) -> list[Violation]:
    """Under the "signed" policy, person actions need a good signature by a key the parent
    allows. ``signature()`` returns None when good, else why not; ``signature`` None means
    the commit object does not exist yet (the commit hooks): the reference-transaction hook
    and `audit` check it."""
    if judge.policy != "signed" or not actions or signature is None:
        return []
    problem = signature()
    if problem is None:
        return []
    return [
        Violation(
            Rule.PERSON,
            f"{'; '.join(actions)} — a person's action, and the people "
            f"policy is 'signed', but {problem}; a person makes it with "
            f"`shiftkit override`/`unblock`/`accept` and their signing key",
        )
    ]


def _is_utf8(text: str) -> bool:
    """Whether ``text`` came from UTF-8 bytes (read with surrogateescape, bytes that are not
    UTF-8 become lone surrogates, which only `str.isascii`'s slow path may hold)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def rule8_log(
    parents: Sequence[Side],
    proposed: Proposed,
    log_name: str,
    archive_name: str,
    kept_ids: frozenset[str] = frozenset(),
) -> list[Violation]:
    """The log only grows at its end, except a prune: the oldest entries (bar the newest one
    about each blocked feature, ``kept_ids``) move verbatim to the end of the archive.
    Entries compare by `progress.Entry.key`, without the blank lines between them and the
    whitespace at the end of their lines, which merges, fixers and hand edits change."""
    from shiftkit.core import progress

    problems: list[Violation] = []
    staged_log = proposed.log or ""
    for name, text in ((log_name, staged_log), (archive_name, proposed.archive or "")):
        if not _is_utf8(text):
            # (read with surrogateescape: what is not UTF-8 stays as lone surrogates, and
            # every command that reads the log would stop at it)
            problems.append(
                Violation(
                    Rule.LOG_APPEND_ONLY, f"{name} is not UTF-8 text; fix the bytes git shows"
                )
            )
    for parent in parents:
        old_log = parent.log or ""
        if len(parents) > 1:
            # A merge keeps every parent's entry, of its log and of its archive, in the log
            # or the archive.
            # (a text the merge's log or archive begins with keeps its entries: a merge of
            # large archives parses only what changed)
            archive = proposed.archive or ""
            texts = [
                (name, text)
                for name, text, whole in (
                    (log_name, old_log, staged_log),
                    (archive_name, parent.archive or "", archive),
                )
                if text and not whole.startswith(text)
            ]
            if not texts:
                continue
            kept = {e.key for e in progress.parse(staged_log).entries} | {
                e.key for e in progress.parse(archive).entries
            }
            for name, text in texts:
                if any(e.key not in kept for e in progress.parse(text).entries):
                    problems.append(
                        Violation(Rule.LOG_APPEND_ONLY, f"the merge lost entries of {name}")
                    )
            continue
        if staged_log.startswith(old_log):
            if not _archive_kept(parent.archive, proposed.archive):
                problems.append(_archive_rewritten(archive_name, log_name))
            continue
        old, new = progress.parse(old_log), progress.parse(staged_log)
        if new.preamble != old.preamble:
            problems.append(
                Violation(
                    Rule.LOG_APPEND_ONLY, f"the preamble of {log_name} changed; it is written once"
                )
            )
            continue
        if _is_append(old, new):
            if not _archive_kept(parent.archive, proposed.archive):
                problems.append(_archive_rewritten(archive_name, log_name))
            continue
        if not _is_prune(old, new, _moved_keys(parent.archive or "", proposed.archive), kept_ids):
            problems.append(
                Violation(
                    Rule.LOG_APPEND_ONLY,
                    f"{log_name} was rewritten, not "
                    f"appended to; only a prune may remove entries — the oldest "
                    f"ones, moved verbatim to the end of {archive_name} "
                    f"(`shiftkit log --prune`)",
                )
            )
    return problems


def _archive_kept(old_archive: str | None, new_archive: str | None) -> bool:
    """The log and its archive are one append-only record (decision record 0029): when no
    entry left the log, the archive keeps exactly its entries — none lost, none added."""
    if (old_archive or "") == (new_archive or ""):
        return True
    return _moved_keys(old_archive or "", new_archive) == []


def _archive_rewritten(archive_name: str, log_name: str) -> Violation:
    return Violation(
        Rule.LOG_APPEND_ONLY,
        f"{archive_name} lost or gained entries while none left {log_name}; the archive only "
        f"grows, by the entries a prune moves out of the log — restore it with "
        f"`git checkout HEAD -- {archive_name}`",
    )


def _is_append(old: Any, new: Any) -> bool:
    """Every old entry unchanged and in place, the index line kept, new entries after them."""
    old_keys = [e.key for e in old.entries]
    return (
        old.index_line == new.index_line
        and [e.key for e in new.entries[: len(old_keys)]] == old_keys
    )


def _moved_keys(old_archive: str, new_archive: str | None) -> list[str] | None:
    """The keys of the entries added at the end of the archive, in order; None when the new
    archive does not keep every old entry in place. When the new archive's text begins
    with the old one's, only what follows is parsed."""
    from shiftkit.core import progress

    new_text = new_archive or ""
    if old_archive.endswith("\n") and new_text.startswith(old_archive):
        added = progress.parse(new_text[len(old_archive) :])
        if not added.head.strip():  # (else the text before its first entry changes the last)
            return [e.key for e in added.entries]
    archived = [e.key for e in progress.parse(old_archive).entries]
    entries = progress.parse(new_text).entries
    if [e.key for e in entries[: len(archived)]] != archived:
        return None
    return [e.key for e in entries[len(archived) :]]


def _is_prune(
    old: progress.Log, new: progress.Log, moved: list[str] | None, kept_ids: frozenset[str]
) -> bool:
    """The new log is the old one with its oldest entries (``moved``: the keys added at the
    end of the archive) moved, in order, to the end of the archive — bar some that stay,
    each about a blocked feature (kept where the person looks first) — and maybe new
    entries appended. Entries are compared by key, position by position: two entries can
    be equal."""
    if moved is None:
        return False
    old_entries = old.entries
    if not moved or len(moved) > len(old_entries):
        return False
    # The survivors first; entries after them were appended in the same commit.
    new_keys = [e.key for e in new.entries[: len(old_entries) - len(moved)]]
    if len(new_keys) != len(old_entries) - len(moved):
        return False
    # Every old entry from `cut` on stays, in order, at the end of the new log; the ones
    # before it were either moved or kept for a blocked feature.
    for cut in range(len(old_entries), len(moved) - 1, -1):
        tail = len(old_entries) - cut
        if [e.key for e in old_entries[cut:]] != new_keys[len(new_keys) - tail :]:
            break  # a longer tail cannot match either
        if _moved_or_kept(old_entries[:cut], moved, new_keys[: len(new_keys) - tail], kept_ids):
            return True
    return False


def _moved_or_kept(
    older: Sequence[Any], moved: list[str], kept: list[str], kept_ids: frozenset[str]
) -> bool:
    """``older`` is ``moved`` and ``kept`` interleaved, each kept entry about a blocked
    feature."""
    m = k = 0
    for entry in older:
        if m < len(moved) and entry.key == moved[m]:
            m += 1
        elif k < len(kept) and entry.key == kept[k] and entry.feature in kept_ids:
            k += 1
        else:
            return False
    return m == len(moved) and k == len(kept)


def evaluate(
    parents: Sequence[Side],
    proposed: Proposed,
    *,
    rules_to_check: frozenset[int],
    names: tuple[str, str, str],
    message: str | None = None,
    claimed: str | None = None,
    claims_enabled: bool = True,
    claim_problem: str | None = None,
    verification: Verification | None = None,
    trusted: Mapping[str, Any] | None = None,
    trusted_text: str | None = None,
    known_valid: bool = False,
    trusted_list: features.FeatureList | None = None,
    checked: features.FeatureList | None = None,
    judge: Judge = NO_CHANGE,
    signature: Signature | None = None,
    config_name: str = ".shiftkit.toml",
    merge_base: MergeBase | None = None,
) -> Report:
    """Every rule in ``rules_to_check`` over one change. ``names`` is (features, log, archive);
    everything that judges — names, verifiers, claims, policy — comes from the parents."""
    features_name, log_name, archive_name = names
    violations: list[Violation] = []
    if Rule.MESSAGE in rules_to_check and message is not None:
        violations += check_message(message)
    log_changed = any(proposed.log != p.log or proposed.archive != p.archive for p in parents)
    establishing = all(p.features is None for p in parents)
    staged: features.FeatureList | None = None
    if not (establishing and proposed.features_text is None):
        # (no feature list before or after: nothing to check)
        staged, problems = check_list(
            proposed.features_text,
            features_name,
            trusted,
            known_valid,
            trusted_text,
            trusted_list,
            checked,
        )
        violations += problems
    flips: list[str] = []
    remarked: list[str] = []
    unblocked: list[str] = []
    pairs: Pairs | None = []  # (no list before or after: none of it changed)
    if staged is not None:
        # The commit that first adds the list establishes it: nothing in it is a flip.
        pairs = aligned_changes(parents, staged)  # once: four rules look at what changed
        if establishing:
            flips = []
        elif len(parents) > 1:
            flips = merge_flips(parents, staged, merge_base)
        else:
            flips = flipped(parents, staged, pairs)
        entries = (
            new_entries(parents, proposed.log)
            if flips or log_changed or Rule.STATUS in rules_to_check
            else []
        )
        remarked = remarks(parents, flips, entries) if entries and flips else []
        earned = [f for f in flips if f not in remarked]  # (the commit's own flip)
        unblocked = [] if establishing else unblocked_features(parents, staged, pairs)
        violations += rule3_one_flip(earned) if Rule.ONE_FLIP in rules_to_check else []
        if Rule.VERIFIED in rules_to_check:
            violations += rule4_definition_unchanged(parents, flips, staged)
            if verification is not None and flips and len(earned) <= 1:
                violations += rule4_verified(flips, parents, verification)
        if Rule.LOGGED in rules_to_check:
            violations += rule5_log(flips, entries, log_name)
            violations += rule5_demotions(parents, staged, entries) if entries else []
        if Rule.LOGGED in rules_to_check and message is not None:
            violations += rule5_message(flips, message)
        if Rule.DEFINITIONS in rules_to_check:
            violations += (
                rule2_root(staged) if establishing else rule2_definitions(parents, staged, pairs)
            )
        if Rule.CLAIMED in rules_to_check:
            violations += rule6_claimed(earned, claimed, claims_enabled, claim_problem)
        if Rule.STATUS in rules_to_check:
            violations += rule7_status(parents, staged, entries, pairs)
    if Rule.LOG_APPEND_ONLY in rules_to_check and log_changed:
        kept_ids = frozenset(
            f for p in parents if p.features is not None for f in features_blocked(p.features)
        )
        if staged is not None:
            kept_ids |= frozenset(features_blocked(staged))
        violations += rule8_log(parents, proposed, log_name, archive_name, kept_ids)
    if establishing:
        judge = judge._replace(config_changes=())
    if Rule.CONFIG in rules_to_check:
        violations += rule10_config(judge, flips, parents, staged, config_name)
    if Rule.PROTECTED in rules_to_check and judge.changed is not None and not establishing:
        violations += rule14_change(parents, judge.changed, names)
    added = [] if establishing or staged is None else added_features(parents, staged)
    kept, overridden, reason = apply_override(violations, message)
    actions = person_actions(
        judge, unblocked, overridden, reason, unrelated_history(parents, merge_base), added
    )
    accepting, malformed = acceptance.read(message)
    actions += acceptance.actions(accepting)
    if Rule.PERSON in rules_to_check:
        if accepting or malformed:
            rows = judge.changed.rows if judge.changed is not None else None
            own = (features_name, log_name)
            kept += acceptance.violations(
                malformed, len(parents), rows, own, None if establishing else pairs, added
            )
        kept += rule11_person(judge, actions, signature)
    return Report(kept, overridden, flips, reason, staged, actions, tuple(remarked))


def added_features(parents: Sequence[Side], staged: features.FeatureList) -> list[str]:
    """The ids of ``staged`` that no parent's list holds: features this change appends."""
    lists = [p.features for p in parents if p.features is not None]
    if not lists:
        return []
    ids = staged.table.ids
    if any(lst.table.ids == ids for lst in lists):
        return []
    known = {i for lst in lists for i in lst.table.ids}
    return [i for i in ids if i not in known]


def ground_of(
    parents: Sequence[Side], changed: Changed, names: tuple[str, str, str]
) -> protected.Ground:
    """The parent's ground (every parent's, for a merge): the committed features' oracles,
    the enforcement files, the decision records. Built once per parent list."""
    from shiftkit.core import features
    from shiftkit.core import protected as protected_mod

    lists = tuple(p.features for p in parents if p.features is not None)
    key = (changed.default, changed.verify, changed.decisions, names)
    cached = _GROUNDS.get(tuple(map(id, lists)))
    if cached is not None and cached[0] == lists and cached[1] == key:
        return cached[2]
    items = [
        (f.id, features.effective_verify(f, changed.verify), f.oracle)
        for lst in lists
        for f in lst.features
    ]
    found = protected_mod.ground(
        items, changed.default, changed.decisions, protected_mod.protocol_files(*names)
    )
    if len(_GROUNDS) > 8:
        _GROUNDS.clear()
    _GROUNDS[tuple(map(id, lists))] = (lists, key, found)
    return found


_GROUNDS: dict[
    tuple[int, ...], tuple[tuple[features.FeatureList, ...], tuple[Any, ...], protected.Ground]
] = {}


def rule14_change(
    parents: Sequence[Side], changed: Changed, names: tuple[str, str, str]
) -> list[Violation]:
    """Rule 14 over a change, the parent's ground built only when a row can touch it."""
    from shiftkit.core import protected as protected_mod

    if not protected_mod.may_touch(changed.rows, protected_mod.protocol_files(*names)):
        return []
    ground = changed.ground or ground_of(parents, changed, names)
    return rule14_protected(ground, changed.rows, changed.texts)


def rule14_protected(
    ground: protected.Ground,
    rows: Sequence[tuple[str, str]],
    texts: Mapping[str, tuple[str | None, str | None]],
) -> list[Violation]:
    """Rule 14 (`protected.violations`, which the commit-msg hook calls itself on a commit
    that stages no protocol file)."""
    from shiftkit.core import protected as protected_mod

    return protected_mod.violations(ground, rows, texts)


def features_blocked(feature_list: features.FeatureList) -> list[str]:
    from shiftkit.core import features

    return features.blocked_ids(feature_list)


def _unique(items: list[Violation]) -> list[Violation]:
    seen: set[Violation] = set()
    result = []
    for item in items:
        if item not in seen:
            seen.add(item)
            result.append(item)
    return result


def rule12_ledger(parent_texts: Sequence[str | None], text: str | None) -> list[Violation]:
    """The cost ledger only grows at its end; a merge keeps every line of every parent (the
    commit hooks, the reference-transaction hook and `audit` all ask this)."""
    from shiftkit.core import ledger

    return [
        Violation(Rule.LEDGER_APPEND_ONLY, f"{ledger.LEDGER_FILE}: {problem}")
        for problem in ledger.append_problems(parent_texts, text)
    ]


def rule13_not_a_folder(folder: str, kind: str | None) -> list[Violation]:
    """The decision folder must be a folder: a symlink to another one (git stores it as a
    file) would leave rule 13 nothing to read."""
    if kind is None or kind == "tree":
        return []
    return [
        Violation(
            Rule.DECISIONS,
            f"{folder} is not a folder in this commit (a symlink?); keep the decision records "
            f"in the folder itself",
        )
    ]


def decision_numbers(names: Sequence[str]) -> dict[str, list[str]]:
    """Decision record file names (``NNNN-slug.md``) by number."""
    found: dict[str, list[str]] = {}
    for name in names:
        number, dash, _ = name.partition("-")
        if dash and len(number) == 4 and number.isdigit() and name.endswith(".md"):
            found.setdefault(number, []).append(name)
    return found


def rule13_decisions(
    parents: Sequence[Sequence[str]], names: Sequence[str], folder: str
) -> list[Violation]:
    """Two records with one number that not every parent already had: records numbered on
    two branches and merged, or a hand-made collision. A merge brings a pair one parent had
    to the other parent's line, so it is named again there; a pair every parent had was
    named where it came in. The later one is renumbered, never silently kept."""
    before = [{n for n, files in decision_numbers(p).items() if len(files) > 1} for p in parents]
    return [
        Violation(
            Rule.DECISIONS,
            f"decision record number {number} names {' and '.join(sorted(files))} in "
            f"{folder}; renumber yours with `shiftkit renumber-decisions` and commit",
        )
        for number, files in sorted(decision_numbers(names).items())
        # (a root commit has no parent that had the pair: `all` of nothing would excuse it)
        if len(files) > 1 and not (before and all(number in dup for dup in before))
    ]
