"""Rule 14: a committed feature's oracle, shiftkit's enforcement files and the committed
decision records change only as a person's action (issue 26 item 1, issue 27 items 1 and 4;
decision records 0048-0050). Real git, real hooks, a real pytest project (`calc`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Result, calc_verifier, git, git_ok, implement, shiftkit, write

NO_HOOKS = ("-c", "core.hooksPath=/dev/null/no-hooks")
SKIP_MARKER = "import pytest\n\n\n@pytest.mark.skip\ndef test_add():\n    assert False\n"
ROOT_CONFTEST = (
    "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n"
    "    for item in items:\n        item.add_marker(pytest.mark.skip)\n"
)
SHADOW = "import sys\nsys.exit(0)\n"


# A trial agent's stub: pytest imports pdb at start, and a root pdb.py comes first.
PDB_SHADOW = (
    "import _pytest.python\n_pytest.python.Function.runtest = lambda self: None\n"
    "from importlib import util as _u\n"
)


def commit(project: Path, message: str, *extra: str) -> Result:
    git_ok(project, "add", "-A")
    return git(project, "commit", "-q", "-m", message, *extra)


# -- the oracle inferred from the verify command ------------------------------------------------


@pytest.mark.parametrize(
    ("command", "patterns", "pytest_run"),
    [
        ("pytest tests/test_x.py::test_one -q", ("tests/test_x.py",), True),
        (
            "python -m pytest tests/accept",
            (
                "tests/accept/**/test_*.py",
                "tests/accept/**/*_test.py",
                "tests/accept/**/conftest.py",
            ),
            True,
        ),
        ("timeout 60 uv run pytest -c ci.ini t/a_test.py", ("ci.ini", "t/a_test.py"), True),
        ("cd sub && python3 -m pytest -k fast x/test_y.py", ("sub/x/test_y.py",), True),
        ("./init.sh smoke", (), False),  # (a script may be the code as much as the check)
        ("python tests/check.py", (), False),
        ("true", (), False),
        ("pytest ../elsewhere/test_a.py", (), True),
    ],
)
def test_inference(command: str, patterns: tuple[str, ...], pytest_run: bool) -> None:
    from shiftkit.core import oracle

    found = oracle.oracle_of(command, ())
    assert found.patterns == patterns
    assert found.pytest is pytest_run
    if pytest_run:
        assert "" in found.folders  # the root's conftest and settings count


def test_ground_names_the_feature_and_lets_additions_through() -> None:
    from shiftkit.core import protected

    ground = protected.ground(
        [("F001", "pytest tests/test_a.py", ()), ("F002", "true", ("data/**",))],
        (),
        "docs/decisions",
        protected.protocol_files("features.json", "log.txt", "archive.txt"),
    )
    rows = [
        ("M", "tests/test_a.py"),
        ("A", "tests/test_new.py"),
        ("M", "src/app.py"),
        ("D", "data/x.json"),
        ("A", "pytest.py"),
        ("M", "docs/decisions/0001-a.md"),
        ("A", "docs/decisions/0002-b.md"),
        ("M", "features.json"),
    ]
    hits = protected.changes(ground, rows, {})
    assert [(h.path, h.feature) for h in hits] == [
        ("tests/test_a.py", "F001"),
        ("data/x.json", "F002"),
        ("pytest.py", "F001"),
        ("docs/decisions/0001-a.md", None),
    ]
    assert protected.load(protected.dump(ground)) == ground


def test_a_new_module_shadowing_what_pytest_imports_is_part_of_the_oracle() -> None:
    """A root `pdb.py` (pytest imports pdb at start) stubbed out every test in an agent trial:
    a new module named for the standard library or the runner's imports, at the root or in a
    test's folder, is an oracle change; a namespace folder, an old module and the project's own
    new modules are not."""
    from shiftkit.core import protected

    ground = protected.ground([("F001", "pytest tests/accept/test_a.py", ())], (), "d", ())
    rows = [
        ("A", "pdb.py"),
        ("A", "unittest/__init__.py"),
        ("A", "tests/accept/json.py"),
        ("A", "pygments.py"),
        ("A", "site/index.html"),  # (no module: a folder of pages)
        ("A", "mylib.py"),
        ("A", "src/json.py"),  # (not on pytest's path)
        ("M", "calendar.py"),  # (the project's own, committed before: not new)
    ]
    hits = protected.changes(ground, rows, {})
    assert [h.path for h in hits] == [
        "pdb.py",
        "unittest/__init__.py",
        "tests/accept/json.py",
        "pygments.py",
    ]
    assert "`pdb`" in hits[0].what
    assert not protected.changes(
        protected.ground([("F001", "true", ())], (), "d", ()), [("A", "pdb.py")], {}
    )  # (no pytest verifier: nothing imports it)


def test_only_the_pytest_section_of_pyproject_counts() -> None:
    from shiftkit.core import protected

    ground = protected.ground([("F001", "pytest t/test_a.py", ())], (), "docs/decisions", ())
    rows = [("M", "pyproject.toml")]
    other = ('[project]\nname = "a"\n', '[project]\nname = "b"\n')
    assert protected.changes(ground, rows, {"pyproject.toml": other}) == []
    loosened = ('[project]\nname = "a"\n', '[tool.pytest.ini_options]\naddopts = "-k nothing"\n')
    assert protected.changes(ground, rows, {"pyproject.toml": loosened})


# -- the commit hooks ---------------------------------------------------------------------------


def test_skip_marker_on_a_committed_test_is_refused(calc: Path) -> None:
    write(calc / "tests" / "test_add.py", SKIP_MARKER)
    refused = commit(calc, "Skip a flaky test")
    assert refused.returncode != 0
    assert "rule 14" in refused.output and "tests/test_add.py" in refused.output


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("conftest.py", ROOT_CONFTEST),
        ("pytest.py", SHADOW),
        ("pytest.ini", ""),
        # (pytest 9 reads these first, issue 35 A1)
        ("pytest.toml", '[pytest]\naddopts = ["-k", "nothing"]\n'),
        (".pytest.toml", '[pytest]\naddopts = ["-k", "nothing"]\n'),
        ("pdb.py", PDB_SHADOW),
    ],
)
def test_a_new_root_conftest_or_shadow_is_refused(calc: Path, path: str, text: str) -> None:
    write(calc / path, text)
    refused = commit(calc, "Add a helper at the root")
    assert refused.returncode != 0, refused.output
    assert "rule 14 [" in refused.output and path in refused.output


def test_code_and_new_tests_commit_plainly(calc: Path) -> None:
    implement(calc, "add")
    write(calc / "tests" / "test_extra.py", "def test_extra():\n    assert True\n")
    done = commit(calc, "Implement add, with an extra test")
    assert done.returncode == 0, done.output


def test_a_person_override_is_accepted_and_listed(calc: Path) -> None:
    write(calc / "tests" / "test_add.py", SKIP_MARKER)
    done = commit(
        calc, "Skip add until the parser lands", "-m", "Shiftkit-Override: agreed with Ana"
    )
    assert done.returncode == 0, done.output
    audited = shiftkit(calc, "audit")
    assert audited.returncode == 0, audited.output
    assert "override of rule(s) 14: agreed with Ana" in audited.output
    assert shiftkit(calc, "audit", "--strict").returncode != 0


def test_the_finish_commit_cannot_rewrite_its_test(calc: Path) -> None:
    feature = json.loads((calc / "features.json").read_text())["features"][-3]["id"]
    assert shiftkit(calc, "claim", feature).returncode == 0
    write(calc / "tests" / "test_add.py", "def test_add():\n    assert True\n")
    finished = shiftkit(calc, "finish", "-m", "add two numbers")
    assert finished.returncode != 0, finished.output
    assert "rule 14" in finished.output and "tests/test_add.py" in finished.output
    # (refused by the plan, before any verifier ran: nothing to wait for, nothing written)
    assert "running" not in finished.output and "nothing was changed" in finished.output
    assert git(calc, "status", "--porcelain").stdout.strip() == "M tests/test_add.py"


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("tests/test_add.py", SKIP_MARKER),
        ("conftest.py", ROOT_CONFTEST),
        ("pytest.py", SHADOW),
        ("pdb.py", PDB_SHADOW),
    ],
)
def test_audit_flags_what_was_forced_past_every_hook(calc: Path, path: str, text: str) -> None:
    write(calc / path, text)
    git_ok(calc, "add", "-A")
    git_ok(calc, *NO_HOOKS, "commit", "-q", "--no-verify", "-m", "Tidy the tests")
    for args in (("audit",), ("audit", "--reverify")):
        audited = shiftkit(calc, *args)
        assert audited.returncode != 0, audited.output
        assert "rule 14" in audited.output and path in audited.output


def test_the_reference_transaction_hook_refuses_no_verify(calc: Path) -> None:
    write(calc / "tests" / "test_add.py", SKIP_MARKER)
    git_ok(calc, "add", "-A")
    refused = git(calc, "commit", "-q", "--no-verify", "-m", "Tidy the tests")
    assert refused.returncode != 0
    assert "rule 14" in refused.output


# -- shiftkit's enforcement files -------------------------------------------------------------


def _drop_hooks(project: Path) -> None:
    path = project / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    del settings["hooks"]["PreToolUse"], settings["hooks"]["Stop"]
    path.write_text(json.dumps(settings, indent=2) + "\n")


def _no_repos(project: Path) -> None:
    (project / ".pre-commit-config.yaml").write_text("repos: []\n")


def _neuter_ci(project: Path) -> None:
    path = project / ".github" / "workflows" / "shiftkit-audit.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "on: push\njobs:\n  audit:\n    runs-on: ubuntu-latest\n    steps:\n      - run: 'true'\n"
    )


@pytest.mark.parametrize("change", [_drop_hooks, _no_repos, _neuter_ci])
def test_enforcement_edits_are_refused(scaffold: Path, change: Callable[[Path], None]) -> None:
    change(scaffold)
    refused = commit(scaffold, "Simplify the tooling")
    assert refused.returncode != 0, refused.output
    assert "rule 14" in refused.output


def test_a_users_own_hook_beside_shiftkits_is_theirs(scaffold: Path) -> None:
    path = scaffold / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    settings["hooks"]["PostToolUse"] = [{"hooks": [{"type": "command", "command": "ruff format"}]}]
    path.write_text(json.dumps(settings, indent=2) + "\n")
    done = commit(scaffold, "Format after each edit")
    assert done.returncode == 0, done.output


# -- decision records ---------------------------------------------------------------------------


def _record(project: Path) -> Path:
    return next((project / "docs" / "decisions").glob("0001-*.md"))


def test_a_committed_record_is_never_rewritten_or_deleted(scaffold: Path) -> None:
    record = _record(scaffold)
    record.write_text(record.read_text() + "\nWe changed our minds.\n")
    refused = commit(scaffold, "Amend the first decision")
    assert refused.returncode != 0 and "rule 14" in refused.output
    git_ok(scaffold, "checkout", "--", ".")
    record.unlink()
    index = scaffold / "docs" / "decisions" / "README.md"
    lines = index.read_text().splitlines(True)
    index.write_text("".join(line for line in lines if record.name not in line))
    refused = commit(scaffold, "Drop the first decision")
    assert refused.returncode != 0, refused.output
    assert record.name in refused.output and "README.md" in refused.output


def test_a_new_record_is_free(scaffold: Path) -> None:
    made = shiftkit(
        scaffold, "decide", "Use SQLite", "--why", "one file", "--rejected", "Postgres: a server"
    )
    assert made.returncode == 0, made.output
    assert git(scaffold, "status", "--porcelain").stdout == ""


# -- agent-added features -----------------------------------------------------------------------


def test_appending_a_feature_is_a_person_action(calc: Path) -> None:
    write(calc / "tests" / "test_div.py", "def test_div():\n    assert True\n")
    added = shiftkit(
        calc, "add", "--description", "div", "--step", "s", "--verify", calc_verifier("div")
    )
    assert added.returncode == 0, added.output
    done = commit(calc, "Add the div feature and its test")
    assert done.returncode == 0, done.output
    audited = shiftkit(calc, "audit")
    assert "features added" in audited.output
    assert shiftkit(calc, "audit", "--strict").returncode != 0


# -- the guard: the agent's tools, under the same rule --------------------------------------------

PATCH = (
    "*** Begin Patch\n*** Update File: tests/test_add.py\n@@\n"
    "-    assert add(2, 3) == 5\n+    assert True\n*** End Patch\n"
)
DENIED = [
    ("Bash", {"command": "sed -i 's/== 5/== 5 or True/' tests/test_add.py"}),
    ("Bash", {"command": "echo 'import sys; sys.exit(0)' > pytest.py"}),
    ("Bash", {"command": "printf 'x' | tee conftest.py"}),
    ("Bash", {"command": "rm docs/decisions/0001-record-decisions.md"}),
    ("Bash", {"command": "mv tests/test_add.py tests/test_add.bak"}),
    ("Bash", {"command": "git checkout HEAD~1 -- tests/test_add.py"}),
    ("Bash", {"command": "cp /dev/null .claude/settings.json"}),
    ("Edit", {"file_path": "tests/test_add.py", "old_string": "== 5", "new_string": "!= 0"}),
    ("Write", {"file_path": "conftest.py", "content": ROOT_CONFTEST}),
    ("Write", {"file_path": ".pre-commit-config.yaml", "content": "repos: []\n"}),
    ("Write", {"file_path": "pdb.py", "content": PDB_SHADOW}),
    ("Bash", {"command": "printf 'import sys' > tests/json.py"}),
    ("apply_patch", {"command": PATCH}),
]
ALLOWED = [
    ("Bash", {"command": "echo 'def div(a, b):\n    return a / b' >> calc/ops.py"}),
    ("Bash", {"command": "python -m pytest -q tests/test_add.py > /tmp/out.txt"}),
    ("Write", {"file_path": "tests/test_div.py", "content": "def test_div():\n    pass\n"}),
    ("Write", {"file_path": "calc/helpers.py", "content": "X = 1\n"}),
    ("Edit", {"file_path": "calc/ops.py", "old_string": "", "new_string": "# ops\n"}),
]


def guard(project: Path, tool: str, tool_input: dict[str, str]) -> Result:
    payload = dict(tool_input)
    if "file_path" in payload:
        payload["file_path"] = str(project / payload["file_path"])
    hook = {"tool_name": tool, "tool_input": payload, "cwd": str(project)}
    return shiftkit(project, "guard", input=json.dumps(hook))


def test_the_guard_keeps_the_agents_tools_off_the_ground(calc: Path) -> None:
    for tool, tool_input in DENIED:
        denied = guard(calc, tool, tool_input)
        assert denied.returncode == 2, (tool, tool_input, denied.output)
        assert "rule 14" in denied.output and "ask a person" in denied.output, denied.output
        assert len(denied.output.strip().splitlines()) == 1
    for tool, tool_input in ALLOWED:
        allowed = guard(calc, tool, tool_input)
        assert allowed.returncode == 0, (tool, tool_input, allowed.output)


def test_the_report_marks_the_features_added_later(calc: Path) -> None:
    shown = shiftkit(calc, "report", "--json")
    assert shown.returncode == 0, shown.output
    added = {row["id"]: row["added_later"] for row in json.loads(shown.stdout)["features"]}
    assert added["F000"] is False  # (in the list's first commit)
    assert sorted(i for i, later in added.items() if later) == sorted(set(added) - {"F000"})


def test_the_oracle_setting_is_a_list_of_project_paths() -> None:
    from shiftkit.core import config
    from shiftkit.core.errors import BadInput

    parsed = config.parse('[shiftkit]\noracle = ["tests/accept/**"]\n')
    assert parsed.oracle == ("tests/accept/**",)
    assert "oracle" in config.ENFORCEMENT_KEYS
    for bad in ('"tests/**"', '["/etc/passwd"]', '["../x/**"]', "[1]"):
        with pytest.raises(BadInput, match=r"'shiftkit\.oracle'"):
            config.parse(f"[shiftkit]\noracle = {bad}\n")


def test_under_the_signed_policy_an_oracle_change_needs_a_signature(
    calc: Path, tmp_path: Path
) -> None:
    from test_trust import make_key, set_config, signing_env

    person = make_key(tmp_path, "person")
    write(calc / ".shiftkit" / "allowed_signers", f"person@x {Path(f'{person}.pub').read_text()}")
    set_config(calc, "shiftkit.people", 'policy = "signed"')
    assert commit(calc, "Person actions need a signature from now on").returncode == 0
    write(calc / "tests" / "test_add.py", SKIP_MARKER)
    message = ("-m", "Skip add for now", "-m", "Shiftkit-Override: agreed with Ana")
    unsigned = commit(calc, *message[1:])
    assert unsigned.returncode != 0 and "rule 11" in unsigned.output, unsigned.output
    signed = git(calc, "commit", "-q", "-S", *message, env=signing_env(person))
    assert signed.returncode == 0, signed.output
    assert shiftkit(calc, "audit").returncode == 0
