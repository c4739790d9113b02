"""The start check's rotation: every passing feature within ⌈n/k⌉ consecutive checks, core
features weighted but never exclusive (shiftkit.core.rotation, pure)."""

from __future__ import annotations

import itertools

from conftest import fuzz_examples as examples
from hypothesis import given, settings
from hypothesis import strategies as st

from shiftkit.core.rotation import Candidate, choose, window


def simulate(
    cores: list[bool], sample: int, checks: int, finishes: dict[int, list[int]] | None = None
) -> list[list[int]]:
    """When each feature was verified, check by check (``finishes``: after check t, these
    features were verified by a `finish`, stamped with the count t)."""
    last: list[int | None] = [None] * len(cores)
    seen: list[list[int]] = [[] for _ in cores]
    for now in range(1, checks + 1):
        candidates = [Candidate(f"F{i:03d}", core, last[i]) for i, core in enumerate(cores)]
        picked = choose(candidates, sample, now)
        assert len(picked) == min(sample, len(cores))
        assert len(set(picked)) == len(picked)
        for feature_id in picked:
            index = int(feature_id[1:])
            last[index] = now
            seen[index].append(now)
        for index in (finishes or {}).get(now, []):
            last[index] = now
            seen[index].append(now)
    return seen


def longest_gap(times: list[int], checks: int) -> int:
    """The longest run of consecutive checks (1..checks) in which the feature was not verified,
    plus one: the window that held a verification."""
    marks = [0, *times, checks + 1]
    return max(b - a for a, b in itertools.pairwise(marks))


def test_the_issue_case_two_core_of_six_sample_two_every_feature_within_three() -> None:
    cores = [True, True, False, False, False, False]
    seen = simulate(cores, 2, 12)
    for times in seen:
        assert longest_gap(times, 12) <= 3


def test_the_old_order_never_reached_the_non_core_features() -> None:
    """Today's bug, stated: with 3 core features and a sample of 2, core-first sampling never
    drew the others; the rotation draws each of the 6 within 3 checks."""
    cores = [True, True, True, False, False, False]
    seen = simulate(cores, 2, 9)
    assert all(times and times[0] <= 3 for times in seen)


def test_core_features_get_the_spare_slots() -> None:
    """5 features, sample 2: 6 slots per 3 checks, 1 to spare, and the core feature gets it."""
    cores = [True, False, False, False, False]
    seen = simulate(cores, 2, 30)
    assert len(seen[0]) > max(len(times) for times in seen[1:])
    for times in seen:
        assert longest_gap(times, 30) <= window(5, 2)


def test_small_lists_are_verified_whole() -> None:
    assert sorted(choose([Candidate("F1", False, 3), Candidate("F2", True, None)], 2, 4)) == [
        "F1",
        "F2",
    ]
    assert choose([Candidate("F1", False, 3)], 0, 4) == []


@settings(max_examples=examples(300), deadline=None)
@given(
    cores=st.lists(st.booleans(), min_size=1, max_size=14),
    sample=st.integers(min_value=1, max_value=5),
    finishes=st.dictionaries(
        st.integers(min_value=1, max_value=40), st.lists(st.integers(0, 13), max_size=3)
    ),
)
def test_every_passing_feature_within_the_window(
    cores: list[bool], sample: int, finishes: dict[int, list[int]]
) -> None:
    checks = 40
    finishes = {t: [i for i in ids if i < len(cores)] for t, ids in finishes.items()}
    seen = simulate(cores, sample, checks, finishes)
    m = window(len(cores), sample)
    for times in seen:
        assert longest_gap(times, checks) <= m
