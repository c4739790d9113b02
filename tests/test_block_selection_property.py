"""The safety net of block-level selection (issue 37 item 3; decision record 0116), as a
property: generated modules whose functions call each other and read module-level values,
"features" that each call one function, random edits at function, module-level and name
granularity. Whenever an edit changes what a feature computes, the blocks it executed before
the edit are not all unchanged after it — selection never lets a changed result through.
Lines are traced in-process (sys.settrace), as coverage records them."""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

from conftest import fuzz_examples
from hypothesis import given, settings
from hypothesis import strategies as st

from shiftkit.core import blocks

NAMES = ["f0", "f1", "f2", "f3"]


@st.composite
def modules(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """(the module's lines before, after one edit), both of generated functions."""
    count = draw(st.integers(2, 4))
    lines = ["K = 3", "TABLE = {'a': 1}", ""]
    for i in range(count):
        callee = draw(st.sampled_from([*NAMES[:i], None])) if i else None
        term = draw(st.sampled_from(["x", "K", "TABLE['a']", "len('ab')"]))
        body = f"{term} + {i}" + (f" + {callee}(x)" if callee else "")
        lines += [f"def {NAMES[i]}(x):", f"    return {body}", ""]
    before = list(lines)
    edit = draw(st.sampled_from(["body", "constant", "table", "new", "shadow", "builtin"]))
    target = draw(st.integers(0, count - 1))
    if edit == "body":
        at = lines.index(f"def {NAMES[target]}(x):") + 1
        lines[at] = lines[at] + " + 1"
    elif edit == "constant":
        lines[0] = "K = 4"
    elif edit == "table":
        lines[1] = "TABLE = {'a': 2}"
    elif edit == "new":
        lines += ["def extra(x):", "    return x * 100", ""]
    elif edit == "shadow":
        lines += ["def K():", "    return 0", "", "K = 5", ""]
    else:
        lines += ["def len(x):", "    return 7", ""]
    return before, lines


def run(source: str, function: str, argument: int) -> tuple[Any, set[int]]:
    """What ``function(argument)`` returns with ``source`` imported, and the lines of the
    module run (importing it and calling the function)."""
    hit: set[int] = set()

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        if frame.f_code.co_filename == "m.py":
            hit.add(frame.f_lineno)
        return tracer

    namespace: dict[str, Any] = {"__name__": "m"}
    code = compile(source, "m.py", "exec")
    sys.settrace(tracer)
    try:
        exec(code, namespace)
        result: Any = namespace[function](argument)
    except Exception as exc:  # (a broken edit: its failure is a result too)
        result = repr(exc)
    finally:
        sys.settrace(None)
    return result, hit


@settings(max_examples=fuzz_examples(300), deadline=None)
@given(pair=modules(), feature=st.integers(0, 3), argument=st.integers(-5, 5))
def test_no_changed_result_escapes_the_selection(
    pair: tuple[list[str], list[str]], feature: int, argument: int
) -> None:
    before, after = ("\n".join(lines) + "\n" for lines in pair)
    names = [n for n in NAMES if f"def {n}(x):" in before]
    function = names[feature % len(names)]
    result_before, lines = run(before, function, argument)
    result_after, _ = run(after, function, argument)
    ran = blocks.executed(before, lines)
    now = blocks.fingerprints(after)
    assert ran is not None
    if result_before != result_after:
        assert not blocks.unchanged(ran, now), (before, after, function)
