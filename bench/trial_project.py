"""A team trial's project: `tally`, a small expense CLI whose acceptance tests are written first
(9 features that build on each other: a shared store, commands that read what others write),
shared through a `git daemon` on 127.0.0.1, with one clone per agent.

Run: python bench/trial_project.py DIR [--agents N] [--port P]
Makes DIR/project (the person's clone, scaffolded and pushed), DIR/remote.git (served by
`git daemon` at git://127.0.0.1:P/remote.git while this script runs; Ctrl-C ends it) and
DIR/agent-1..N (clones with the hooks installed). The agents then work with only what
shiftkit shows them: `shiftkit start`, `claim`, `verify`, `finish`, `revert`, `sync`.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

TESTS = {
    "F001": (
        "amounts parse to cents and bad amounts are refused",
        "test_f001_amounts.py",
        """
import pytest
from tally.amounts import cents, show

def test_parses_whole_and_decimal_amounts():
    assert cents("12") == 1200
    assert cents("12.5") == 1250
    assert cents("0.07") == 7

@pytest.mark.parametrize("bad", ["", "abc", "1.234", "-3", "1,5"])
def test_refuses_bad_amounts(bad):
    with pytest.raises(ValueError):
        cents(bad)

def test_shows_cents_as_money():
    assert show(1250) == "12.50"
    assert show(7) == "0.07"
""",
        [],
    ),
    "F002": (
        "`tally add NAME AMOUNT` records an expense in tally.json",
        "test_f002_add.py",
        """
import json
from conftest import tally

def test_add_records_an_expense(tmp_path):
    result = tally(tmp_path, "add", "coffee", "3.20")
    assert result.returncode == 0, result.stderr
    data = json.loads((tmp_path / "tally.json").read_text())
    assert data["entries"] == [{"name": "coffee", "cents": 320, "category": "other"}]

def test_add_refuses_a_bad_amount_with_one_line(tmp_path):
    result = tally(tmp_path, "add", "coffee", "lots")
    assert result.returncode == 2
    assert result.stderr.startswith("tally: ") and len(result.stderr.splitlines()) == 1
    assert not (tmp_path / "tally.json").exists()
""",
        ["F001"],
    ),
    "F003": (
        "`tally total` prints the sum of every expense",
        "test_f003_total.py",
        """
from conftest import tally

def test_total_of_nothing_is_zero(tmp_path):
    assert tally(tmp_path, "total").stdout == "0.00\\n"

def test_total_sums_the_expenses(tmp_path):
    tally(tmp_path, "add", "coffee", "3.20")
    tally(tmp_path, "add", "lunch", "11.85")
    assert tally(tmp_path, "total").stdout == "15.05\\n"
""",
        ["F002"],
    ),
    "F004": (
        "`tally list` prints one line per expense, in the order added",
        "test_f004_list.py",
        """
from conftest import tally

def test_list_prints_each_expense(tmp_path):
    tally(tmp_path, "add", "coffee", "3.20")
    tally(tmp_path, "add", "lunch", "11.85")
    assert tally(tmp_path, "list").stdout == "1  coffee  3.20  other\\n2  lunch  11.85  other\\n"
""",
        ["F002"],
    ),
    "F005": (
        "`tally remove N` removes the Nth expense of the list",
        "test_f005_remove.py",
        """
from conftest import tally

def test_remove_takes_one_out(tmp_path):
    tally(tmp_path, "add", "coffee", "3.20")
    tally(tmp_path, "add", "lunch", "11.85")
    assert tally(tmp_path, "remove", "1").returncode == 0
    assert tally(tmp_path, "list").stdout == "1  lunch  11.85  other\\n"
    assert tally(tmp_path, "total").stdout == "11.85\\n"

def test_remove_of_a_missing_number_is_refused(tmp_path):
    tally(tmp_path, "add", "coffee", "3.20")
    result = tally(tmp_path, "remove", "5")
    assert result.returncode == 2 and "no expense 5" in result.stderr
""",
        ["F003", "F004"],
    ),
    "F006": (
        "`tally add NAME AMOUNT --category C` and `tally total --category C`",
        "test_f006_categories.py",
        """
from conftest import tally

def test_categories_are_recorded_and_totalled(tmp_path):
    tally(tmp_path, "add", "coffee", "3.20", "--category", "food")
    tally(tmp_path, "add", "bus", "2.80", "--category", "travel")
    tally(tmp_path, "add", "lunch", "11.85", "--category", "food")
    assert tally(tmp_path, "total", "--category", "food").stdout == "15.05\\n"
    assert tally(tmp_path, "total").stdout == "17.85\\n"
    assert "bus  2.80  travel" in tally(tmp_path, "list").stdout
""",
        ["F003", "F004"],
    ),
    "F007": (
        "`tally report` prints each category's total, largest first",
        "test_f007_report.py",
        """
from conftest import tally

def test_report_groups_by_category(tmp_path):
    tally(tmp_path, "add", "coffee", "3.20", "--category", "food")
    tally(tmp_path, "add", "bus", "2.80", "--category", "travel")
    tally(tmp_path, "add", "lunch", "11.85", "--category", "food")
    tally(tmp_path, "add", "pen", "1.00")
    assert tally(tmp_path, "report").stdout == "food  15.05\\ntravel  2.80\\nother  1.00\\n"
""",
        ["F006"],
    ),
    "F008": (
        "`tally undo` takes back the last add or remove",
        "test_f008_undo.py",
        """
from conftest import tally

def test_undo_takes_back_an_add(tmp_path):
    tally(tmp_path, "add", "coffee", "3.20")
    tally(tmp_path, "add", "lunch", "11.85")
    assert tally(tmp_path, "undo").returncode == 0
    assert tally(tmp_path, "total").stdout == "3.20\\n"

def test_undo_takes_back_a_remove(tmp_path):
    tally(tmp_path, "add", "coffee", "3.20")
    tally(tmp_path, "remove", "1")
    tally(tmp_path, "undo")
    assert tally(tmp_path, "list").stdout == "1  coffee  3.20  other\\n"

def test_nothing_to_undo_is_refused(tmp_path):
    result = tally(tmp_path, "undo")
    assert result.returncode == 2 and "nothing to undo" in result.stderr
""",
        ["F005"],
    ),
    "F009": (
        "`tally export` prints the expenses as CSV with a header",
        "test_f009_export.py",
        """
import csv, io
from conftest import tally

def test_export_is_csv(tmp_path):
    tally(tmp_path, "add", "coffee, large", "3.20", "--category", "food")
    tally(tmp_path, "add", "bus", "2.80")
    rows = list(csv.reader(io.StringIO(tally(tmp_path, "export").stdout)))
    assert rows == [["name", "amount", "category"], ["coffee, large", "3.20", "food"],
                    ["bus", "2.80", "other"]]
""",
        ["F006"],
    ),
}

CONFTEST = '''
import subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

def tally(where, *args):
    """Run the CLI in ``where`` (its tally.json lives there)."""
    return subprocess.run([sys.executable, "-m", "tally", *args], cwd=where, capture_output=True,
                          text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
'''

README = """# tally

A small expense CLI: `python -m tally add NAME AMOUNT [--category C]`, `total`, `list`,
`remove N`, `report`, `undo`, `export`. Expenses live in `tally.json` in the current folder.
The acceptance tests in `tests/` were written first and are the person's: make them pass.
"""


def sh(args: list[str], cwd: Path) -> str:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"trial: {' '.join(args)} failed:\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def build(root: Path, agents: int, port: int) -> None:
    place = root / "project"
    sh(["shiftkit", "new", str(place), "--defaults", "--data", "code=tally/**,tests/**",
        "--data", "goal=A small expense CLI, tests written first"], root)  # fmt: skip
    sh(["git", "branch", "-M", "main"], place)
    sh(["shiftkit", "claim", "F000"], place)
    sh(["shiftkit", "finish", "-m", "the environment builds"], place)
    tests = place / "tests"
    tests.mkdir()
    (tests / "conftest.py").write_text(CONFTEST.lstrip())
    for _, name, text, _ in TESTS.values():
        (tests / name).write_text(text.lstrip())
    (place / "README.md").write_text(README)
    (place / ".gitignore").write_text(
        (place / ".gitignore").read_text() + "__pycache__/\n.pytest_cache/\n"
    )
    for feature, (description, name, _, needs) in TESTS.items():
        args = ["shiftkit", "add", "--id", feature, "--description", description, "--step",
                f"python3 -m pytest -q tests/{name}", "--verify",
                f"python3 -m pytest -q -p no:cacheprovider tests/{name}", "--oracle",
                f"tests/{name}", "--oracle", "tests/conftest.py"]  # fmt: skip
        for need in needs:
            args += ["--depends-on", need]
        sh(args, place)
    config = place / ".shiftkit.toml"
    config.write_text(config.read_text().replace('remote = ""', 'remote = "origin"'))
    sh(["git", "add", "-A"], place)
    sh(["git", "commit", "-q", "-m", "The acceptance tests, written first, and their features"],
       place)  # fmt: skip
    bare = root / "remote.git"
    sh(["git", "init", "-q", "--bare", str(bare)], root)
    sh(["git", "symbolic-ref", "HEAD", "refs/heads/main"], bare)
    (bare / "git-daemon-export-ok").write_text("")
    sh(["git", "config", "daemon.receivepack", "true"], bare)
    url = f"git://127.0.0.1:{port}/remote.git"
    sh(["git", "remote", "add", "origin", url], place)
    daemon = subprocess.Popen(
        ["git", "daemon", "--reuseaddr", f"--port={port}", "--listen=127.0.0.1",
         f"--base-path={root}", "--enable=receive-pack", str(root)]
    )  # fmt: skip
    time.sleep(1)
    sh(["git", "push", "-q", "origin", "main"], place)
    for i in range(1, agents + 1):
        clone = root / f"agent-{i}"
        sh(["git", "clone", "-q", url, str(clone)], root)
        sh(["shiftkit", "install-hooks", "--force"], clone)
    names = ", ".join(f"agent-{i}" for i in range(1, agents + 1))
    print(f"trial: {url} serves {bare}; clones {names}")
    try:
        daemon.wait()
    except KeyboardInterrupt:
        daemon.terminate()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("root", type=Path)
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--port", type=int, default=9418)
    options = parser.parse_args()
    options.root.mkdir(parents=True, exist_ok=True)
    build(options.root.resolve(), options.agents, options.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
