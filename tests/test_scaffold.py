"""The template, through the real copier, the real pre-commit framework and real git."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from conftest import git, git_ok, run, shiftkit, snapshot_repository, write

from shiftkit.core import features

SCAFFOLD_FILES = [
    "init.sh",
    "features.json",
    ".shiftkit/features.schema.json",
    "claude-progress.txt",
    "docs/decisions/0001-record-decisions.md",
    "docs/decisions/README.md",
    "AGENTS.md",
    "CLAUDE.md",
    ".claude/settings.json",
    ".codex/hooks.json",
    ".pre-commit-config.yaml",
    ".gitattributes",
    ".shiftkit.toml",
    ".copier-answers.yml",
]


def assert_fresh_scaffold(path: Path) -> None:
    for name in SCAFFOLD_FILES:
        assert (path / name).is_file(), name
    assert os.access(path / "init.sh", os.X_OK)
    assert git_ok(path, "rev-list", "--count", "HEAD").strip() == "1"
    assert git_ok(path, "status", "--porcelain") == ""
    hooks = path / ".git" / "hooks"
    for hook in ("pre-commit", "commit-msg"):
        assert "pre-commit" in (hooks / hook).read_text(), hook
    listing = features.loads((path / "features.json").read_text())
    assert [f.id for f in listing.features] == ["F000"]
    assert listing.features[0].verify == "./init.sh smoke"
    settings = json.loads((path / ".claude/settings.json").read_text())
    assert ".shiftkit/hook start --brief" in json.dumps(settings["hooks"]["SessionStart"])
    assert "Goal:" in (path / "claude-progress.txt").read_text()
    assert "0001" in (path / "docs/decisions/README.md").read_text()
    workflow = (path / ".github/workflows/shiftkit-audit.yml").read_text()
    assert '"$SHIFTKIT" audit --reverify' in workflow and "pull_request" in workflow
    assert '"$SHIFTKIT" check --no-demote' in workflow
    assert ".shiftkit/hook guard" in json.dumps(settings["hooks"]["PreToolUse"])
    assert ".shiftkit/hook stop-check" in json.dumps(settings["hooks"]["Stop"])
    assert ".shiftkit/hook usage record" in json.dumps(settings["hooks"]["SessionEnd"])


def test_copier_cli_copy_from_repository_head(template_repo: Path, tmp_path: Path) -> None:
    target = tmp_path / "todo-app"
    result = run(
        [
            sys.executable,
            "-m",
            "copier",
            "copy",
            "--trust",
            "--defaults",
            "-r",
            "HEAD",
            str(template_repo),
            str(target),
        ],
        tmp_path,
    )
    assert result.returncode == 0, result.output
    assert_fresh_scaffold(target)
    assert "project_name: todo-app" in (target / ".copier-answers.yml").read_text()
    assert "shiftkit start" in result.output  # the message after copy names the next command
    smoke = run(["./init.sh", "smoke"], target)
    assert smoke.returncode == 0, smoke.output
    again = run(["./init.sh"], target)
    assert again.returncode == 0 and run(["./init.sh"], target).returncode == 0


def test_shiftkit_new_from_installed_wheel(tmp_path: Path) -> None:
    wheel_dir = tmp_path / "wheel"
    built = run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(wheel_dir),
            str(Path(__file__).resolve().parent.parent),
        ],
        tmp_path,
    )
    assert built.returncode == 0, built.output
    [wheel] = wheel_dir.glob("shiftkit-*.whl")
    site = tmp_path / "site"
    installed = run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(site),
            str(wheel),
        ],
        tmp_path,
    )
    assert installed.returncode == 0, installed.output
    assert (site / "shiftkit" / "_template" / "copier.yml").is_file()
    assert (site / "shiftkit" / "_template" / "template" / "init.sh.jinja").is_file()
    env = {"PYTHONPATH": str(site), "PATH": f"{site / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    where = run([str(site / "bin" / "shiftkit"), "--version"], tmp_path, env=env)
    assert where.returncode == 0 and "0." in where.stdout
    origin = run(
        [sys.executable, "-c", "import shiftkit.core.resources as r; print(r.template_root())"],
        tmp_path,
        env=env,
    )
    assert origin.stdout.strip().startswith(str(site)), origin.output
    target = tmp_path / "from-wheel"
    result = run(
        [
            str(site / "bin" / "shiftkit"),
            "new",
            str(target),
            "--defaults",
            "--data",
            "goal=Ship a todo app",
        ],
        tmp_path,
        env=env,
    )
    assert result.returncode == 0, result.output
    assert_fresh_scaffold(target)
    assert "Goal: Ship a todo app" in (target / "claude-progress.txt").read_text()
    assert (site / "shiftkit" / "data" / "prices.json").is_file()  # the bundled price table
    assert os.access(target / ".shiftkit" / "hook", os.X_OK)  # the harnesses' hook script
    assert git_ok(target, "ls-files", "-s", ".shiftkit/hook").startswith("100755")


def test_hook_refuses_invalid_feature_list_then_accepts_fix_and_append(scaffold: Path) -> None:
    path = scaffold / "features.json"
    original = path.read_text()
    document = json.loads(original)
    document["features"].append(
        {"id": "F001", "category": "functional", "description": "x", "steps": [], "passes": False}
    )
    path.write_text(json.dumps(document, indent=2) + "\n")
    git_ok(scaffold, "add", "features.json")
    refused = git(scaffold, "commit", "-m", "Add the first real feature")
    assert refused.returncode != 0
    assert "$.features[1].steps" in refused.output and "rule 1" in refused.output
    assert "Traceback" not in refused.output
    assert git_ok(scaffold, "rev-list", "--count", "HEAD").strip() == "1"

    document["features"][1]["steps"] = ["Open the app", "See the list"]
    path.write_text(json.dumps(document, indent=2) + "\n")
    git_ok(scaffold, "add", "features.json")
    accepted = git(scaffold, "commit", "-m", "Add the first real feature")
    assert accepted.returncode == 0, accepted.output

    added = shiftkit(
        scaffold,
        "add",
        "--description",
        "Items can be deleted",
        "--step",
        "Delete one",
        "--verify",
        "true",
    )
    assert added.returncode == 0, added.output
    git_ok(scaffold, "add", "features.json")
    appended = git(scaffold, "commit", "-m", "Append the delete feature")
    assert appended.returncode == 0, appended.output
    assert git_ok(scaffold, "rev-list", "--count", "HEAD").strip() == "3"


def test_hook_reads_the_index_not_the_work_tree(scaffold: Path) -> None:
    path = scaffold / "features.json"
    good = path.read_text()
    path.write_text(good.replace('"steps": [', '"steps": 7, "x": ['))
    git_ok(scaffold, "add", "features.json")
    path.write_text(good)  # the work tree is fine, the staged blob is not
    refused = git(scaffold, "commit", "--no-edit", "-m", "Stage a broken list")
    assert refused.returncode != 0 and "rule 1" in refused.output


def test_commit_msg_hook_refuses_generic_message(scaffold: Path) -> None:
    write(scaffold / "notes.txt", "hello\n")
    git_ok(scaffold, "add", "notes.txt")
    refused = git(scaffold, "commit", "-m", "wip")
    assert refused.returncode != 0 and "rule 9" in refused.output
    assert git(scaffold, "commit", "-m", "Add notes about the app").returncode == 0


def test_copier_update_keeps_user_changes(tmp_path: Path) -> None:
    source = snapshot_repository(tmp_path / "src")
    git_ok(source, "tag", "v0.0.1")
    target = tmp_path / "project"
    result = run(
        [
            sys.executable,
            "-m",
            "copier",
            "copy",
            "--trust",
            "--defaults",
            "-r",
            "v0.0.1",
            str(source),
            str(target),
        ],
        tmp_path,
    )
    assert result.returncode == 0, result.output
    # The user's own work, committed.
    write(target / "src" / "app.py", "print('hello')\n")
    agents = target / "AGENTS.md"
    agents.write_text(agents.read_text() + "\n## Project notes\nUse tabs.\n")
    assert (
        shiftkit(
            target,
            "add",
            "--description",
            "It says hello",
            "--step",
            "run it",
            "--verify",
            "python3 src/app.py",
        ).returncode
        == 0
    )
    git_ok(target, "add", "-A")
    git_ok(target, "commit", "-q", "-m", "Add the app and its first feature")
    # A newer template version.
    init = source / "template" / "init.sh.jinja"
    init.write_text(
        init.read_text().replace("# Rebuilds and starts", "# (template v0.0.2) Rebuilds and starts")
    )
    write(source / "template" / "docs" / "RUNBOOK.md", "# Runbook\n")
    git_ok(source, "add", "-A")
    git_ok(source, "commit", "-q", "-m", "Template: runbook and init.sh comment")
    git_ok(source, "tag", "v0.0.2")

    updated = run(
        [sys.executable, "-m", "copier", "update", "--trust", "--defaults", "-r", "v0.0.2"], target
    )
    assert updated.returncode == 0, updated.output
    answers = (target / ".copier-answers.yml").read_text()
    assert "_commit: v0.0.2" in answers and "project_name: project" in answers
    assert "(template v0.0.2)" in (target / "init.sh").read_text()
    assert (target / "docs" / "RUNBOOK.md").is_file()
    assert "Use tabs." in agents.read_text()
    assert (target / "src" / "app.py").read_text() == "print('hello')\n"
    listing = features.loads((target / "features.json").read_text())
    assert [f.id for f in listing.features] == ["F000", "F001"]
    git_ok(target, "add", "-A")
    assert git(target, "commit", "-m", "Update the scaffold to template v0.0.2").returncode == 0


def test_new_imports_a_legacy_feature_list(tmp_path: Path) -> None:
    legacy = write(
        tmp_path / "legacy.json",
        json.dumps(
            [
                {
                    "category": "functional",
                    "description": "Add a todo",
                    "steps": ["type", "enter"],
                    "passes": False,
                },
                {
                    "category": "ui",
                    "description": "Dark mode",
                    "steps": ["toggle"],
                    "passes": False,
                },
            ]
        ),
    )
    target = tmp_path / "imported"
    result = shiftkit(tmp_path, "new", str(target), "--defaults", "--features", str(legacy))
    assert result.returncode == 0, result.output
    listing = features.loads((target / "features.json").read_text())
    assert [(f.id, f.description) for f in listing.features] == [
        ("F000", "The environment builds and the smoke test passes"),
        ("F001", "Add a todo"),
        ("F002", "Dark mode"),
    ]
    assert git_ok(target, "rev-list", "--count", "HEAD").strip() == "1"
    assert git_ok(target, "status", "--porcelain") == ""
    assert "features_import" not in (target / ".copier-answers.yml").read_text()


def existing_repository(target: Path) -> Path:
    """A repository with a commit of its own, to adopt shiftkit mid-project."""
    target.mkdir()
    git_ok(target, "init", "-q")
    write(target / "app.py", "x = 1\n")
    git_ok(target, "add", "app.py")
    git_ok(target, "commit", "-q", "-m", "Existing work")
    return target


def test_new_adopts_an_existing_repository_in_one_commit(tmp_path: Path) -> None:
    target = existing_repository(tmp_path / "existing")
    result = shiftkit(tmp_path, "new", str(target), "--defaults")
    assert result.returncode == 0, result.output
    assert git_ok(target, "rev-list", "--count", "HEAD").strip() == "2"
    assert git_ok(target, "status", "--porcelain") == ""
    changed = git_ok(target, "show", "--name-only", "--format=", "HEAD").split()
    assert "app.py" not in changed and "features.json" in changed


def test_new_refuses_a_dirty_existing_repository(tmp_path: Path) -> None:
    target = existing_repository(tmp_path / "dirty")
    write(target / "app.py", "x = 2\n")
    result = shiftkit(tmp_path, "new", str(target), "--defaults")
    assert result.returncode == 1
    assert "uncommitted changes" in result.stderr and "Traceback" not in result.output
    assert not (target / "features.json").exists()


def test_ci_none_leaves_out_the_workflow(tmp_path: Path) -> None:
    target = tmp_path / "no-ci"
    result = shiftkit(tmp_path, "new", str(target), "--defaults", "--data", "ci=none")
    assert result.returncode == 0, result.output
    assert not (target / ".github").exists()
    assert git_ok(target, "status", "--porcelain") == ""


def test_the_signed_people_policy_is_a_copier_question(tmp_path: Path) -> None:
    import subprocess

    key = tmp_path / "person"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    signer = f"me@shiftkit.invalid {Path(f'{key}.pub').read_text().strip()}"
    target = tmp_path / "signed"
    result = shiftkit(
        tmp_path,
        "new",
        str(target),
        "--defaults",
        "--data",
        "people_policy=signed",
        "--data",
        f"people_signer={signer}",
    )
    assert result.returncode == 0, result.output
    assert signer in (target / ".shiftkit" / "allowed_signers").read_text()
    assert 'policy = "signed"' in (target / ".shiftkit.toml").read_text()
    for hook in ("pre-commit", "commit-msg", "reference-transaction", "pre-push"):
        assert (target / ".git" / "hooks" / hook).exists(), hook
    refused = shiftkit(
        tmp_path,
        "new",
        str(tmp_path / "bad"),
        "--defaults",
        "--data",
        "people_policy=signed",
        "--data",
        "people_signer=nobody",
    )
    assert refused.returncode != 0 and "allowed_signers line" in refused.output
    trailer = tmp_path / "trailer"
    assert shiftkit(tmp_path, "new", str(trailer), "--defaults").returncode == 0
    assert not (trailer / ".shiftkit" / "allowed_signers").exists()


def installed_by_ci(project: Path) -> str:
    workflow = (project / ".github" / "workflows" / "shiftkit-audit.yml").read_text()
    [requirement] = re.findall(r'/bin/pip" install --quiet "([^"]+)"', workflow)
    return requirement


def test_ci_installs_a_shiftkit_a_runner_can_reach(scaffold: Path) -> None:
    """A template rendered from a local path (no CI runner can reach it) pins this shiftkit's
    release from the package index (issue 38 item 2; it pinned `git+file://…`, which no
    runner can install); `ci_install` stays `auto`, so `copier update` moves the pin."""
    import yaml

    import shiftkit

    recorded = yaml.safe_load((scaffold / ".copier-answers.yml").read_text())
    assert str(recorded["_src_path"]).startswith("/")
    assert installed_by_ci(scaffold) == f"shiftkit=={shiftkit.__version__}"
    assert recorded["ci_install"] == "auto"
    people = " ".join((scaffold / ".shiftkit" / "README.md").read_text().split())
    assert "`pip install 'git+SRC@COMMIT'` with its `_src_path` and `_commit`" in people


def test_the_template_names_this_release() -> None:
    """The version CI pins (copier.yml's `shiftkit_version`) is the package's."""
    import yaml

    import shiftkit

    questions = yaml.safe_load((Path(__file__).parent.parent / "copier.yml").read_text())
    assert questions["shiftkit_version"]["default"] == shiftkit.__version__


def test_new_says_when_ci_installs_from_the_index(tmp_path: Path) -> None:
    result = run(["shiftkit", "new", str(tmp_path / "p"), "--defaults"], tmp_path)
    assert result.returncode == 0, result.output
    [line] = [x for x in result.output.splitlines() if x.startswith("ci: ")]
    assert "no CI runner can reach" in line and "shiftkit==" in line and "ci_install" in line


def test_a_template_from_a_hosted_repository_is_installed_from_it(tmp_path: Path) -> None:
    """Its twin: rendered with a URL a runner reaches (the bundled copy's recorded origin),
    CI installs that repository at the commit rendered; an explicit ci_install wins."""
    origin = "https://github.com/example/shiftkit"
    commit = "0123456789abcdef0123456789abcdef01234567"
    # (`hook_source=local`: the hooks from a hosted repository are its default now, and this
    # one no test reaches; tests/test_hook_repository.py serves one, ADR 0118)
    copier = [sys.executable, "-m", "copier", "copy", "--trust", "--defaults", "--data",
              f"template_origin={origin}", "--data", f"template_origin_ref={commit}",
              "--data", "hook_source=local"]  # fmt: skip
    template = str(Path(__file__).parent.parent)
    copied = run([*copier, template, "hosted"], tmp_path)
    assert copied.returncode == 0, copied.output
    assert installed_by_ci(tmp_path / "hosted") == f"git+{origin}@{commit}"
    assert "ci: " not in copied.output
    chosen = run([*copier, "--data", "ci_install=shiftkit>=0.1", template, "chosen"], tmp_path)
    assert chosen.returncode == 0, chosen.output
    assert installed_by_ci(tmp_path / "chosen") == "shiftkit>=0.1"


def test_what_the_agent_reads_every_session_fits_in_a_thousand_tokens(scaffold: Path) -> None:
    """AGENTS.md's shiftkit section is read by the agent at every session, on top of the
    brief: at most 1,000 tokens, counted as a quarter of its characters (English prose with
    code spans runs at 4 to 4.5 characters a token in the GPT and Claude tokenizers). Before,
    8,300 characters; the people's part is in `.shiftkit/README.md` now."""
    text = (scaffold / "AGENTS.md").read_text()
    section = text[text.index("<!-- shiftkit:begin -->") : text.index("<!-- shiftkit:end -->")]
    assert len(section) / 4 <= 1000, len(section)
    people = (scaffold / ".shiftkit" / "README.md").read_text()
    assert "shiftkit cost" in people and "shiftkit accept" in people
    assert ".shiftkit/README.md" in section
