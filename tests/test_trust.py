"""Trust (SPEC section 11): the leaks an agent would use to look done without doing the work,
each tried through real `git commit` with the real hooks — the pre-commit framework's and the
plain shims — then landed past every hook and shown flagged by `audit`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import (
    FEATURES,
    add_log_entry,
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

from shiftkit.core.own_refs import MARKER

CONFIG = ".shiftkit.toml"
SIGNERS = ".shiftkit/allowed_signers"


@pytest.fixture(scope="module")
def trust_base(
    pristine_calc: Path, tmp_path_factory: pytest.TempPathFactory, isolated_home: Path
) -> Iterator[Path]:
    """F000 passing; F001 blocked after three failed attempts; F002, F003 open; F004 open and
    verified by the project-wide verifier (none set)."""
    base = tmp_path_factory.mktemp("trust") / "project"
    shutil.copytree(pristine_calc, base, symlinks=True)
    with isolated_environment(isolated_home):
        ok(base, "claim", "F000")
        ok(base, "finish", "-m", "the environment builds")
        ok(base, "add", "--description", "uses the project-wide verifier", "--step", "s")
        git_ok(base, "add", "-A")
        git_ok(base, "commit", "-q", "-m", "Add F004, verified by the project-wide verifier")
        for _ in range(3):
            ok(base, "claim", "F001")
            implement(base, "add", good=False)
            ok(base, "revert", "--reason", "returned the wrong sum")
        yield base


@pytest.fixture(params=["pre-commit-framework", "plain-shims"])
def project(request: pytest.FixtureRequest, trust_base: Path, tmp_path: Path) -> Path:
    target = tmp_path / "project"
    shutil.copytree(trust_base, target, symlinks=True)
    if request.param == "plain-shims":
        use_shims(target)
    return target


@pytest.fixture
def one_project(trust_base: Path, tmp_path: Path) -> Path:
    target = tmp_path / "project"
    shutil.copytree(trust_base, target, symlinks=True)
    return target


def head(project: Path) -> str:
    return git_ok(project, "rev-parse", "HEAD").strip()


def set_config(project: Path, section: str, line: str) -> None:
    """Set ``key = value`` (``line``) in ``[section]`` of the work tree's .shiftkit.toml."""
    path = project / CONFIG
    lines = path.read_text().splitlines()
    key = line.split("=")[0].strip()
    header = f"[{section}]"
    if header not in lines:
        lines += ["", header]
    start = lines.index(header) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("[")), len(lines))
    for index in range(start, end):
        if lines[index].split("=")[0].strip() == key:
            lines[index] = line
            break
    else:
        lines.insert(start, line)
    path.write_text("\n".join(lines) + "\n")


def refused(project: Path, message: str, *extra: str) -> str:
    """Commit what is staged with every hook; it must be refused, HEAD unchanged."""
    before = head(project)
    result = git(project, "commit", *extra, "-m", message)
    assert result.returncode != 0, result.output
    assert "Traceback" not in result.output
    assert head(project) == before
    return result.output


def land_past_every_hook(project: Path, message: str) -> str:
    """What only a determined caller with the machine can do: no hooks at all."""
    git_ok(
        project,
        "-c",
        f"core.hooksPath={project / 'no-hooks'}",
        "commit",
        "-q",
        "--no-verify",
        "-m",
        message,
    )
    return head(project)


def audit_flags(project: Path, commit: str, rule: int, *extra: str) -> str:
    result = shiftkit(project, "audit", *extra)
    assert result.returncode == 1, result.output
    line = next((ln for ln in result.stdout.splitlines() if ln.startswith(commit[:7])), "")
    assert f"rule {rule}" in result.stdout and line, result.stdout
    return result.stdout


# -- leak 1: the judged commit loosens the judge ------------------------------------------------


def leak_project_verifier_true(p: Path) -> str:
    set_config(p, "shiftkit", 'verify = "true"')
    set_config(p, "shiftkit.claims", "enabled = false")
    flip(p, "F004")
    return "F004: uses the project-wide verifier"


# -- leak 2: the list moved to a file where everything passes -----------------------------------


def leak_list_moved(p: Path) -> str:
    document = json.loads((p / FEATURES).read_text())
    for item in document["features"]:
        item["passes"] = True
        item.pop("blocked", None)
    write(p / "done.json", json.dumps(document, indent=2) + "\n")
    (p / CONFIG).write_text(
        (p / CONFIG).read_text().replace('features = "features.json"', 'features = "done.json"')
    )
    return "Keep the feature list in done.json"


# -- leak 3: an override that rewrites the verifier it is then judged by ------------------------


def leak_override_rewrites_verifier(p: Path) -> str:
    edit_list(p, lambda items: by_id(items, "F002").update(verify="true", passes=True))
    add_log_entry(p, "F002")
    return "F002: subtract two numbers\n\nShiftkit-Override: the old verifier was flaky"


# -- leak 4: a smaller bill ------------------------------------------------------------------


LEDGER = ".shiftkit/ledger.jsonl"


def leak_ledger_line_removed(p: Path) -> str:
    lines = (p / LEDGER).read_text().splitlines(keepends=True)
    assert len(lines) >= 2, lines  # (the claims, attempts and verifier runs so far)
    write(p / LEDGER, "".join(lines[1:]))
    return "Tidy the cost ledger"


def leak_ledger_line_rewritten(p: Path) -> str:
    text = (p / LEDGER).read_text()
    first, rest = text.split("\n", 1)
    entry = json.loads(first)
    entry["at"] = "2000-01-01T00:00:00.000Z"
    write(p / LEDGER, json.dumps(entry, separators=(",", ":")) + "\n" + rest)
    return "Correct a date in the ledger"


# -- leak 5: a decision record numbered over another ----------------------------------------


def leak_decision_number_taken(p: Path) -> str:
    taken = sorted((p / "docs" / "decisions").glob("0001-*.md"))
    assert taken, "the scaffold records its first decision"
    write(p / "docs" / "decisions" / "0001-keep-state-in-files.md", "# 1. Keep state\n\nWhy.\n")
    return "Record why state is kept in files"


def leak_decisions_symlinked(p: Path) -> str:
    """The folder moved and a symlink left in its place: git stores the symlink as a file,
    so the folder rule 13 reads would be empty."""
    git_ok(p, "mv", "docs/decisions", "docs/adr")
    (p / "docs" / "decisions").symlink_to("adr")
    [first] = sorted((p / "docs" / "adr").glob("0001-*.md"))
    write(p / "docs" / "adr" / "0001-another.md", "# 1. Another\n")
    assert first.exists()
    return "Keep the decision records in docs/adr"


# -- leak 6: a log no command can read ------------------------------------------------------


def leak_log_not_utf8(p: Path) -> str:
    with open(p / "claude-progress.txt", "ab") as log:
        log.write(b"\n## stray \xff bytes\n")
    return "Add a note to the log"


def test_a_log_that_is_not_utf8_is_a_clear_error_not_a_crash(one_project: Path) -> None:
    leak_log_not_utf8(one_project)
    for args in (("log",), ("start", "--brief", "--no-check")):
        result = shiftkit(one_project, *args)
        assert result.returncode == 2, result.output
        assert result.stderr.startswith("shiftkit: claude-progress.txt: not UTF-8 text")
        assert "Traceback" not in result.output and "internal error" not in result.output


def test_the_ledger_and_its_rule_are_named_alike_everywhere() -> None:
    from shiftkit import hooks
    from shiftkit.core import config, ledger
    from shiftkit.edge import revisions

    assert hooks.LEDGER_FILE == revisions.LEDGER_FILE == ledger.LEDGER_FILE == LEDGER
    assert config.Config().decisions == hooks.DEFAULT_DECISIONS


def test_a_merge_that_drops_the_other_sides_ledger_lines_is_refused(one_project: Path) -> None:
    """`git merge -s ours` keeps HEAD's tree: nothing differs from HEAD, yet the other side's
    usage is gone. The commit-msg hook (a merge runs no pre-commit) asks rule 12 of every
    merge, and a worktree's merge the same (its `.git` is a file)."""
    from shiftkit.core import ledger

    def spend(where: Path, tokens: int) -> None:
        entry = ledger.Entry(
            "usage", f"u{tokens:015d}", "2026-11-30T10:00:00.000Z", usage=ledger.Usage(tokens)
        )
        write(where / LEDGER, (where / LEDGER).read_text() + ledger.dumps_entry(entry) + "\n")
        git_ok(where, "add", LEDGER)
        git_ok(where, "commit", "-q", "-m", f"Record {tokens} tokens of usage")

    git_ok(one_project, "worktree", "add", "-q", "-b", "side", str(one_project.parent / "side"))
    side = one_project.parent / "side"
    spend(side, 7)
    spend(one_project, 9)
    before = head(one_project)
    merged = git(one_project, "merge", "-s", "ours", "--no-edit", "side")
    assert merged.returncode != 0 and "rule 12" in merged.output, merged.output
    # (refused by the commit-msg hook, before the branch would move)
    assert "reference-transaction refused" not in merged.output, merged.output
    assert head(one_project) == before
    # The same merge from the linked worktree, where `.git` is a file.
    merged = git(side, "merge", "-s", "ours", "--no-edit", "main")
    assert merged.returncode != 0 and "rule 12" in merged.output, merged.output
    assert "reference-transaction refused" not in merged.output, merged.output


def test_a_record_only_intended_to_add_is_not_counted(project: Path) -> None:
    """`git add -N` puts a path in the index without content; the commit leaves it out.
    (The pre-commit framework sets such a path aside while hooks run; the plain shims do not.)"""
    one_project = project
    folder = one_project / "docs" / "decisions"
    [first] = sorted(folder.glob("0001-*.md"))
    write(folder / "0001-draft.md", "# 1. A draft\n")
    git_ok(one_project, "add", "-N", "docs/decisions/0001-draft.md")
    write(folder / "0002-second.md", "# 2. Second\n")
    git_ok(one_project, "add", "docs/decisions/0002-second.md")
    git_ok(one_project, "commit", "-q", "-m", "Record a second decision")
    assert "0001-draft.md" not in git_ok(
        one_project, "ls-tree", "--name-only", "HEAD:docs/decisions"
    )
    assert first.exists()


def _all_pass(items: list[dict[str, object]]) -> None:
    for item in items:
        item["passes"] = True
        item.pop("blocked", None)


def test_merging_an_unrelated_history_cannot_make_features_pass(one_project: Path) -> None:
    """An orphan branch whose list says everything passes (its first commit establishes a
    list, so nothing in it is a flip), merged with `--allow-unrelated-histories`: the merge
    gets no pass from a parent it shares no ancestor with, so its passes are flips."""
    p = one_project
    main = git_ok(p, "branch", "--show-current").strip()
    git_ok(p, "checkout", "-q", "--orphan", "upstream")
    edit_list(p, _all_pass)
    git_ok(p, "add", "-A")
    # (a root that brings passes is refused too: see test_trust_invariants.py)
    git_ok(p, "-c", f"core.hooksPath={p / 'no-hooks'}", "commit", "-q", "-m", "Import upstream")
    git_ok(p, "checkout", "-q", main)
    merge = ("merge", "--no-ff", "-X", "theirs", "--allow-unrelated-histories")
    before = head(p)
    refused_merge = git(p, *merge, "-m", "Merge upstream import", "upstream")
    assert refused_merge.returncode != 0 and "rule 3" in refused_merge.output, refused_merge.output
    assert head(p) == before
    git_ok(p, "merge", "--abort")
    git_ok(p, "-c", f"core.hooksPath={p / 'no-hooks'}", *merge, "-m", "Merge upstream", "upstream")
    audit_flags(p, head(p), 3)


def test_a_merge_cannot_undo_a_demotion(one_project: Path) -> None:
    """F000 passed where the branches forked; main demoted it since. A merge that takes the
    other side's list, where it still passes, is a flip of F000 and must earn it."""
    p = one_project
    git_ok(p, "branch", "side")
    edit_list(p, lambda items: by_id(items, "F000").update(passes=False))
    add_log_entry(p, "F000", "regressed")
    git_ok(p, "add", "-A")
    git_ok(p, "commit", "-q", "-m", "Demote F000: the build broke")
    git_ok(p, "checkout", "-q", "side")
    write(p / "notes.txt", "notes\n")
    git_ok(p, "add", "-A")
    git_ok(p, "commit", "-q", "-m", "Take notes")
    git_ok(p, "checkout", "-q", "-")
    git_ok(p, "merge", "--no-ff", "--no-commit", "side")
    write(p / FEATURES, git_ok(p, "show", f"side:{FEATURES}"))
    git_ok(p, "add", FEATURES)
    output = refused(p, "Merge the notes branch")
    assert "F000" in output and any(f"rule {r}" in output for r in (4, 5, 6)), output
    commit = land_past_every_hook(p, "Merge the notes branch")
    audit_flags(p, commit, 5)


def test_a_decision_folder_written_with_dot_slash_is_still_watched(one_project: Path) -> None:
    set_config(one_project, "shiftkit", 'decisions = "./adr"')
    git_ok(one_project, "add", "-A")
    land_past_every_hook(one_project, "Keep decision records in adr")
    write(one_project / "adr" / "0001-first.md", "# 1. First\n")
    git_ok(one_project, "add", "-A")
    git_ok(one_project, "commit", "-q", "-m", "Record a first decision")
    write(one_project / "adr" / "0001-second.md", "# 1. Second\n")
    git_ok(one_project, "add", "-A")
    output = refused(one_project, "Record a second decision")
    assert "rule 13" in output and "reference-transaction refused" not in output, output


LEAKS: list[tuple[Callable[[Path], str], int]] = [
    (leak_project_verifier_true, 10),
    (leak_list_moved, 10),
    (leak_override_rewrites_verifier, 4),
    (leak_ledger_line_removed, 12),
    (leak_ledger_line_rewritten, 12),
    (leak_decision_number_taken, 13),
    (leak_log_not_utf8, 8),
    (leak_decisions_symlinked, 13),
]


@pytest.mark.parametrize(("leak", "rule"), LEAKS, ids=[f.__name__[5:] for f, _ in LEAKS])
def test_a_leak_is_refused_at_commit_time(
    project: Path, leak: Callable[[Path], str], rule: int
) -> None:
    message = leak(project)
    git_ok(project, "add", "-A")
    output = refused(project, message)
    assert f"rule {rule}" in output, output
    # --no-verify skips the commit hooks, not the reference-transaction hook
    output = refused(project, message, "--no-verify")
    assert "reference-transaction refused" in output and f"rule {rule}" in output, output


@pytest.mark.parametrize(("leak", "rule"), LEAKS, ids=[f.__name__[5:] for f, _ in LEAKS])
def test_a_leak_landed_past_every_hook_is_flagged_by_plain_audit(
    one_project: Path, leak: Callable[[Path], str], rule: int
) -> None:
    message = leak(one_project)
    git_ok(one_project, "add", "-A")
    commit = land_past_every_hook(one_project, message)
    audit_flags(one_project, commit, rule)


def test_the_verifier_comes_from_the_parent_even_after_a_person_changed_it(
    one_project: Path,
) -> None:
    """A person sets the project-wide verifier on its own; the next flip is judged by it."""
    set_config(one_project, "shiftkit", "verify = \"python -c 'raise SystemExit(1)'\"")
    git_ok(one_project, "add", "-A")
    git_ok(one_project, "commit", "-q", "-m", "Set the project-wide verifier")
    audit = shiftkit(one_project, "audit")
    assert audit.returncode == 0 and "enforcement settings changed: verify" in audit.stdout
    assert shiftkit(one_project, "audit", "--strict").returncode == 1
    ok(one_project, "claim", "F004")
    flip(one_project, "F004")
    git_ok(one_project, "add", "-A")
    assert "rule 4 [F004]" in refused(one_project, "F004: uses the project-wide verifier")


def test_an_unstaged_config_edit_does_not_loosen_the_plain_shims(project: Path) -> None:
    """The hooks read HEAD's settings, never the work tree's."""
    implement(project, "sub", good=False)
    flip(project, "F002")
    git_ok(project, "add", "-A")
    (project / CONFIG).write_text(
        (project / CONFIG)
        .read_text()
        .replace('features = "features.json"', 'features = "elsewhere.json"')
    )
    assert "rule 4 [F002]" in refused(project, "F002: subtract two numbers")


def test_a_definition_change_and_its_flip_never_share_a_commit(one_project: Path) -> None:
    """Even with the real verifier passing: the definition moved in the same commit."""
    ok(one_project, "claim", "F002")
    implement(one_project, "sub")
    edit_list(
        one_project,
        lambda items: by_id(items, "F002").update(
            verify="python -m pytest -q -p no:cacheprovider tests/test_sub.py -x", passes=True
        ),
    )
    add_log_entry(one_project, "F002")
    git_ok(one_project, "add", "-A")
    output = refused(one_project, "F002: subtract\n\nShiftkit-Override: reworded the verifier")
    assert "rule 4 [F002]" in output and "never share a commit" in output


@pytest.mark.parametrize(
    ("section", "line", "key"),
    [
        ("shiftkit.log", "keep = 5", "log.keep"),
        # (moving the decision folder would step around rule 13: a person's action too)
        ("shiftkit", 'decisions = "docs/adr"', "decisions"),
    ],
)
def test_a_config_change_alone_is_a_person_action_listed_by_audit(
    one_project: Path, section: str, line: str, key: str
) -> None:
    set_config(one_project, section, line)
    git_ok(one_project, "add", "-A")
    git_ok(one_project, "commit", "-q", "-m", "Change a setting")
    audit = shiftkit(one_project, "audit", "--json")
    assert audit.returncode == 0, audit.output
    actions = json.loads(audit.stdout)["person_actions"]
    assert actions[-1]["actions"] == [f"enforcement settings changed: {key}"]
    assert shiftkit(one_project, "audit", "--strict").returncode != 0


# -- leak 4: an agent unblocking itself -----------------------------------------------------------


def self_unblock(p: Path) -> str:
    edit_list(
        p,
        lambda items: (
            by_id(items, "F001").pop("blocked"),
            by_id(items, "F001").update(attempts=0),
        ),
    )
    add_log_entry(p, "F001", "unblocked")
    return "F001: unblocked"


def test_a_self_unblock_under_the_trailer_policy_is_listed_and_strict_audit_refuses(
    one_project: Path,
) -> None:
    message = self_unblock(one_project)
    git_ok(one_project, "add", "-A")
    git_ok(one_project, "commit", "-q", "-m", message)
    audit = shiftkit(one_project, "audit")
    assert audit.returncode == 0, audit.output
    assert "person actions" in audit.stdout and "unblock of F001" in audit.stdout
    strict = shiftkit(one_project, "audit", "--strict")
    assert strict.returncode == 1 and "unblock of F001" in strict.stdout


# -- the signed policy ----------------------------------------------------------------------------


def make_key(folder: Path, name: str) -> Path:
    key = folder / name
    subprocess.run(
        [
            "ssh-keygen",
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-C",
            f"{name}@shiftkit.invalid",
            "-f",
            str(key),
        ],
        check=True,
    )
    return key


def signing_env(key: Path) -> dict[str, str]:
    """A person's signing setup, through git's environment config (never a global file)."""
    return {
        "GIT_CONFIG_COUNT": "2",
        "GIT_CONFIG_KEY_0": "gpg.format",
        "GIT_CONFIG_VALUE_0": "ssh",
        "GIT_CONFIG_KEY_1": "user.signingkey",
        "GIT_CONFIG_VALUE_1": f"{key}.pub",
    }


@pytest.fixture
def signed(one_project: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    """The project under the signed policy, set by a person: (project, person key, other key)."""
    keys = tmp_path / "keys"
    keys.mkdir()
    person, other = make_key(keys, "person"), make_key(keys, "agent")
    write(one_project / SIGNERS, f"person@shiftkit.invalid {(keys / 'person.pub').read_text()}")
    set_config(one_project, "shiftkit.people", 'policy = "signed"')
    git_ok(one_project, "add", "-A")
    git_ok(one_project, "commit", "-q", "-m", "Person actions need a signature from now on")
    return one_project, person, other


def sign_commit(project: Path, key: Path, message: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "commit", "-q", "-S", "-m", message],
        cwd=project,
        text=True,
        capture_output=True,
        env={**os.environ, **signing_env(key)},
    )


def test_signed_policy_refuses_an_unsigned_unblock(signed: tuple[Path, Path, Path]) -> None:
    project, _, _ = signed
    message = self_unblock(project)
    git_ok(project, "add", "-A")
    output = refused(project, message)
    assert "rule 11" in output and "not signed" in output, output


def test_signed_policy_refuses_a_key_that_is_not_listed(signed: tuple[Path, Path, Path]) -> None:
    project, _, other = signed
    message = self_unblock(project)
    git_ok(project, "add", "-A")
    result = sign_commit(project, other, message)
    assert result.returncode != 0 and "rule 11" in result.stderr, result.stderr


def test_signed_policy_refuses_a_key_added_by_the_same_commit(
    signed: tuple[Path, Path, Path],
) -> None:
    project, _, other = signed
    signers = project / SIGNERS
    signers.write_text(
        signers.read_text() + f"agent@shiftkit.invalid {Path(f'{other}.pub').read_text()}"
    )
    message = self_unblock(project)
    git_ok(project, "add", "-A")
    result = sign_commit(project, other, message)
    assert result.returncode != 0 and "rule 11" in result.stderr, result.stderr


def test_signed_policy_accepts_a_listed_key_and_shiftkit_unblock_signs(
    signed: tuple[Path, Path, Path],
) -> None:
    project, person, _ = signed
    no_key = shiftkit(project, "unblock", "F001", "--note", "fixed the fixture")
    assert no_key.returncode == 1 and "no signing key" in no_key.stderr, no_key.output
    result = shiftkit(
        project, "unblock", "F001", "--note", "fixed the fixture", env=signing_env(person)
    )
    assert result.returncode == 0, result.output
    shown = git_ok(
        project,
        "-c",
        f"gpg.ssh.allowedSignersFile={project / SIGNERS}",
        "log",
        "-1",
        "--format=%G?",
    )
    assert shown.strip() == "G"
    audit = shiftkit(project, "audit")
    assert audit.returncode == 0, audit.output
    assert "unblock of F001" in audit.stdout


def test_signed_policy_flags_an_unsigned_unblock_in_audit(signed: tuple[Path, Path, Path]) -> None:
    project, _, _ = signed
    message = self_unblock(project)
    git_ok(project, "add", "-A")
    commit = land_past_every_hook(project, message)
    audit_flags(project, commit, 11)


def test_override_command_signs_under_the_signed_policy(signed: tuple[Path, Path, Path]) -> None:
    project, person, _ = signed
    edit_list(project, lambda items: by_id(items, "F003").update(description="multiplication"))
    git_ok(project, "add", "-A")
    unsigned = git(project, "commit", "-m", "Reword F003\n\nShiftkit-Override: the spec changed")
    assert unsigned.returncode != 0 and "rule 11" in unsigned.output
    result = shiftkit(
        project,
        "override",
        "-m",
        "Reword F003",
        "--reason",
        "the spec changed",
        env=signing_env(person),
    )
    assert result.returncode == 0, result.output
    audit = shiftkit(project, "audit")
    assert audit.returncode == 0 and "override of rule(s) 2: the spec changed" in audit.stdout


# -- leak 5: the verifier sees more than the committed tree ---------------------------------------


def stage_sub_flip(project: Path) -> None:
    ok(project, "claim", "F002")
    flip(project, "F002")
    git_ok(project, "add", "-A")


def sub_in_helper_module(project: Path) -> None:
    """ops.py imports `sub` from a helper module that will not be committed."""
    ops = project / "calc" / "ops.py"
    ops.write_text(ops.read_text() + "from calc.helper import sub  # noqa\n")
    git_ok(project, "add", "calc/ops.py")
    write(project / "calc" / "helper.py", "def sub(a, b):\n    return a - b\n")


def test_an_untracked_file_cannot_make_a_flip_pass(project: Path) -> None:
    stage_sub_flip(project)
    sub_in_helper_module(project)
    output = refused(project, "F002: subtract two numbers")
    assert "rule 4 [F002]" in output and "untracked" in output, output


def test_a_skip_worktree_file_cannot_make_a_flip_pass(project: Path) -> None:
    ok(project, "claim", "F002")
    implement(project, "sub")
    git_ok(project, "update-index", "--skip-worktree", "calc/ops.py")
    finish = shiftkit(project, "finish", "-m", "subtract two numbers")
    assert finish.returncode == 1 and "skip-worktree" in finish.stderr, finish.output
    flip(project, "F002")
    git_ok(project, "add", "-A")
    output = refused(project, "F002: subtract two numbers")
    assert "rule 4 [F002]" in output and "skip-worktree" in output, output


def test_an_excluded_file_is_caught_in_checkout_mode_and_by_reverify(one_project: Path) -> None:
    set_config(one_project, "shiftkit", 'verify_in = "checkout"')
    git_ok(one_project, "add", "-A")
    git_ok(one_project, "commit", "-q", "-m", "Verify in a temporary checkout")
    start = head(one_project)
    stage_sub_flip(one_project)
    sub_in_helper_module(one_project)
    with open(one_project / ".git" / "info" / "exclude", "a") as exclude:
        exclude.write("calc/helper.py\n")
    output = refused(one_project, "F002: subtract two numbers")
    assert "rule 4 [F002]" in output and "fails on the staged tree" in output, output
    finish = shiftkit(one_project, "finish", "-m", "subtract two numbers")
    assert finish.returncode == 1, finish.output
    # past every hook, with a forged trailer: plain audit cannot know, --reverify does
    tree = git_ok(one_project, "write-tree").strip()
    commit = land_past_every_hook(
        one_project,
        f"F002: subtract two numbers\n\n"
        f"Shiftkit-Feature: F002\nShiftkit-Verified: {tree}\n"
        f"Shiftkit-Claim: {'c1a1' * 10}\n",
    )
    assert shiftkit(one_project, "audit", "--since", start).returncode == 0
    audit_flags(one_project, commit, 4, "--since", start, "--reverify")


def test_a_verifier_that_rewrites_tracked_files_is_no_pass(project: Path) -> None:
    write(project / "gen.sh", "true\n")
    ok(
        project,
        "add",
        "--description",
        "generated code works",
        "--step",
        "s",
        "--verify",
        "sh gen.sh && python -m pytest -q -p no:cacheprovider tests/test_sub.py",
    )
    git_ok(project, "add", "-A")
    git_ok(project, "commit", "-q", "-m", "Add F005, generated subtraction")
    ok(project, "claim", "F005")
    write(project / "gen.sh", "printf 'def sub(a, b):\\n    return a - b\\n' >> calc/ops.py\n")
    finish = shiftkit(project, "finish", "-m", "generate subtraction")
    assert finish.returncode == 1 and "changed files it was judging" in finish.output, finish.output
    git_ok(project, "checkout", "--", "calc/ops.py")
    flip(project, "F005")
    git_ok(project, "add", "-A")
    output = refused(project, "F005: generate subtraction")
    assert "rule 4 [F005]" in output and "changed the work tree" in output, output


# -- leak 6: --amend, and the other ways of making a commit past its parent's judgement -----------


def finished_sub(project: Path) -> str:
    ok(project, "claim", "F002")
    implement(project, "sub")
    ok(project, "finish", "-m", "subtract two numbers")
    return head(project)


def test_amending_a_flip_commit_is_judged_against_its_real_parent(project: Path) -> None:
    finished_sub(project)
    ops = project / "calc" / "ops.py"
    ops.write_text(ops.read_text().replace("return a - b", "return 0"))
    output = refused(project, "F002: subtract two numbers", "-a", "--amend")
    assert "reference-transaction refused" in output and "rule 4 [F002]" in output, output


def test_an_amended_flip_landed_past_every_hook_is_flagged_by_plain_audit(
    one_project: Path,
) -> None:
    finished_sub(one_project)
    ops = one_project / "calc" / "ops.py"
    ops.write_text(ops.read_text().replace("return a - b", "return 0"))
    message = git_ok(one_project, "log", "-1", "--format=%B")
    git_ok(
        one_project,
        "-c",
        f"core.hooksPath={one_project / 'none'}",
        "commit",
        "-q",
        "-a",
        "--amend",
        "--no-verify",
        "-m",
        message,
    )
    audit_flags(one_project, head(one_project), 4)


def unverified_flip(project: Path) -> str:
    ok(project, "claim", "F002")
    implement(project, "sub", good=False)
    flip(project, "F002")
    git_ok(project, "add", "-A")
    return "F002: subtract two numbers"


def test_no_verify_is_refused_by_the_reference_transaction_hook(project: Path) -> None:
    output = refused(project, unverified_flip(project), "--no-verify")
    assert "reference-transaction refused" in output and "rule 4 [F002]" in output, output


def test_commit_tree_and_update_ref_are_refused(one_project: Path) -> None:
    message = unverified_flip(one_project)
    tree = git_ok(one_project, "write-tree").strip()
    made = git_ok(one_project, "commit-tree", tree, "-p", "HEAD", "-m", message).strip()
    before = head(one_project)
    result = git(one_project, "update-ref", "refs/heads/main", made)
    assert result.returncode != 0 and "rule 4 [F002]" in result.output, result.output
    assert head(one_project) == before


def test_git_replace_cannot_show_the_judges_another_commit(one_project: Path) -> None:
    """`git replace X Y` makes git show Y wherever X is named: the judges ignore replacements."""
    p = one_project
    message = unverified_flip(p)
    flip_tree = git_ok(p, "write-tree").strip()
    made = git_ok(p, "commit-tree", flip_tree, "-p", "HEAD", "-m", message).strip()
    harmless = git_ok(p, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "Tidy up").strip()
    git_ok(p, "replace", made, harmless)
    before = head(p)
    result = git(p, "update-ref", "refs/heads/main", made)
    assert result.returncode != 0 and "rule 4 [F002]" in result.output, result.output
    assert git_ok(p, "rev-parse", "refs/heads/main").strip() == before
    git_ok(p, "-c", f"core.hooksPath={p / 'no-hooks'}", "update-ref", "refs/heads/main", made)
    audit_flags(p, made, 4)


def test_a_shallow_history_is_not_audited_as_if_it_began_at_its_edge(
    one_project: Path, tmp_path: Path
) -> None:
    shallow = tmp_path / "shallow"
    git_ok(tmp_path, "clone", "-q", "--depth", "1", f"file://{one_project}", str(shallow))
    result = shiftkit(shallow, "audit")
    assert result.returncode == 2 and "the history is shallow" in result.stderr, result.output
    assert "Traceback" not in result.output


def test_a_folder_where_the_log_or_ledger_belongs_is_a_clear_error(one_project: Path) -> None:
    for name, command in (("claude-progress.txt", "start"), (LEDGER, "cost")):
        target = one_project / name
        target.unlink(missing_ok=True)
        target.mkdir()
        result = shiftkit(one_project, command, *(["--brief", "--no-check"] * (command == "start")))
        assert result.returncode == 2, result.output
        assert "a folder where a file belongs" in result.stderr, result.output
        target.rmdir()
        git_ok(one_project, "checkout", "--", name)


def test_cherry_pick_of_a_flip_onto_another_tree_is_refused(one_project: Path) -> None:
    git_ok(one_project, "checkout", "-q", "-b", "side")
    finished_sub(one_project)
    git_ok(one_project, "checkout", "-q", "main")
    write(one_project / "notes.txt", "main moved on\n")
    git_ok(one_project, "add", "-A")
    git_ok(one_project, "commit", "-q", "-m", "Notes on main")
    before = head(one_project)
    result = git(one_project, "cherry-pick", "side")
    assert result.returncode != 0 and "rule 4 [F002]" in result.output, result.output
    assert head(one_project) == before


def test_an_honest_rebase_goes_through(one_project: Path) -> None:
    git_ok(one_project, "checkout", "-q", "-b", "topic")
    for name in ("a", "b"):
        write(one_project / f"docs/{name}.md", f"# {name}\n")
        git_ok(one_project, "add", "-A")
        git_ok(one_project, "commit", "-q", "-m", f"Document {name}")
    git_ok(one_project, "checkout", "-q", "main")
    write(one_project / "notes.txt", "main moved on\n")
    git_ok(one_project, "add", "-A")
    git_ok(one_project, "commit", "-q", "-m", "Notes on main")
    git_ok(one_project, "checkout", "-q", "topic")
    result = git(one_project, "rebase", "main")
    assert result.returncode == 0, result.output
    assert git_ok(one_project, "log", "--format=%s", "-3").split("\n")[:3] == [
        "Document b",
        "Document a",
        "Notes on main",
    ]


def test_a_bare_wip_commit_is_refused_even_with_no_verify(one_project: Path) -> None:
    write(one_project / "notes.txt", "x\n")
    git_ok(one_project, "add", "-A")
    assert "rule 9" in refused(one_project, "wip", "--no-verify")


# -- leak 7: forged trailers -------------------------------------------------------------------


def test_forged_trailers_with_a_config_change_are_flagged_by_plain_audit(one_project: Path) -> None:
    message = leak_project_verifier_true(one_project)
    git_ok(one_project, "add", "-A")
    tree = git_ok(one_project, "write-tree").strip()
    commit = land_past_every_hook(
        one_project, f"{message}\n\nShiftkit-Feature: F004\nShiftkit-Verified: {tree}\n"
    )
    audit_flags(one_project, commit, 10)


# -- claims: the flip's claim must be the claim ref's current object ------------------------------


def test_finish_refuses_when_the_claim_ref_was_taken_elsewhere(one_project: Path) -> None:
    ok(one_project, "claim", "F002")
    implement(one_project, "sub")
    assert (
        git(
            one_project, "update-ref", "-d", "refs/shiftkit/claims/F002", env={MARKER: "1"}
        ).returncode
        == 0
    )  # (another actor)
    other = one_project.parent / "other"
    git_ok(one_project, "worktree", "add", "-q", "-b", "other", str(other))
    ok(other, "claim", "F002")
    before = head(one_project)
    finish = shiftkit(one_project, "finish", "-m", "subtract two numbers")
    assert finish.returncode == 1 and "no longer held" in finish.stderr, finish.output
    assert head(one_project) == before
    flip(one_project, "F002")
    git_ok(one_project, "add", "-A")
    assert "rule 6 [F002]" in refused(one_project, "F002: subtract two numbers")


def test_a_broken_claim_is_reported_not_crashed_on(one_project: Path) -> None:
    tree = git_ok(one_project, "rev-parse", "HEAD^{tree}").strip()
    assert (
        git(
            one_project, "update-ref", "refs/shiftkit/claims/F002", tree, env={MARKER: "1"}
        ).returncode
        == 0
    )  # (another actor)
    record = git_ok(one_project, "commit-tree", tree, "-m", '{"feature": 7, "pid": "x"}').strip()
    assert (
        git(
            one_project, "update-ref", "refs/shiftkit/claims/F003", record, env={MARKER: "1"}
        ).returncode
        == 0
    )  # (another actor)
    for args in (["status"], ["claims"], ["start", "--brief", "--no-check"]):
        result = shiftkit(one_project, *args)
        assert result.returncode == 0 and "Traceback" not in result.output, result.output
    for feature_id in ("F002", "F003"):
        result = shiftkit(one_project, "claim", feature_id)
        assert result.returncode == 1 and "planted or foreign claim" in result.stderr, result.output
        assert f"`shiftkit release {feature_id} --steal`" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_finish_on_a_feature_that_already_passes_commits_nothing(one_project: Path) -> None:
    ok(one_project, "claim", "F002")
    implement(one_project, "sub")
    # F002 passes by the time the claim finishes (a merge brought it in, say)
    edit_list(one_project, lambda items: by_id(items, "F002").update(passes=True))
    add_log_entry(one_project, "F002")
    git_ok(one_project, "add", "-A")
    land_past_every_hook(one_project, "F002: subtract two numbers")
    before = head(one_project)
    result = shiftkit(one_project, "finish", "-m", "subtract two numbers")
    assert result.returncode == 1 and "already passes" in result.stderr, result.output
    assert head(one_project) == before
