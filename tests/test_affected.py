"""Read sets: which passing features a change affects (pure), strace's record read back, and a
real verifier's reads measured under strace in a real git checkout."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import needs
import pytest
from conftest import git_ok, write

from shiftkit.core import trace
from shiftkit.core.affected import (
    Change,
    ReadSet,
    affected,
    affected_since,
    cached_source,
    directories_of,
    from_json,
    from_json_for,
    normalise,
    to_json,
    trees_to_compare,
)
from shiftkit.edge import readsets, verify

needs_strace = needs.strace()


def _set(tree: str = "t1", files: set[str] | None = None, **extra: set[str]) -> ReadSet:
    return ReadSet(
        tree,
        "cmd",
        frozenset(files or ()),
        frozenset(extra.get("dirs", ())),
        frozenset(extra.get("missing", ())),
        frozenset(extra.get("stats", ())),
    )


def test_a_change_affects_the_features_whose_reads_it_touches_and_every_unknown() -> None:
    sets = {
        "F1": _set(files={"src/a.py", "tests/test_a.py"}),
        "F2": _set(files={"src/b.py"}),
        "F3": None,  # unknown
    }  # F4: absent, unknown as well
    passing = ["F1", "F2", "F3", "F4"]
    assert affected(passing, sets, ["src/a.py"]) == ["F1", "F3", "F4"]
    assert affected(passing, sets, ["README.md"]) == ["F3", "F4"]
    assert affected(passing, sets, ["src/b.py", "tests/test_a.py"]) == passing
    assert affected(passing, sets, []) == []  # no change breaks nothing
    assert affected(["F2", "F1"], sets, ["src/a.py", "src/b.py"]) == ["F2", "F1"]  # (order)


def test_an_added_file_affects_who_listed_its_directory_or_looked_it_up() -> None:
    sets = {
        "F1": _set(files={"t.py"}, dirs={""}),  # listed the root (Python's import path)
        "F2": _set(files={"lib/x.sh"}, missing={"lib/extra.sh"}),
        "F3": _set(files={"doc/a.md"}, dirs={"doc"}),
    }
    ids = list(sets)
    # A pytest.py at the root shadows pytest for whoever listed the root.
    assert affected(ids, sets, ["pytest.py"], ["pytest.py"]) == ["F1"]
    assert affected(ids, sets, ["lib/extra.sh"], ["lib/extra.sh"]) == ["F2"]
    # A new package `pkg/` is a new entry of the root: its directory counts as added.
    assert affected(ids, sets, ["pkg", "pkg/__init__.py"], ["pkg", "pkg/__init__.py"]) == ["F1"]
    # The same paths modified, not added, touch no listing.
    assert affected(ids, sets, ["pytest.py", "doc/b.md"]) == []
    assert affected(ids, sets, ["doc/b.md"], ["doc/b.md"]) == ["F3"]


def test_each_set_is_judged_against_the_change_since_its_own_tree() -> None:
    sets = {"F1": _set("old", files={"a.py"}), "F2": _set("new", files={"a.py"})}
    assert trees_to_compare(["F1", "F2"], sets) == ["old", "new"]
    changes = {"old": Change(frozenset({"a.py"})), "new": Change(frozenset())}
    assert affected_since(["F1", "F2"], sets, changes) == ["F1"]
    # A tree with no change known (gone from the repository) is an unknown set.
    assert affected_since(["F1", "F2"], sets, {"new": Change(frozenset())}) == ["F1"]


def test_the_stored_form_round_trips_and_a_bad_record_is_unknown() -> None:
    one = _set(files={"a", "b/c"}, dirs={"", "b"}, missing={"b/d"}, stats={"e"})
    assert from_json("F1", to_json("F1", one)) == one
    assert from_json("F2", to_json("F1", one)) is None  # (another feature's)
    for bad in (None, [], {"format": 99}, {**to_json("F1", one), "files": "a"}):
        assert from_json("F1", bad) is None
    # Read for one command: a set measured for another is unknown, as `known` makes it.
    assert from_json_for("F1", to_json("F1", one), one.command) == one
    assert from_json_for("F1", to_json("F1", one), "other") is None
    assert from_json_for("F1", {**to_json("F1", one), "files": "a"}, one.command) is None


def test_paths_are_kept_only_under_the_checkout_as_repository_paths() -> None:
    tracked = {"a.py", "pkg/m.py"}
    assert directories_of(tracked) == {"", "pkg"}
    looked = ["/r/a.py", "/r/pkg", "/r/pkg/n.py", "/r/.git/HEAD", "/usr/lib/x.py", "/rx/a.py"]
    files, dirs, missing, stats = normalise(looked, ["/r", "/r/pkg", "/etc"], "/r", tracked)
    assert files == {"a.py"} and stats == set()
    assert dirs == {"", "pkg"}
    assert missing == {"pkg/n.py"}
    # Told which paths were opened, a tracked file only stat'ed is a file looked at.
    files, _, _, stats = normalise([*looked, "/r/pkg/m.py"], [], "/r", tracked, ["/r/pkg/m.py"])
    assert files == {"pkg/m.py"} and stats == {"a.py"}


def test_a_source_whose_compiled_cache_was_opened_counts_as_read() -> None:
    # Python imports pkg/m.py from its bytecode after a stat of the source: the content of the
    # source reached the run, and a same-size edit of it changes what runs (decision 0071).
    assert cached_source("pkg/__pycache__/m.cpython-311.pyc") == "pkg/m.py"
    assert cached_source("__pycache__/test.cpython-311-pytest-9.2.0.pyc") == "test.py"
    assert cached_source("pkg/m.pyc") == "pkg/m.py" and cached_source("m.pyo") == "m.py"
    assert cached_source("pkg/m.py") == "" and cached_source("a.pyc.1234") == ""
    tracked = {"pkg/m.py", "pkg/n.py", "t.py"}
    looked = ["/r/pkg/m.py", "/r/pkg/n.py", "/r/t.py", "/r/pkg/__pycache__/m.cpython-311.pyc"]
    opened = ["/r/t.py", "/r/pkg/__pycache__/m.cpython-311.pyc"]
    files, _, missing, stats = normalise(looked, [], "/r", tracked, opened)
    assert files == {"pkg/m.py", "t.py"} and stats == {"pkg/n.py"}
    assert missing == {"pkg/__pycache__/m.cpython-311.pyc"}


def test_a_file_only_looked_at_counts_when_a_stat_would_see_the_change() -> None:
    sets = {"F1": _set(files={"t.py"}, stats={"README.md"})}
    # Rewritten at the same size and mode: a stat sees nothing (the mtime of a fresh
    # checkout is never the same anyway).
    assert affected(["F1"], sets, ["README.md"], resized_paths=[]) == []
    assert affected(["F1"], sets, ["README.md"], resized_paths=["README.md"]) == ["F1"]
    assert affected(["F1"], sets, ["README.md"]) == ["F1"]  # (not known: it counts)


def test_strace_lines_are_read_back_into_paths() -> None:
    lines = [
        'execve("/bin/sh", ["/bin/sh", "-c", "x"], 0x7ffd /* 35 vars */) = 0',
        'newfstatat(AT_FDCWD</r>, "t.py", {st_mode=S_IFREG|0644, ...}, 0) = 0',
        'openat(AT_FDCWD</r>, "./pkg/../t.py", O_RDONLY|O_CLOEXEC) = 3</r/t.py>',
        'openat(AT_FDCWD</r>, "we\\"ird\\303\\251", O_RDONLY) = -1 ENOENT (No such file)',
        'openat(3</r/sub>, "x", O_RDONLY) = 4</r/sub/x>',
        "getdents64(3</r/pkg>, 0x55 /* 4 entries */, 32768) = 96",
        'newfstatat(3</r/t.py>, "", {st_mode=S_IFREG|0644, ...}, AT_EMPTY_PATH) = 0',
        'stat("rel.txt", {st_mode=S_IFREG|0644, ...}) = 0',
        "+++ exited with 0 +++",
        "--- SIGCHLD {si_signo=SIGCHLD} ---",
        'openat(AT_FDCWD</r>, "half',
    ]
    seen = trace.read_process(lines, "/start")
    assert seen.looked == {"/bin/sh", "/r/t.py", '/r/we"ird\u00e9', "/r/sub/x", "/r/rel.txt"}
    assert seen.listed == {"/r/pkg"}
    assert seen.opened == {"/bin/sh", "/r/t.py", '/r/we"ird\u00e9', "/r/sub/x"}


@needs_strace
def test_a_real_verifier_run_under_strace_reads_what_it_reads(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    git_ok(tmp_path, "init", "-q", str(repo))
    write(repo / "pkg" / "__init__.py", "")
    write(repo / "pkg" / "mod.py", "VALUE = 3\n")
    write(repo / "pkg" / "other.py", "VALUE = 4\n")
    write(repo / "data" / "in.txt", "hello\n")
    write(repo / "README.md", "never read\n")
    write(repo / "check.sh", "#!/bin/sh\ngrep -q hello data/in.txt\n")
    git_ok(repo, "add", "-A")
    git_ok(repo, "commit", "-q", "-m", "A project")
    tree = git_ok(repo, "rev-parse", "HEAD^{tree}").strip()
    command = f"{sys.executable} -c 'import pkg.mod' && sh check.sh"
    with readsets.measuring() as measure:
        assert measure is not None
        outcome = verify.run_command(command, repo, 60, prefix=measure.prefix)
        assert outcome.ok, outcome.output
        read = measure.read_set(repo, tree, command)
    assert {"pkg/__init__.py", "pkg/mod.py", "check.sh", "data/in.txt"} <= read.files
    assert "README.md" not in read.files and "pkg/other.py" not in read.files
    assert "" in read.dirs and "pkg" in read.dirs  # (Python's import path listings)
    # Stored and loaded back, for the same verifier only.
    readsets.record(repo / ".git", "F1", read)
    assert readsets.load(repo / ".git", {"F1": command}) == {"F1": read}
    assert readsets.load(repo / ".git", {"F1": "other", "F2": command}) == {"F1": None, "F2": None}
    # A change of a file it read affects it; a README edit does not; a new pytest.py does.
    write(repo / "README.md", "still never read\n")
    git_ok(repo, "commit", "-q", "-am", "Docs")
    docs = git_ok(repo, "rev-parse", "HEAD^{tree}").strip()
    assert readsets.affected_at(repo, repo / ".git", {"F1": command}, docs) == []
    write(repo / "data" / "in.txt", "bye\n")
    git_ok(repo, "commit", "-q", "-am", "Data")
    data = git_ok(repo, "rev-parse", "HEAD^{tree}").strip()
    assert readsets.affected_at(repo, repo / ".git", {"F1": command}, data) == ["F1"]
    change = readsets.change(repo, docs, data)
    assert change.paths == {"data", "data/in.txt"} and change.added == set()
    assert change.resized == set()  # ("hello" to "bye": a stat tells nothing, a read does)
    write(repo / "data" / "in.txt", "")
    git_ok(repo, "commit", "-q", "-am", "Empty")
    empty = git_ok(repo, "rev-parse", "HEAD^{tree}").strip()
    assert readsets.change(repo, data, empty).resized == {"data/in.txt"}  # (`test -s` sees it)


@needs_strace
def test_a_module_imported_from_its_bytecode_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)  # (a user's default)
    repo = tmp_path / "repo"
    git_ok(tmp_path, "init", "-q", str(repo))
    write(repo / "pkg" / "__init__.py", "")
    write(repo / "pkg" / "mod.py", "VALUE = 3\n")
    write(repo / ".gitignore", "__pycache__/\n")
    git_ok(repo, "add", "-A")
    git_ok(repo, "commit", "-q", "-m", "A package")
    tree = git_ok(repo, "rev-parse", "HEAD^{tree}").strip()
    command = f"{sys.executable} -c 'import pkg.mod; assert pkg.mod.VALUE == 3'"
    reads = []
    for _ in range(2):  # (the first run compiles and writes the bytecode, the second reads it)
        with readsets.measuring() as measure:
            assert measure is not None
            assert verify.run_command(command, repo, 60, prefix=measure.prefix).ok
            reads.append(measure.read_set(repo, tree, command))
    assert (repo / "pkg" / "__pycache__").is_dir()
    assert all("pkg/mod.py" in read.files for read in reads), reads
    # The same-size edit that breaks it selects it (a stat alone would not see the change).
    write(repo / "pkg" / "mod.py", "VALUE = 4\n")
    git_ok(repo, "commit", "-q", "-am", "Four")
    edited = git_ok(repo, "rev-parse", "HEAD^{tree}").strip()
    readsets.record(repo / ".git", "F1", reads[1])
    assert readsets.affected_at(repo, repo / ".git", {"F1": command}, edited) == ["F1"]
    shutil.rmtree(repo / "pkg" / "__pycache__")  # (a fresh checkout: bytecode stamped by the
    # second would still pass for an edit in the same second)
    assert not verify.run_command(command, repo, 60).ok


@needs_strace
def test_the_exit_code_and_output_are_the_verifiers_own_under_strace(tmp_path: Path) -> None:
    with readsets.measuring() as measure:
        assert measure is not None
        outcome = verify.run_command("echo out; exit 3", tmp_path, 30, prefix=measure.prefix)
    assert (outcome.exit_code, outcome.output) == (3, "out\n")


def test_without_strace_nothing_is_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(readsets.OFF_VARIABLE, "off")
    with readsets.measuring() as measure:
        assert measure is None


def test_strace_is_a_debian_package_ci_installs() -> None:
    assert shutil.which("strace") is None or subprocess.run(["strace", "-V"]).returncode == 0
    ci = (Path(__file__).parent.parent / ".ci" / "run").read_text()
    assert "apt-get install -y -qq strace" in ci


def test_shiftkits_own_files_count_only_where_read() -> None:
    """A resized list or a new archive, looked at by a directory walk, touches nothing;
    the same list opened by the verifier still does (decision record 0075)."""
    from shiftkit.core.affected import Change, ReadSet, quieted, touches

    ours = ("features.json", "claude-progress.txt", "progress-archive.md")
    walked = ReadSet(
        "t",
        "c",
        frozenset({"tests/test_a.py"}),
        frozenset({""}),
        frozenset(),
        frozenset({"features.json", "claude-progress.txt"}),
    )
    flip = Change(
        frozenset({"features.json", "progress-archive.md"}),
        frozenset({"progress-archive.md"}),
        frozenset({"features.json", "progress-archive.md"}),
    )
    assert touches(walked, flip)  # (as measured: a stat of a resized file, an entry added)
    assert not touches(walked, quieted(flip, ours))
    opened = walked._replace(files=walked.files | {"features.json"})
    assert touches(opened, quieted(flip, ours))
    code = Change(frozenset({"features.json", "tests/test_a.py"}))
    assert touches(walked, quieted(code, ours))


def test_a_read_python_file_counts_by_the_blocks_the_run_executed() -> None:
    """Block sets (decision record 0116): a changed file the run read touches it unless every
    block it executed there is unchanged; not knowing either side counts the file whole."""
    from shiftkit.core.affected import Change, ReadSet, touches

    ran = {"pkg/ops.py": {"<module>": "m1", "f1": "a1"}}
    read = ReadSet("t", "c", frozenset({"pkg/ops.py"}), blocks=ran)
    paths = frozenset({"pkg/ops.py"})
    other_edited = {"pkg/ops.py": {"<module>": "m1", "f1": "a1", "f2": "b2"}}
    own_edited = {"pkg/ops.py": {"<module>": "m1", "f1": "a9"}}
    module_edited = {"pkg/ops.py": {"<module>": "m2", "f1": "a1"}}
    assert not touches(read, Change(paths, blocks=other_edited))
    assert touches(read, Change(paths, blocks=own_edited))
    assert touches(read, Change(paths, blocks=module_edited))
    assert touches(read, Change(paths, blocks={"pkg/ops.py": None}))  # (does not parse)
    assert touches(read, Change(paths))  # (the change's blocks unknown)
    assert touches(read._replace(blocks=None), Change(paths, blocks=other_edited))


def test_changes_from_many_trees_are_each_the_change_from_that_tree(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    git_ok(tmp_path, "init", "-q", str(repo))
    trees = []
    for step, (body, data) in enumerate([("1", "x\n"), ("2", "")]):
        write(repo / "pkg" / "m.py", f"def f():\n    return {body}\n\n\ndef g():\n    return 0\n")
        write(repo / "data.txt", data)
        write(repo / f"new{step}.txt", "")
        git_ok(repo, "add", "-A")
        git_ok(repo, "commit", "-q", "-m", f"Step {step}")
        trees.append(git_ok(repo, "rev-parse", "HEAD^{tree}").strip())
    write(repo / "pkg" / "m.py", "def f():\n    return 3\n\n\ndef g():\n    return 0\n")
    git_ok(repo, "commit", "-q", "-am", "Step 2")
    new = git_ok(repo, "rev-parse", "HEAD^{tree}").strip()
    gone = "0" * 40
    found = readsets.changes(repo, [*trees, gone, "HEAD^^", new], new)
    # (a tree not in the repository is left out; a name that is no object id is asked alone)
    assert list(found) == [*trees, "HEAD^^", new]
    for tree in (*trees, "HEAD^^", new):
        assert found[tree] == readsets.change(repo, tree, new)
    assert found[trees[0]].resized == {"data.txt", "new1.txt"}
    assert found[trees[0]].blocks is not None and set(found[trees[0]].blocks) == {"pkg/m.py"}
    assert found[new] == Change(frozenset(), frozenset(), frozenset(), {})
