"""A recall hole of block-level sets found while extending the seeded-change bench (issue
37), closed: a module-level ``__getattr__`` (PEP 562) is called by the interpreter for every
failed attribute lookup on its module — ``getattr(module, name, default)``, ``hasattr``,
``from module import name`` — yet `core.blocks._skeleton` left it out of the module block
when nothing in the module named it, like any plain new function, and `affected.touches`
cleared a run whose outcome it changed. Now every module-level function with a ``__dunder__``
name (Python looks those up itself) and every name a string in the module spells
(``__all__``) stays in the module block; the honest twin — a plain new function nothing names
changes no other block — is tests/test_blocks.py's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from shiftkit.core import affected, blocks

LIB = "import os\n\nLIMIT = 3\n"
WITH_HOOK = LIB + "\n\ndef __getattr__(name):\n    return 4\n"
TEST = (
    "import lib\n\n"
    "def test_no_width_by_default():\n"
    "    assert getattr(lib, 'WIDTH', None) is None\n"
)


def _passes(folder: Path, lib: str) -> bool:
    (folder / "lib.py").write_text(lib)
    (folder / "test_lib.py").write_text(TEST)
    code = "import test_lib; test_lib.test_no_width_by_default()"
    return subprocess.run([sys.executable, "-c", code], cwd=folder).returncode == 0


def test_a_new_module_getattr_touches_every_run_that_imported_the_module(tmp_path: Path) -> None:
    # the run: it imported lib (every line of lib.py is module level) and passed
    assert _passes(tmp_path, LIB)
    ran = blocks.executed(LIB, [1, 3])
    assert ran == {blocks.MODULE: blocks.fingerprints(LIB)[blocks.MODULE]}  # type: ignore[index]
    read_set = affected.ReadSet(
        "t", "c", frozenset({"lib.py", "test_lib.py"}), blocks={"lib.py": ran}
    )
    # the change: a __getattr__ added, which the same run now fails on
    assert not _passes(tmp_path, WITH_HOOK)
    change = affected.Change(
        frozenset({"lib.py"}),
        resized=frozenset(),
        blocks={"lib.py": blocks.fingerprints(WITH_HOOK)},
    )
    assert affected.touches(read_set, change)
