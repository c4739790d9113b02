"""Reading git's answers, and a claim's liveness: pure functions on text."""

from __future__ import annotations

import pytest

from shiftkit.core import gitmsg
from shiftkit.core.claim import ClaimRecord, stale_reason
from shiftkit.core.config import parse
from shiftkit.core.errors import BadInput

REF = "refs/shiftkit/claims/F001"


@pytest.mark.parametrize(
    ("line", "code", "outcome"),
    [
        (f"*\tabc:{REF}\t[new reference]", 0, gitmsg.PUSHED),
        (f"-\t:{REF}\t[deleted]", 0, gitmsg.PUSHED),
        (f"!\tabc:{REF}\t[rejected] (stale info)", 1, gitmsg.LEASE),
        (f"!\tabc:{REF}\t[remote rejected] (failed to update ref)", 1, gitmsg.LEASE),
        (f"!\tabc:{REF}\t[remote rejected] (cannot lock ref '{REF}')", 1, gitmsg.LEASE),
        (f"!\tabc:{REF}\t[remote rejected] (hook declined)", 1, gitmsg.POLICY),
        (f"!\tabc:{REF}\t[remote rejected] (pre-receive hook declined)", 1, gitmsg.POLICY),
        ("", 128, gitmsg.UNKNOWN),  # the connection died before the answer
        (f"*\tabc:{REF}x\t[new reference]", 1, gitmsg.UNKNOWN),  # another ref's line
    ],
)
def test_a_push_result_is_read_for_its_ref(line: str, code: int, outcome: str) -> None:
    stdout = f"To git://127.0.0.1/remote.git\n{line}\nDone\n" if line else ""
    assert gitmsg.push_result(stdout, REF, code).outcome == outcome


def test_the_detail_shown_is_the_first_meaningful_line_never_a_hint() -> None:
    stderr = (
        "hint: Updates were rejected because the tip of your current branch is behind\n"
        "remote: only branches and tags may be pushed here\n"
        "remote: error: hook declined to update refs/shiftkit/claims/F001\n"
        "error: failed to push some refs to 'git://127.0.0.1/remote.git'\n"
    )
    assert gitmsg.detail(stderr) == "remote: only branches and tags may be pushed here"
    assert gitmsg.remote_says(stderr) == "only branches and tags may be pushed here"
    assert gitmsg.detail("hint: try again\n") == "no answer"
    assert gitmsg.detail("fatal: unable to connect to 127.0.0.1\nhint: x\n").startswith("fatal:")


def _record(taken: str, heartbeat: str = "") -> ClaimRecord:
    return ClaimRecord(feature="F001", taken=taken, heartbeat=heartbeat)


def test_a_claim_is_stale_only_after_ttl_without_a_heartbeat() -> None:
    now = "2026-12-01T18:00:00Z"
    assert stale_reason(_record("2026-12-01T10:00:00Z"), "", now, 8) is None  # exactly 8h
    assert stale_reason(_record("2026-12-01T09:59:00Z"), "", now, 8) is not None
    # A heartbeat from the ref or seen in this clone keeps it alive.
    assert stale_reason(_record("2026-12-01T01:00:00Z", "2026-12-01T17:00:00Z"), "", now, 8) is None
    assert stale_reason(_record("2026-12-01T01:00:00Z"), "2026-12-01T17:59:00Z", now, 8) is None
    assert stale_reason(_record("?"), "", now, 8) is None  # no time to judge by: never stale


def test_a_claim_is_held_by_clone_and_worktree_not_by_path_alone() -> None:
    record = ClaimRecord(feature="F001", worktree="/w", clone="c1")
    assert record.is_held_by("c1", "/w")
    assert not record.is_held_by("c2", "/w") and not record.is_held_by("c1", "/v")
    assert not ClaimRecord(feature="F001", worktree="/w").is_held_by("", "/w")


@pytest.mark.parametrize(
    "prefix", ["refs/heads/shiftkit-claims/", "refs/shiftkit/claims/", "refs/x/"]
)
def test_a_ref_prefix_is_a_namespace(prefix: str) -> None:
    config = parse(f'[shiftkit.claims]\nref_prefix = "{prefix}"\n')
    assert config.claims.ref_prefix == prefix


@pytest.mark.parametrize(
    "prefix", ["refs/heads/shiftkit-claims", "heads/x/", "refs/a b/", "refs/../x/", "refs/*/"]
)
def test_a_ref_prefix_that_is_not_a_namespace_is_refused(prefix: str) -> None:
    with pytest.raises(BadInput, match="ref_prefix"):
        parse(f'[shiftkit.claims]\nref_prefix = "{prefix}"\n')


def test_a_push_that_never_connected_is_told_apart_from_a_broken_one() -> None:
    assert gitmsg.never_connected(
        "fatal: '/tmp/gone.git' does not appear to be a git repository\n"
        "fatal: Could not read from remote repository.\n"
    )
    assert gitmsg.never_connected("fatal: unable to connect to 127.0.0.1:\nConnection refused\n")
    assert not gitmsg.never_connected("fatal: the remote end hung up unexpectedly\n")
    assert not gitmsg.never_connected("")


def test_a_failed_merge_is_told_by_gits_conflict_lines() -> None:
    output = (
        "Auto-merging .shiftkit/ledger.jsonl\n"
        "Auto-merging budget/cli.py\n"
        "CONFLICT (content): Merge conflict in budget/cli.py\n"
        "Automatic merge failed; fix conflicts and then commit the result.\n"
    )
    assert gitmsg.merge_failure(output) == "CONFLICT (content): Merge conflict in budget/cli.py"
    many = "".join(f"CONFLICT (content): Merge conflict in f{i}.py\n" for i in range(5))
    assert gitmsg.merge_failure(many).endswith("f2.py; and 2 more")
    refused = "Auto-merging a.py\nshiftkit: commit refused by rule 4: F001 ...\n"
    assert gitmsg.merge_failure(refused) == "commit refused by rule 4: F001 ..."
    assert gitmsg.merge_failure("Auto-merging a.py\nerror: boom\n") == "error: boom"


def test_a_quoted_hook_line_keeps_no_prefix_of_its_own() -> None:
    stderr = (
        "shiftkit: push refused: F001 fails at 1234567 (exit 1)\n"
        "error: failed to push some refs to '/tmp/remote.git'\n"
    )
    assert gitmsg.detail(stderr) == "push refused: F001 fails at 1234567 (exit 1)"
