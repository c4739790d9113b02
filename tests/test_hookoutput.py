"""Reading the hooks' output of a refused commit (in memory; the real hooks run in
tests/test_other_hooks.py)."""

from __future__ import annotations

from shiftkit.core import hookoutput

# What pre-commit 4 prints (no terminal, so no colours) when two hooks fail.
FRAMEWORK = """\
shiftkit rules (staged tree).............................................Passed
fix end of files.........................................................Passed
trim trailing whitespace.................................................Failed
- hook id: trailing-whitespace
- exit code: 1
- files were modified by this hook

Fixing calc/ops.py

mixed line ending........................................................Passed
check json...............................................................Failed
- hook id: check-json
- exit code: 1

b.json: Failed to json decode (Expecting property name: line 1 column 9 (char 8))

check yaml...........................................(no files to check)Skipped
"""


def test_failed_hooks_are_named_with_their_output() -> None:
    failed = hookoutput.failed_hooks(FRAMEWORK)
    assert [(h.id, h.name, h.modified_files) for h in failed] == [
        ("trailing-whitespace", "trim trailing whitespace", True),
        ("check-json", "check json", False),
    ]
    assert failed[0].output.endswith("Fixing calc/ops.py")
    assert "b.json: Failed to json decode" in failed[1].output
    line = hookoutput.refusal(FRAMEWORK)
    assert line == (
        "the commit was refused by the hooks trailing-whitespace, check-json "
        "(trailing-whitespace modified files in the work tree)"
    )
    shown = hookoutput.shown(FRAMEWORK)
    assert "Fixing calc/ops.py" in shown and "b.json: Failed" in shown
    assert "Passed" not in shown and "Skipped" not in shown


def test_colours_and_crlf_do_not_hide_a_failure() -> None:
    coloured = (
        "trim trailing whitespace.....\x1b[41mFailed\x1b[m\r\n"
        "\x1b[2m- hook id: trailing-whitespace\x1b[m\r\n"
    )
    [hook] = hookoutput.failed_hooks(coloured)
    assert hook.id == "trailing-whitespace"


def test_shiftkits_own_reasons_are_kept_in_the_line() -> None:
    output = (
        "shiftkit rules (staged tree).............................................Failed\n"
        "- hook id: shiftkit-pre-commit\n- exit code: 1\n\n"
        "shiftkit: commit refused by rule 3: two features become passing\n"
    )
    assert hookoutput.refusal(output) == (
        "the commit was refused by the hook shiftkit-pre-commit: shiftkit: commit refused "
        "by rule 3: two features become passing"
    )


def test_output_without_the_framework_falls_back_to_its_reasons_or_last_lines() -> None:
    shims = "shiftkit: commit refused by rule 9: the subject is a bare 'wip'\n"
    assert hookoutput.refusal(shims).endswith("rule 9: the subject is a bare 'wip'")
    other = "lint...\nsomething is wrong\nline a\nline b\nline c\n"
    assert hookoutput.refusal(other) == "the commit was refused by a hook: line a / line b / line c"
    assert hookoutput.refusal("") == "the commit was refused by a hook: it printed nothing"
    assert hookoutput.shown(other) == other.strip("\n")


def test_a_long_output_is_shown_from_its_start_with_a_note_of_the_rest() -> None:
    output = FRAMEWORK.replace("Fixing calc/ops.py", "\n".join(f"line {i}" for i in range(500)))
    shown = hookoutput.shown(output).split("\n")
    assert len(shown) == hookoutput.MAX_LINES + 1
    assert shown[0].startswith("trim trailing whitespace....")
    assert shown[-1].startswith("... (") and "more lines of hook output not shown" in shown[-1]
