"""A search for the next leak (issue 19, item 7): hypothesis plays an agent that wants to look
done, with real git — commits through the hooks and past them, plumbing, orphan branches,
merges of every kind, fetches into any ref namespace, amend, rebase, cherry-pick, reset,
replace objects, edits of the list, the config, the log, the archive and the ledger; and
(issue 27) person trailers the agent writes, the judge replaced on PATH, planted claim refs
and ledger lines no reader can take.

The oracle knows nothing of shiftkit's rules. F001's verifier is `true` and the machine makes
it pass honestly, through `claim` and `finish`; F002's and F003's verifiers are `false`, so
nothing honest ever makes them pass. Whenever the branch tip is accepted by the final judge —
`audit --reverify --strict` in a fresh clone, as CI runs it — F002 and F003 must not pass
there, and the settings that decide what the rules accept must be the ones a person set.

Bounded by default (a few examples of a few steps each); `SHIFTKIT_FUZZ=long` (ten times the
examples, games of 10 steps) or `SHIFTKIT_FUZZ_EXAMPLES=N` searches longer.
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

NO_HOOKS = ("-c", "core.hooksPath=/dev/null/no-hooks")
UNEARNABLE = ("F002", "F003")


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


class Adversary(RuleBasedStateMachine):
    pristine: Path  # set by the test: F001 `true`, F002 and F003 `false`, nothing passing

    def __init__(self) -> None:
        super().__init__()
        self.home = Path(tempfile.mkdtemp(prefix="shiftkit-adversary-"))
        self.project = copy_of(self.pristine, self.home)
        self.settings_text = git_ok(self.project, "show", "HEAD:.shiftkit.toml")
        self.steps: list[str] = []

    def teardown(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)

    def _git(self, *args: str) -> bool:
        self.steps.append("git " + " ".join(args))
        return git(self.project, *args).returncode == 0

    def _clean(self) -> None:
        git(self.project, "merge", "--abort")
        git(self.project, "cherry-pick", "--abort")
        git(self.project, "rebase", "--abort")
        git(self.project, "reset", "-q", "--hard")
        git(self.project, "clean", "-fdq")
        git(self.project, "checkout", "-q", "main")

    # -- honest work ------------------------------------------------------------------------

    @rule()
    def finish_f001_honestly(self) -> None:
        self._clean()
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
        self._clean()
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
        self._clean()
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
        self._clean()
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
        self._clean()
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
        self._clean()
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
        self._clean()
        path = self.project / ".shiftkit.toml"
        text = path.read_text()
        if edit[0] not in text:
            return
        path.write_text(text.replace(edit[0], edit[1], 1))
        prefix = () if hooks else NO_HOOKS
        self._git(*prefix, "commit", "-q", "--no-verify", "-am", "Tune the settings")

    @rule(what=st.sampled_from(["archive", "log", "ledger", "list"]))
    def delete_a_record(self, what: str) -> None:
        self._clean()
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
        self._clean()
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
        self._clean()
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
        self._clean()
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
        self._clean()
        ref = f"refs/shiftkit/claims/{feature}"
        if server_side:  # as a push to a server would leave it, the record a commit message
            self._git("update-ref", ref, "HEAD")
        else:  # a tree, not a commit
            self._git("update-ref", ref, git_ok(self.project, "rev-parse", "HEAD^{tree}").strip())

    @rule(value=st.sampled_from(["digits", "deep", "long"]), hooks=st.booleans())
    def huge_ledger_value(self, value: str, hooks: bool) -> None:
        """A hand-appended ledger line no reader can take, committed through or past the
        hooks: every judge must say so, never crash."""
        self._clean()
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

    # -- the oracle -------------------------------------------------------------------------

    @invariant()
    def the_final_judge_accepts_only_what_is_true(self) -> None:
        self._clean()
        if git(self.project, "rev-parse", "-q", "--verify", "HEAD").returncode != 0:
            return
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
        tip = _list(clone)
        assert tip is not None, f"the list is gone at an accepted tip after:\n  {steps}"
        passing = {item["id"] for item in tip["features"] if item.get("passes")}
        leaked = passing & set(UNEARNABLE)
        assert not leaked, f"{sorted(leaked)} pass at an accepted tip after:\n  {steps}"
        settings_now = git_ok(clone, "show", "HEAD:.shiftkit.toml")
        assert settings_now == self.settings_text, (
            f"the settings changed with no person action flagged after:\n  {steps}"
        )


@pytest.fixture(scope="module")
def pristine_adversary(
    pristine_scaffold: Path, tmp_path_factory: pytest.TempPathFactory, isolated_home: Path
) -> Path:
    from conftest import isolated_environment

    with isolated_environment(isolated_home):
        project = copy_of(pristine_scaffold, tmp_path_factory.mktemp("adversary"))
        ok(project, "claim", "F000")
        ok(project, "finish", "-m", "the environment builds")
        for verify in ("true", "false", "false"):
            ok(
                project,
                "add",
                "--description",
                f"{verify} feature",
                "--step",
                "s",
                "--verify",
                verify,
            )
        git_ok(project, "commit", "-q", "-am", "Add three features")
        return project


def test_no_leak_is_found(pristine_adversary: Path) -> None:
    Adversary.pristine = pristine_adversary
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
