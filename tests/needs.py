"""A tool a test needs: skipped where it is missing on a person's machine, failed in CI.

`.ci/run` installs every tool the suite uses; a skip there would be a test that silently
never ran, so under `CI` a missing tool fails the test with the same one line.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def missing(reason: str) -> NoReturn:
    """Skip (locally) or fail (in CI): ``reason`` names the tool and how to get it."""
    if in_ci():
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def unless(available: bool, reason: str) -> pytest.MarkDecorator:
    """A mark: skip when ``available`` is false, except in CI, where the test runs (and
    fails on the missing tool in its own words)."""
    return pytest.mark.skipif(not available and not in_ci(), reason=reason)


def strace() -> pytest.MarkDecorator:
    """Read sets are measured with strace (Debian's package; .ci/run installs it)."""
    from shiftkit.edge import readsets

    return unless(readsets.tracer() is not None, "strace is missing or cannot trace here")
