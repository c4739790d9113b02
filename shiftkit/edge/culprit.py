"""Who broke it: the first commit since a feature's last pass at which its verifier fails — a
bounded bisect over the first-parent history, reusing the verification cache (keyed by tree)
and recording each pass it finds (decision record 0057)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from shiftkit.edge import gitio, verify

LOOK_BACK = 64  # first-parent commits searched for the last pass
PROBES = 7  # verifier runs at most (2**7 > LOOK_BACK: enough for an exact answer)
CHECKOUT = "checkout"  # (the cache's mode for a pass in a temporary checkout: `regression`)


class Culprit(NamedTuple):
    """The first failing commit found, and the last known pass before it."""

    commit: str
    subject: str
    since: str | None  # the newest commit known to pass before it (None: beyond the search)
    exact: bool  # False: the search was cut short, ``commit`` fails and so may some before

    def text(self) -> str:
        """ "first fails at 1234567 'Tidy up' (last passed at 89abcde)"."""
        subject = self.subject if len(self.subject) <= 50 else self.subject[:49] + "…"
        at = f"{self.commit[:7]} {subject!r}"
        if self.exact:
            return f"first fails at {at}" + (
                f" (last passed at {self.since[:7]})" if self.since else ""
            )
        if self.since:
            return f"first fails after {self.since[:7]}, at or before {at}"
        return f"fails at {at} and at every earlier commit searched"


class Step(NamedTuple):
    oid: str
    tree: str
    subject: str
    features: tuple[str, ...]  # the Shiftkit-Feature trailers: a finish verified them here


def first_parent(root: Path, tip: str, limit: int = LOOK_BACK) -> list[Step]:
    """``tip`` and its first-parent ancestors, newest first, at most ``limit`` + 1."""
    listing = gitio.out(
        [
            "log",
            "-z",
            "--first-parent",
            f"--max-count={limit + 1}",
            "--format=%H%x01%T%x01%s%x01%(trailers:key=Shiftkit-Feature,valueonly,separator=%x2C)",
            tip,
            "--",
        ],
        root,
    )
    steps = []
    for record in listing.split("\0"):
        parts = record.strip("\n").split("\x01")
        if len(parts) == 4:
            named = tuple(item.strip() for item in parts[3].split(",") if item.strip())
            steps.append(Step(parts[0], parts[1], parts[2], named))
    return steps


def passed_at(common_dir: Path, tree: str, command: str) -> bool:
    """A pass of ``command`` recorded at ``tree`` (in a checkout, or in a work tree)."""
    return verify.is_cached(
        common_dir, tree, verify.cache_command(command, CHECKOUT)
    ) or verify.is_cached(common_dir, tree, command)


def window(
    common_dir: Path, steps: list[Step], feature_id: str, command: str, trust_cache: bool = True
) -> int | None:
    """The index (in ``steps``, newest first) of the newest commit before the tip known to
    pass: its tree's pass recorded (unless not ``trust_cache``), or a `finish` of the feature
    (verified there); None when none is within the search."""
    for index, step in enumerate(steps[1:], start=1):
        if feature_id in step.features:
            return index
        if trust_cache and passed_at(common_dir, step.tree, command):
            return index
    return None


def find(
    root: Path,
    common_dir: Path,
    feature_id: str,
    command: str,
    tip: str,
    init: str,
    timeout: float,
    isolated: bool = False,
) -> Culprit | None:
    """The first commit on ``tip``'s first-parent line since ``feature_id`` last passed at
    which ``command`` fails, ``tip`` itself known to fail; None without a history to search.
    ``isolated`` (CI): each run in `verify.isolated_environment`, no recorded pass trusted."""
    steps = first_parent(root, tip)
    if not steps:
        return None
    good = window(common_dir, steps, feature_id, command, trust_cache=not isolated)
    older = steps[1 : good if good is not None else len(steps)]
    span = [*reversed(older), steps[0]]  # oldest first, the failing tip last
    since = steps[good].oid if good is not None else None

    def passes(step: Step) -> bool:
        if not isolated and passed_at(common_dir, step.tree, command):
            return True
        outcome = verify.run_in_checkout(
            root, step.tree, command, init, timeout, isolated, tip=step.oid
        )
        if outcome.ok:
            verify.record_pass(common_dir, step.tree, verify.cache_command(command, CHECKOUT))
        return outcome.ok

    low, high, probes = -1, len(span) - 1, 0  # span[low] passes (-1: `since`), span[high] fails
    while high - low > 1 and probes < PROBES:
        middle = (low + high) // 2
        probes += 1
        if passes(span[middle]):
            low = middle
        else:
            high = middle
    exact = high - low == 1 and (low >= 0 or good is not None)
    if low >= 0:
        since = span[low].oid
    return Culprit(span[high].oid, span[high].subject, since, exact)
