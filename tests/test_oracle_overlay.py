"""Re-verification runs the oracle as defined (issue 26 item 2; decision record 0081): `audit
--reverify` and `check --isolated` run each verifier with its feature's oracle files as the
commit that appended the feature (or a person's action since) had them, over the judged
tree — whatever rule 14 said of the commits between. Real git, real pytest projects (`calc`),
commits forced past every hook."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import (
    Result,
    calc_verifier,
    edit_list,
    forced_flip,
    git,
    git_ok,
    implement,
    ok,
    shiftkit,
    write,
)

from shiftkit.core.features import Feature
from shiftkit.edge.context import Context

NO_HOOKS = ("-c", "core.hooksPath=/dev/null/no-hooks")
ADD_TEST = "tests/test_add.py"
ALWAYS = "def test_add():\n    assert True\n"
# A root conftest that turns every test into a pass without running it.
STUB_CONFTEST = "import _pytest.python\n\n_pytest.python.Function.runtest = lambda self: None\n"
PDB_SHADOW = STUB_CONFTEST + "from importlib import util as _u\n"


def feature_of(project: Path, name: str) -> str:
    document = json.loads((project / "features.json").read_text())
    return next(i["id"] for i in document["features"] if i.get("verify") == calc_verifier(name))


def definition(project: Path) -> str:
    """The commit that appended calc's features (with their tests)."""
    return git_ok(project, "log", "-1", "--format=%h", "--", ADD_TEST).strip()


def finish_honestly(project: Path, name: str, *, good: bool = True) -> str:
    feature = feature_of(project, name)
    ok(project, "claim", feature)
    implement(project, name, good)
    ok(project, "finish", "-m", f"{name} two numbers")
    return feature


def audit(project: Path) -> Result:
    return shiftkit(project, "audit", "--reverify", "--isolated")


def check(project: Path) -> Result:
    return shiftkit(project, "check", "--isolated", "--no-demote")


# -- (a) the test rewritten to `assert True`, forced past every hook -------------------------


def test_a_rewritten_test_is_reverified_as_defined(calc: Path) -> None:
    defined = definition(calc)
    feature = feature_of(calc, "add")
    implement(calc, "add", good=False)
    write(calc / ADD_TEST, ALWAYS)
    flip = forced_flip(calc, feature, "add two numbers")

    audited = audit(calc)
    assert audited.returncode == 1, audited.output
    restored = f"oracle restored from {defined}: {ADD_TEST}"
    # The original test, run against the broken code: the flip is not verified ...
    failing = [line for line in audited.stdout.splitlines() if "fails when re-run" in line]
    assert failing and flip in failing[0] and restored in failing[0], audited.output
    # ... and the finding names the feature and the file, whatever rule 14 said.
    assert f"{feature}'s oracle at this commit is not as defined ({restored})" in audited.stdout

    checked = check(calc)
    assert checked.returncode == 1, checked.output
    assert f"FAILED {feature}: exit 1; {restored}" in checked.stdout, checked.output
    assert f"{feature}: its oracle at HEAD is not as defined ({restored})" in checked.stdout
    # (the throwaway checkout is gone, and the work tree keeps what was committed)
    assert (calc / ADD_TEST).read_text() == ALWAYS
    assert git_ok(calc, "status", "--porcelain").strip() == ""


def test_a_deleted_test_is_restored(calc: Path) -> None:
    feature = feature_of(calc, "add")
    implement(calc, "add", good=False)
    (calc / ADD_TEST).unlink()
    forced_flip(calc, feature, "add two numbers")
    checked = check(calc)
    assert checked.returncode == 1, checked.output
    assert f"oracle restored from {added_in(calc)}: {ADD_TEST}" in checked.stdout


def added_in(project: Path) -> str:
    return git_ok(project, "log", "-1", "--format=%h", "--diff-filter=A", "--", ADD_TEST).strip()


def test_a_pass_with_the_oracle_restored_is_not_a_pass_of_the_tree(calc: Path) -> None:
    """The code is right, the test was loosened anyway: the verifier passes with the oracle as
    defined, the overlay is still reported, and the pass is recorded at the overlaid tree —
    never at HEAD's, which holds the loosened test."""
    from shiftkit.edge import regression, verify
    from shiftkit.edge.context import open_context

    restored = f"oracle restored from {definition(calc)}: {ADD_TEST}"
    feature = feature_of(calc, "add")
    implement(calc, "add")
    write(calc / ADD_TEST, ALWAYS)
    forced_flip(calc, feature, "add two numbers")

    checked = check(calc)
    assert checked.returncode == 0, checked.output
    assert f"{feature}: its oracle at HEAD is not as defined ({restored})" in checked.stdout
    audited = audit(calc)
    assert audited.returncode == 1, audited.output
    assert f"{feature}'s oracle at this commit is not as defined ({restored})" in audited.stdout
    assert "fails when re-run" not in audited.stdout

    ctx = open_context(calc)
    key = verify.cache_command(calc_verifier("add"), regression.CHECKOUT)
    head_tree = git_ok(calc, "rev-parse", "HEAD^{tree}").strip()
    assert not verify.is_cached(ctx.common_dir, head_tree, key)
    passed = list((verify.cache_path(ctx.common_dir, head_tree, key)).parent.iterdir())
    assert len(passed) == 1 and not passed[0].name.startswith(head_tree)
    overlaid = passed[0].name.split("-")[0]
    assert ALWAYS not in git_ok(calc, "show", f"{overlaid}:{ADD_TEST}")


# -- (b) an agent-added root conftest.py that makes every test pass --------------------------


@pytest.mark.parametrize(("path", "text"), [("conftest.py", STUB_CONFTEST), ("pdb.py", PDB_SHADOW)])
def test_an_added_root_conftest_is_removed(calc: Path, path: str, text: str) -> None:
    """A root conftest, or a root `pdb.py` (pytest imports pdb at start: decision record
    0078), that stubs out every test: the definition had neither, so the overlay removes it."""
    defined = definition(calc)
    feature = feature_of(calc, "add")
    implement(calc, "add", good=False)
    write(calc / path, text)
    git_ok(calc, "add", "-A")
    git_ok(calc, *NO_HOOKS, "commit", "-q", "--no-verify", "-m", "Add a test helper")
    forced_flip(calc, feature, "add two numbers")

    removed = f"oracle restored from {defined}: {path} (removed)"
    audited = audit(calc)
    assert audited.returncode == 1, audited.output
    assert "fails when re-run" in audited.stdout and removed in audited.stdout, audited.output
    checked = check(calc)
    assert checked.returncode == 1 and f"FAILED {feature}" in checked.stdout, checked.output
    assert removed in checked.stdout
    assert (calc / path).read_text() == text  # (only the checkout lost it)


# -- (c) a person's change of a test is the defined one --------------------------------------

CONCAT_TEST = "def test_add():\n    from calc.ops import add\n    assert add(2, 3) == 23\n"
CONCAT = "def add(a, b):\n    return int(f'{a}{b}')\n"


def _concatenating_finish(project: Path) -> str:
    feature = feature_of(project, "add")
    ok(project, "claim", feature)
    ops = project / "calc" / "ops.py"
    ops.write_text(ops.read_text() + CONCAT)
    ok(project, "finish", "-m", "add concatenates")
    return feature


def test_a_persons_override_of_a_test_is_the_defined_version(calc: Path) -> None:
    """The person changed what `add` means; the code meets the new test and fails the old
    one: re-verification runs the person's version, with nothing to report."""
    write(calc / ADD_TEST, CONCAT_TEST)
    git_ok(calc, "add", "-A")
    changed = git(
        calc, "commit", "-q", "-m", "add concatenates now", "-m", "Shiftkit-Override: Ana asked"
    )
    assert changed.returncode == 0, changed.output
    _concatenating_finish(calc)

    audited = audit(calc)
    assert audited.returncode == 0, audited.output
    assert "oracle restored" not in audited.output and "fails when re-run" not in audited.output
    checked = check(calc)
    assert checked.returncode == 0, checked.output
    assert "oracle restored" not in checked.output


def test_the_same_change_without_a_person_is_not_the_defined_version(calc: Path) -> None:
    """The guard of the test above: without the override, the definition's test judges."""
    write(calc / ADD_TEST, CONCAT_TEST)
    git_ok(calc, "add", "-A")
    git_ok(calc, *NO_HOOKS, "commit", "-q", "--no-verify", "-m", "add concatenates now")
    feature = feature_of(calc, "add")
    ops = calc / "calc" / "ops.py"
    ops.write_text(ops.read_text() + CONCAT)
    forced_flip(calc, feature, "add concatenates")
    checked = check(calc)
    assert checked.returncode == 1 and f"FAILED {feature}" in checked.stdout, checked.output


def _key(folder: Path, name: str) -> Path:
    key = folder / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True
    )
    return key


@pytest.mark.parametrize("signed", [True, False])
def test_under_the_signed_policy_a_person_signs_the_change(
    calc: Path, tmp_path: Path, signed: bool
) -> None:
    """An override trailer is not enough under "signed": an unsigned change of the test is
    no person's, and the definition's test judges (the same function as rule 11's)."""
    person = _key(tmp_path, "person")
    write(calc / ".shiftkit" / "allowed_signers", f"person {Path(f'{person}.pub').read_text()}")
    config = calc / ".shiftkit.toml"
    config.write_text(config.read_text().replace('policy = "trailer"', 'policy = "signed"', 1))
    assert 'policy = "signed"' in config.read_text()
    git_ok(calc, "add", "-A")
    git_ok(calc, *NO_HOOKS, "commit", "-q", "--no-verify", "-m", "Person actions are signed")
    write(calc / ADD_TEST, CONCAT_TEST)
    git_ok(calc, "add", "-A")
    signing = [
        "-c", "gpg.format=ssh", "-c", f"user.signingkey={person}.pub", "commit", "-S",
    ]  # fmt: skip
    how = signing if signed else ["commit"]
    message = "add concatenates now\n\nShiftkit-Override: Ana asked\n"
    git_ok(calc, *NO_HOOKS, *how, "-q", "--no-verify", "-m", message)
    feature = feature_of(calc, "add")
    ops = calc / "calc" / "ops.py"
    ops.write_text(ops.read_text() + CONCAT)
    forced_flip(calc, feature, "add concatenates")
    checked = check(calc)
    if signed:
        assert checked.returncode == 0 and "oracle restored" not in checked.output, checked.output
    else:
        assert checked.returncode == 1, checked.output
        assert f"oracle restored from {added_in(calc)}: {ADD_TEST}" in checked.stdout


# -- (d) an honest project: no overlay, the same verdicts --------------------------------------


def test_an_honest_project_needs_no_overlay(calc: Path) -> None:
    finish_honestly(calc, "add")
    finish_honestly(calc, "sub")
    # A new feature brings its new test later: no change of the others' oracles.
    write(calc / "tests" / "test_div.py", "def test_div():\n    assert 6 / 3 == 2\n")
    ok(calc, "add", "--description", "div", "--step", "s", "--verify", calc_verifier("div"))
    git_ok(calc, "add", "-A")
    git_ok(calc, "commit", "-q", "-m", "Add the div feature")

    audited = audit(calc)
    assert audited.returncode == 0, audited.output
    assert "oracle restored" not in audited.output
    checked = check(calc)
    assert checked.returncode == 0, checked.output
    assert "oracle restored" not in checked.output and "2 passed" in checked.stdout


def test_an_honest_failure_is_still_a_failure_without_an_overlay(calc: Path) -> None:
    feature = feature_of(calc, "add")
    implement(calc, "add", good=False)
    forced_flip(calc, feature, "add two numbers")
    checked = check(calc)
    assert checked.returncode == 1 and f"FAILED {feature}: exit 1" in checked.stdout
    assert "oracle restored" not in checked.stdout and "not as defined" not in checked.stdout


# -- the definition, through a merge -----------------------------------------------------------

DIV_TEST = "tests/test_div.py"


def test_a_feature_appended_on_a_side_branch_is_defined_there(calc: Path) -> None:
    """The commit that appended the feature is found on the side branch a merge brought it
    from — not the merge, which also brings the agent's later change of its test."""
    from shiftkit.edge import overlay
    from shiftkit.edge.context import open_context

    main = git_ok(calc, "branch", "--show-current").strip()
    git_ok(calc, "checkout", "-q", "-b", "side")
    write(
        calc / DIV_TEST,
        "def test_div():\n    from calc.ops import div\n    assert div(6, 3) == 2\n",
    )
    ok(calc, "add", "--description", "div", "--step", "s", "--verify", calc_verifier("div"))
    git_ok(calc, "add", "-A")
    git_ok(calc, "commit", "-q", "-m", "Add the div feature")
    defined = git_ok(calc, "rev-parse", "HEAD").strip()
    write(calc / DIV_TEST, "def test_div():\n    assert True\n")
    git_ok(calc, "add", "-A")
    git_ok(calc, *NO_HOOKS, "commit", "-q", "--no-verify", "-m", "Simplify the div test")
    git_ok(calc, "checkout", "-q", main)
    implement(calc, "add")
    git_ok(calc, "add", "-A")
    git_ok(calc, "commit", "-q", "-m", "Start on add")
    git_ok(calc, *NO_HOOKS, "merge", "-q", "--no-ff", "--no-verify", "-m", "Merge side", "side")

    ctx = open_context(calc)
    div = next(f for f in _features(ctx) if f.verify == calc_verifier("div"))
    tip = git_ok(calc, "rev-parse", "HEAD").strip()
    found = overlay.definitions(calc, tip, ctx.config.features, [div.id, feature_of(calc, "add")])
    assert found[div.id] == defined
    assert (
        found[feature_of(calc, "add")] == git_ok(calc, "rev-parse", f"{definition(calc)}").strip()
    )
    tree = git_ok(calc, "rev-parse", "HEAD^{tree}").strip()
    made = overlay.overlays(calc, tip, tree, [(div, div.verify or "")], ctx.config)[div.id]
    assert made.note() == f"oracle restored from {defined[:7]}: {DIV_TEST}"
    restored = git_ok(calc, "show", f"{made.tree}:{DIV_TEST}")
    assert "div(6, 3) == 2" in restored
    # (nothing else of the tree differs)
    assert git_ok(calc, "diff", "--name-only", tree, made.tree).split() == [DIV_TEST]


def _features(ctx: Context) -> list[Feature]:
    from shiftkit.edge.project import read_features

    return list(read_features(ctx.project).features)


def test_each_definition_is_found_among_many_commits_of_the_list(calc: Path) -> None:
    """Twenty-five commits each appending a feature, others between that only reword one:
    each feature's definition is the commit that appended it (a search of the list's
    history, several reads of it)."""
    from shiftkit.edge import overlay

    appended = {}
    for n in range(25):
        feature_id = f"F{100 + n}"

        def append(items: list[dict[str, object]], feature_id: str = feature_id) -> None:
            items.append({"id": feature_id, "category": "c", "description": "d", "steps": ["s"]})

        edit_list(calc, append)
        git_ok(calc, "add", "-A")
        git_ok(calc, *NO_HOOKS, "commit", "-q", "--no-verify", "-m", f"Append {feature_id}")
        appended[feature_id] = git_ok(calc, "rev-parse", "HEAD").strip()
        if n % 5 == 0:  # (a commit of the list that appends nothing)
            edit_list(calc, lambda items, n=n: items[-1].update(description=f"d{n}"))
            git_ok(calc, "add", "-A")
            git_ok(calc, *NO_HOOKS, "commit", "-q", "--no-verify", "-m", "Reword")
    found = overlay.definitions(calc, "HEAD", "features.json", [*appended, "F999"])
    assert found == appended
