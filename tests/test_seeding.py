"""The seeds `seeding` generates from a project's source (issue 37): each function-level seed
changes that function's block and no other, each module-level seed the module block alone,
and both change behaviour."""

from __future__ import annotations

import seeding

from shiftkit.core import blocks

SOURCE = '''"""A module."""
LIMIT = 3
NAMES = ("ä", "b")


class Box:
    size: int = 2

    def __init__(self, n):
        """Make one."""
        self.n = n

    def stub(self) -> int: ...

    def grow(self):
        return Box(self.n * LIMIT)


def total(boxes):
    def inner(b):
        return b.n

    return sum(inner(b) for b in boxes)
'''


def _changed(old: str, new: str) -> set[str]:
    before, after = blocks.fingerprints(old), blocks.fingerprints(new)
    assert before is not None and after is not None
    return {name for name in before if before[name] != after.get(name)}


def test_a_function_seed_per_function_changes_that_block_alone() -> None:
    seeds = seeding.function_seeds("m.py", SOURCE)
    assert [s.name for s in seeds] == [
        f"m.py: {name} raises" for name in ("Box.__init__", "Box.stub", "Box.grow", "total")
    ]
    for seed, name in zip(seeds, ("Box.__init__", "Box.stub", "Box.grow", "total"), strict=True):
        assert seed.kind == seeding.FUNCTION_RAISES and seed.old == SOURCE
        assert seed.new is not None and _changed(SOURCE, seed.new) == {name}
    space: dict[str, object] = {}
    exec(compile(seeds[2].new or "", "m.py", "exec"), space)
    box = space["Box"](1)  # type: ignore[operator]
    try:
        box.grow()
    except RuntimeError as error:
        assert str(error) == "seeded"
    else:
        raise AssertionError("the seeded method does not raise")


def test_a_module_seed_per_literal_assignment_changes_the_module_block_alone() -> None:
    seeds = seeding.module_seeds("m.py", SOURCE)
    assert [s.name for s in seeds] == [
        "m.py: LIMIT changed",
        "m.py: NAMES changed",
        "m.py: Box.size changed",
    ]
    for seed in seeds:
        assert seed.kind == seeding.MODULE and seed.new is not None
        assert _changed(SOURCE, seed.new) == {blocks.MODULE}
    assert "LIMIT = 4" in (seeds[0].new or "")
    assert "NAMES = ('ä~', \"b\")" in (seeds[1].new or "")  # (columns are UTF-8 offsets)


def test_a_junit_case_maps_to_its_node_id() -> None:
    node = seeding._node_id
    assert node("test.py", "test.TestUtils", "test_x") == "test.py::TestUtils::test_x"
    assert node("tests/test_e.py", "tests.test_e", "test_e[a-b]") == "tests/test_e.py::test_e[a-b]"
    assert node("other.py", "tests.test_e", "test_e") is None
