"""shiftkit in other people's repositories (decision 0069): its Markdown block is what the
common formatters write (mdformat with tomli's plugins, plain mdformat, prettier), so a
repository that formats Markdown in its hooks neither refuses the adoption nor loops on an
update; and a pre-commit too old for shiftkit's hooks says so in one line. The tools are real:
pip and npm installs into a cache that outlives the run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import needs
import pytest
import yaml
from conftest import git, git_ok, run, shiftkit, write

DATA = Path(__file__).resolve().parent / "data"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "shiftkit-tests"
MDFORMAT = ("mdformat", "mdformat-gfm", "mdformat-toc", "mdformat-black", "markdown-it-py>=3")


def tool_venv(name: str, *requirements: str) -> Path:
    """A virtual environment with ``requirements``, made once and kept in the cache."""
    target = CACHE / name
    if not (target / ".complete").exists():
        shutil.rmtree(target, ignore_errors=True)
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(target)], check=True)
        pip = [str(target / "bin" / "python"), "-m", "pip", "install", "-q", *requirements]
        done = run(pip, CACHE, timeout=900)
        assert done.returncode == 0, done.output
        (target / ".complete").write_text("")
    return target / "bin"


def formatted(tool: list[str], files: list[Path]) -> None:
    done = run([*tool, *map(str, files)], files[0].parent, timeout=300)
    assert done.returncode == 0, done.output


def shiftkit_files(scaffold: Path, tmp_path: Path) -> dict[Path, str]:
    out = {}
    for name in ("AGENTS.md", "CLAUDE.md"):
        copy = tmp_path / name
        shutil.copy(scaffold / name, copy)
        out[copy] = (scaffold / name).read_text()
    return out


@pytest.mark.parametrize("plugins", ["tomli's plugins", "none"])
def test_mdformat_leaves_the_block_as_it_is(scaffold: Path, tmp_path: Path, plugins: str) -> None:
    bin_dir = tool_venv(
        *(["mdformat-plugins", *MDFORMAT] if plugins != "none" else ["mdformat", "mdformat"])
    )
    files = shiftkit_files(scaffold, tmp_path)
    formatted([str(bin_dir / "mdformat")], list(files))
    for path, before in files.items():
        assert path.read_text() == before, path.name


def test_prettier_leaves_the_block_as_it_is(scaffold: Path, tmp_path: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        needs.missing("no npm: prettier is checked where npm is")
    prefix = CACHE / "prettier"
    binary = prefix / "node_modules" / ".bin" / "prettier"
    if not binary.exists():
        got = run(
            [
                npm,
                "install",
                "--silent",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(prefix),
                "prettier@3",
            ],
            tmp_path,
            timeout=300,
        )
        if got.returncode != 0:
            needs.missing(f"prettier not reachable through npm: {got.output.strip()[-200:]}")
    files = shiftkit_files(scaffold, tmp_path)
    formatted([str(binary), "--write"], list(files))
    for path, before in files.items():
        assert path.read_text() == before, path.name


def tomli_markdown_hooks() -> str:
    """tomli's mdformat and check-yaml hooks as tomli configures them (their plugins and
    stages), installed from PyPI as local hooks: the tests reach no GitHub."""
    config = yaml.safe_load((DATA / "tomli-pre-commit-config.yaml").read_text())
    hooks = []
    for repo in config["repos"]:
        for hook in repo["hooks"]:
            if hook["id"] == "mdformat":
                hooks.append(
                    {
                        "id": "mdformat",
                        "name": "mdformat",
                        "entry": "mdformat",
                        "language": "python",
                        "types": ["markdown"],
                        "additional_dependencies": [
                            "mdformat",
                            *hook["additional_dependencies"],
                            "markdown-it-py>=3",
                        ],
                    }
                )
            elif hook["id"] == "check-yaml":
                hooks.append(
                    {
                        "id": "check-yaml",
                        "name": "check yaml",
                        "entry": "check-yaml",
                        "language": "python",
                        "types": ["yaml"],
                        "additional_dependencies": ["pre-commit-hooks"],
                    }
                )
    assert [h["id"] for h in hooks] == ["mdformat", "check-yaml"]
    return (
        "# tomli's Markdown and YAML hooks (tests/data/tomli-pre-commit-config.yaml)\n"
        + yaml.safe_dump({"repos": [{"repo": "local", "hooks": hooks}]}, sort_keys=False)
    )


def test_a_repository_that_formats_markdown_adopts_and_updates_without_a_loop(
    tmp_path: Path,
) -> None:
    root = tmp_path / "tomli"
    root.mkdir()
    git_ok(root, "init", "-q")
    write(root / "README.md", "# Tomli\n\nA lil' TOML parser.\n")
    write(root / ".pre-commit-config.yaml", tomli_markdown_hooks())
    git_ok(root, "add", "-A")
    git_ok(root, "commit", "-q", "-m", "Add the readme and the hooks")
    hooked = run(["pre-commit", "install"], root, timeout=120)
    assert hooked.returncode == 0, hooked.output
    adopted = shiftkit(tmp_path, "new", str(root), "--defaults")
    assert adopted.returncode == 0, adopted.output  # not refused by the user's mdformat
    assert "mdformat" in adopted.output and "Passed" in adopted.output
    # said once: the user's hooks without `stages` now also run at commit-msg
    assert adopted.stderr.count("add `default_stages: [pre-commit]`") == 1, adopted.output
    assert git_ok(root, "status", "--porcelain") == ""
    # an update re-renders the block: the formatter has nothing to change, the commit passes
    recopied = run(
        [sys.executable, "-m", "copier", "recopy", "--trust", "--defaults", "--overwrite"],
        root,
        timeout=300,
    )
    assert recopied.returncode == 0, recopied.output
    again = run(["pre-commit", "run", "--all-files"], root, timeout=300)
    assert again.returncode == 0, again.output
    git_ok(root, "add", "-A")
    committed = git(root, "commit", "-q", "--allow-empty", "-m", "Recopy the scaffold")
    assert committed.returncode == 0, committed.output
    assert git_ok(root, "status", "--porcelain") == ""


@pytest.mark.parametrize("version", ["3.8.0", "4.3.0"])
def test_an_older_pre_commit_says_the_version_it_needs(scaffold: Path, version: str) -> None:
    """shiftkit's hooks are `language: unsupported` (pre-commit 4.4.0); the config says so in
    `minimum_pre_commit_version`, which pre-commit checks before anything else."""
    bin_dir = tool_venv(f"pre-commit-{version}", f"pre-commit=={version}")
    old = run([str(bin_dir / "pre-commit"), "validate-config", ".pre-commit-config.yaml"], scaffold)
    assert old.returncode != 0
    assert f"pre-commit version 4.4.0 is required but version {version} is installed" in old.output
    assert "unsupported" not in old.output
    new = run(["pre-commit", "validate-config", ".pre-commit-config.yaml"], scaffold)
    assert new.returncode == 0, new.output


def test_adoption_adds_the_minimum_an_older_pre_commit_needs(tmp_path: Path) -> None:
    root = tmp_path / "app"
    root.mkdir()
    git_ok(root, "init", "-q")
    write(
        root / ".pre-commit-config.yaml",
        "repos:\n- repo: local\n  hooks:\n  - id: x\n    name: x\n    entry: 'true'\n    language: system\n    stages: [pre-commit]\n",
    )
    git_ok(root, "add", "-A")
    git_ok(root, "commit", "-q", "-m", "Add the hooks")
    adopted = shiftkit(tmp_path, "new", str(root), "--defaults")
    assert adopted.returncode == 0, adopted.output
    config = yaml.safe_load((root / ".pre-commit-config.yaml").read_text())
    assert config["minimum_pre_commit_version"] == "4.4.0"
    assert "default_stages" not in adopted.output  # every hook of theirs has its stage
    bin_dir = tool_venv("pre-commit-3.8.0", "pre-commit==3.8.0")
    old = run([str(bin_dir / "pre-commit"), "validate-config", ".pre-commit-config.yaml"], root)
    assert "pre-commit version 4.4.0 is required" in old.output


def _without_shiftkit(scaffold: Path, tmp_path: Path) -> dict[str, str]:
    """The repository's lint job as CI runs it: pre-commit installed, shiftkit not (no
    interpreter recorded, none on PATH)."""
    from test_session_start import path_without_shiftkit

    (scaffold / ".git" / "shiftkit" / "interpreter").unlink(missing_ok=True)
    bin_dir = tool_venv("pre-commit-4", "pre-commit>=4.4")
    return {"PATH": f"{bin_dir}{os.pathsep}{path_without_shiftkit(tmp_path)}"}


def test_their_lint_job_stays_green_where_shiftkit_is_not_installed(
    scaffold: Path, tmp_path: Path
) -> None:
    """`pre-commit run --all-files` (markupsafe's and tomli-w's lint jobs, pre-commit.ci) makes
    no commit: shiftkit's hook says so and passes (decision record 0104). Before: exit 2,
    "cannot run (not installed …)", and the job red."""
    env = _without_shiftkit(scaffold, tmp_path)
    ran = run(["pre-commit", "run", "--all-files", "--verbose"], scaffold, env=env, timeout=600)
    assert ran.returncode == 0, ran.output
    assert "no commit is being made" in ran.output


def test_a_commit_where_shiftkit_is_not_installed_is_still_refused(
    scaffold: Path, tmp_path: Path
) -> None:
    """The twin: a commit git makes sets GIT_INDEX_FILE for its hooks; with shiftkit missing
    the hook fails closed, as before."""
    env = _without_shiftkit(scaffold, tmp_path)
    env |= {"PRE_COMMIT": "1", "GIT_INDEX_FILE": str(scaffold / ".git" / "index")}
    ran = run([".shiftkit/hook", "hook", "pre-commit"], scaffold, env=env)
    assert ran.returncode == 2, ran.output
    assert "cannot run (not installed" in ran.stderr
