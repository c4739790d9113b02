"""Local verdict = CI verdict, the honest road (issue 35, "What it must show"; decision
records 0086, 0087, 0097, 0098): one pytest project in each shape people give it — flat
layout, src layout, installed editable in the developer's venv, installed plain (stale) with
the person's install step, a person's strict xfail beside the feature's test — passes the
agent's `finish` and a fresh clone's `audit --reverify --isolated`. The dishonest twins are in
test_local_is_ci_dishonest.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from local_is_ci import XFAIL, Shape, build, fresh_clone_judges, implement, passing, sk

SHAPES = {
    "flat layout": Shape(),
    "src layout": Shape(src=True),
    "editable install": Shape(src=True, install="editable"),
    "plain install": Shape(src=True, install="plain", init="pip install -q --no-deps ."),
    "the person's strict xfail": Shape(test_extra=XFAIL),
}


@pytest.mark.parametrize("name", SHAPES)
def test_honest_work_passes_locally_and_in_ci(scaffold: Path, tmp_path: Path, name: str) -> None:
    shape = build(scaffold, SHAPES[name], tmp_path / "venv")
    claimed = sk(scaffold, shape, "claim", "F001")
    assert claimed.returncode == 0, claimed.output
    implement(scaffold, shape, good=True)
    finished = sk(scaffold, shape, "finish", "-m", "add two numbers")
    assert finished.returncode == 0, finished.output
    assert passing(scaffold)
    audited, checked = fresh_clone_judges(scaffold, shape, tmp_path)
    assert audited.returncode == 0, audited.output
    assert checked.returncode == 0, checked.output


def test_a_stale_plain_install_without_the_install_step_is_not_judged_passing(
    scaffold: Path, tmp_path: Path
) -> None:
    """Why the plain shape names `init`: without the person's install step the verifier
    imports the developer's stale copy, and both judges agree it fails — the same verdict."""
    shape = build(scaffold, Shape(src=True, install="plain"), tmp_path / "venv")
    assert sk(scaffold, shape, "claim", "F001").returncode == 0
    implement(scaffold, shape, good=True)
    finished = sk(scaffold, shape, "finish", "-m", "add two numbers")
    assert finished.returncode != 0, finished.output
    assert not passing(scaffold)
