"""What `audit --strict` can prove of the person actions (decision record 0101).

Under the `signed` policy rule 11 checks every person action's signature against the
allowed signers at its parent. What rule 11 cannot check is where the `signed` policy begins:
the commit that set it (the scaffold's or adoption's commit, or a later switch) is judged by
no signed parent. That commit is the anchor: it must be signed by a key its own
`.shiftkit/allowed_signers` lists, and a person reads its signer once. Person actions made
under `trailer` before an anchor were listed for a person to read; the anchor's signer vouches
for them. A person action under `trailer` that no anchor comes after is not proven."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

SIGNED = "signed"


class Judged(NamedTuple):
    """One commit as `--strict` sees it: its own policy, its parents' policies."""

    oid: str
    policy: str  # the policy its own tree sets
    parents: tuple[str, ...]  # each parent's policy (none for a root commit)
    acted: bool  # it holds a person action


class Verdict(NamedTuple):
    proven: list[str]  # person actions a signed judge checked (rule 11)
    anchors: list[str]  # the commits that set the signed policy, signed by a key they list
    vouched: dict[str, str]  # a person action under trailer -> the anchor after it
    unproven: dict[str, str]  # commit -> why it is not proven


def anchors(commits: Sequence[Judged]) -> list[str]:
    """The commits that set the `signed` policy: their own tree says `signed`, and no parent
    was judged by it (a root commit, an adoption, or a switch from `trailer`)."""
    return [
        c.oid for c in commits if c.policy == SIGNED and not any(p == SIGNED for p in c.parents)
    ]


def verdict(
    commits: Sequence[Judged],
    anchor_problems: Mapping[str, str | None],
    is_ancestor: Callable[[str, str], bool],
) -> Verdict:
    """Each commit of ``commits`` (oldest first) with a person action, and each anchor,
    judged: ``anchor_problems``: why each anchor's signature is not one its own signers list
    (None: it is); ``is_ancestor(older, newer)``."""
    good = [oid for oid in anchors(commits) if anchor_problems.get(oid) is None]
    result = Verdict([], good, {}, {})
    for commit in commits:
        problem = anchor_problems.get(commit.oid)
        if problem is not None:
            result.unproven[commit.oid] = f"it sets the `signed` policy, and {problem}"
        elif commit.oid in good or not commit.acted:
            continue
        elif any(p == SIGNED for p in commit.parents):
            result.proven.append(commit.oid)
        else:
            after = next((a for a in good if a != commit.oid and is_ancestor(commit.oid, a)), None)
            if after is not None:
                result.vouched[commit.oid] = after
            else:
                result.unproven[commit.oid] = (
                    "it is a person action under the `trailer` policy, after no commit that "
                    "set `signed`: nothing proves a person made it"
                )
    return result
