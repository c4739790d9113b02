"""`--json` on the shift commands an orchestrator drives (issue 38 item 6): `claim`, `verify`,
`finish`, `revert`, `release` and `sync` print one JSON object — the exit code and its outcome,
the feature, the claim held afterwards, HEAD, whether it is published, the verifiers' verdicts
and every line the command said — and nothing else on stdout. Real git, one bare remote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import git_ok, shiftkit
from test_parallel import _machines, _work


def as_json(place: Path, *args: str) -> tuple[int, dict[str, Any]]:
    done = shiftkit(place, *args, "--json")
    return done.returncode, json.loads(done.stdout)  # (the whole of stdout is one object)


def test_a_shift_in_json(scaffold: Path, tmp_path: Path) -> None:
    bare, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    code, claimed = as_json(one, "claim", "F000")
    assert code == 0 and claimed["outcome"] == "ok", claimed
    assert claimed["command"] == "claim" and claimed["claim"] == "F000"
    assert any("claimed F000" in line for line in claimed["lines"])

    code, held = as_json(two, "claim", "F000")
    assert code == 3 and held["outcome"] == "claimed by someone else", held
    assert held["claim"] is None and "F000" in held["error"]

    _work(one, "one")
    git_ok(one, "add", "one.txt")
    code, verified = as_json(one, "verify")
    assert code == 0 and verified["verifiers"][0]["feature"] == "F000", verified
    assert verified["verifiers"][0]["verdict"] == "passed"

    code, finished = as_json(one, "finish", "-m", "part zero works")
    assert code == 0 and finished["claim"] is None and finished["published"] is True, finished
    assert finished["head"] == git_ok(bare, "rev-parse", "HEAD").strip()
    assert finished["verifiers"] and finished["error"] is None

    code, synced = as_json(two, "sync")
    assert code == 0 and synced["published"] is True, synced


def test_a_revert_and_a_release_in_json(scaffold: Path, tmp_path: Path) -> None:
    _, (one,) = _machines(scaffold, tmp_path, ("one",))
    assert as_json(one, "claim", "F000")[0] == 0
    code, reverted = as_json(one, "revert", "--reason", "the approach does not work")
    assert code == 0 and reverted["claim"] is None and reverted["command"] == "revert", reverted
    assert as_json(one, "claim", "F001")[0] == 0
    code, released = as_json(one, "release")
    assert code == 0 and released["claim"] is None, released
    assert any("released F001" in line for line in released["lines"])
