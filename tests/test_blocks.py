"""`core.blocks`: a module's blocks and their fingerprints (decision record 0116). Each rule
beside its twin: an edit inside one function changes its fingerprint alone, where an edit run
at import changes the module block; a new plain function changes nothing else, where one
that shadows a name (an import, a builtin) or is decorated changes the module block."""

from __future__ import annotations

from conftest import fuzz_examples
from hypothesis import given, settings
from hypothesis import strategies as st

from shiftkit.core import blocks

BASE = '''import os

LIMIT = 3


def add(a, b):
    """Add."""
    return a + b


class Box:
    size = 1

    def grow(self):
        return self.size + LIMIT


def sub(a, b):
    def inner(x):
        return -x
    return a + inner(b)
'''


def changed(before: str, after: str) -> set[str]:
    old, new = blocks.fingerprints(before), blocks.fingerprints(after)
    assert old is not None and new is not None
    return {name for name in old.keys() | new.keys() if old.get(name) != new.get(name)}


def test_an_edit_inside_a_function_changes_it_alone() -> None:
    assert changed(BASE, BASE.replace("return -x", "return 0 - x")) == {"sub"}
    assert changed(BASE, BASE.replace("self.size + LIMIT", "LIMIT + self.size")) == {"Box.grow"}


def test_formatting_and_comments_change_nothing_but_a_docstring_does() -> None:
    assert changed(BASE, BASE.replace("return a + b", "return (a +  b)  # sum")) == set()
    assert changed(BASE, BASE.replace('"""Add."""', '"""Sum."""')) == {"add"}


def test_an_edit_run_at_import_changes_the_module_block() -> None:
    assert changed(BASE, BASE.replace("LIMIT = 3", "LIMIT = 4")) == {blocks.MODULE}
    assert changed(BASE, BASE.replace("size = 1", "size = 2")) == {blocks.MODULE}
    assert blocks.MODULE in changed(BASE, BASE.replace("def add(a, b)", "def add(a, b=1)"))


def test_a_new_plain_function_changes_nothing_else() -> None:
    assert changed(BASE, BASE + "\n\ndef mul(a, b):\n    return a * b\n") == {"mul"}


def test_a_function_that_shadows_a_name_or_is_decorated_changes_the_module_block() -> None:
    for added in (
        "\n\ndef os(a):\n    return a\n",  # (shadows an import)
        "\n\ndef len(a):\n    return 0\n",  # (shadows a builtin)
        "\n\ndef LIMIT():\n    return 1\n",  # (replaces a global)
        "\n\n@staticmethod\ndef mul(a, b):\n    return a * b\n",  # (decorated: runs at import)
        "\n\ndef __getattr__(name):\n    return 4\n",  # (PEP 562: Python calls it)
        "\n\ndef __dir__():\n    return []\n",
        '\n\n__all__ = ["mul"]\n\n\ndef mul(a, b):\n    return a * b\n',  # (by string)
    ):
        assert blocks.MODULE in changed(BASE, BASE + added), added


def test_a_new_method_changes_the_module_block() -> None:
    method = "    def shrink(self):\n        return 0\n\n"
    after = BASE.replace("    def grow(self):", method + "    def grow(self):")
    assert blocks.MODULE in changed(BASE, after)


def test_lines_map_to_the_blocks_that_hold_them() -> None:
    lines = BASE.splitlines()
    inner = lines.index("        return -x") + 1
    grow = lines.index("        return self.size + LIMIT") + 1
    ran = blocks.executed(BASE, [1, inner, grow])
    assert ran is not None and set(ran) == {blocks.MODULE, "sub", "Box.grow"}


def test_source_that_does_not_parse_has_no_blocks() -> None:
    assert blocks.fingerprints("def broken(:\n") is None
    assert blocks.executed("def broken(:\n", [1]) is None


NAMES = st.sampled_from(["alpha", "beta", "gamma", "delta"])


@settings(max_examples=fuzz_examples(60), deadline=None)
@given(names=st.lists(NAMES, min_size=1, max_size=4, unique=True), edited=st.integers(0, 3),
       constant=st.integers(0, 9))  # fmt: skip
def test_editing_one_function_of_many_changes_that_one_alone(
    names: list[str], edited: int, constant: int
) -> None:
    def module(value: int) -> str:
        parts = ["import sys\n"]
        for i, name in enumerate(names):
            body = value if i == edited % len(names) else i
            parts.append(f"\ndef {name}(x):\n    return x + {body}\n")
        return "".join(parts)

    target = names[edited % len(names)]
    before, after = module(constant), module(constant + 1)
    assert changed(before, after) == {target}
