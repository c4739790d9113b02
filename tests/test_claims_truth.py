"""Claims you can believe (issue 20): the harness's session, liveness by heartbeat, a sync
that catches up, and every remote outcome told as it is — against a bare remote on disk and
real servers on 127.0.0.1: `git daemon`, and `git http-backend` behind lighttpd."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import needs
import pytest
import servers
from conftest import git_ok, ok, shiftkit
from test_parallel import _machines, _race, _server_claims, _work

ZERO = "0" * 40


def _bash(place: Path, command: str, session_id: str) -> subprocess.CompletedProcess[str]:
    """One Bash tool call as Claude Code makes it: a fresh shell that exits at once."""
    return subprocess.run(
        ["bash", "-c", command],
        cwd=place,
        capture_output=True,
        text=True,
        env=dict(os.environ),  # (PATH: conftest's, the interpreter's bin first)
        timeout=300,
    )


def _session_start(place: Path, session_id: str) -> None:
    hook = json.dumps({"session_id": session_id, "source": "startup"})
    done = _bash(place, f"echo '{hook}' | shiftkit start --brief --hook-input", session_id)
    assert done.returncode == 0, done.stdout + done.stderr


def test_fresh_shells_keep_a_live_claim_alive(scaffold: Path, tmp_path: Path) -> None:
    for name in ("one", "two"):
        ok(scaffold, "add", "--description", f"part {name}", "--step", "s", "--verify", "true")
    git_ok(scaffold, "commit", "-q", "-am", "Add two features")
    trees = []
    for i in range(2):
        tree = tmp_path / f"wt{i}"
        git_ok(scaffold, "worktree", "add", "-q", "-b", f"agent-{i}", str(tree))
        trees.append(tree)
    holder, other = trees
    _session_start(holder, "cc-session-holder")
    _session_start(other, "cc-session-other")
    claimed = _bash(holder, "shiftkit claim F001", "cc-session-holder")
    assert claimed.returncode == 0, claimed.stderr
    for _ in range(2):  # every call a new shell: the claiming shell is long gone
        listed = _bash(other, "shiftkit claims", "cc-session-other")
        assert "F001  session cc-session-holder" in listed.stdout, listed.stdout
        assert "STALE" not in listed.stdout and "last heartbeat 20" in listed.stdout
        time.sleep(1)
    stolen = _bash(other, "shiftkit claim F001 --steal", "cc-session-other")
    assert stolen.returncode == 3, stolen.stdout + stolen.stderr
    assert "--force" in stolen.stderr
    used = _bash(holder, "shiftkit usage add --input 100 --output 10", "cc-session-holder")
    assert used.returncode == 0, used.stderr
    (holder / "part.txt").write_text("done\n")
    git_ok(holder, "add", "part.txt")
    finished = _bash(holder, "shiftkit finish -m 'part one works'", "cc-session-holder")
    assert finished.returncode == 0, finished.stdout + finished.stderr
    # The ledger's unit names the harness's session, as its usage rows do.
    units = [
        json.loads(line)
        for line in (holder / ".shiftkit" / "ledger.jsonl").read_text().splitlines()
        if '"unit"' in line
    ]
    assert [u["session"] for u in units] == ["cc-session-holder"]
    report = json.loads(ok(holder, "cost", "--by", "session", "--json"))
    assert list(report["by_session"]) == ["cc-session-holder"]  # one session, one row


def test_same_path_on_another_clone_is_someone_else(scaffold: Path, tmp_path: Path) -> None:
    bare, (one,) = _machines(scaffold, tmp_path, ("one",))
    assert shiftkit(one, "claim", "F001").returncode == 0
    # Another machine, the same path: move this clone away, clone afresh where it was.
    moved = one.rename(tmp_path / "one-elsewhere")
    git_ok(tmp_path, "clone", "-q", str(bare), str(one))
    ok(one, "install-hooks", "--force")
    ok(one, "setup")  # a clone gets its random id at setup
    ids = [(place / ".git" / "shiftkit" / "clone-id").read_text() for place in (moved, one)]
    assert ids[0] != ids[1] and all(len(i.strip()) == 12 for i in ids)
    second = shiftkit(one, "claim", "F001")
    assert second.returncode == 3, second.output
    assert "clone " in second.stderr
    assert not (one / ".git" / "shiftkit" / "claim.json").exists()


def test_a_behind_clone_catches_up(scaffold: Path, tmp_path: Path) -> None:
    bare, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    ok(one, "claim", "F001")
    _work(one, "one")
    git_ok(one, "add", "one.txt")
    ok(one, "finish", "-m", "part one works")
    assert "behind origin/main" in ok(two, "start", "--no-check")
    # A claim on a clone that is behind catches up first (issue 29): it stands on what the
    # remote has, and F001, passing there, is nobody's to do again.
    refused = shiftkit(two, "claim", "F001")
    assert refused.returncode == 1, refused.output
    assert "caught up first: fast-forwarded main to origin/main" in refused.stdout
    assert "F001 already passes" in refused.stderr
    assert _server_claims(bare) == {}
    assert not (two / ".git" / "shiftkit" / "claim.json").exists()
    assert git_ok(two, "rev-parse", "HEAD") == git_ok(bare, "rev-parse", "main")
    assert "already up to date" in ok(two, "sync")
    assert "behind origin" not in ok(two, "start", "--no-check")
    assert _server_claims(bare) == {}


def test_a_claim_on_a_behind_clone_stands_on_the_remote_branch(
    scaffold: Path, tmp_path: Path
) -> None:
    bare, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    ok(one, "claim", "F001")
    _work(one, "one")
    git_ok(one, "add", "one.txt")
    ok(one, "finish", "-m", "part one works")
    brief = ok(two, "start", "--no-check")
    assert "next: F000" in brief and "catches up first" in brief
    claimed = ok(two, "claim")
    assert "claimed F000" in claimed and "caught up first" in claimed
    record = json.loads((two / ".git" / "shiftkit" / "claim.json").read_text())
    base = record["base"]
    assert base == git_ok(bare, "rev-parse", "main").strip()  # never behind the remote


def _connections(place: Path, *args: str) -> tuple[str, list[str]]:
    """Run a shiftkit command; (its output, the server programs git started for it: one
    per connection to the local-path remote)."""
    trace = place.parent / f"trace-{place.name}.log"
    trace.unlink(missing_ok=True)
    done = shiftkit(place, *args, env={"GIT_TRACE": str(trace)})
    assert done.returncode == 0, done.output
    lines = trace.read_text().splitlines() if trace.exists() else []
    started = [
        word
        for line in lines
        if "run_command:" in line
        for word in ("git-upload-pack", "git-receive-pack")
        if word in line
    ]
    return done.stdout, started


def test_a_claim_is_one_round_trip_unless_the_branch_moved(scaffold: Path, tmp_path: Path) -> None:
    bare, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    ok(one, "start")
    said, started = _connections(one, "claim", "F001")
    assert "claimed F001" in said
    assert started == ["git-receive-pack"]  # the lease push alone: no fetch of the branch
    assert git_ok(one, "rev-parse", "origin/main") == git_ok(bare, "rev-parse", "main")
    said, started = _connections(one, "release")
    assert "released F001" in said and started == ["git-receive-pack"]
    # The branch moves on the remote (another machine finishes F000): the claim push sees it
    # moved, lets the claim go (its base would be behind), catches up and claims again
    # (issue 29: a claim's base is never behind the remote's branch).
    ok(two, "claim", "F000")
    _work(two, "two")
    git_ok(two, "add", "two.txt")
    ok(two, "finish", "-m", "part zero works")
    said, started = _connections(one, "claim", "F001")
    assert "claimed F001" in said and "moved while claiming F001: let go" in said
    assert "caught up first: fast-forwarded main to origin/main" in said
    pushed, fetched = "git-receive-pack", "git-upload-pack"
    assert started == [pushed, fetched, pushed, pushed]  # claim, look, let go, claim
    assert list(_server_claims(bare)) == ["F001"]
    assert git_ok(one, "rev-parse", "HEAD") == git_ok(bare, "rev-parse", "main")
    ok(one, "release")
    # Id-less: one fetch brings the claims and the branch, the push checks it did not move;
    # the feature done on the remote is not chosen.
    said, started = _connections(one, "claim")
    assert "claimed F001" in said
    assert started == ["git-upload-pack", "git-receive-pack"]
    assert list(_server_claims(bare)) == ["F001"]


MOVE_AFTER = """#!/bin/sh
git-upload-pack "$@"
answered=$?
if [ -e "{flag}" ]; then
  rm -f "{flag}"
  git --git-dir="{bare}" update-ref refs/heads/main {moved}
fi
exit $answered
"""


def test_an_idless_claim_lets_go_of_a_choice_done_meanwhile(scaffold: Path, tmp_path: Path) -> None:
    bare, (one, other) = _machines(scaffold, tmp_path, ("one", "other"))
    ok(one, "start")
    before = git_ok(bare, "rev-parse", "main").strip()
    ok(other, "claim", "F000")
    _work(other, "other")
    git_ok(other, "add", "other.txt")
    ok(other, "finish", "-m", "part zero works")
    moved = git_ok(bare, "rev-parse", "main").strip()
    git_ok(bare, "update-ref", "refs/heads/main", before)  # (F000 lands again below)
    # The remote's branch moves just after this clone's look (its fetch of the claims and
    # the branch) and before its claim push: F000, its first choice, passes there by then.
    flag = tmp_path / "move-once"
    flag.write_text("")
    program = tmp_path / "upload-pack-then-move"
    program.write_text(MOVE_AFTER.format(flag=flag, bare=bare, moved=moved))
    program.chmod(0o755)
    git_ok(one, "config", "remote.origin.uploadpack", str(program))
    claimed = shiftkit(one, "claim")
    assert claimed.returncode == 0, claimed.output
    assert not flag.exists()
    # (issue 29: let go, caught up, claimed again on the remote's branch)
    assert "claimed F001" in claimed.stdout and "moved while claiming F000" in claimed.stdout
    assert "caught up first" in claimed.stdout
    assert list(_server_claims(bare)) == ["F001"]  # F000 was let go again
    assert git_ok(one, "rev-parse", "HEAD") == git_ok(bare, "rev-parse", "main")


# -- real servers ---------------------------------------------------------------------------------


@pytest.fixture(params=servers.TRANSPORTS)
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[servers.Server]:
    """`git daemon` and `git http-backend` behind lighttpd, each started here on 127.0.0.1
    and always stopped."""
    if request.param == "http" and (missing := servers.http_missing()) is not None:
        needs.missing(missing)
    served = servers.server(request.param, tmp_path)
    served.start()
    try:
        yield served
    finally:
        served.stop()


def _over(
    scaffold: Path, tmp_path: Path, served: servers.Server, names: tuple[str, ...]
) -> tuple[Path, list[Path]]:
    bare, machines = _machines(scaffold, tmp_path, names)
    served.serve(bare)
    for machine in machines:
        git_ok(machine, "remote", "set-url", "origin", served.url("remote.git"))
    return bare, machines


RACE_ROUNDS = 5


def test_two_clones_claiming_at_once_make_one_holder(
    scaffold: Path, tmp_path: Path, server: servers.Server
) -> None:
    bare, machines = _over(scaffold, tmp_path, server, ("one", "two"))
    for round_ in range(RACE_ROUNDS):
        results = _race(machines, "claim", "F001")
        winners = [i for i, (code, _) in enumerate(results) if code == 0]
        assert len(winners) == 1, (round_, results)
        loser = 1 - winners[0]
        assert results[loser][0] == 3, (round_, results)
        assert f"session racer-{winners[0]}" in results[loser][1], (round_, results)
        assert list(_server_claims(bare)) == ["F001"]
        ok(machines[winners[0]], "release")
        assert _server_claims(bare) == {}


def test_a_claim_push_sees_the_branch_move_over_a_server(
    scaffold: Path, tmp_path: Path, server: servers.Server
) -> None:
    bare, (one, two) = _over(scaffold, tmp_path, server, ("one", "two"))
    ok(two, "start")
    ok(one, "claim", "F001")
    _work(one, "one")
    git_ok(one, "add", "one.txt")
    ok(one, "finish", "-m", "part one works")
    refused = shiftkit(two, "claim", "F001")  # moved: let go, caught up, passes: refused
    assert refused.returncode == 1, refused.output
    assert "caught up first" in refused.stdout and "F001 already passes" in refused.stderr
    assert _server_claims(bare) == {}
    claimed = shiftkit(two, "claim", "F002")  # (caught up: the push finds it current)
    assert claimed.returncode == 0, claimed.output
    assert "claimed F002" in claimed.stdout and "moved while" not in claimed.stdout
    assert list(_server_claims(bare)) == ["F002"]
    assert git_ok(two, "rev-parse", "HEAD") == git_ok(bare, "rev-parse", "main")


def _hook(bare: Path, name: str, body: str) -> Path:
    path = bare / "hooks" / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


REFUSE = """
echo "$ref" >> "{log}"
case "$ref" in refs/heads/*|refs/tags/*) ;; *)
  echo "only branches and tags may be pushed here (host policy)" >&2; exit 1 ;;
esac
"""
POLICY = {  # a host's rule as an update hook (one ref) and as a pre-receive hook (the push)
    "update": 'ref="$1"\n' + REFUSE + "exit 0\n",
    "pre-receive": "while read -r old new ref; do\n" + REFUSE + "done\nexit 0\n",
}


@pytest.mark.parametrize("hook", list(POLICY))
def test_a_host_policy_is_quoted_not_reported_as_a_race(
    scaffold: Path, tmp_path: Path, server: servers.Server, hook: str
) -> None:
    bare, (one,) = _over(scaffold, tmp_path, server, ("one",))
    log = tmp_path / "updates.log"
    _hook(bare, hook, POLICY[hook].format(log=log))
    for args in (("claim", "F001"), ("claim",)):
        refused = shiftkit(one, *args)
        assert refused.returncode == 1, refused.output
        assert "remote: only branches and tags may be pushed here" in refused.stderr
        assert "ref_prefix" in refused.stderr and "git update-ref -d" not in refused.stderr
    tried = log.read_text().splitlines()  # (the id-less claim's first choice is F000)
    assert tried == ["refs/shiftkit/claims/F001", "refs/shiftkit/claims/F000"]  # no retries
    assert not (one / ".git" / "shiftkit" / "claim.json").exists()
    config = one / ".shiftkit.toml"
    text = config.read_text()
    config.write_text(
        text.replace(
            'ref_prefix = "refs/shiftkit/claims/"', 'ref_prefix = "refs/heads/shiftkit-claims/"'
        )
    )
    assert config.read_text() != text
    git_ok(one, "commit", "-q", "-am", "Keep claims where the host allows refs")
    assert "claimed F001" in ok(one, "claim", "F001")
    held = git_ok(bare, "for-each-ref", "--format=%(refname)", "refs/heads/shiftkit-claims/")
    assert held.split() == ["refs/heads/shiftkit-claims/F001"]
    assert "F001" in ok(one, "claims")


def test_a_release_the_server_refuses_is_not_reported_done(
    scaffold: Path, tmp_path: Path, server: servers.Server
) -> None:
    bare, (one,) = _over(scaffold, tmp_path, server, ("one",))
    ok(one, "claim", "F001")
    _hook(
        bare, "update", f'[ "$3" = {ZERO} ] || exit 0\necho "deleting is not allowed" >&2\nexit 1\n'
    )
    refused = shiftkit(one, "release")
    assert refused.returncode == 1, refused.output
    assert "remote: deleting is not allowed" in refused.stderr
    assert "released" not in refused.stdout
    assert "F001" in ok(one, "claims") and set(_server_claims(bare)) == {"F001"}
    assert (one / ".git" / "shiftkit" / "claim.json").exists()
    (bare / "hooks" / "update").unlink()
    assert "released F001" in ok(one, "release")
    assert _server_claims(bare) == {}


def test_a_stolen_claim_leaves_no_ghost(
    scaffold: Path, tmp_path: Path, server: servers.Server
) -> None:
    bare, (one, two) = _over(scaffold, tmp_path, server, ("one", "two"))
    env_one = {"SHIFTKIT_SESSION": "session-one"}
    env_two = {"SHIFTKIT_SESSION": "session-two"}
    assert shiftkit(one, "claim", "F001", env=env_one).returncode == 0
    assert shiftkit(two, "claim", "F001", "--steal", "--force", env=env_two).returncode == 0
    released = shiftkit(one, "release", env=env_one)
    assert released.returncode == 0, released.output
    assert "was lost" in released.stdout and "session-two" in released.stdout
    assert git_ok(one, "for-each-ref", "refs/shiftkit/claims/") == ""
    again = shiftkit(one, "claim", "F001", env=env_one)
    assert again.returncode == 3, again.output
    rows = json.loads(ok(one, "claims", "--json"))
    assert [(r["id"], r["session"], r["where"]) for r in rows] == [
        ("F001", "session-two", "remote")
    ]
    # A finish of a claim taken over elsewhere commits nothing and drops the ghost.
    assert shiftkit(one, "claim", "F002", env=env_one).returncode == 0
    assert shiftkit(two, "release", env=env_two).returncode == 0
    assert shiftkit(two, "claim", "F002", "--steal", "--force", env=env_two).returncode == 0
    _work(one, "one")
    git_ok(one, "add", "one.txt")
    head = git_ok(one, "rev-parse", "HEAD")
    lost = shiftkit(one, "finish", "-m", "part two works", env=env_one)
    assert lost.returncode == 3, lost.output
    assert "session-two" in lost.stderr and "nothing was committed" in lost.stderr
    assert git_ok(one, "rev-parse", "HEAD") == head
    assert not (one / ".git" / "shiftkit" / "claim.json").exists()
    assert set(_server_claims(bare)) == {"F002"}


KILLER = """
[ "$1" = committed ] || exit 0
grep -q claims/ || exit 0
[ -e "{flag}" ] || exit 0
rm -f "{flag}"
kill -KILL -$(cat "{pgid}")
"""


def test_a_server_killed_after_taking_the_claim(
    scaffold: Path, tmp_path: Path, server: servers.Server
) -> None:
    bare, (one,) = _over(scaffold, tmp_path, server, ("one",))
    flag = tmp_path / "kill-once"
    flag.write_text("")
    _hook(bare, "reference-transaction", KILLER.format(flag=flag, pgid=tmp_path / "server.pgid"))
    dead = shiftkit(one, "claim", "F001")
    assert dead.returncode == 1, dead.output
    assert "nothing was claimed" not in dead.stderr
    assert "is unknown" in dead.stderr and "run the same command again" in dead.stderr
    assert set(_server_claims(bare)) == {"F001"}  # the server took it before it died
    server.stop()
    server.start()
    retry = shiftkit(one, "claim", "F001")
    assert retry.returncode == 0, retry.output
    held = json.loads((one / ".git" / "shiftkit" / "claim.json").read_text())
    assert _server_claims(bare) == {"F001": held["oid"]}
    assert "F001" in ok(one, "claims")


def test_a_connection_cut_after_the_claim_is_told_as_claimed(
    scaffold: Path, tmp_path: Path, server: servers.Server
) -> None:
    bare, (one,) = _over(scaffold, tmp_path, server, ("one",))
    flag = tmp_path / "cut-once"
    flag.write_text("")
    cut = KILLER.format(flag=flag, pgid="/dev/null").replace(
        'kill -KILL -$(cat "/dev/null")', "kill -KILL $PPID"
    )
    _hook(bare, "reference-transaction", cut)
    claimed = shiftkit(one, "claim", "F001")  # the push never heard back; the server has it
    assert claimed.returncode == 0, claimed.output
    assert not flag.exists() and "claimed F001" in claimed.stdout
    held = json.loads((one / ".git" / "shiftkit" / "claim.json").read_text())
    assert _server_claims(bare) == {"F001": held["oid"]}


def test_a_remote_claim_is_refreshed_and_still_finishes(scaffold: Path, tmp_path: Path) -> None:
    bare, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    ok(one, "claim", "F001")
    first = _server_claims(bare)["F001"]
    ok(one, "claims")  # within heartbeat_minutes: the ref stays as it is
    assert _server_claims(bare)["F001"] == first
    # Twenty minutes on (the record's time moved back, as the clock would move forward).
    path = one / ".git" / "shiftkit" / "claim.json"
    held = json.loads(path.read_text())
    held["taken"] = "2026-01-01T00:00:00Z"
    path.write_text(json.dumps(held))
    ok(one, "status")
    fresh = _server_claims(bare)["F001"]
    assert fresh != first
    assert json.loads(path.read_text())["oid"] == fresh
    record = json.loads(git_ok(bare, "cat-file", "commit", fresh).split("\n\n", 1)[1])
    assert record["heartbeat"] > "2026-01-01T00:00:00Z" and record["nonce"] == held["nonce"]
    rows = {r["id"]: r for r in json.loads(ok(two, "claims", "--json"))}
    assert rows["F001"]["heartbeat"] == record["heartbeat"] and rows["F001"]["stale"] is None
    _work(one, "one")
    git_ok(one, "add", "one.txt")
    assert "claim released" in ok(one, "finish", "-m", "part one works")
    assert _server_claims(bare) == {}
