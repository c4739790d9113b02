"""The tamper catalogue through real `git commit` with the real hooks — the pre-commit
framework's and the plain shims of `shiftkit install-hooks` — and `audit` over commits
that went past them."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import (
    FEATURES,
    LOG,
    by_id,
    edit_list,
    flip,
    git,
    git_ok,
    implement,
    isolated_environment,
    ok,
    shiftkit,
    use_shims,
    write,
)

from shiftkit.core import features, progress

PAST_ALL_HOOKS = ("-c", "core.hooksPath=/dev/null/no-hooks")  # what only the machine's owner can do


@pytest.fixture(scope="module")
def tamper_base(
    pristine_calc: Path, tmp_path_factory: pytest.TempPathFactory, isolated_home: Path
) -> Iterator[Path]:
    """F000 passing, F001 with one failed attempt, F002 and F003 open, a few log entries."""
    base = tmp_path_factory.mktemp("tamper") / "project"
    shutil.copytree(pristine_calc, base, symlinks=True)
    with isolated_environment(isolated_home):
        ok(base, "claim")
        ok(base, "finish", "-m", "the environment builds")
        ok(base, "claim")
        implement(base, "add", good=False)
        ok(base, "revert", "--reason", "returned the wrong sum")
        yield base


@pytest.fixture(params=["pre-commit-framework", "plain-shims"])
def project(request: pytest.FixtureRequest, tamper_base: Path, tmp_path: Path) -> Path:
    target = tmp_path / "project"
    shutil.copytree(tamper_base, target, symlinks=True)
    if request.param == "plain-shims":
        use_shims(target)
    return target


def s_edit_description(p: Path) -> str:
    edit_list(p, lambda items: by_id(items, "F002").update(description="subtraction, more or less"))
    return "Clarify the subtraction feature"


def s_edit_steps(p: Path) -> str:
    edit_list(p, lambda items: by_id(items, "F002").update(steps=["nothing to do"]))
    return "Simplify the steps of F002"


def s_edit_verify(p: Path) -> str:
    edit_list(p, lambda items: by_id(items, "F002").update(verify="true"))
    return "Make the F002 verifier faster"


def s_delete(p: Path) -> str:
    edit_list(p, lambda items: items.remove(by_id(items, "F003")))
    return "Drop multiplication"


def s_reorder(p: Path) -> str:
    edit_list(p, lambda items: items.__setitem__(slice(2, 4), [items[3], items[2]]))
    return "Put multiplication before subtraction"


def s_append_passing(p: Path) -> str:
    edit_list(
        p,
        lambda items: items.append(
            {
                "id": "F009",
                "category": "c",
                "description": "free",
                "steps": ["s"],
                "verify": "true",
                "passes": True,
            }
        ),
    )
    return "Add a feature that already works"


def s_duplicate_id(p: Path) -> str:
    edit_list(p, lambda items: items.append({**by_id(items, "F002")}))
    return "Add another subtraction feature"


def s_missing_field(p: Path) -> str:
    edit_list(
        p,
        lambda items: items.append(
            {"id": "F009", "description": "no category", "steps": ["s"], "passes": False}
        ),
    )
    return "Add a feature without a category"


def s_two_flips(p: Path) -> str:
    implement(p, "sub")
    implement(p, "mul")
    flip(p, "F002", "F003")
    return "F002 F003: subtraction and multiplication"


def s_failing_verifier(p: Path) -> str:
    ok(p, "claim", "F002")
    implement(p, "sub", good=False)
    flip(p, "F002")
    return "F002: subtract two numbers"


def s_no_log_entry(p: Path) -> str:
    ok(p, "claim", "F002")
    implement(p, "sub")
    flip(p, "F002", log=False)
    return "F002: subtract two numbers"


def s_message_not_naming(p: Path) -> str:
    ok(p, "claim", "F002")
    implement(p, "sub")
    flip(p, "F002")
    return "Subtract two numbers"


def s_claimed_elsewhere(p: Path) -> str:
    other = p.parent / "other-worktree"
    git_ok(p, "worktree", "add", "-q", "-b", "other", str(other))
    ok(other, "claim", "F002")
    implement(p, "sub")
    flip(p, "F002")
    return "F002: subtract two numbers"


def s_attempts_decreased(p: Path) -> str:
    edit_list(p, lambda items: by_id(items, "F001").pop("attempts"))
    return "Give F001 a fresh start"


def s_log_rewritten(p: Path) -> str:
    path = p / LOG
    text = path.read_text()
    entry = progress.parse(text).entries[0]
    path.write_text(
        text.replace(entry.text, entry.text.replace("the environment builds", "it all worked"))
    )
    return "Tidy up the progress log"


def s_wip(p: Path) -> str:
    write(p / "notes.txt", "thoughts\n")
    return "wip"


def s_loosened_schema(p: Path) -> str:
    schema_path = p / ".shiftkit" / "features.schema.json"
    schema = json.loads(schema_path.read_text())
    schema["$defs"]["feature"]["additionalProperties"] = True
    schema_path.write_text(json.dumps(schema, indent=2))
    edit_list(
        p,
        lambda items: items.append(
            {
                "id": "F009",
                "category": "c",
                "description": "d",
                "steps": ["s"],
                "passes": False,
                "owner": "me",
            }
        ),
    )
    return "Add F009 with an owner field"


CATALOGUE = [
    (s_edit_description, 2),
    (s_edit_steps, 2),
    (s_edit_verify, 2),
    (s_delete, 2),
    (s_reorder, 2),
    (s_append_passing, 2),
    (s_duplicate_id, 1),
    (s_missing_field, 1),
    (s_two_flips, 3),
    (s_failing_verifier, 4),
    (s_no_log_entry, 5),
    (s_message_not_naming, 5),
    (s_claimed_elsewhere, 6),
    (s_attempts_decreased, 7),
    (s_log_rewritten, 8),
    (s_wip, 9),
    (s_loosened_schema, 1),
]


@pytest.mark.parametrize(
    ("scenario", "rule"), CATALOGUE, ids=[s.__name__[2:] for s, _ in CATALOGUE]
)
def test_tamper_is_refused(project: Path, scenario: Callable[[Path], str], rule: int) -> None:
    before = git_ok(project, "rev-parse", "HEAD")
    message = scenario(project)
    git_ok(project, "add", "-A")
    result = git(project, "commit", "-m", message)
    assert result.returncode != 0, result.output
    assert f"rule {rule}" in result.output, result.output
    assert "Traceback" not in result.output
    assert git_ok(project, "rev-parse", "HEAD") == before


def test_the_honest_path_passes_with_either_installer(project: Path) -> None:
    ok(project, "add", "--description", "division", "--step", "s", "--verify", "true")
    git_ok(project, "add", "-A")
    assert git(project, "commit", "-m", "Append a division feature").returncode == 0
    ok(project, "claim", "F002")
    implement(project, "sub")
    ok(project, "finish", "-m", "subtract two numbers")
    assert features.loads((project / FEATURES).read_text()).by_id["F002"].passes
    audit = shiftkit(project, "audit")
    assert audit.returncode == 0, audit.output


def test_hand_flip_through_the_hooks_gets_trailers_and_passes_audit(project: Path) -> None:
    ok(project, "claim", "F002")
    implement(project, "sub")
    flip(project, "F002")
    git_ok(project, "add", "-A")
    result = git(project, "commit", "-m", "F002: subtract two numbers")
    assert result.returncode == 0, result.output
    message = git_ok(project, "log", "-1", "--format=%B")
    tree = git_ok(project, "rev-parse", "HEAD^{tree}").strip()
    assert "Shiftkit-Feature: F002" in message and f"Shiftkit-Verified: {tree}" in message
    ok(project, "release")


def test_override_trailer_allows_rule_2_and_audit_lists_it(project: Path) -> None:
    s_edit_description(project)
    git_ok(project, "add", "-A")
    result = git(
        project, "commit", "-m", "Clarify F002\n\nShiftkit-Override: the customer rewrote the spec"
    )
    assert result.returncode == 0, (
        result.output
    )  # (the framework shows a passing hook's notice only with verbose)
    audit = shiftkit(project, "audit")
    assert audit.returncode == 0, audit.output
    assert "override" in audit.stdout and "the customer rewrote the spec" in audit.stdout
    data = json.loads(shiftkit(project, "audit", "--json").stdout)
    assert data["overrides"][0]["rules"] == [2]


def test_override_does_not_cover_rule_4(project: Path) -> None:
    s_failing_verifier(project)
    git_ok(project, "add", "-A")
    result = git(project, "commit", "-m", "F002: subtract\n\nShiftkit-Override: trust me")
    assert result.returncode != 0 and "rule 4" in result.output


def _sub_flip_without_hooks(project: Path) -> None:
    implement(project, "sub")
    flip(project, "F002")
    git_ok(project, "add", "-A")


def test_bypasses_land_and_audit_names_each_commit(tamper_base: Path, tmp_path: Path) -> None:
    project = tmp_path / "bypass"
    shutil.copytree(tamper_base, project, symlinks=True)
    start = git_ok(project, "rev-parse", "HEAD").strip()
    # 1. --no-verify (and past the reference-transaction hook, which refuses it)
    _sub_flip_without_hooks(project)
    git_ok(
        project, *PAST_ALL_HOOKS, "commit", "-q", "--no-verify", "-m", "F002: subtract two numbers"
    )
    no_verify = git_ok(project, "rev-parse", "HEAD").strip()
    # 2. cherry-pick of a flip made on a side branch
    git_ok(project, "checkout", "-q", "-b", "side")
    implement(project, "mul")
    flip(project, "F003")
    git_ok(project, "add", "-A")
    git_ok(
        project, *PAST_ALL_HOOKS, "commit", "-q", "--no-verify", "-m", "F003: multiply two numbers"
    )
    git_ok(project, "checkout", "-q", "-")
    git_ok(project, *PAST_ALL_HOOKS, "cherry-pick", "side")
    picked = git_ok(project, "rev-parse", "HEAD").strip()
    # 3. commit-tree
    edit_list(project, lambda items: by_id(items, "F001").update(passes=True))
    implement(project, "add")
    git_ok(project, "add", "-A")
    tree = git_ok(project, "write-tree").strip()
    made = git_ok(project, "commit-tree", tree, "-p", "HEAD", "-m", "F001: add two numbers").strip()
    git_ok(project, *PAST_ALL_HOOKS, "update-ref", "HEAD", made)
    git_ok(project, "reset", "-q")
    result = shiftkit(project, "audit", "--since", start)
    assert result.returncode == 1, result.output
    for commit in (no_verify, picked, made):
        assert commit[:7] in result.stdout
    data = json.loads(shiftkit(project, "audit", "--since", start, "--json").stdout)
    assert {v["commit"] for v in data["violations"]} == {no_verify, picked, made}
    assert any(v["rule"] == 4 for v in data["violations"])


def test_reverify_catches_a_forged_verified_trailer(tamper_base: Path, tmp_path: Path) -> None:
    project = tmp_path / "forged"
    shutil.copytree(tamper_base, project, symlinks=True)
    start = git_ok(project, "rev-parse", "HEAD").strip()
    implement(project, "sub", good=False)  # does not work, yet claims to be verified
    flip(project, "F002")
    git_ok(project, "add", "-A")
    tree = git_ok(project, "write-tree").strip()
    message = (
        f"F002: subtract two numbers\n\nShiftkit-Feature: F002\nShiftkit-Verified: {tree}\n"
        f"Shiftkit-Claim: 0123456789abcdef0123456789abcdef01234567\n"
    )
    git_ok(project, *PAST_ALL_HOOKS, "commit", "-q", "--no-verify", "-m", message)
    plain = shiftkit(project, "audit", "--since", start)
    assert plain.returncode == 0, plain.output  # the trailer looks right
    reverified = shiftkit(project, "audit", "--since", start, "--reverify")
    assert reverified.returncode == 1
    assert "rule 4 [F002]" in reverified.stdout and "fails when re-run" in reverified.stdout
    assert git_ok(project, "worktree", "list").count("\n") == 1  # the temporary worktree is gone


def test_audit_of_the_whole_history_of_a_clean_project(tamper_base: Path) -> None:
    result = shiftkit(tamper_base, "audit")
    assert result.returncode == 0, result.output
    assert "0 with violations" in result.stdout


def test_install_hooks_refuses_politely(tamper_base: Path, tmp_path: Path) -> None:
    project = tmp_path / "hooks"
    shutil.copytree(tamper_base, project, symlinks=True)
    foreign = shiftkit(project, "install-hooks")
    assert foreign.returncode == 1 and "is not shiftkit's" in foreign.stderr
    git_ok(project, "config", "core.hooksPath", ".githooks")
    elsewhere = shiftkit(project, "install-hooks")
    assert elsewhere.returncode == 1 and "core.hooksPath is set to '.githooks'" in elsewhere.stderr
    git_ok(project, "config", "--unset", "core.hooksPath")
    assert shiftkit(project, "install-hooks", "--force").returncode == 0
    assert (project / ".git" / "hooks" / "pre-commit.pre-shiftkit").exists()
