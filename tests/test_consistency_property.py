"""Issue 26's invariant, searched for (decision records 0056, 0075): at every value the shared
branch takes through shiftkit's paths, every feature its list marks passing passes there.

Hypothesis plays two honest-but-careless agents on two clones of one bare remote (F001 passing
at the start, F002 and F003 open): they finish
claims, make plain commits that break or repair features, add unrelated commits, and publish
with `shiftkit sync` or a plain `git push` (pushing again when the pre-push hook asks). The
oracle knows nothing of shiftkit: the remote records every value of its `main`
(core.logAllRefUpdates), and at each one a feature marked passing must have its file (the
verifiers are `test -f fN.txt`).

Bounded by default; `SHIFTKIT_FUZZ=long` or `SHIFTKIT_FUZZ_EXAMPLES=N` searches longer.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from conftest import copy_of, fuzz_examples, git, git_ok, ok, shell_features, shiftkit
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

FEATURES = ("F001", "F002", "F003")
CLONES = ("one", "two")


def _file(feature: str) -> str:
    return f"f{int(feature[1:])}.txt"


class TwoAgents(RuleBasedStateMachine):
    pristine: Path  # set by the test: the bare remote and the two clones, nothing passing

    def __init__(self) -> None:
        super().__init__()
        self.home = Path(tempfile.mkdtemp(prefix="shiftkit-consistency-"))
        team = self.home / "team"
        shutil.copytree(self.pristine, team, symlinks=True)
        self.bare = team / "remote.git"
        self.clones = {name: team / name for name in CLONES}
        for clone in self.clones.values():
            git_ok(clone, "remote", "set-url", "origin", str(self.bare))
        self.steps: list[str] = []
        self.notes = 0

    def teardown(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)

    def _clean(self, clone: Path) -> None:
        git(clone, "merge", "--abort")
        git(clone, "reset", "-q", "--hard")
        git(clone, "clean", "-fdq")

    def _passing(self, clone: Path, feature: str) -> bool:
        listed = json.loads((clone / "features.json").read_text())["features"]
        return any(item["id"] == feature and item["passes"] for item in listed)

    @rule(who=st.sampled_from(CLONES), feature=st.sampled_from(FEATURES))
    def finish_a_claim(self, who: str, feature: str) -> None:
        clone = self.clones[who]
        self._clean(clone)
        if self._passing(clone, feature) or shiftkit(clone, "claim", feature).returncode != 0:
            return
        self.steps.append(f"{who}: claim + finish {feature}")
        (clone / _file(feature)).write_text("done\n")
        if shiftkit(clone, "finish", "-m", f"{feature} done").returncode != 0:
            self._clean(clone)
            shiftkit(clone, "release")

    @rule(who=st.sampled_from(CLONES), feature=st.sampled_from(FEATURES))
    def plain_commit_that_breaks(self, who: str, feature: str) -> None:
        clone = self.clones[who]
        self._clean(clone)
        if not (clone / _file(feature)).exists():
            return
        self.steps.append(f"{who}: plain commit removing {_file(feature)}")
        git(clone, "rm", "-q", _file(feature))
        git(clone, "commit", "-q", "-m", "Tidy up the files")

    @rule(who=st.sampled_from(CLONES), feature=st.sampled_from(FEATURES))
    def plain_commit_that_repairs(self, who: str, feature: str) -> None:
        clone = self.clones[who]
        self._clean(clone)
        if (clone / _file(feature)).exists():
            return
        self.steps.append(f"{who}: plain commit adding {_file(feature)}")
        (clone / _file(feature)).write_text("again\n")
        git(clone, "add", _file(feature))
        git(clone, "commit", "-q", "-m", "Put the file back")

    @rule(who=st.sampled_from(CLONES))
    def unrelated_commit(self, who: str) -> None:
        clone = self.clones[who]
        self._clean(clone)
        self.notes += 1
        self.steps.append(f"{who}: unrelated commit")
        (clone / f"notes-{self.notes}.md").write_text("notes\n")
        git(clone, "add", "-A")
        git(clone, "commit", "-q", "-m", "Add notes")

    @rule(who=st.sampled_from(CLONES), how=st.sampled_from(["sync", "push"]))
    def publish(self, who: str, how: str) -> None:
        clone = self.clones[who]
        self._clean(clone)
        self.steps.append(f"{who}: {how}")
        if how == "sync":
            shiftkit(clone, "sync")
        elif git(clone, "push", "-q", "origin", "main").returncode != 0:
            git(clone, "push", "-q", "origin", "main")  # (the demotion committed on top)

    @invariant()
    def the_remote_never_says_a_failing_feature_passes(self) -> None:
        # Every commit main received, not only the values it took (decision record 0083).
        values = git(self.bare, "reflog", "show", "--format=%H", "refs/heads/main").stdout
        reached = git(self.bare, "rev-list", *dict.fromkeys(values.split())).stdout
        steps = "\n  ".join(self.steps)
        for tip in reached.split() if values.strip() else []:
            shown = git(self.bare, "show", f"{tip}:features.json")
            if shown.returncode != 0:
                continue
            for item in json.loads(shown.stdout)["features"]:
                if item["id"] not in FEATURES or not item["passes"]:
                    continue
                has = git(self.bare, "cat-file", "-e", f"{tip}:{_file(item['id'])}")
                assert has.returncode == 0, (
                    f"the remote's main at {tip[:7]} says {item['id']} passes, but "
                    f"{_file(item['id'])} is not there, after:\n  {steps}"
                )


@pytest.fixture(scope="module")
def pristine_team(
    pristine_scaffold: Path, tmp_path_factory: pytest.TempPathFactory, isolated_home: Path
) -> Path:
    """A bare remote recording every value of its main, and two clones with their hooks;
    F001 passing."""
    from conftest import isolated_environment

    team = tmp_path_factory.mktemp("team")
    with isolated_environment(isolated_home):
        project = copy_of(pristine_scaffold, tmp_path_factory.mktemp("origin"))
        ok(project, "claim", "F000")
        ok(project, "finish", "-m", "the environment builds")
        shell_features(project, *(_file(f) for f in FEATURES))
        ok(project, "claim", "F001")  # (one feature passing from the start: more to break)
        (project / _file("F001")).write_text("done\n")
        ok(project, "finish", "-m", "F001 done")
        config = project / ".shiftkit.toml"
        config.write_text(config.read_text().replace('remote = ""', 'remote = "origin"'))
        git_ok(project, "commit", "-q", "-am", "Share claims through origin")
        bare = team / "remote.git"
        git_ok(team, "clone", "-q", "--bare", str(project), str(bare))
        git_ok(bare, "config", "core.logAllRefUpdates", "always")
        for name in CLONES:
            git_ok(team, "clone", "-q", str(bare), str(team / name))
            ok(team / name, "install-hooks", "--force")
    return team


def test_the_remote_is_true_at_every_value(pristine_team: Path) -> None:
    TwoAgents.pristine = pristine_team
    run_state_machine_as_test(
        TwoAgents,
        settings=settings(
            max_examples=fuzz_examples(3, subprocess_runs=True),
            stateful_step_count=12 if os.environ.get("SHIFTKIT_FUZZ") == "long" else 7,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
