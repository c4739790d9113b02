"""A person's way out of a rule-breaking commit on the shared branch (issue 26; decision
record 0082).

A commit forced past every hook (here: made and pushed with the hooks off, as from a
machine without shiftkit) lands on the remote's branch; every clone's `sync` and `claim`
refuse it, naming `shiftkit accept`. A person runs it: the accepted commit's violations are
reported as accepted by every judge, what it left untrue is demoted in the acceptance, and
the team goes on. An agent cannot run it, and a trailer an agent forges is not honoured.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import git, git_ok, ok, shiftkit, write
from test_parallel import _machines
from test_trust import make_key, signing_env
from test_trust_invariants import no_hooks
from test_verdicts import _forge_flip

from shiftkit.core import acceptance, features

REASON = "forced by a teammate by mistake; we keep the work, demoted"


def _head(p: Path) -> str:
    return git_ok(p, "rev-parse", "HEAD").strip()


def _never_works(scaffold: Path) -> None:
    ok(scaffold, "add", "--description", "never works", "--step", "s", "--verify", "false")


def _feature(clone: Path, description: str) -> str:
    listed = json.loads((clone / "features.json").read_text())["features"]
    return str(next(item["id"] for item in listed if item["description"] == description))


def _passes_at(repo: Path, rev: str, feature_id: str) -> bool:
    listed = json.loads(git_ok(repo, "show", f"{rev}:features.json"))["features"]
    return bool(next(item for item in listed if item["id"] == feature_id)["passes"])


def _forced(one: Path, feature_id: str) -> str:
    """A flip of ``feature_id`` (its verifier fails) pushed to the remote past every hook."""
    forged = _forge_flip(one, feature_id, f"{feature_id}: it works now")
    pushed = git(one, "push", "--no-verify", "-q", "origin", "main")
    assert pushed.returncode == 0, pushed.output
    return forged


def test_a_forced_flip_is_accepted_by_a_person_and_the_team_goes_on(
    scaffold: Path, tmp_path: Path
) -> None:
    _never_works(scaffold)
    bare, (one, two, three, four) = _machines(scaffold, tmp_path, ("one", "two", "three", "four"))
    never = _feature(one, "never works")
    forged = _forced(one, never)

    refused = shiftkit(two, "sync")
    assert refused.returncode == 1, refused.output
    assert f"shiftkit accept {forged} --reason" in refused.stderr, refused.stderr
    assert "break the rules here" in refused.stderr

    # Meanwhile two goes on with work of its own: it will have diverged from the remote.
    write(two / "notes.txt", "a plain change\n")
    git_ok(two, "add", "notes.txt")
    git_ok(two, "commit", "-q", "-m", "Add notes")

    # The person runs it in a third clone (behind the remote, as every clone is).
    accepted = shiftkit(three, "accept", forged, "--reason", REASON)
    assert accepted.returncode == 0, accepted.output
    assert f"re-verifying {never}" in accepted.stderr, accepted.output
    assert f"demoted {never}" in accepted.stdout and "pushed to origin/main" in accepted.stdout
    accepting = git_ok(bare, "rev-parse", "main").strip()
    assert git_ok(bare, "rev-parse", f"{accepting}^").strip() == forged
    assert f"Shiftkit-Accept: {forged} {REASON}" in git_ok(
        bare, "log", "-1", "--format=%B", accepting
    )
    assert _passes_at(bare, forged, never) and not _passes_at(bare, accepting, never)
    changed = git_ok(bare, "diff-tree", "-r", "--name-only", "--no-commit-id", accepting).split()
    assert sorted(changed) == ["claude-progress.txt", "features.json"]

    # Every clone goes on: two merges (diverged), three claims (catching up first).
    synced = shiftkit(two, "sync")
    assert synced.returncode == 0 and "merged and pushed" in synced.stdout, synced.output
    assert git(two, "merge-base", "--is-ancestor", accepting, "HEAD").returncode == 0
    claimed = shiftkit(three, "claim")
    assert claimed.returncode == 0 and "caught up first" in claimed.stdout, claimed.output
    ok(three, "release")
    claimed = shiftkit(two, "claim")
    assert claimed.returncode == 0, claimed.output
    ok(two, "release")
    tip = git_ok(bare, "rev-parse", "main").strip()  # (two's merge)
    # The clone that forced it goes on too, once it syncs; a plain `git pull` meets the
    # reference-transaction hook, which honours the acceptance as well.
    assert shiftkit(one, "sync").returncode == 0
    pulled = git(four, "pull", "-q", "--ff-only", "origin", "main")
    assert pulled.returncode == 0 and _head(four) == tip, pulled.output

    fresh = tmp_path / "fresh"
    git_ok(tmp_path, "clone", "-q", str(bare), str(fresh))
    audited = shiftkit(fresh, "audit", "--reverify")
    assert audited.returncode == 0, audited.output
    line = next(line for line in audited.stdout.splitlines() if line.startswith(f"  {forged[:7]}"))
    by = f"accepted by Shift Tester <tester@shiftkit.invalid> in {accepting[:7]}: {REASON}"
    assert by in line
    assert f"acceptance of {forged[:7]}: {REASON}" in audited.stdout  # a person action
    assert "0 with violations" in audited.stdout and "1 accepted" in audited.stdout
    machine = json.loads(shiftkit(fresh, "audit", "--reverify", "--json").stdout)
    assert machine["violations"] == [] and {a["commit"] for a in machine["accepted"]} == {forged}
    # --strict asks a person to look at every person action, the acceptance among them;
    # it refuses on no accepted violation.
    strict = shiftkit(fresh, "audit", "--reverify", "--strict")
    assert "0 with violations" in strict.stdout and "accepted by" in strict.stdout, strict.output
    assert strict.returncode == 1 and "person actions" in strict.stderr
    people = shiftkit(fresh, "audit", "--people")
    assert people.returncode == 0 and f"acceptance of {forged[:7]}" in people.stdout
    # The list is true at the new tip: every feature marked passing passes there.
    checked = shiftkit(fresh, "check", "--no-demote")
    assert checked.returncode == 0, checked.output


def test_a_protected_file_forced_in_is_accepted_with_nothing_to_demote(
    scaffold: Path, tmp_path: Path
) -> None:
    bare, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    hook = one / ".shiftkit" / "hook"
    hook.write_text(hook.read_text() + "# edited past every hook\n")
    git_ok(one, "add", "-A")
    git_ok(one, *no_hooks(one), "commit", "-q", "-m", "Edit the hook script")
    forced = _head(one)
    git_ok(one, "push", "--no-verify", "-q", "origin", "main")
    refused = shiftkit(two, "sync")
    assert refused.returncode == 1 and "rule 14" in refused.stderr, refused.output
    assert f"shiftkit accept {forced}" in refused.stderr

    accepted = shiftkit(two, "accept", forced, "--reason", "the hook edit is ours")
    assert accepted.returncode == 0, accepted.output
    assert "nothing to demote" in accepted.stdout, accepted.stdout
    tip = git_ok(bare, "rev-parse", "main").strip()
    assert git_ok(bare, "diff-tree", "-r", "--name-only", "--no-commit-id", tip).strip() == ""
    assert shiftkit(two, "sync").returncode == 0 and _head(two) == tip
    assert shiftkit(two, "claim").returncode == 0
    # A second acceptance of the same commit is refused: it is accepted already.
    again = shiftkit(two, "accept", forced, "--reason", "again")
    assert again.returncode == 1 and "accepted already" in again.stderr, again.output


def test_accepting_a_commit_that_breaks_nothing_changes_nothing(
    scaffold: Path, tmp_path: Path
) -> None:
    bare, (one,) = _machines(scaffold, tmp_path, ("one",))
    before = git_ok(bare, "rev-parse", "main").strip()
    said = shiftkit(one, "accept", "HEAD", "--reason", "why not")
    assert said.returncode == 1 and "breaks no rule here" in said.stderr, said.output
    bad = shiftkit(one, "accept", "HEAD", "--reason", "two\nlines")
    assert bad.returncode == 2 and "--reason" in bad.stderr, bad.output
    missing = shiftkit(one, "accept", "no-such-rev", "--reason", "x")
    assert missing.returncode == 2 and "'no-such-rev'" in missing.stderr, missing.output
    assert git_ok(bare, "rev-parse", "main").strip() == before


def test_a_trailer_forged_in_an_ordinary_commit_is_not_honoured(
    scaffold: Path, tmp_path: Path
) -> None:
    _never_works(scaffold)
    _, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    never = _feature(one, "never works")
    forged = _forced(one, never)
    write(one / "more.txt", "more work\n")
    git_ok(one, "add", "more.txt")
    message = f"Add more work\n\nShiftkit-Accept: {forged} it is fine, trust me"
    git_ok(one, *no_hooks(one), "commit", "-q", "-m", message)
    git_ok(one, "push", "--no-verify", "-q", "origin", "main")
    before = _head(two)
    refused = shiftkit(two, "sync")
    assert refused.returncode == 1, refused.output
    assert "brings 2 commits" in refused.stderr and _head(two) == before, refused.stderr
    audited = shiftkit(two, "audit", "--reverify", "origin/main")
    assert audited.returncode == 1, audited.output
    assert "rule 11" in audited.stdout and "an acceptance alone" in audited.stdout
    assert f"{forged[:7]} '{never}: it works now': rule 4" in audited.stdout
    assert "accepted by" not in audited.stdout
    # A `git pull` meets the reference-transaction hook, which does not honour it either.
    pulled = git(two, "pull", "-q", "--ff-only", "origin", "main")
    assert pulled.returncode != 0 and "an acceptance alone" in pulled.output, pulled.output
    assert _head(two) == before


def _signed_machines(scaffold: Path, tmp_path: Path) -> tuple[Path, list[Path], Path]:
    """Two clones of a project a person put under the signed policy, and the person's key."""
    keys = tmp_path / "keys"
    keys.mkdir()
    person = make_key(keys, "person")
    _never_works(scaffold)
    bare, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    write(
        one / ".shiftkit" / "allowed_signers",
        f"person@shiftkit.invalid {(keys / 'person.pub').read_text()}",
    )
    config = one / ".shiftkit.toml"
    config.write_text(config.read_text().replace('policy = "trailer"', 'policy = "signed"'))
    assert 'policy = "signed"' in config.read_text()
    git_ok(one, "add", "-A")
    git_ok(one, "commit", "-q", "-m", "Person actions need a signature from now on")
    git_ok(one, "push", "-q", "origin", "main")
    assert shiftkit(two, "sync").returncode == 0
    return bare, [one, two], person


def test_under_signed_an_unsigned_acceptance_is_refused(scaffold: Path, tmp_path: Path) -> None:
    bare, (one, two), person = _signed_machines(scaffold, tmp_path)
    never = _feature(one, "never works")
    forged = _forced(one, never)
    # shiftkit accept refuses without a signing key, changing nothing.
    unsigned = shiftkit(two, "accept", forged, "--reason", REASON)
    assert unsigned.returncode == 1 and "signing key" in unsigned.stderr, unsigned.output
    assert git_ok(bare, "rev-parse", "main").strip() == forged
    # An acceptance made by hand, unsigned, is not honoured.
    tree = git_ok(one, "rev-parse", "HEAD^{tree}").strip()
    message = f"Accept it\n\nShiftkit-Accept: {forged} {REASON}\n"
    made = subprocess.run(
        ["git", "commit-tree", tree, "-p", forged, "-m", message],
        cwd=one,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    git_ok(one, "push", "--no-verify", "-q", "origin", f"{made}:refs/heads/main")
    refused = shiftkit(two, "sync")
    assert refused.returncode == 1 and "brings 2 commits" in refused.stderr, refused.output
    audited = shiftkit(two, "audit", "--reverify", "origin/main")
    assert audited.returncode == 1 and "accepted by" not in audited.stdout, audited.output
    assert f"{made[:7]} 'Accept it': rule 11" in audited.stdout and "not signed" in audited.stdout
    # Signed by the person's key, it is.
    signed = shiftkit(two, "accept", forged, made, "--reason", REASON, env=signing_env(person))
    assert signed.returncode == 0 and "(signed)" in signed.stdout, signed.output
    synced = shiftkit(two, "sync")
    assert synced.returncode == 0, synced.output
    assert not _passes_at(two, "HEAD", never)
    assert shiftkit(two, "claim").returncode == 0


# -- the rule itself, over a change (pure) ---------------------------------------------------


def _feature_item(feature_id: str, passes: bool) -> features.Feature:
    return features.Feature(feature_id, "functional", "d", ("s",), "true", passes=passes)


def test_an_acceptance_reads_a_full_id_and_a_reason() -> None:
    oid = "a" * 40
    message = f"Accept it\n\nShiftkit-Accept: {oid} the reason\nShiftkit-Accept: abc1234 short"
    found, malformed = acceptance.read(message)
    assert found == [acceptance.Acceptance(oid, "the reason")] and malformed == ["abc1234 short"]
    assert acceptance.read("Plain commit\n\nSome body") == ([], [])


def test_an_acceptance_is_a_commit_of_demotions_alone() -> None:
    own = ("features.json", "claude-progress.txt")
    passing, demoted = _feature_item("F001", True), _feature_item("F001", False)
    rows = (("M", "features.json"), ("M", "claude-progress.txt"))
    assert acceptance.violations([], 1, rows, own, [(passing, demoted)], []) == []
    assert acceptance.violations([], 1, (), own, [], []) == []  # nothing to demote
    cases = {
        "a merge": acceptance.violations([], 2, rows, own, [], []),
        "other work": acceptance.violations([], 1, (("A", "src/x.py"),), own, [], []),
        "a flip": acceptance.violations([], 1, rows, own, [(demoted, passing)], []),
        "an added feature": acceptance.violations([], 1, rows, own, [], ["F009"]),
        "a bad value": acceptance.violations(["abc x"], 1, rows, own, [], []),
    }
    for what, problems in cases.items():
        assert problems and all(v.rule == 11 for v in problems), what
    assert "src/x.py" in cases["other work"][0].message
