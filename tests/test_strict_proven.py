"""`audit --strict` means proven (decision record 0101): under the `signed` policy an honest
history — the scaffold's signed commit, a person's signed feature additions and settings, an
agent's unsigned work — passes in a fresh clone, and an agent's unsigned person action fails,
named; under `trailer` it says in one line that nothing proves a person action and names
`shiftkit setup --signed`, the command that switches (itself a signed person action)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import git, git_ok, ok, run, shiftkit, write

from shiftkit.core import proof

SIGNERS = ".shiftkit/allowed_signers"
WORKFLOW = ".github/workflows/shiftkit-audit.yml"


def make_key(folder: Path) -> Path:
    key = folder / "person"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    return key


def signing(key: Path) -> dict[str, str]:
    """A person's signing setup, through git's environment config (never a global file)."""
    return {
        "GIT_CONFIG_COUNT": "2",
        "GIT_CONFIG_KEY_0": "gpg.format",
        "GIT_CONFIG_VALUE_0": "ssh",
        "GIT_CONFIG_KEY_1": "user.signingkey",
        "GIT_CONFIG_VALUE_1": f"{key}.pub",
    }


def signer_line(key: Path) -> str:
    # (conftest's identity: the committer's email is the person's)
    email = git_ok(key.parent, "var", "GIT_COMMITTER_IDENT").partition("<")[2].partition(">")[0]
    return f"{email} {' '.join(Path(f'{key}.pub').read_text().split()[:2])}"


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_key(tmp_path_factory.mktemp("keys"))


def new_signed(where: Path, key: Path, sign: bool = True) -> Path:
    target = where / "signed"
    result = run(
        [
            "shiftkit",
            "new",
            str(target),
            "--defaults",
            "--data",
            "people_policy=signed",
            "--data",
            f"people_signer={signer_line(key)}",
        ],
        where,
        env=signing(key) if sign else None,
    )
    assert result.returncode == 0, result.output
    return target


def person_commits(project: Path, key: Path, message: str) -> None:
    git_ok(project, "add", "-A")
    result = git(project, "commit", "-q", "-S", "-m", message, env=signing(key))
    assert result.returncode == 0, result.output


def set_remote(project: Path, remote: Path) -> None:
    git_ok(remote.parent, "init", "-q", "--bare", str(remote))
    git_ok(project, "remote", "add", "origin", str(remote))
    config = project / ".shiftkit.toml"
    config.write_text(config.read_text().replace('remote = ""', 'remote = "origin"', 1))


def honest_history(project: Path, key: Path, remote: Path) -> None:
    """The person adds a feature and sets the claims remote, signed; the agent does the work
    (claim, finish: unsigned, no person action); all of it pushed."""
    ok(project, "add", "--description", "a greeting file", "--step", "s", "--verify", "test -f hi")
    person_commits(project, key, "Add F001")
    set_remote(project, remote)
    person_commits(project, key, "Claims across machines")
    git_ok(project, "push", "-q", "origin", "HEAD")
    ok(project, "claim", "F001")
    write(project / "hi", "hello\n")
    ok(project, "finish", "-m", "a greeting file")
    git_ok(project, "push", "-q", "origin", "HEAD")


def fresh_clone(remote: Path, where: Path) -> Path:
    target = where / "clone"
    git_ok(where, "clone", "-q", str(remote), str(target))
    return target


@pytest.fixture(scope="module")
def pushed(tmp_path_factory: pytest.TempPathFactory, keys: Path) -> tuple[Path, Path]:
    """(project, remote): a signed scaffold with an honest history, pushed."""
    where = tmp_path_factory.mktemp("strict")
    project = new_signed(where, keys)
    remote = where / "remote.git"
    honest_history(project, keys, remote)
    return project, remote


def test_an_honest_signed_history_is_proven_in_a_fresh_clone(
    pushed: tuple[Path, Path], tmp_path: Path
) -> None:
    _, remote = pushed
    clone = fresh_clone(remote, tmp_path)
    plain = shiftkit(clone, "audit")
    assert plain.returncode == 0, plain.output
    assert "features added" in plain.stdout and "claims.remote" in plain.stdout
    strict = shiftkit(clone, "audit", "--strict")
    assert strict.returncode == 0, strict.output
    assert "Traceback" not in strict.output
    first = git_ok(clone, "rev-list", "--max-parents=0", "HEAD").strip()
    assert f"signed policy set in {first[:7]}" in strict.stdout, strict.stdout
    assert "strict: 2 commits with person actions signed by a key listed" in strict.stdout


def test_an_agents_unsigned_override_fails_strict_naming_the_commit(
    pushed: tuple[Path, Path], tmp_path: Path
) -> None:
    project, _ = pushed
    work = tmp_path / "work"
    shutil.copytree(project, work, symlinks=True)
    config = work / ".shiftkit.toml"
    config.write_text(config.read_text().replace("max_attempts = 3", "max_attempts = 30"))
    git_ok(work, "add", "-A")
    # the hooks refuse it (rule 11): the agent lands it past them
    refused = git(work, "commit", "-m", "More attempts\n\nShiftkit-Override: stuck")
    assert refused.returncode != 0 and "rule 11" in refused.output, refused.output
    git_ok(
        work,
        "-c",
        f"core.hooksPath={work / 'none'}",
        "commit",
        "-q",
        "--no-verify",
        "-m",
        "More attempts\n\nShiftkit-Override: stuck",
    )
    forged = git_ok(work, "rev-parse", "HEAD").strip()
    bare = tmp_path / "forged.git"
    git_ok(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    clone = fresh_clone(bare, tmp_path)
    strict = shiftkit(clone, "audit", "--strict")
    assert strict.returncode == 1, strict.output
    named = [ln for ln in strict.stdout.splitlines() if ln.startswith(forged[:7])]
    assert named and "rule 11" in named[0], strict.stdout


def test_an_unsigned_scaffold_commit_is_not_proven(keys: Path, tmp_path: Path) -> None:
    project = new_signed(tmp_path, keys, sign=False)
    first = git_ok(project, "rev-parse", "HEAD").strip()
    assert git_ok(project, "log", "-1", "--format=%G?").strip() == "N"
    plain = shiftkit(project, "audit")
    assert plain.returncode == 0, plain.output
    strict = shiftkit(project, "audit", "--strict")
    assert strict.returncode == 1, strict.output
    line = next(ln for ln in strict.stdout.splitlines() if ln.startswith(first[:7]))
    assert "not proven: it sets the `signed` policy, and the commit is not signed" in line
    assert strict.stderr.count("shiftkit:") == 1 and "not proven" in strict.stderr


def test_the_signed_scaffold_commit_is_signed_by_the_key_it_lists(
    pushed: tuple[Path, Path],
) -> None:
    project, _ = pushed
    first = git_ok(project, "rev-list", "--max-parents=0", "HEAD").strip()
    shown = git_ok(
        project,
        "-c",
        f"gpg.ssh.allowedSignersFile={project / SIGNERS}",
        "log",
        "-1",
        "--format=%G?",
        first,
    )
    assert shown.strip() == "G"


def test_strict_under_trailer_says_in_one_line_why_and_names_the_switch(scaffold: Path) -> None:
    ok(scaffold, "add", "--description", "a greeting file", "--step", "s", "--verify", "true")
    git_ok(scaffold, "add", "-A")
    git_ok(scaffold, "commit", "-q", "-m", "Add F001")
    strict = shiftkit(scaffold, "audit", "--strict")
    assert strict.returncode == 1, strict.output
    lines = strict.stderr.strip().splitlines()
    assert len(lines) == 1, strict.stderr
    assert "cannot be proven" in lines[0] and "`shiftkit setup --signed`" in lines[0]
    assert "trailer" in lines[0]


def test_setup_signed_switches_a_trailer_project_in_one_signed_commit(
    scaffold: Path, keys: Path
) -> None:
    ok(scaffold, "add", "--description", "a greeting file", "--step", "s", "--verify", "true")
    git_ok(scaffold, "add", "-A")
    git_ok(scaffold, "commit", "-q", "-m", "Add F001")
    no_key = shiftkit(scaffold, "setup", "--signed")
    assert no_key.returncode == 1 and "Traceback" not in no_key.output
    assert no_key.stderr.startswith("shiftkit: git is not set to sign"), no_key.stderr
    switched = shiftkit(scaffold, "setup", "--signed", env=signing(keys))
    assert switched.returncode == 0, switched.output
    assert 'policy = "signed"' in (scaffold / ".shiftkit.toml").read_text()
    assert signer_line(keys) in (scaffold / SIGNERS).read_text()
    shown = git_ok(
        scaffold,
        "-c",
        f"gpg.ssh.allowedSignersFile={scaffold / SIGNERS}",
        "log",
        "-1",
        "--format=%G?",
    )
    assert shown.strip() == "G"
    assert git_ok(scaffold, "status", "--porcelain") == ""
    strict = shiftkit(scaffold, "audit", "--strict")
    assert strict.returncode == 0, strict.output
    assert "1 commit with person actions made under `trailer` before the switch" in strict.stdout
    again = shiftkit(scaffold, "setup", "--signed", env=signing(keys))
    assert again.returncode == 0 and "already" in again.stdout


def _workflow_step(project: Path) -> str:
    """The shell of the workflow's strict step, as rendered into ``project``."""
    import yaml

    steps = yaml.safe_load((project / WORKFLOW).read_text())["jobs"]["audit"]["steps"]
    return next(s["run"] for s in steps if "audit --strict" in s.get("run", ""))


def test_the_ci_workflow_runs_strict_exactly_when_the_policy_is_signed(
    pushed: tuple[Path, Path], scaffold: Path, tmp_path: Path
) -> None:
    program = shutil.which("shiftkit")
    assert program is not None
    env = {"SHIFTKIT": program}
    _, remote = pushed
    clone = fresh_clone(remote, tmp_path)
    signed = run(["bash", "-e", "-c", _workflow_step(clone)], clone, env=env)
    assert signed.returncode == 0 and "strict: 2 commits" in signed.stdout, signed.output
    ok(scaffold, "add", "--description", "a greeting file", "--step", "s", "--verify", "true")
    git_ok(scaffold, "add", "-A")
    git_ok(scaffold, "commit", "-q", "-m", "Add F001")
    trailer = run(["bash", "-e", "-c", _workflow_step(scaffold)], scaffold, env=env)
    assert trailer.returncode == 0 and "policy trailer" in trailer.stdout, trailer.output
    assert re.search(r"shiftkit setup --signed", trailer.stdout)


def test_a_person_action_under_trailer_after_no_switch_is_not_proven() -> None:
    switch = proof.Judged("s", "signed", ("trailer",), True)
    before = proof.Judged("b", "trailer", ("trailer",), True)
    later = proof.Judged("l", "trailer", ("trailer",), True)  # (a side branch, merged later)
    under = proof.Judged("u", "signed", ("signed",), True)
    found = proof.verdict(
        [before, switch, later, under], {"s": None}, lambda old, new: (old, new) == ("b", "s")
    )
    assert found.anchors == ["s"] and found.proven == ["u"]
    assert found.vouched == {"b": "s"} and list(found.unproven) == ["l"]
    bad = proof.verdict([switch], {"s": "the commit is not signed"}, lambda a, b: False)
    assert bad.anchors == [] and "not signed" in bad.unproven["s"]
