"""Each clone's usage ref (decision records 0065, 0072): `claim`'s push carries it, `audit`
reads every clone's, and a bad record on one is one `shiftkit:` line naming the ref and the
line — never a crash, never the whole ref dropped."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import git_ok, ok, run, shiftkit
from test_parallel import _machines

USAGE = "refs/shiftkit/usage/"


def _usage_refs(repo: Path) -> dict[str, str]:
    listing = git_ok(repo, "for-each-ref", "--format=%(refname) %(objectname)", USAGE)
    return dict(line.split() for line in listing.splitlines())


def _finish_one(clone: Path, feature: str, name: str) -> None:
    ok(clone, "claim", feature)
    (clone / f"{name}.txt").write_text(f"{name}\n")
    git_ok(clone, "add", f"{name}.txt")
    ok(clone, "finish", "-m", f"{name} works")


def _fresh(bare: Path, tmp_path: Path, name: str = "fresh") -> Path:
    fresh = tmp_path / name
    git_ok(tmp_path, "clone", "-q", str(bare), str(fresh))
    return fresh


def test_claim_pushes_the_usage_waiting_here(scaffold: Path, tmp_path: Path) -> None:
    """Usage recorded after a clone's last `finish` (its wrap-up) reached the remote only at
    the next `sync` or SessionEnd; `claim` talks to the remote anyway, and its one push now
    carries this clone's usage ref — with no commit on the branch."""
    bare, (one,) = _machines(scaffold, tmp_path, ("one",))
    _finish_one(one, "F001", "part one")
    ok(one, "usage", "add", "--input", "7000", "--output", "70")  # after the last finish
    assert _usage_refs(bare) == {}
    main = git_ok(bare, "rev-parse", "main")
    ok(one, "claim", "F002")
    on_remote = _usage_refs(bare)
    assert on_remote and list(on_remote.values()) == list(_usage_refs(one).values()), on_remote
    assert git_ok(bare, "rev-parse", "main") == main  # (no commit of its own)
    report = json.loads(ok(_fresh(bare, tmp_path), "cost", "--json"))
    assert report["unattributed"]["input"] == 7000, report
    again = shiftkit(one, "release")
    assert again.returncode == 0, again.output
    assert _usage_refs(bare) == on_remote  # (nothing new waited: nothing more was pushed)


def test_claim_carries_a_usage_ref_an_earlier_push_left_behind(
    scaffold: Path, tmp_path: Path
) -> None:
    """The SessionEnd hook's push failed (the remote did not answer): the ref holds usage the
    remote lacks, and the next claim's push takes it along."""
    bare, (one,) = _machines(scaffold, tmp_path, ("one",))
    _finish_one(one, "F001", "part one")
    ok(one, "usage", "add", "--input", "500", "--output", "5")
    url = git_ok(one, "remote", "get-url", "origin").strip()
    git_ok(one, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    assert shiftkit(one, "sync").returncode != 0  # (the remote does not answer)
    git_ok(one, "remote", "set-url", "origin", url)
    assert _usage_refs(bare) == {}
    ok(one, "claim", "F002")
    assert _usage_refs(bare) == _usage_refs(one) != {}


def _plant(bare: Path, clone: str, lines: list[str]) -> None:
    """A usage ref of clone ``clone`` on the remote holding ``lines`` as they are."""
    text = "".join(line + "\n" for line in lines)
    blob = run(["git", "hash-object", "-w", "--stdin"], bare, input=text).stdout.strip()
    tree = run(["git", "mktree"], bare, input=f"100644 blob {blob}\tledger.jsonl\n").stdout.strip()
    assert tree, (blob, tree)
    commit = git_ok(bare, "commit-tree", tree, "-m", "usage").strip()
    git_ok(bare, "update-ref", USAGE + clone, commit)


def _entry(ident: str, tokens: int) -> str:
    return json.dumps(
        {
            "at": "2026-12-01T10:00:00.000Z",
            "id": ident,
            "input": tokens,
            "kind": "usage",
            "model": "m",
            "session": "s",
            "source": "manual",
        },
        sort_keys=True,
    )


def test_audit_reads_every_clones_usage_ref(scaffold: Path, tmp_path: Path) -> None:
    """`audit` on a fresh clone fetches and reads the usage ref of each clone (two shared by
    sync, one planted), says how many records from how many clones, and names each line the
    bounded reader leaves out — the rest of that ref still counts, in `audit` and `cost`."""
    bare, (one, two) = _machines(scaffold, tmp_path, ("one", "two"))
    for clone, tokens in ((one, 100), (two, 200)):
        ok(clone, "usage", "add", "--input", str(tokens), "--output", "1")
        assert "shared the usage" in ok(clone, "sync")
    fresh = _fresh(bare, tmp_path)
    clean = shiftkit(fresh, "audit")
    assert clean.returncode == 0, clean.output
    assert "usage refs: 2 records from 2 clones" in clean.stdout, clean.output
    assert "shiftkit:" not in clean.stderr, clean.stderr
    _plant(
        bare,
        "planted",
        [
            _entry("good-1", 30),
            "{not json",
            "[" * 100_000 + "]" * 100_000,  # (deeper than any parser's recursion)
            _entry("big", 1).replace('"input": 1', '"input": ' + "9" * 5000),
            _entry("good-2", 40),
            "",
            _entry("good-1", 999_999),  # (a second line under a recorded id)
        ],
    )
    audited = shiftkit(fresh, "audit")
    assert audited.returncode == 0, audited.output  # (no commit of the branch broke a rule)
    assert "Traceback" not in audited.output and "internal error" not in audited.output
    named = [line for line in audited.stderr.splitlines() if "usage left out" in line]
    where = "refs/shiftkit/remote-usage/origin/planted:ledger.jsonl line"
    assert [line.partition(where)[2].split(":")[0] for line in named] == [
        " 2",
        " 3",
        " 4",
        " 7",
    ], audited.stderr
    assert all(line.startswith("shiftkit: ") for line in named), named
    assert "nested more than 64 deep" in named[1] and "5,000 digits" in named[2], named
    assert "recorded already" in named[3] and "line 1" in named[3], named
    assert "usage refs: 4 records from 3 clones; 4 lines left out" in audited.stdout
    document = json.loads(shiftkit(fresh, "audit", "--json").stdout)
    assert document["usage_refs"]["records"] == 4 and len(document["usage_refs"]["problems"]) == 4
    report = json.loads(ok(fresh, "cost", "--json"))
    assert report["totals"]["input"] == 100 + 200 + 30 + 40, report  # (the good lines count)


def test_audit_without_usage_refs_says_nothing_of_them(scaffold: Path) -> None:
    audited = shiftkit(scaffold, "audit")
    assert audited.returncode == 0, audited.output
    assert "usage refs" not in audited.output
    assert "usage_refs" not in json.loads(shiftkit(scaffold, "audit", "--json").stdout)


def test_a_server_refusing_the_usage_namespace_still_grants_the_claim(
    scaffold: Path, tmp_path: Path
) -> None:
    """A host whose pre-receive hook refuses the usage refs refuses the claim push that
    carries one as a whole: the claim is asked for again without it, and the usage stays here
    for a later push."""
    bare, (one,) = _machines(scaffold, tmp_path, ("one",))
    _finish_one(one, "F001", "part one")
    ok(one, "usage", "add", "--input", "500", "--output", "5")
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\nwhile read old new ref; do\n  case $ref in refs/shiftkit/usage/*)\n"
        '    echo "usage refs are not allowed here" >&2; exit 1;;\n  esac\ndone\n'
    )
    hook.chmod(0o755)
    claimed = ok(one, "claim", "F002")
    assert "claimed F002" in claimed, claimed
    assert _usage_refs(bare) == {} and _usage_refs(one) != {}
    assert "F002" in git_ok(bare, "for-each-ref", "refs/shiftkit/claims/")
