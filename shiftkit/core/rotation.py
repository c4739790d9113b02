"""Which passing features the start check re-verifies: a rotation with a guarantee. Pure.

With n passing features and a sample of k per check, every feature is re-verified within
m = ⌈n/k⌉ consecutive checks: each feature has a deadline (m checks after it was last
verified, by any check or `finish`), and the sample first takes what must go now for every
deadline to stay reachable (earliest deadline first, which is optimal for unit jobs). The
slots left over go to `core` features first, least recently verified first, then to the
rest: core features are weighted, never exclusive (decision 0035).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple


class Candidate(NamedTuple):
    id: str
    core: bool
    last: int | None  # the number of the check (or the check count at a `finish`) that last
    # verified it; None: never verified here


def window(passing: int, sample: int) -> int:
    """m: the number of consecutive checks within which every passing feature is verified."""
    return -(-passing // sample) if sample > 0 else 0


def _remaining(candidate: Candidate, now: int, m: int) -> int:
    """How many checks, this one included, are left before the feature's deadline."""
    if candidate.last is None:
        return 1
    age = max(1, now - candidate.last)
    return m - age + 1


def _feasible_after(remaining: Sequence[int], k: int, m: int) -> bool:
    """Whether features left unpicked now, with these remaining counts, can all still meet
    their deadlines at k per check (each `r - 1` checks from the next one on)."""
    due_by = [0] * (m + 1)
    for r in remaining:
        due_by[min(max(r - 1, 0), m)] += 1
    if due_by[0]:
        return False  # due now and not picked
    total = 0
    for j in range(1, m):
        total += due_by[j]
        if total > k * j:
            return False
    return True


def choose(candidates: Sequence[Candidate], sample: int, now: int) -> list[str]:
    """The ids to verify at check number ``now``: at most ``sample`` of them."""
    if sample <= 0 or not candidates:
        return []
    if len(candidates) <= sample:
        return [c.id for c in candidates]
    m = window(len(candidates), sample)
    never = -1  # (sorts before every check number)
    ranked = sorted(
        range(len(candidates)),
        key=lambda i: (
            _remaining(candidates[i], now, m),
            not candidates[i].core,
            never if candidates[i].last is None else candidates[i].last,
            i,
        ),
    )
    remaining = [_remaining(candidates[i], now, m) for i in ranked]
    forced = sample
    for taken in range(sample + 1):
        if _feasible_after(remaining[taken:], sample, m):
            forced = taken
            break
    chosen = ranked[:forced]
    rest = sorted(
        ranked[forced:],
        key=lambda i: (
            not candidates[i].core,
            never if candidates[i].last is None else candidates[i].last,
            i,
        ),
    )
    chosen += rest[: sample - forced]
    return [candidates[i].id for i in sorted(chosen)]
