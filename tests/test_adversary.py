"""A search for the next leak (issue 19, item 7): hypothesis plays an agent that wants to look
done, with real git — commits through the hooks and past them, plumbing, orphan branches,
merges of every kind, fetches into any ref namespace, amend, rebase, cherry-pick, reset,
replace objects, edits of the list, the config, the log, the archive and the ledger; (issue
27) person trailers the agent writes, the judge replaced (on PATH, the hook script, the
recorded interpreter), planted claim refs and ledger lines no reader can take; and (issue 27
item 8) the oracle edits of issue 26 — a skip, `assert True`, a conftest that skips
everything, a `pytest.py` that shadows pytest, settings that deselect, the test deleted, an
init that rewrites the test at run time — and edits of the harness hook files, the commit
hooks' config, the CI workflow, the schema and the decision records.

The oracle knows nothing of shiftkit's rules. F001's verifier is `true` and the machine makes
it pass honestly, through `claim` and `finish`; F002's and F003's are pytest runs of
acceptance tests a person wrote that fail whatever the code does, so nothing honest ever makes
them pass. Whenever the branch tip is accepted by the final judge — `audit --reverify
--strict` in a fresh clone, as CI runs it — F002 and F003 must not pass there, and the files a
person owns (the settings, the enforcement files, the acceptance tests, the committed decision
records and their index lines) must be as the person left them: `--strict` refuses every
person action, so at an accepted tip nothing of theirs can have changed.

Bounded by default (a few examples of a few steps each); `SHIFTKIT_FUZZ=long` (ten times the
examples, games of 10 steps) or `SHIFTKIT_FUZZ_EXAMPLES=N` (N/10 examples) searches longer;
`SHIFTKIT_FUZZ_JOURNAL=FILE` appends one JSON line per game played: its moves, the tips judged,
the tips accepted (the pristine one among them).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    add_log_entry,
    copy_of,
    fuzz_examples,
    git,
    git_ok,
    ok,
    run,
    shiftkit,
    write,
)
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from shiftkit.core.own_refs import MARKER

NO_HOOKS = ("-c", "core.hooksPath=/dev/null/no-hooks")
UNEARNABLE = ("F002", "F003")
OWN_REFS = {MARKER: "1"}
HOW = st.sampled_from(["hooks", "no-verify", "no-hooks", "override"])
OVERRIDE = "Shiftkit-Override: the person said so"

# The acceptance tests a person wrote before the work began: no code makes them pass.
TWO_TEST = "tests/accept/test_two.py"
THREE_TEST = "tests/three/test_three.py"
ACCEPTANCE = {
    TWO_TEST: "def test_two():\n    assert sum([1, 1]) == 3, 'two is not done'\n",
    THREE_TEST: "def test_three():\n    assert 'three'.upper() == '3', 'three is not done'\n",
}
PYTEST = "python -m pytest -q -p no:cacheprovider"
VERIFIERS = ("true", f"{PYTEST} {TWO_TEST}", f"{PYTEST} tests/three")

# What a person owns, whole: the settings, the enforcement files, the acceptance tests and the
# committed decision record (absent ones must stay absent: a signers file is a person's too).
DECISIONS = "docs/decisions"
INDEX = f"{DECISIONS}/README.md"
PERSON_FILES = (
    ".shiftkit.toml",
    ".shiftkit/features.schema.json",
    ".shiftkit/hook",
    ".shiftkit/allowed_signers",
    ".github/workflows/shiftkit-audit.yml",
    ".claude/settings.json",
    ".codex/hooks.json",
    ".pre-commit-config.yaml",
    ".gitattributes",
    f"{DECISIONS}/0001-record-decisions.md",
    TWO_TEST,
    THREE_TEST,
)


def _list(project: Path, rev: str = "HEAD") -> dict[str, Any] | None:
    """The list committed at ``rev``; None when there is none (the adversary deleted it)."""
    shown = git(project, "show", f"{rev}:features.json")
    if shown.returncode != 0:
        return None
    document: dict[str, Any] = json.loads(shown.stdout)
    return document


def _set_passing(project: Path, ids: tuple[str, ...]) -> None:
    path = project / "features.json"
    if not path.exists() or not (project / "claude-progress.txt").exists():
        return  # (an earlier step deleted it: this one commits what is there)
    document = json.loads(path.read_text())
    for item in document["features"]:
        if item["id"] in ids:
            item["passes"] = True
    path.write_text(json.dumps(document, indent=2) + "\n")
    for feature_id in ids:
        add_log_entry(project, feature_id)


def _forged_message(project: Path, feature_id: str) -> str:
    tree = git_ok(project, "write-tree").strip()
    return (
        f"{feature_id}: it works now\n\nShiftkit-Feature: {feature_id}\n"
        f"Shiftkit-Verified: {tree}\nShiftkit-Claim: -\n"
    )


def _shown(project: Path, name: str, rev: str = "HEAD") -> str | None:
    shown = git(project, "show", f"{rev}:{name}")
    return shown.stdout if shown.returncode == 0 else None


def _edit(path: Path, change: Any) -> bool:
    """``path``'s text through ``change``; False (nothing done) when the file is gone."""
    if not path.exists():
        return False
    path.write_text(change(path.read_text()))
    return True


def _quoted(text: str) -> str:
    """``text`` as one shell word."""
    return "'" + text.replace("'", "'\\''") + "'"


def _without_hooks(text: str, events: tuple[str, ...]) -> str:
    document = json.loads(text)
    for name in events:
        document.get("hooks", {}).pop(name, None)
    return json.dumps(document, indent=2) + "\n"


SKIP_EVERYTHING = (
    "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n"
    "    for item in items:\n        item.add_marker(pytest.mark.skip(reason='later'))\n"
)
PASS_EVERYTHING = (
    "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
    "    report = outcome.get_result()\n    report.outcome = 'passed'\n"
    "    report.longrepr = None\n"
)
# A `pytest` that runs nothing and writes the report a passing run would have written.
FORGED_PYTEST = """import sys

REPORT = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0"'
    ' failures="0" skipped="0" tests="1" time="0.01"><testcase classname="tests.accept.test_two"'
    ' name="test_two" time="0.01" /><testcase classname="tests.three.test_three"'
    ' name="test_three" time="0.01" /></testsuite></testsuites>'
)
args = sys.argv[1:]
for index, arg in enumerate(args):
    path = None
    if arg.startswith(("--junitxml=", "--junit-xml=")):
        path = arg.split("=", 1)[1]
    elif arg in ("--junitxml", "--junit-xml") and index + 1 < len(args):
        path = args[index + 1]
    if path:
        with open(path, "w") as report:
            report.write(REPORT)
print("1 passed in 0.01s")
"""
PASSING_SIBLING = "def test_also():\n    assert True\n"


class Adversary(RuleBasedStateMachine):
    pristine: Path  # set by the test: F001 `true`, F002 and F003 failing tests, nothing passing
    pristine_tips: frozenset[str] = frozenset()  # its tip, which the fixture judged

    def __init__(self) -> None:
        super().__init__()
        self.home = Path(tempfile.mkdtemp(prefix="shiftkit-adversary-"))
        self.project = copy_of(self.pristine, self.home)
        self.person = {name: _shown(self.project, name) for name in PERSON_FILES}
        self.index_lines = [
            line for line in (_shown(self.project, INDEX) or "").splitlines() if line
        ]
        self.steps: list[str] = []
        self.judged: set[str] = set()  # tips the oracle has seen (the verdict is the commit's)
        self.moves: list[str] = []
        # tips the final judge accepted (the oracle's work), the pristine one first
        self.accepted: list[str] = sorted(self.pristine_tips)

    def teardown(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)
        journal = os.environ.get("SHIFTKIT_FUZZ_JOURNAL", "")
        if journal:  # a long run's progress, one line per game
            with open(journal, "a", encoding="utf-8") as out:
                out.write(
                    json.dumps(
                        {
                            "moves": self.moves,
                            "tips": len(self.judged),
                            "accepted": len(self.accepted),
                        }
                    )
                    + "\n"
                )

    def _git(self, *args: str, env: dict[str, str] | None = None) -> bool:
        self.steps.append("git " + " ".join(args))
        return git(self.project, *args, env=env).returncode == 0

    def _clean(self) -> None:
        git(self.project, "merge", "--abort")
        git(self.project, "cherry-pick", "--abort")
        git(self.project, "rebase", "--abort")
        git(self.project, "reset", "-q", "--hard")
        git(self.project, "clean", "-fdq")
        git(self.project, "checkout", "-q", "main")

    def _begin(self, move: str) -> None:
        """A move starts from a clean work tree on main (and is named in the journal)."""
        self.moves.append(move)
        self._clean()

    def _commit(self, how: str, message: str) -> bool:
        """Everything in the work tree committed through the hooks, past them (`--no-verify`,
        or no hooks at all), or through them under a person's trailer the agent wrote."""
        git_ok(self.project, "add", "-A")
        if how == "override":
            message = f"{message}\n\n{OVERRIDE}"
        extra = ("--no-verify",) if how in ("no-verify", "no-hooks") else ()
        prefix = NO_HOOKS if how == "no-hooks" else ()
        return self._git(*prefix, "commit", "-q", *extra, "-m", message)

    def _finish(self, feature: str, then_edit: Any = None) -> None:
        """`claim` and `finish` of ``feature``, as an honest session runs them (``then_edit``
        runs between the two: its change goes into the finish commit)."""
        self.steps.append(f"claim {feature} + finish")
        if shiftkit(self.project, "claim", feature).returncode != 0:
            return
        if then_edit is not None:
            then_edit()
        write(self.project / f"{feature.lower()}.txt", "done\n")
        if shiftkit(self.project, "finish", "-m", f"make {feature}").returncode != 0:
            shiftkit(self.project, "release", feature)  # (its finish refused: give it back)

    def _then(self, then: str, feature: str) -> None:
        """After an edit of the judge's ground: nothing, a hand flip of ``feature`` through
        whatever hooks still run, or its `claim` and `finish`."""
        if then == "flip":
            self._clean()
            _set_passing(self.project, (feature,))
            git_ok(self.project, "add", "-A")
            self._git("commit", "-q", "-m", _forged_message(self.project, feature))
        elif then == "finish":
            self._clean()
            self._finish(feature)

    # -- honest work ------------------------------------------------------------------------

    @rule()
    def finish_f001_honestly(self) -> None:
        self._begin("finish_f001_honestly")
        listing = _list(self.project)
        items = listing["features"] if listing is not None else []
        # (an adversary's step may have left a list without F001: nothing honest to do)
        if len(items) < 2 or items[1].get("id") != "F001" or items[1].get("passes"):
            return
        self.steps.append("claim F001 + finish")
        if shiftkit(self.project, "claim", "F001").returncode == 0:
            write(self.project / "one.txt", "done\n")
            shiftkit(self.project, "finish", "-m", "make one")

    # -- looking done -----------------------------------------------------------------------

    @rule(
        ids=st.sampled_from([("F002",), ("F003",), ("F002", "F003")]),
        how=st.sampled_from(["hooks", "no-verify", "no-hooks"]),
    )
    def flip_by_hand(self, ids: tuple[str, ...], how: str) -> None:
        self._begin("flip_by_hand")
        _set_passing(self.project, ids)
        git_ok(self.project, "add", "-A")
        message = _forged_message(self.project, ids[0])
        extra = {"hooks": (), "no-verify": ("--no-verify",), "no-hooks": ("--no-verify",)}[how]
        prefix = NO_HOOKS if how == "no-hooks" else ()
        self._git(*prefix, "commit", "-q", *extra, "-m", message)

    @rule(
        strategy=st.sampled_from([("-s", "ours"), ("-X", "theirs"), ("-X", "ours"), ()]),
        first=st.booleans(),
        hooks=st.booleans(),
    )
    def orphan_merge(self, strategy: tuple[str, ...], first: bool, hooks: bool) -> None:
        """An unrelated history with everything passing, merged in as the first or the
        second parent."""
        self._begin("orphan_merge")
        prefix = () if hooks else NO_HOOKS
        self._git("checkout", "-q", "--orphan", "side")
        _set_passing(self.project, (*UNEARNABLE, "F001"))
        git_ok(self.project, "add", "-A")
        self._git(*prefix, "commit", "-q", "--no-verify", "-m", "Start over")
        if first:
            self._git(
                *prefix,
                "merge",
                "-q",
                "--no-edit",
                "--allow-unrelated-histories",
                *strategy,
                "main",
            )
            self._git("checkout", "-q", "main")
            self._git(*prefix, "merge", "-q", "--ff-only", "side")
        else:
            self._git("checkout", "-q", "main")
            self._git(
                *prefix,
                "merge",
                "-q",
                "--no-edit",
                "--allow-unrelated-histories",
                *strategy,
                "side",
            )
        git(self.project, "branch", "-D", "side")

    @rule(namespace=st.sampled_from(["refs/remotes/origin/wip", "refs/tags/wip", "refs/wip"]))
    def fetch_a_forged_flip_elsewhere(self, namespace: str) -> None:
        """A flip made in another clone past every hook, fetched into any ref namespace and
        fast-forwarded."""
        self._begin("fetch_a_forged_flip_elsewhere")
        other = self.home / f"other-{len(self.steps)}"
        git_ok(self.home, "clone", "-q", str(self.project), str(other))
        _set_passing(other, ("F002",))
        git(other, "add", "-A")
        git(other, *NO_HOOKS, "commit", "-q", "--no-verify", "-m", _forged_message(other, "F002"))
        self._git("fetch", "-q", str(other), f"HEAD:{namespace}")
        self._git("merge", "-q", "--ff-only", namespace)
        shutil.rmtree(other, ignore_errors=True)

    @rule()
    def plumbing_flip(self) -> None:
        self._begin("plumbing_flip")
        _set_passing(self.project, ("F003",))
        git_ok(self.project, "add", "-A")
        tree = git_ok(self.project, "write-tree").strip()
        proc = git(
            self.project,
            "commit-tree",
            tree,
            "-p",
            "HEAD",
            "-m",
            _forged_message(self.project, "F003"),
        )
        if proc.returncode == 0:
            self._git("update-ref", "refs/heads/main", proc.stdout.strip())
        git(self.project, "reset", "-q", "--hard")

    @rule(how=st.sampled_from(["amend", "cherry-pick", "rebase", "reset"]))
    def rewrite_history(self, how: str) -> None:
        self._begin("rewrite_history")
        if how == "amend":
            _set_passing(self.project, ("F002",))
            git_ok(self.project, "add", "-A")
            self._git("commit", "-q", "--amend", "--no-verify", "--no-edit")
        elif how == "cherry-pick":
            self._git("checkout", "-q", "-b", "pick", "HEAD~1")
            _set_passing(self.project, ("F002",))
            git_ok(self.project, "add", "-A")
            self._git(*NO_HOOKS, "commit", "-q", "--no-verify", "-m", "F002: works")
            self._git("checkout", "-q", "main")
            self._git("cherry-pick", "pick")
            git(self.project, "branch", "-D", "pick")
        elif how == "rebase":
            self._git("rebase", "-q", "--root", "--exec", "true")
        else:
            self._git("reset", "-q", "--hard", "HEAD~1")

    @rule(
        edit=st.sampled_from(
            [
                ('verify = ""', 'verify = "true"'),
                ("enabled = true", "enabled = false"),
                ('policy = "trailer"', 'policy = "signed"'),
            ]
        ),
        hooks=st.booleans(),
    )
    def loosen_the_settings(self, edit: tuple[str, str], hooks: bool) -> None:
        self._begin("loosen_the_settings")
        path = self.project / ".shiftkit.toml"
        text = path.read_text()
        if edit[0] not in text:
            return
        path.write_text(text.replace(edit[0], edit[1], 1))
        prefix = () if hooks else NO_HOOKS
        self._git(*prefix, "commit", "-q", "--no-verify", "-am", "Tune the settings")

    @rule(what=st.sampled_from(["archive", "log", "ledger", "list"]))
    def delete_a_record(self, what: str) -> None:
        self._begin("delete_a_record")
        name = {
            "archive": "progress-archive.txt",
            "log": "claude-progress.txt",
            "ledger": ".shiftkit/ledger.jsonl",
            "list": "features.json",
        }[what]
        if not (self.project / name).exists():
            return
        git(self.project, "rm", "-q", name)
        self._git(*NO_HOOKS, "commit", "-q", "--no-verify", "-m", f"Remove {name}")

    @rule()
    def replace_an_object(self) -> None:
        """`git replace`: show the judges another commit in place of the tip."""
        self._begin("replace_an_object")
        _set_passing(self.project, ("F002",))
        git_ok(self.project, "add", "-A")
        if self._git(
            *NO_HOOKS, "commit", "-q", "--no-verify", "-m", _forged_message(self.project, "F002")
        ):
            self._git("replace", "HEAD", "HEAD~1")

    # -- the judge's own ground (issue 27) ---------------------------------------------------

    @rule(how=st.sampled_from(["-m", "-F -", "--trailer"]), then_finish=st.booleans())
    def override_a_verifier(self, how: str, then_finish: bool) -> None:
        """The agent writes the person's trailer itself: F002's verifier becomes `true` under
        `Shiftkit-Override`, then F002 is finished through the hooks."""
        self._begin("override_a_verifier")
        path = self.project / "features.json"
        if not path.exists():
            return
        document = json.loads(path.read_text())
        items = [item for item in document["features"] if item["id"] == "F002"]
        if not items or items[0].get("verify") == "true":
            return
        items[0]["verify"] = "true"
        path.write_text(json.dumps(document, indent=2) + "\n")
        git_ok(self.project, "add", "-A")
        trailer = "Shiftkit-Override: the verifier was wrong"
        self.steps.append(f"git commit {how} (agent-written override of F002's verifier)")
        if how == "-m":
            git(self.project, "commit", "-q", "-m", "Fix F002's verifier", "-m", trailer)
        elif how == "--trailer":
            git(self.project, "commit", "-q", "--trailer", trailer, "-m", "Fix F002's verifier")
        else:
            run(
                ["git", "commit", "-q", "-F", "-"],
                self.project,
                input=f"Fix F002's verifier\n\n{trailer}\n",
            )
        if then_finish and shiftkit(self.project, "claim", "F002").returncode == 0:
            self.steps.append("claim F002 + finish")
            write(self.project / "two.txt", "done\n")
            shiftkit(self.project, "finish", "-m", "make two")

    @rule(ids=st.sampled_from([("F002",), ("F003",)]))
    def swap_the_judge(self, ids: tuple[str, ...]) -> None:
        """The installation replaced for the agent's commands (a `shiftkit` that is
        `/bin/true` first on PATH: what `cp /bin/true $VENV/bin/shiftkit` does), then a hand
        flip committed through whatever hooks still run."""
        self._begin("swap_the_judge")
        fake = self.home / "fake-bin"
        fake.mkdir(exist_ok=True)
        shutil.copy2("/bin/true", fake / "shiftkit")
        _set_passing(self.project, ids)
        git_ok(self.project, "add", "-A")
        self.steps.append(f"PATH=fake-shiftkit git commit (hand flip of {ids[0]})")
        env = {"PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"}
        git(self.project, "commit", "-q", "-m", _forged_message(self.project, ids[0]), env=env)

    @rule(feature=st.sampled_from(["F001", "F002"]), server_side=st.booleans())
    def plant_a_claim(self, feature: str, server_side: bool) -> None:
        """A claim ref that is no claim: the tip commit under refs/shiftkit/claims/."""
        self._begin("plant_a_claim")
        ref = f"refs/shiftkit/claims/{feature}"
        # (with shiftkit's mark, which the guard refuses to the agent: whoever controls the
        # machine past the guard, decision record 0091)
        if server_side:  # as a push to a server would leave it, the record a commit message
            self._git("update-ref", ref, "HEAD", env=OWN_REFS)
        else:  # a tree, not a commit
            tree = git_ok(self.project, "rev-parse", "HEAD^{tree}").strip()
            self._git("update-ref", ref, tree, env=OWN_REFS)

    @rule(value=st.sampled_from(["digits", "deep", "long"]), hooks=st.booleans())
    def huge_ledger_value(self, value: str, hooks: bool) -> None:
        """A hand-appended ledger line no reader can take, committed through or past the
        hooks: every judge must say so, never crash."""
        self._begin("huge_ledger_value")
        inner = {
            "digits": "1" + "0" * 5000,
            "deep": "[" * 100_000 + "]" * 100_000,
            "long": '"' + "m" * 2_000_000 + '"',
        }[value]
        path = self.project / ".shiftkit" / "ledger.jsonl"
        before = path.read_text() if path.exists() else ""
        line = f'{{"at":"2026-12-01T00:00:00Z","id":"u-{value}","input":{inner},"kind":"usage"}}'
        path.parent.mkdir(exist_ok=True)
        path.write_text(before + line + "\n")
        git_ok(self.project, "add", "-A")
        prefix = () if hooks else NO_HOOKS
        self._git(*prefix, "commit", "-q", "--no-verify", "-m", "Record usage by hand")

    @rule()
    def back_to_an_accepted_tip(self) -> None:
        """What an agent does when CI refuses: the branch reset to the last tip the final
        judge accepted, so the game goes on from ground the judge believes (what this clone
        keeps outside the tree — its config, its hooks, its refs — stays as the moves left it)."""
        self._begin("back_to_an_accepted_tip")
        if self.accepted:
            self._git("reset", "-q", "--hard", self.accepted[-1])

    # -- the oracle's own files (issue 26) --------------------------------------------------

    @rule(
        edit=st.sampled_from(
            [
                "skip-marker",
                "xfail-marker",
                "skip-call",
                "assert-true",
                "conftest-skips@root",
                "conftest-passes@root",
                "conftest-passes@tests",
                "conftest-passes@folder",
                "shadow-pytest",
                "shadow-forged",
                "shadow-package",
                "pytest-ini",
                "pyproject-deselect",
                "setup-cfg-skip",
                "delete",
                "rename",
            ]
        ),
        test=st.sampled_from([TWO_TEST, THREE_TEST]),
        sibling=st.booleans(),
        how=st.sampled_from(["hooks", "no-verify", "no-hooks", "override", "in-finish"]),
        then=st.sampled_from(["none", "flip", "finish"]),
    )
    def edit_the_oracle(self, edit: str, test: str, sibling: bool, how: str, then: str) -> None:
        """What makes a failing acceptance test look passed (issue 26's shortcut and its red
        team): changed, skipped, shadowed, deselected or gone — with a passing test of the
        agent's beside it or not (a new test file is free) — committed through or past the
        hooks, or inside the finish commit; then a hand flip or a finish."""
        self._begin("edit_the_oracle")
        feature = "F002" if test == TWO_TEST else "F003"
        folder = str(Path(test).parent)

        def change() -> None:
            self._oracle_edit(edit, test, folder)
            if sibling:
                write(self.project / folder / "test_also.py", PASSING_SIBLING)

        self.steps.append(f"oracle edit {edit} of {test} (sibling test: {sibling})")
        if how == "in-finish":
            self._finish(feature, then_edit=change)
            return
        change()
        self._commit(how, f"Tidy the tests of {feature}")
        self._then(then, feature)

    def _oracle_edit(self, edit: str, test: str, folder: str) -> None:
        path = self.project / test
        name = Path(test).stem
        kind, _, where = edit.partition("@")
        if edit in ("skip-marker", "xfail-marker"):
            marker = "skip" if edit == "skip-marker" else "xfail"
            _edit(path, lambda text: f"import pytest\n\n\n@pytest.mark.{marker}\n{text}")
        elif edit == "skip-call":
            _edit(
                path,
                lambda text: text.replace(
                    "    assert", "    import pytest\n\n    pytest.skip('later')\n    assert", 1
                ),
            )
        elif edit == "assert-true":
            _edit(path, lambda text: text.split("\n", 1)[0] + "\n    assert True\n")
        elif kind in ("conftest-skips", "conftest-passes"):
            body = SKIP_EVERYTHING if kind == "conftest-skips" else PASS_EVERYTHING
            place = {"root": ".", "tests": "tests", "folder": folder}[where]
            write(self.project / place / "conftest.py", body)
        elif edit == "shadow-pytest":
            write(self.project / "pytest.py", "import sys\n\nsys.exit(0)\n")
        elif edit == "shadow-forged":
            write(self.project / "pytest.py", FORGED_PYTEST)
        elif edit == "shadow-package":
            write(self.project / "pytest" / "__init__.py", "")
            write(self.project / "pytest" / "__main__.py", FORGED_PYTEST)
        elif edit == "pytest-ini":
            write(self.project / "pytest.ini", f'[pytest]\naddopts = -k "not {name}"\n')
        elif edit == "pyproject-deselect":
            write(
                self.project / "pyproject.toml",
                f'[tool.pytest.ini_options]\naddopts = "--deselect {test}::{name}"\n',
            )
        elif edit == "setup-cfg-skip":
            write(self.project / "setup.cfg", f"[tool:pytest]\naddopts = --ignore={test}\n")
        elif edit == "delete":
            git(self.project, "rm", "-q", "--ignore-unmatch", test)
        else:  # rename: out of what pytest collects
            if path.exists():
                git(self.project, "mv", test, f"{folder}/later_{Path(test).name}")

    @rule(
        what=st.sampled_from(["rewrite", "conftest", "shadow", "ignored-conftest"]),
        test=st.sampled_from([TWO_TEST, THREE_TEST]),
        how=HOW,
        then=st.sampled_from(["flip", "finish"]),
    )
    def init_rewrites_the_oracle(self, what: str, test: str, how: str, then: str) -> None:
        """The committed tests stay as they were; `init.sh` (the project's code) changes what
        the verifier runs at run time — the test rewritten, a conftest or a `pytest.py`
        written, or a conftest the agent's own `.gitignore` hides so the checkout looks
        clean."""
        self._begin("init_rewrites_the_oracle")
        feature = "F002" if test == TWO_TEST else "F003"
        script = self.project / "init.sh"
        folder = str(Path(test).parent)
        line = {
            "rewrite": f"sed -i 's/assert .*/assert True/' {test}",
            "conftest": f"printf '%s' {_quoted(PASS_EVERYTHING)} > {folder}/conftest.py",
            "shadow": f"printf '%s' {_quoted(FORGED_PYTEST)} > pytest.py",
            "ignored-conftest": f"printf '%s' {_quoted(PASS_EVERYTHING)} > conftest.py",
        }[what]
        if not _edit(
            script,
            lambda text: text.replace("set -euo pipefail\n", f"set -euo pipefail\n{line}\n", 1),
        ):
            return
        if what == "ignored-conftest":
            ignore = self.project / ".gitignore"
            write(ignore, (ignore.read_text() if ignore.exists() else "") + "conftest.py\n")
        self.steps.append(f"init.sh writes the oracle at run time ({what}, {test})")
        self._commit(how, "Speed up the environment")
        self._then(then, feature)

    # -- the judge's own ground: enforcement files and records (issue 27) --------------------

    @rule(
        edit=st.sampled_from(
            [
                "claude-hooks",
                "claude-disable",
                "claude-delete",
                "codex-empty",
                "pre-commit-empty",
                "workflow-true",
                "workflow-delete",
                "gitattributes-empty",
                "schema-loose",
                "hook-script-true",
                "signers-added",
                "decision-rewrite",
                "decision-delete",
                "index-line-delete",
                "decision-renumber",
            ]
        ),
        how=HOW,
        then=st.sampled_from(["none", "flip", "finish"]),
    )
    def edit_the_judges_ground(self, edit: str, how: str, then: str) -> None:
        """An enforcement file or a committed decision record changed or removed, committed
        through or past the hooks (the hooks that still run, after the edit of their own
        config); then a hand flip of F002 or its finish."""
        self._begin("edit_the_judges_ground")
        root = self.project
        record = root / DECISIONS / "0001-record-decisions.md"
        index = root / INDEX
        if edit == "claude-hooks":
            _edit(
                root / ".claude/settings.json", lambda t: _without_hooks(t, ("PreToolUse", "Stop"))
            )
        elif edit == "claude-disable":
            _edit(
                root / ".claude/settings.json",
                lambda t: json.dumps({**json.loads(t), "disableAllHooks": True}, indent=2) + "\n",
            )
        elif edit == "claude-delete":
            git(root, "rm", "-q", "--ignore-unmatch", ".claude/settings.json")
        elif edit == "codex-empty":
            _edit(root / ".codex/hooks.json", lambda t: '{"hooks": {}}\n')
        elif edit == "pre-commit-empty":
            _edit(root / ".pre-commit-config.yaml", lambda t: "repos: []\n")
        elif edit == "workflow-true":
            _edit(
                root / ".github/workflows/shiftkit-audit.yml",
                lambda t: t.split("    steps:\n", 1)[0] + '    steps:\n      - run: "true"\n',
            )
        elif edit == "workflow-delete":
            git(root, "rm", "-q", "--ignore-unmatch", ".github/workflows/shiftkit-audit.yml")
        elif edit == "gitattributes-empty":
            _edit(root / ".gitattributes", lambda t: "")
        elif edit == "schema-loose":
            _edit(root / ".shiftkit/features.schema.json", lambda t: "{}\n")
        elif edit == "hook-script-true":
            _edit(root / ".shiftkit/hook", lambda t: "#!/bin/sh\nexit 0\n")
        elif edit == "signers-added":
            write(
                root / ".shiftkit/allowed_signers",
                "agent@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAgent\n",
            )
        elif edit == "decision-rewrite":
            _edit(record, lambda t: t.replace("Accepted", "Rejected") + "\nWe keep no records.\n")
        elif edit in ("decision-delete", "index-line-delete", "decision-renumber"):
            if edit != "index-line-delete":
                git(root, "rm", "-q", "--ignore-unmatch", str(record.relative_to(root)))
            if edit == "decision-renumber" and _shown(root, str(record.relative_to(root))):
                text = _shown(root, str(record.relative_to(root))) or ""
                write(
                    root / DECISIONS / "0002-record-decisions.md",
                    text.replace("Accepted", "Rejected"),
                )
                _edit(index, lambda t: t.replace("0001", "0002"))
            else:
                _edit(
                    index,
                    lambda t: "".join(
                        line for line in t.splitlines(keepends=True) if "0001" not in line
                    ),
                )
        self.steps.append(f"edit of the judge's ground: {edit}")
        self._commit(how, "Tidy the project settings")
        self._then(then, "F002")

    @rule(
        swap=st.sampled_from(["interpreter", "hook-script", "reference-hook", "hooks-path"]),
        ids=st.sampled_from([("F002",), ("F003",)]),
    )
    def swap_the_installation(self, swap: str, ids: tuple[str, ...]) -> None:
        """The local judge replaced for good, in this clone: the interpreter the hook script
        runs (recorded at setup) a program that exits 0, the hook script itself, the
        reference-transaction hook removed, or the hooks' folder pointed elsewhere; then a
        hand flip of the list and log alone, through what is left."""
        self._begin("swap_the_installation")
        gitdir = Path(git_ok(self.project, "rev-parse", "--absolute-git-dir").strip())
        if swap == "interpreter":
            fake = self.home / "fake-python"
            write(fake, "#!/bin/sh\nexit 0\n").chmod(0o755)
            write(gitdir / "shiftkit" / "interpreter", f"{fake}\n")
        elif swap == "hook-script":
            _edit(self.project / ".shiftkit/hook", lambda t: "#!/bin/sh\nexit 0\n")
        elif swap == "reference-hook":
            (gitdir / "hooks" / "reference-transaction").unlink(missing_ok=True)
        else:
            self._git("config", "core.hooksPath", "/dev/null/no-hooks")
        self.steps.append(f"installation swap: {swap}")
        _set_passing(self.project, ids)
        git(self.project, "add", "features.json", "claude-progress.txt")
        self._git("commit", "-q", "-m", _forged_message(self.project, ids[0]))

    # -- the oracle -------------------------------------------------------------------------

    @invariant()
    def the_final_judge_accepts_only_what_is_true(self) -> None:
        self._clean()
        tip = git(self.project, "rev-parse", "-q", "--verify", "HEAD")
        if tip.returncode != 0 or tip.stdout.strip() in self.judged | self.pristine_tips:
            return  # (no tip, or one judged already: a fresh clone of it says the same)
        self.judged.add(tip.stdout.strip())
        clone = self.home / "ci"
        shutil.rmtree(clone, ignore_errors=True)
        git_ok(self.home, "clone", "-q", "--no-local", str(self.project), str(clone))
        verdict = shiftkit(clone, "audit", "--reverify", "--strict")
        steps = "\n  ".join(self.steps)
        assert verdict.returncode in (0, 1) and "Traceback" not in verdict.output, (
            f"the final judge crashed ({verdict.returncode}: {verdict.stderr[-300:]}) after:\n"
            f"  {steps}"
        )
        if verdict.returncode != 0:
            return  # refused: nothing to believe
        self.accepted.append(tip.stdout.strip())
        tip = _list(clone)
        assert tip is not None, f"the list is gone at an accepted tip after:\n  {steps}"
        passing = {item["id"] for item in tip["features"] if item.get("passes")}
        leaked = passing & set(UNEARNABLE)
        assert not leaked, f"{sorted(leaked)} pass at an accepted tip after:\n  {steps}"
        changed = [name for name in PERSON_FILES if _shown(clone, name) != self.person[name]]
        assert not changed, f"{changed} changed at an accepted tip after:\n  {steps}"
        index_now = set((_shown(clone, INDEX) or "").splitlines())
        lost = [line for line in self.index_lines if line not in index_now]
        assert not lost, f"index lines {lost} gone at an accepted tip after:\n  {steps}"


@pytest.fixture(scope="module")
def pristine_adversary(
    pristine_scaffold: Path, tmp_path_factory: pytest.TempPathFactory, isolated_home: Path
) -> Path:
    from conftest import isolated_environment

    with isolated_environment(isolated_home):
        project = copy_of(pristine_scaffold, tmp_path_factory.mktemp("adversary"))
        # The person's project as it was scaffolded: the three features and their acceptance
        # tests are in the commit that establishes the list (an append after it is a person
        # action, which `audit --strict` refuses: decision record 0050).
        for name, body in ACCEPTANCE.items():
            write(project / name, body)
        for word, verify in zip(("one", "two", "three"), VERIFIERS, strict=True):
            ok(
                project,
                "add",
                "--description",
                f"feature {word}",
                "--step",
                "s",
                "--verify",
                verify,
            )
        git_ok(project, "add", "-A")
        git_ok(project, *NO_HOOKS, "commit", "-q", "--amend", "--no-edit")
        ok(project, "claim", "F000")
        ok(project, "finish", "-m", "the environment builds")
        assert shiftkit(project, "audit", "--strict").returncode == 0
        return project


def test_no_leak_is_found(pristine_adversary: Path) -> None:
    Adversary.pristine = pristine_adversary
    Adversary.pristine_tips = frozenset({git_ok(pristine_adversary, "rev-parse", "HEAD").strip()})
    run_state_machine_as_test(
        Adversary,
        settings=settings(
            max_examples=fuzz_examples(4, subprocess_runs=True),
            # (a long run also plays longer games: deeper sequences of git features)
            stateful_step_count=10 if os.environ.get("SHIFTKIT_FUZZ") == "long" else 5,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
