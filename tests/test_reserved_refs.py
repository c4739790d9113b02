"""shiftkit's own namespaces on the remote — the claims' `ref_prefix` and the usage refs beside
it — are written only by shiftkit's pushes (`--no-verify`): the pre-push hook refuses a push
by hand that writes or deletes a ref there, also when the prefix is under `refs/heads/`."""

from __future__ import annotations

from pathlib import Path

from conftest import git, git_ok, ok
from test_parallel import _machines

PREFIX = "refs/heads/team-claims/"


def _branch_claims(scaffold: Path, tmp_path: Path) -> tuple[Path, Path]:
    bare, (one,) = _machines(scaffold, tmp_path, ("one",))
    config = one / ".shiftkit.toml"
    text = config.read_text()
    config.write_text(
        text.replace('ref_prefix = "refs/shiftkit/claims/"', f'ref_prefix = "{PREFIX}"')
    )
    assert config.read_text() != text
    git_ok(one, "commit", "-q", "-am", "Keep claims on branches, the only refs the host allows")
    git_ok(one, "push", "-q", "origin", "HEAD")
    return bare, one


def _on_remote(bare: Path, prefix: str) -> list[str]:
    return git_ok(bare, "for-each-ref", "--format=%(refname)", prefix).split()


def test_a_branch_named_like_a_claim_is_not_pushed(scaffold: Path, tmp_path: Path) -> None:
    bare, one = _branch_claims(scaffold, tmp_path)
    git_ok(one, "switch", "-q", "-c", "team-claims/F009")
    pushed = git(one, "push", "origin", "HEAD")
    assert pushed.returncode != 0, pushed.output
    said = [line for line in pushed.stderr.splitlines() if line.startswith("shiftkit:")]
    assert len(said) == 1 and "claims namespace" in said[0], pushed.stderr
    assert _on_remote(bare, PREFIX) == []
    git_ok(one, "switch", "-q", "main")
    every = git(one, "push", "--all", "origin")
    assert every.returncode != 0, every.output
    assert _on_remote(bare, PREFIX) == []


def test_claims_and_usage_refs_are_shiftkits_to_push_and_delete(
    scaffold: Path, tmp_path: Path
) -> None:
    bare, one = _branch_claims(scaffold, tmp_path)
    assert "claimed F001" in ok(one, "claim", "F001")  # shiftkit's own push goes
    assert _on_remote(bare, PREFIX) == [f"{PREFIX}F001"]
    deleted = git(one, "push", "origin", f":{PREFIX}F001")
    assert deleted.returncode != 0, deleted.output
    assert "deletes refs/heads/team-claims/F001" in deleted.stderr
    assert _on_remote(bare, PREFIX) == [f"{PREFIX}F001"]
    usage = "refs/heads/team-usage/"
    planted = git(one, "push", "origin", f"HEAD:{usage}someone")
    assert planted.returncode != 0, planted.output
    assert "usage refs namespace" in planted.stderr
    assert _on_remote(bare, usage) == []
    assert "released F001" in ok(one, "release")
    assert _on_remote(bare, PREFIX) == []


def test_a_claim_is_not_deleted_by_hand_under_the_default_prefix(
    scaffold: Path, tmp_path: Path
) -> None:
    bare, (one,) = _machines(scaffold, tmp_path, ("one",))
    ok(one, "claim", "F001")
    default = "refs/shiftkit/claims/"
    deleted = git(one, "push", "origin", f":{default}F001")
    assert deleted.returncode != 0, deleted.output
    assert "deletes refs/shiftkit/claims/F001" in deleted.stderr
    assert _on_remote(bare, default) == [f"{default}F001"]
