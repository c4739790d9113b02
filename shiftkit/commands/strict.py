"""`audit --strict`: every person action proven, or the audit exits 1 (decision record 0101).

Under `signed`, a person action is proven when a signed judge checked its signature (rule
11), and the commit that set `signed` is signed by a key it lists itself (`core.proof`).
Under `trailer` nothing proves a person made a person action: `--strict` refuses them and
names the one command that switches the project to `signed`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from shiftkit.core.orientation import clip
from shiftkit.core.words import counted
from shiftkit.edge import revisions
from shiftkit.edge.context import short

SWITCH = "shiftkit setup --signed"


class Strict(NamedTuple):
    lines: list[str]  # what is said on stdout (text mode)
    refusal: str | None  # the one `shiftkit:` line of a refusal (None: every one proven)
    document: dict[str, Any]  # the same, for --json


def judge(
    root: Path, policy: str, selected: Sequence[revisions.Commit], acted: Sequence[str]
) -> Strict:
    """What `--strict` says of ``selected`` (oldest first), ``acted`` the commits with person
    actions, under ``policy`` (the tip's)."""
    if policy != "signed":
        refusal = (
            (
                f"shiftkit: --strict refuses the {counted(len(acted), 'commit')} with person "
                f"actions above: under the `trailer` policy they are listed but cannot be "
                f"proven (an agent can write a trailer); switch this project to `signed` with "
                f"`{SWITCH}`"
            )
            if acted
            else None
        )
        return Strict([], refusal, {"policy": policy, "proven": False})
    from shiftkit.edge import proof

    found = proof.prove(root, selected, set(acted))
    verdict = found.verdict
    subjects = {c.oid: repr(clip(c.subject, 50)) for c in selected}
    lines = [
        f"{short(oid)} {subjects[oid]}: not proven: {why}" for oid, why in verdict.unproven.items()
    ]
    for oid in verdict.anchors:
        lines.append(
            f"signed policy set in {short(oid)} {subjects[oid]}, signed by {found.signers[oid]} "
            f"(a person confirms once that this key is theirs)"
        )
    parts = [
        f"{counted(len(verdict.proven), 'commit')} with person actions signed by a key listed "
        f"at the parent"
    ]
    if verdict.vouched:
        parts.append(
            f"{counted(len(verdict.vouched), 'commit')} with person actions made under "
            f"`trailer` before the switch, vouched for by its signer (not proven one by one)"
        )
    if verdict.unproven:
        parts.append(f"{len(verdict.unproven)} not proven")
    lines.append("strict: " + "; ".join(parts))
    refusal = (
        f"shiftkit: --strict refuses the {counted(len(verdict.unproven), 'commit')} whose "
        f"person actions are not proven (above)"
        if verdict.unproven
        else None
    )
    document = {
        "policy": policy,
        "proven": not verdict.unproven,
        "signed_by_a_listed_key": verdict.proven,
        "anchors": found.signers,
        "vouched": verdict.vouched,
        "unproven": verdict.unproven,
    }
    return Strict(lines, refusal, document)
