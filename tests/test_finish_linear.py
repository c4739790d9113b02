"""`finish` on a clone only behind the remote (a teammate published while this agent worked):
the branch is fast-forwarded under the uncommitted work first, so the commit lands on the
remote's tip and the remote's history stays linear — no `sync` merge. Its twin: when the
teammate changed the same file, git will not move under the work, and the lost race is
caught up by the judged merge as before; both publish."""

from __future__ import annotations

from pathlib import Path

from conftest import git_ok, ok, shiftkit
from teams import remote_claims, remote_list, team_project


def clones(bare: Path, tmp_path: Path) -> tuple[Path, Path]:
    places = []
    for name in ("one", "two"):
        place = tmp_path / name
        git_ok(tmp_path, "clone", "-q", str(bare), str(place))
        ok(place, "install-hooks", "--force")
        places.append(place)
    return places[0], places[1]


ONE, TWO = {"SHIFTKIT_SESSION": "s-one"}, {"SHIFTKIT_SESSION": "s-two"}


def both_claim_two_finishes(
    scaffold: Path,
    tmp_path: Path,
    two_also: dict[str, str] | None = None,
    first: str = "a.txt",
) -> tuple[Path, Path, Path]:
    """Two clones of one remote claim F001 (`test -f FIRST`) and F002; two finishes F002
    (writing ``two_also`` too) while one still works: (remote, one, two)."""
    bare = team_project(scaffold, tmp_path, [first, "b.txt"])
    one, two = clones(bare, tmp_path)
    assert shiftkit(one, "claim", "F001", env=ONE).returncode == 0
    assert shiftkit(two, "claim", "F002", env=TWO).returncode == 0
    for name, text in {"b.txt": "done\n", **(two_also or {})}.items():
        (two / name).write_text(text)
    assert shiftkit(two, "finish", "-m", "make F002 work", env=TWO).returncode == 0
    return bare, one, two


def merges(bare: Path) -> list[str]:
    return git_ok(bare, "log", "--merges", "--format=%s", "main").splitlines()


def test_a_finish_behind_the_remote_lands_on_its_tip(scaffold: Path, tmp_path: Path) -> None:
    bare, one, _ = both_claim_two_finishes(scaffold, tmp_path)
    (one / "a.txt").write_text("done\n")
    result = shiftkit(one, "finish", "-m", "make F001 work", env=ONE)
    assert result.returncode == 0, result.output
    assert "caught up first: fast-forwarded main to origin/main under your changes" in (
        result.output
    )
    assert merges(bare) == []  # linear
    parent = git_ok(bare, "log", "-1", "--format=%P", "main").split()
    assert parent == [git_ok(bare, "rev-parse", "main~1").strip()]
    assert git_ok(bare, "log", "-1", "--format=%s", "main~1").startswith("F002:")
    assert all(item["passes"] is True for item in remote_list(bare))
    assert remote_claims(bare) == []


def test_when_the_teammate_changed_the_same_file_the_race_is_replayed_on_its_tip(
    scaffold: Path, tmp_path: Path
) -> None:
    lines = [f"line {i}\n" for i in range(1, 8)]
    (scaffold / "shared.txt").write_text("".join(lines))
    git_ok(scaffold, "add", "shared.txt")
    git_ok(scaffold, "commit", "-q", "-m", "A file both agents will change")
    changed = {"shared.txt": "".join(["LINE 1\n", *lines[1:]])}
    bare, one, _ = both_claim_two_finishes(scaffold, tmp_path, changed)
    (one / "a.txt").write_text("done\n")
    (one / "shared.txt").write_text("".join([*lines[:-1], "LINE 7\n"]))  # git won't move
    result = shiftkit(one, "finish", "-m", "make F001 work", env=ONE)
    assert result.returncode == 0, result.output
    assert "caught up first" not in result.output  # (git would not move under the work)
    assert "replayed F001's commit onto origin/main" in result.output
    assert merges(bare) == []  # the lost race replayed on the tip and verified there
    assert git_ok(bare, "log", "-1", "--format=%s", "main").startswith("F001:")
    assert git_ok(bare, "show", "main:shared.txt").splitlines()[::6] == ["LINE 1", "LINE 7"]
    assert all(item["passes"] is True for item in remote_list(bare))
    assert remote_claims(bare) == []


def a_shared_file(scaffold: Path) -> tuple[dict[str, str], str]:
    """A file both agents change (other lines), so git will not fast-forward under the
    work: (two's change, one's)."""
    lines = [f"line {i}\n" for i in range(1, 8)]
    (scaffold / "shared.txt").write_text("".join(lines))
    git_ok(scaffold, "add", "shared.txt")
    git_ok(scaffold, "commit", "-q", "-m", "A file both agents will change")
    return {"shared.txt": "".join(["LINE 1\n", *lines[1:]])}, "".join([*lines[:-1], "LINE 7\n"])


def test_a_race_whose_replay_fails_on_the_tip_is_merged_and_judged(
    scaffold: Path, tmp_path: Path
) -> None:
    theirs, ours = a_shared_file(scaffold)
    two_also = {**theirs, "bad.txt": "F002 brings what F001 cannot stand\n"}
    bare, one, _ = both_claim_two_finishes(scaffold, tmp_path, two_also, "a.txt -a ! -f bad.txt")
    (one / "a.txt").write_text("done\n")
    (one / "shared.txt").write_text(ours)
    result = shiftkit(one, "finish", "-m", "make F001 work", env=ONE)
    assert "F001: FAILED" in result.output  # on the replayed tree
    assert "syncing instead (a merge, judged here)" in result.output
    assert "F001 passes" not in result.output and "demoted there" in result.output
    assert len(merges(bare)) == 1
    listing = {item["id"]: item for item in remote_list(bare)}
    assert listing["F002"]["passes"] is True and listing["F001"]["passes"] is not True


def test_a_revert_behind_the_remote_records_its_attempt_on_the_tip(
    scaffold: Path, tmp_path: Path
) -> None:
    bare, one, _ = both_claim_two_finishes(scaffold, tmp_path)
    (one / "wrong.txt").write_text("not it\n")
    result = shiftkit(one, "revert", "--reason", "the file never appears", env=ONE)
    assert result.returncode == 0, result.output
    assert "then fast-forwarded to the remote's tip (1 new)" in result.output
    assert merges(bare) == []  # the attempt's record sits on the teammate's commit
    assert git_ok(bare, "log", "-1", "--format=%s", "main~1").startswith("F002:")
    listing = {item["id"]: item for item in remote_list(bare)}
    assert listing["F002"]["passes"] is True and listing["F001"]["attempts"] == 1
    assert remote_claims(bare) == []


def test_a_replay_re_marks_what_it_repairs_on_the_tip(scaffold: Path, tmp_path: Path) -> None:
    """The team trial's shape: a plain commit deleted what F001 and F002 read; F002's
    finish, on a base before it, lost its race and was demoted where it was merged. F001's
    repair, racing too, is replayed onto that tip — and re-marks F002 in the replayed commit
    (it said "`shiftkit sync` re-marks them" and left F002 demoted)."""
    lines = [f"line {i}\n" for i in range(1, 8)]
    (scaffold / "shared.txt").write_text("".join(lines))
    git_ok(scaffold, "add", "shared.txt")
    git_ok(scaffold, "commit", "-q", "-m", "A file every agent changes")
    bare = team_project(scaffold, tmp_path, ["a.txt", "a.txt -a -f b.txt"])
    one, two = clones(bare, tmp_path)
    three = tmp_path / "three"
    git_ok(tmp_path, "clone", "-q", str(bare), str(three))
    ok(three, "install-hooks", "--force")
    THREE = {"SHIFTKIT_SESSION": "s-three"}
    assert shiftkit(one, "claim", "F001", env=ONE).returncode == 0
    (one / "a.txt").write_text("a\n")
    assert shiftkit(one, "finish", "-m", "make F001 work", env=ONE).returncode == 0
    assert shiftkit(three, "sync", env=THREE).returncode == 0
    assert shiftkit(three, "claim", "F002", env=THREE).returncode == 0
    # two tidies a.txt away in a plain commit and publishes it: F001 demoted on the remote
    assert shiftkit(two, "sync", env=TWO).returncode == 0
    git_ok(two, "rm", "-q", "a.txt")
    (two / "shared.txt").write_text("".join(["LINE 1\n", *lines[1:]]))
    git_ok(two, "commit", "-q", "-am", "Tidy: a.txt is not needed")
    assert shiftkit(two, "sync", env=TWO).returncode == 0
    assert {i["id"]: i["passes"] for i in remote_list(bare)}["F001"] is not True
    # one takes F001 back from the tip; three's F002, on a base before the tidy, races
    assert shiftkit(one, "sync", env=ONE).returncode == 0
    assert shiftkit(one, "claim", "F001", env=ONE).returncode == 0
    (three / "b.txt").write_text("b\n")
    (three / "shared.txt").write_text("".join([*lines[:3], "LINE 4\n", *lines[4:]]))
    three_done = shiftkit(three, "finish", "-m", "make F002 work", env=THREE)
    assert "demoted there" in three_done.output, three_done.output
    assert {i["id"]: i["passes"] for i in remote_list(bare)}["F002"] is not True
    (one / "a.txt").write_text("a\n")
    (one / "shared.txt").write_text("".join([*lines[:-1], "LINE 7\n"]))
    repaired = shiftkit(one, "finish", "-m", "bring a.txt back", env=ONE)
    assert repaired.returncode == 0, repaired.output
    assert "re-marked F002 passing in the replayed commit" in repaired.output
    assert "re-marks them" not in repaired.output
    listing = {i["id"]: i["passes"] for i in remote_list(bare)}
    assert listing["F001"] is True and listing["F002"] is True
    message = git_ok(bare, "log", "-1", "--format=%B", "main")
    assert message.startswith("F001: bring a.txt back") and "Re-marks F002 passing" in message
    assert git_ok(bare, "log", "-1", "--format=%P", "main").count(" ") == 0  # not a merge
