"""The verifier's environment is the person's (issue 35 item 3; decision record 0088): a
verifier and `init` get PATH, HOME, TMPDIR, the user, locale and terminal, and the variables
`.shiftkit.toml` names in `env` — nothing else from the caller. An agent running
`PYTEST_PLUGINS=... shiftkit finish` (the trial's F008), `PYTEST_ADDOPTS` or `PYTHONPATH`
is refused locally, in `finish`, not only in CI. Real git, real pytest (`calc`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git_ok, implement, ok, shiftkit, write

from shiftkit.edge import verify

NOOP_PLUGIN = "import _pytest.python\n\n_pytest.python.Function.runtest = lambda self: None\n"
# (a sitecustomize runs before sys.path holds the project: it reaches pytest by a variable)
SITE = "import os\n\nos.environ['PYTEST_PLUGINS'] = 'calc.shortcut'\n"


def feature_of(project: Path, name: str) -> str:
    document = json.loads((project / "features.json").read_text())
    return next(i["id"] for i in document["features"] if f"test_{name}.py" in i.get("verify", ""))


def passing(project: Path, feature: str) -> bool:
    document = json.loads((project / "features.json").read_text())
    return bool(next(i for i in document["features"] if i["id"] == feature).get("passes"))


# (the variable, its value, the files the agent's change adds beside the broken code)
SHELLS = {
    "PYTEST_PLUGINS": ("calc.shortcut", {"calc/shortcut.py": NOOP_PLUGIN}),
    "PYTEST_ADDOPTS": ("-p calc.shortcut", {"calc/shortcut.py": NOOP_PLUGIN}),
    "PYTHONPATH": (
        "helpers",
        {"helpers/sitecustomize.py": SITE, "calc/shortcut.py": NOOP_PLUGIN},
    ),
}


@pytest.mark.parametrize("variable", sorted(SHELLS))
def test_a_variable_in_the_agent_s_shell_changes_no_verdict(calc: Path, variable: str) -> None:
    value, files = SHELLS[variable]
    feature = feature_of(calc, "add")
    ok(calc, "claim", feature)
    implement(calc, "add", good=False)
    for name, text in files.items():
        write(calc / name, text)
    finished = shiftkit(calc, "finish", "-m", "add two numbers", env={variable: value})
    assert finished.returncode != 0, finished.output
    assert not passing(calc, feature)


def test_the_honest_finish_passes_and_a_named_variable_reaches_the_verifier(calc: Path) -> None:
    settings = calc / ".shiftkit.toml"
    settings.write_text(
        settings.read_text().replace("[shiftkit]\n", '[shiftkit]\nenv = ["CALC_MODE"]\n', 1)
    )
    git_ok(calc, "add", "-A")
    git_ok(
        calc,
        "commit",
        "-q",
        "-m",
        "Name CALC_MODE",
        "-m",
        "Shiftkit-Override: the verifier needs it",
    )
    feature = feature_of(calc, "add")
    ok(calc, "claim", feature)
    implement(calc, "add")
    test = calc / "tests" / "test_mode.py"
    write(test, "import os\n\n\ndef test_mode():\n    assert os.environ['CALC_MODE'] == 'on'\n")
    finished = shiftkit(calc, "finish", "-m", "add two numbers", env={"CALC_MODE": "on"})
    assert finished.returncode == 0, finished.output
    assert passing(calc, feature)


def test_the_environment_is_an_allowlist() -> None:
    base = {
        "PATH": "/usr/bin",
        "HOME": "/home/a",
        "LC_NUMERIC": "C",
        "PYTEST_ADDOPTS": "-p x",
        "PYTHONPATH": "/x",
        "LD_PRELOAD": "/x.so",
        "VIRTUAL_ENV": "/v",
        "COVERAGE_PROCESS_START": "/c",
        "SECRET_TOKEN": "t",
        "CALC_MODE": "on",
    }
    kept = verify.verifier_environment(base, ("CALC_MODE",))
    assert kept == {"PATH": "/usr/bin", "HOME": "/home/a", "LC_NUMERIC": "C", "CALC_MODE": "on"}
