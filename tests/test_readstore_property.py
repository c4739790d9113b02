"""The store's prefiltered selection is the full one (decision record 0121), as a property:
random read sets — files read whole or by blocks, folders listed, paths looked up, files
stat'ed, at several trees, some for another verifier, some never measured or forgotten — kept
in the SQLite store, and random changes from each tree (added, deleted, resized, Python files
with new block fingerprints, shiftkit's own files among them). `readsets.selection_by`, which
reads only the sets the store's rows say a change can touch, picks the same features in the
same order and gives the same `Skipped` counts as `affected.affected_since` and
`affected.skipped_since` over every set — block sets on and off."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pytest
from conftest import fuzz_examples
from hypothesis import given, settings
from hypothesis import strategies as st

from shiftkit.core import affected
from shiftkit.edge import blocksets, readsets, readstore

FILES = ["a.py", "d/c.py", "d/f/g.py", "h.txt", "features.json"]
DIRS = ["", "d", "d/f", "n"]
NEW = ["n/x.py", "d/new.py", "pytest.py", "d/f/h"]
BLOCKS = ["<module>", "f", "C.m"]
MARKS = ["1", "2"]
TREES = ["t1", "t2", "t3"]  # (no change is known from t3: its sets are unknown)
QUIET = ["features.json", "h.txt"]


def subsets(values: list[str], most: int = 2, least: int = 0) -> st.SearchStrategy[frozenset[str]]:
    """Small subsets: a set or a change that mentions few paths is touched by one clause at
    most, so a clause the prefilter dropped shows."""
    if not values:
        return st.just(frozenset())
    return st.frozensets(st.sampled_from(values), min_size=least, max_size=min(most, len(values)))


# (fingerprints mostly the same before and after: a change leaves most blocks as they were)
ran: st.SearchStrategy[dict[str, str]] = st.dictionaries(
    st.sampled_from(BLOCKS), st.sampled_from(MARKS), min_size=1, max_size=2
)
ran_blocks: st.SearchStrategy[dict[str, str]] = st.one_of(ran, ran, ran, st.just({}))
blocks_now = st.fixed_dictionaries(
    {b: st.sampled_from([*MARKS[:1] * 3, *MARKS[1:], "gone"]) for b in BLOCKS}
).map(lambda now: {b: mark for b, mark in now.items() if mark != "gone"})


@st.composite
def read_sets(draw: st.DrawFn) -> affected.ReadSet:
    files = draw(subsets(FILES, 3, 1))
    # (blocks of the files read, as measured: of most of them; now and then of another file)
    how = draw(st.sampled_from(["most", "most", "most", "none", "any"]))
    by_blocks: dict[str, dict[str, str]] | None = None
    if how == "most":
        by_blocks = {p: draw(ran_blocks) for p in sorted(files) if draw(st.integers(0, 4))}
    elif how == "any":
        by_blocks = draw(st.dictionaries(st.sampled_from(FILES), ran_blocks))
    return affected.ReadSet(
        draw(st.sampled_from([*TREES[:2] * 3, TREES[2]])),
        draw(st.sampled_from(["verify"] * 5 + ["other"])),
        files,
        draw(subsets(DIRS)),
        draw(subsets(NEW)),
        draw(subsets(FILES)) - files,
        by_blocks,
    )


@st.composite
def changes(draw: st.DrawFn) -> affected.Change:
    paths = draw(subsets(FILES, 2, 1)) | draw(subsets([*DIRS, *NEW]))
    added = draw(subsets(sorted(paths)))
    resized = draw(st.none() | subsets(sorted(paths)).map(lambda r: r | added))
    code = [p for p in sorted(paths) if p.endswith(".py")]
    # (mostly every changed Python file with its blocks now, as `readsets.change` gives them)
    how = draw(st.sampled_from(["every", "every", "every", "none", "some"]))
    blocks: dict[str, dict[str, str] | None] | None = None
    if how == "every":
        blocks = {p: draw(blocks_now) if draw(st.integers(0, 4)) else None for p in code}
    elif how == "some":
        blocks = draw(st.dictionaries(st.sampled_from(FILES), st.none() | blocks_now))
    return affected.Change(paths, added, resized, blocks)


@st.composite
def worlds(
    draw: st.DrawFn,
) -> tuple[dict[str, affected.ReadSet | None], dict[str, affected.Change], frozenset[str]]:
    count = draw(st.integers(3, 12))
    sets = {f"F{i}": draw(st.none() | read_sets()) for i in range(count)}
    found = {tree: draw(changes()) for tree in TREES[:2]}
    return sets, found, draw(subsets(QUIET))


def full(
    sets: Mapping[str, affected.ReadSet | None],
    commands: Mapping[str, str],
    found: Mapping[str, affected.Change],
    quiet: frozenset[str],
    by_blocks: bool,
) -> readsets.Selection:
    """The selection over every set, as `selection_at` made it before the store."""
    ids = list(commands)
    known = {i: affected.known(sets.get(i), commands[i]) for i in ids}
    if not by_blocks:
        known = {i: s._replace(blocks=None) if s is not None else None for i, s in known.items()}
    hushed = {tree: affected.quieted(change, quiet) for tree, change in found.items()}
    touched = affected.affected_since(ids, known, hushed)
    rest = [i for i in ids if i not in set(touched)]
    return readsets.Selection(touched, affected.skipped_since(rest, known, hushed))


@settings(max_examples=fuzz_examples(400), deadline=None)
@given(world=worlds(), by_blocks=st.booleans(), forgotten=st.sets(st.integers(0, 11), max_size=2))
def test_the_prefiltered_selection_is_the_full_one(
    world: tuple[dict[str, affected.ReadSet | None], dict[str, affected.Change], frozenset[str]],
    by_blocks: bool,
    forgotten: set[int],
) -> None:
    sets, found, quiet = world
    commands = {i: "verify" for i in sets}
    with tempfile.TemporaryDirectory() as home, pytest.MonkeyPatch.context() as patch:
        if by_blocks:
            patch.delenv(blocksets.SWITCH, raising=False)
        else:
            patch.setenv(blocksets.SWITCH, "off")
        common = Path(home)
        for feature_id, read_set in sets.items():
            if read_set is not None:
                readsets.record(common, feature_id, read_set)
        for feature_id in sorted(f"F{i}" for i in forgotten if f"F{i}" in sets):
            readsets.forget(common, feature_id)
            sets[feature_id] = None
        asked = dict(reversed(commands.items()))  # (the order asked is the order answered)
        got = readsets.selection_by(
            common, asked, lambda trees: {t: found[t] for t in trees if t in found}, quiet
        )
        assert got == full(sets, asked, found, quiet, by_blocks)
        assert readsets.load(common, asked) == {
            i: (s if by_blocks else s._replace(blocks=None))
            if s is not None and s.command == "verify"
            else None
            for i, s in sets.items()
        }


def test_a_store_that_cannot_be_read_selects_every_feature_and_warns_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    read_set = affected.ReadSet("t1", "verify", frozenset({"a.py"}))
    readsets.record(tmp_path, "F1", read_set)
    assert readsets.load_one(tmp_path, "F1") == read_set
    where = readstore.path_of(tmp_path)
    where.write_bytes(b"not a database" * 100)
    for name in ("-wal", "-shm"):
        Path(f"{where}{name}").unlink(missing_ok=True)
    readstore._warned.clear()
    nothing = affected.Change(frozenset({"z.txt"}))
    got = readsets.selection_by(
        tmp_path, {"F1": "verify", "F2": "verify"}, lambda _: {"t1": nothing}
    )
    assert got == readsets.Selection(["F1", "F2"], affected.Skipped())
    assert readsets.load_one(tmp_path, "F1") is None
    err = capsys.readouterr().err
    assert err.count("shiftkit:") == 1 and "Traceback" not in err, err
    readsets.record(tmp_path, "F1", read_set)  # (rebuilt by the next write)
    assert readsets.load_one(tmp_path, "F1") == read_set
    assert capsys.readouterr().err == ""


def test_the_json_sets_of_before_are_imported_once(tmp_path: Path) -> None:
    read_set = affected.ReadSet("t1", "verify", frozenset({"a.py"}), blocks={"a.py": {"f": "1"}})
    old = readstore.path_of(tmp_path).parent / readstore.OLD_FOLDER
    old.mkdir(parents=True)
    (old / "0123.json").write_text(json.dumps(affected.to_json("F1", read_set)))
    (old / "junk.json").write_text("{")
    assert readsets.load(tmp_path, {"F1": "verify", "F2": "verify"}) == {
        "F1": read_set,
        "F2": None,
    }
    assert not old.exists()


def test_sets_of_another_fingerprint_scheme_are_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shiftkit whose `core.blocks` draws blocks otherwise must not compare its prints with
    marks an older one stored (nor reuse its cached prints): another scheme, another database,
    every set unknown. The twin: the same scheme reads its set back."""
    read_set = affected.ReadSet("t1", "verify", frozenset({"a.py"}), blocks={"a.py": {"f": "1"}})
    readsets.record(tmp_path, "F1", read_set)
    assert readsets.load(tmp_path, {"F1": "verify"}) == {"F1": read_set}
    monkeypatch.setattr(readstore, "_scheme", ["another"])
    assert readsets.load(tmp_path, {"F1": "verify"}) == {"F1": None}
    monkeypatch.undo()
    assert readsets.load(tmp_path, {"F1": "verify"}) == {"F1": read_set}
