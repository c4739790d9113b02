"""Several sessions at once: one choice of feature everywhere, and id-less claims that never
collide — real worktrees, real concurrent processes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import BIN_DIR, git_ok, implement, ok, shiftkit

from shiftkit.core import features


def _ids(*features_: features.Feature) -> list[str]:
    return [f.id for f in features_]


def _feature(feature_id: str, passes: bool = False, **extra: object) -> dict[str, object]:
    return {
        "id": feature_id,
        "category": "c",
        "description": feature_id,
        "steps": ["s"],
        "passes": passes,
        **extra,
    }


def _list(*items: dict[str, object]) -> features.FeatureList:
    return features.loads(json.dumps({"features": list(items)}), "features.json")


def test_candidates_put_repairs_first_then_the_protocol_order() -> None:
    listing = _list(
        _feature("F1"),
        _feature("F2", depends_on=["F4"]),
        _feature("F3"),
        _feature("F4"),
        _feature("F5", blocked={"reason": "r", "since": "2026-11-30T00:00:00Z", "attempts": 3}),
    )
    assert _ids(*features.candidates(listing)) == ["F1", "F3", "F4"]
    assert _ids(*features.candidates(listing, {"F1"}, ["F4"])) == ["F4", "F3"]
    # A repair that passes again, is blocked or is claimed is no candidate.
    assert _ids(*features.candidates(listing, {"F3"}, ["F5", "F3", "F9"])) == ["F1", "F4"]


def test_next_status_and_claim_agree_after_a_regression(calc: Path) -> None:
    ok(calc, "claim", "F000")
    ok(calc, "finish", "-m", "the scaffold works")
    ok(calc, "claim", "F002")
    implement(calc, "sub")
    ok(calc, "finish", "-m", "subtract two numbers")
    ops = calc / "calc" / "ops.py"
    ops.write_text(ops.read_text().replace("a - b", "a - b - 1"))
    git_ok(calc, "commit", "-q", "-am", "Tweak sub for a new rounding rule")
    assert "repair first: F002" in ok(calc, "start")
    # F001 comes first in the list, but the demoted F002 is repaired first — by everyone.
    assert json.loads(ok(calc, "next", "--json"))["next"]["id"] == "F002"
    assert json.loads(ok(calc, "status", "--json"))["next"] == "F002"
    assert "claimed F002" in ok(calc, "claim")


def test_idless_claims_at_once_take_different_features(scaffold: Path, tmp_path: Path) -> None:
    sessions = 4
    for i in range(sessions + 1):
        ok(scaffold, "add", "--description", f"part {i}", "--step", "s", "--verify", "true")
    git_ok(scaffold, "add", "-A")
    git_ok(scaffold, "commit", "-q", "-m", "Add five features")
    trees = []
    for i in range(sessions):
        tree = tmp_path / f"wt{i}"
        git_ok(scaffold, "worktree", "add", "-q", "-b", f"agent-{i}", str(tree))
        ok(tree, "start")
        trees.append(tree)
    shiftkit_bin = str(BIN_DIR / "shiftkit")
    running = [
        subprocess.Popen(
            [shiftkit_bin, "claim"], cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        for tree in trees
    ]
    outputs = [proc.communicate(timeout=120)[0].decode() for proc in running]
    assert [proc.returncode for proc in running] == [0] * sessions, outputs
    claimed = json.loads(ok(scaffold, "claims", "--json"))
    taken = sorted(row["id"] for row in claimed)
    assert len(taken) == sessions and len(set(taken)) == sessions, outputs
    # Each worktree holds the claim it reported.
    for tree, output in zip(trees, outputs, strict=True):
        git_dir = Path(git_ok(tree, "rev-parse", "--absolute-git-dir").strip())
        held = json.loads((git_dir / "shiftkit" / "claim.json").read_text())["feature"]
        assert f"claimed {held}:" in output
    assert shiftkit(scaffold, "claim").returncode == 0  # the fifth is still there for a fifth
