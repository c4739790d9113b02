"""The ceilings of grains finer than a block (tests/finer_grain.py, draft decision record
0123): what they leave out, and the holes a selector at that grain would need a shape
fingerprint or a fallback for. Pure: executed lines are given as the recorder reports them
on Python 3.12 (no LINE event for a `def` line when called, nor for a docstring)."""

from __future__ import annotations

import finer_grain as fg

BRANCH = "X = 1\n\ndef f(flag=False):\n    y = X\n    if flag:\n        z = 0\n    return y\n"
CALLED = frozenset({1, 3, 4, 5, 7})  # (the module ran, f was called without its branch)
IMPORTED = frozenset({1, 3})  # (the module ran, f was never called)


def test_a_change_in_a_branch_a_run_never_took_leaves_it_out() -> None:
    new = BRANCH.replace("z = 0", "z = 1")
    assert fg.statements(BRANCH, new, CALLED, True) is False
    assert fg.statements(BRANCH, new, CALLED | {6}, True) is True
    edited = BRANCH.replace("return y", "return -y")
    assert fg.statements(BRANCH, edited, CALLED, True) is True
    assert fg.statements(BRANCH, edited, IMPORTED, True) is False


def test_an_inserted_statement_counts_when_its_body_was_entered() -> None:
    raising = BRANCH.replace("    y = X\n", "    raise RuntimeError\n    y = X\n")
    assert fg.statements(BRANCH, raising, CALLED, True) is True
    assert fg.statements(BRANCH, raising, IMPORTED, True) is False


def test_a_signature_default_or_decorator_counts_for_every_importer() -> None:
    new = BRANCH.replace("flag=False", "flag=True")
    assert fg.statements(BRANCH, new, IMPORTED, True) is True


def test_a_docstring_counts_for_every_importer() -> None:
    old = "def f():\n    '''one'''\n    return 1\n"
    assert fg.statements(old, old.replace("one", "two"), frozenset({1}), True) is True


def test_lines_never_executed_that_change_the_executed_ones_need_the_shape() -> None:
    """A new local, a `global`, a `yield` on a line no run executed change what the executed
    lines do (UnboundLocalError, a write to the module, a generator): the statement grain
    alone leaves the run out; the shape fingerprint sends the change back to the block."""
    for line in ("X = 2", "global X", "yield 2"):
        new = BRANCH.replace("z = 0", line)
        places = fg.statement_places(BRANCH, new)
        assert places is not None
        assert not any(fg._ran(place, CALLED, True) for place in places), line
        assert fg.shape(BRANCH) != fg.shape(new), line
        assert fg.statements(BRANCH, new, CALLED, True) is None, line
    assert fg.shape(BRANCH) == fg.shape(BRANCH.replace("z = 0", "z = 'other'"))


def test_a_rebinding_is_told_from_other_module_changes() -> None:
    old = "import re\nA = 1\nB = A + 1\nP = re.compile('x')\n\ndef f():\n    return B\n"
    found = fg.rebinding(old, old.replace("A = 1", "A = 2"))
    assert found is not None and found.names == {"A", "B"} and found.literal
    pattern = fg.rebinding(old, old.replace("'x'", "'('"))
    assert pattern is not None and not pattern.literal  # (it raises at import)
    assert fg.rebinding(old, old.replace("import re\n", "import re\nimport os\n")) is None
    assert fg.rebinding(old, old.replace("return B", "return A")) is None


def test_names_read_by_the_executed_code_select_and_the_safe_grain_falls_back() -> None:
    old = "A = 1\nB = 2\n\ndef f():\n    return A\n\ndef g():\n    return getattr(f, 'x', B)\n"
    reads = {"m.py": fg.CodeReads(old, "m.py")}
    a = fg.rebinding(old, old.replace("A = 1", "A = 3"))
    b = fg.rebinding(old, old.replace("B = 2", "B = 3"))
    f_only = {"m.py": frozenset({1, 2, 4, 5, 7})}
    assert fg.names(a, "m.py", reads, f_only, safe=False) is True
    assert fg.names(b, "m.py", reads, f_only, safe=False) is False
    g_too = {"m.py": frozenset({1, 2, 4, 5, 7, 8})}
    assert fg.names(b, "m.py", reads, g_too, safe=True) is True
    slots = "class C:\n    __slots__ = ('a',)\n"
    rebound = fg.rebinding(slots, slots.replace("'a'", "'b'"))
    class_body = ({"s.py": fg.CodeReads(slots, "s.py")}, {"s.py": frozenset({1, 2})})
    # (no code of the checkout reads `__slots__`: Python does — the miss the bench found)
    assert fg.names(rebound, "s.py", *class_body, safe=False) is False
    assert fg.names(rebound, "s.py", *class_body, safe=True) is None
