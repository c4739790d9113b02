"""Shell completion of feature ids, through click's real protocol (`_SHIFTKIT_COMPLETE`) in a
real scaffold, and the pure choice of candidates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import edit_list, run

from shiftkit.core import features


def complete(cwd: Path, line: str) -> list[str]:
    """What bash would be offered for ``line`` (the cursor at its end)."""
    words = line.split(" ")
    result = run(
        ["shiftkit"],
        cwd,
        env={
            "_SHIFTKIT_COMPLETE": "bash_complete",
            "COMP_WORDS": line,
            "COMP_CWORD": str(len(words) - 1),
        },
    )
    assert result.returncode == 0 and result.stderr == "", result.output
    return [row.split(",", 1)[1] for row in result.stdout.splitlines() if row]


@pytest.fixture
def project(scaffold: Path) -> Path:
    def change(items: list[dict[str, object]]) -> None:
        items[0]["passes"] = True
        items.append(
            {"id": "F001", "category": "c", "description": "one", "steps": ["s"], "passes": False}
        )
        items.append(
            {
                "id": "F002",
                "category": "c",
                "description": "two",
                "steps": ["s"],
                "passes": False,
                "attempts": 3,
                "blocked": {"reason": "3 failed attempts", "since": "2026-11-30", "attempts": 3},
            }
        )
        items.append(
            {"id": "G100", "category": "c", "description": "g", "steps": ["s"], "passes": False}
        )

    edit_list(scaffold, change)
    return scaffold


def test_each_command_completes_its_kind_of_feature(project: Path) -> None:
    assert complete(project, "shiftkit show ") == ["F000", "F001", "F002", "G100"]
    assert complete(project, "shiftkit show F") == ["F000", "F001", "F002"]
    assert complete(project, "shiftkit verify G") == ["G100"]
    assert complete(project, "shiftkit claim ") == ["F001", "G100"]
    assert complete(project, "shiftkit unblock ") == ["F002"]
    assert complete(project, "shiftkit claim --steal F") == ["F001"]


def test_completion_never_fails(project: Path, tmp_path: Path) -> None:
    (project / "features.json").write_text("{ not json")
    assert complete(project, "shiftkit show ") == []
    outside = tmp_path / "not-a-repository"
    outside.mkdir()
    assert complete(outside, "shiftkit show ") == []
    assert "show" in complete(outside, "shiftkit sh")


def test_the_script_for_bash_is_click_s() -> None:
    result = run(["shiftkit"], Path.cwd(), env={"_SHIFTKIT_COMPLETE": "bash_source"})
    assert result.returncode == 0 and "_shiftkit_completion()" in result.stdout
    assert "complete -o nosort -F _shiftkit_completion shiftkit" in result.stdout


@pytest.mark.parametrize(
    ("document", "kind", "prefix", "expected"),
    [
        ({"features": [{"id": "F1", "passes": True}, {"id": "F2"}]}, "open", "", ["F2"]),
        ({"features": [{"id": "F1", "blocked": {"reason": "r"}}]}, "blocked", "F", ["F1"]),
        ({"features": [{"id": "F1", "passes": True, "blocked": {}}]}, "blocked", "", []),
        ([{"id": "F1"}, {"id": 2}, "x", None], "any", "", ["F1"]),
        ({"features": "nope"}, "any", "", []),
        ("text", "any", "", []),
        (None, "open", "", []),
    ],
)
def test_candidates_from_any_shape(
    document: object, kind: str, prefix: str, expected: list[str]
) -> None:
    found = features.completion_candidates(json.loads(json.dumps(document)), kind, prefix)
    assert [feature_id for feature_id, _ in found] == expected


def test_candidates_carry_a_short_description() -> None:
    document = {"features": [{"id": "F1", "description": "a  long\n" + "d" * 200}]}
    ((_, text),) = features.completion_candidates(document, "any", "")
    assert text.startswith("a long d") and len(text) == 80
