"""Block-level dependency sets (issue 37; decision record 0116): while a pytest verifier
passes, the code blocks it executed are recorded — by coverage.py before Python 3.12 (asked for
with `SHIFTKIT_BLOCKS=on`), by `sys.monitoring` on 3.12+ (the default, decision record 0119);
a change re-verifies a passing feature only when a block it executed changed. Real pytest on
both interpreters, one module shared by three features (calc/ops.py: add, sub, mul).

Twins: a module-level edit (a new import) touches every feature that imported the module;
without block sets (file level) a change inside one function touches all of them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import implement, shiftkit


def two_passing(calc: Path, env: dict[str, str]) -> None:
    for args in (("claim",), ("finish", "-m", "the environment builds")):
        assert shiftkit(calc, *args, env=env).returncode == 0
    for name, summary in (("add", "add two numbers"), ("sub", "subtract two numbers")):
        assert shiftkit(calc, "claim", env=env).returncode == 0
        implement(calc, name)
        done = shiftkit(calc, "finish", "-m", summary, env=env)
        assert done.returncode == 0, done.output


def re_verified(calc: Path, env: dict[str, str], edit: str, by: str) -> list[str]:
    """Finish F003 (mul) with ``edit`` of calc/ops.py replaced ``by``: the passing features
    its gate re-verified."""
    assert shiftkit(calc, "claim", "F003", env=env).returncode == 0
    implement(calc, "mul")
    return finish_editing(calc, "calc/ops.py", edit, by, env)


def finish_editing(project: Path, path: str, old: str, new: str, env: dict[str, str]) -> list[str]:
    """``path`` edited (``old`` → ``new``) as part of the claimed work, then `finish`: the
    passing features its gate re-verified."""
    edited = project / path
    assert old in edited.read_text()
    edited.write_text(edited.read_text().replace(old, new, 1))
    done = shiftkit(project, "finish", "-m", "the claimed work", env=env)
    assert done.returncode == 0, done.output
    found = re.search(r"re-verifying the passing features this change can touch: ([F0-9, ]+)",
                      done.stdout)  # fmt: skip
    return found.group(1).strip().split(", ") if found else []


def test_a_change_inside_one_function_re_verifies_its_feature_alone(
    calc: Path, block_sets: dict[str, str]
) -> None:
    two_passing(calc, block_sets)
    assert re_verified(calc, block_sets, "return a - b", "return -(b - a)") == ["F002"]


def test_a_module_level_change_re_verifies_every_feature_that_imported_it(
    calc: Path, block_sets: dict[str, str]
) -> None:
    two_passing(calc, block_sets)
    edit = ("def add", "import os\n\n\ndef add")
    assert re_verified(calc, block_sets, *edit) == ["F001", "F002"]


@pytest.mark.parametrize("switch", ["off", "default"])
def test_file_level_sets_re_verify_every_reader(
    calc: Path, newer_python: dict[str, str], switch: str
) -> None:
    """Block sets off by name, or the default with verifiers on Python 3.11 (nothing measures
    them): every feature that read the file."""
    env = {**newer_python, "SHIFTKIT_BLOCKS": "off"} if switch == "off" else {}
    two_passing(calc, env)
    assert re_verified(calc, env, "return a - b", "return -(b - a)") == ["F001", "F002"]
