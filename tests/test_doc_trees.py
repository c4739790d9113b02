"""Decision records go where the repository's documentation tool neither publishes them nor
trips on them (issue 38, item 4; decision record 0107): docs/decisions where no Sphinx or
MkDocs tree reads it, else .shiftkit/decisions; one setting (`decisions`, the template's
question, `.shiftkit.toml`'s key) that `shiftkit new`, plain `copier copy` and every command
use. Real shiftkit, copier, MkDocs and — on structlog's own docs — Sphinx."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from conftest import Result, git_ok, isolated_environment, run, shiftkit, snapshot_repository, write
from test_real_editable import STRUCTLOG, Project, unpack
from test_real_editable import sdist as sdist  # (the session's sdists, shared)

from shiftkit.core import config, doctree, orientation, rules

OUTSIDE = ".shiftkit/decisions"
RECORD = "0001-record-decisions.md"


# -- the pure choice -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("site_name: x\n", "docs"),  # MkDocs' default
        ("site_name: x\ndocs_dir: pages\n", "pages"),
        ("docs_dir: 'my docs/'  # a comment\n", "my docs"),
        ('docs_dir: "./src/site"\n', "src/site"),
        ("docs_dir:   site # the pages\n", "site"),
        ("nav:\n  - docs_dir: nested\n", "docs"),  # (only the top-level key counts)
        (
            "markdown_extensions:\n  - pymdownx.emoji:\n      emoji_index: !!python/name:x.y\n"
            "docs_dir: doc\n",
            "doc",
        ),
    ],
)
def test_mkdocs_docs_dir_is_read_by_its_line(text: str, expected: str) -> None:
    assert doctree.mkdocs_docs_dir(text) == expected


@pytest.mark.parametrize(
    ("confs", "mkdocs", "expected"),
    [
        ((), None, "docs/decisions"),  # no documentation tool
        (("docs/conf.py",), None, OUTSIDE),  # structlog: Sphinx reads docs/
        (("doc/conf.py",), None, "docs/decisions"),  # Sphinx reads doc/, not docs/
        (("docs/source/conf.py",), None, "docs/decisions"),  # (docs/decisions is outside)
        ((), "site_name: x\n", OUTSIDE),  # MkDocs reads docs/ by default
        ((), "docs_dir: site\n", "docs/decisions"),
        ((), "docs_dir: .\n", OUTSIDE),  # (MkDocs leaves dot folders out)
    ],
)
def test_the_folder_is_outside_every_documentation_tree(
    confs: tuple[str, ...], mkdocs: str | None, expected: str
) -> None:
    found = doctree.trees(confs, mkdocs)
    assert doctree.choose(found) == expected
    assert bool(doctree.why(found)) == (expected != doctree.DEFAULT)


def test_every_default_of_the_setting_is_the_same_folder() -> None:
    from shiftkit import hooks

    assert config.Config().decisions == doctree.DEFAULT
    assert rules.Changed._field_defaults["decisions"] == doctree.DEFAULT
    assert orientation.Sources().decisions == doctree.DEFAULT
    assert hooks.DEFAULT_DECISIONS == doctree.DEFAULT


# -- shiftkit new and copier copy on real repositories -------------------------------------


def repository(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    git_ok(root, "init", "-q")
    write(root / "app.py", "x = 1\n")
    for name, text in files.items():
        write(root / name, text)
    git_ok(root, "add", "-A")
    git_ok(root, "commit", "-q", "-m", "The app and its docs")
    return root


SPHINX = {"docs/conf.py": "project = 'app'\n", "docs/index.md": "# app\n"}
MKDOCS = {"mkdocs.yml": "site_name: app\n", "docs/index.md": "# app\n\nThe app.\n"}


def records_at(root: Path, folder: str) -> None:
    """The records, the setting and every file that names the folder agree on ``folder``."""
    assert (root / folder / RECORD).is_file() and (root / folder / "README.md").is_file()
    assert config.parse((root / ".shiftkit.toml").read_text()).decisions == folder
    assert f"{folder}/README.md merge=union" in (root / ".gitattributes").read_text()
    assert f"`{folder}/` (why)" in (root / "AGENTS.md").read_text()
    answers = yaml.safe_load((root / ".copier-answers.yml").read_text())
    assert answers["decisions"] == folder
    assert git_ok(root, "status", "--porcelain") == ""  # (all of it in the adoption's commit)


def decide(root: Path) -> str:
    done = shiftkit(root, "decide", "Use tabs", "--why", "taste", "--rejected", "spaces: no")
    assert done.returncode == 0, done.output
    return done.output


def test_a_repository_without_docs_keeps_docs_decisions(tmp_path: Path) -> None:
    root = repository(tmp_path / "app", {})
    done = shiftkit(root, "new", ".", "--defaults")
    assert done.returncode == 0, done.output
    records_at(root, "docs/decisions")
    assert "decision records go to" not in done.output
    assert "committed docs/decisions/0002-use-tabs.md" in decide(root)


def test_a_sphinx_repository_gets_them_outside_its_docs(tmp_path: Path) -> None:
    root = repository(tmp_path / "app", SPHINX)
    done = shiftkit(root, "new", ".", "--defaults")
    assert done.returncode == 0, done.output
    assert "decision records go to .shiftkit/decisions/: Sphinx builds the pages under docs/" in (
        done.stderr
    )
    records_at(root, OUTSIDE)
    assert not (root / "docs" / "decisions").exists()
    # every command reads the one setting: decide writes there, the brief lists it
    assert f"committed {OUTSIDE}/0002-use-tabs.md" in decide(root)
    assert "0002 Use tabs" in shiftkit(root, "start").output


def test_an_answer_is_the_folder(tmp_path: Path) -> None:
    root = repository(tmp_path / "app", SPHINX)
    done = shiftkit(root, "new", ".", "--defaults", "--data", "decisions=adr/")
    assert done.returncode == 0, done.output
    records_at(root, "adr")
    assert "decision records go to" not in done.output


def test_a_mkdocs_site_does_not_publish_them(tmp_path: Path) -> None:
    root = repository(tmp_path / "app", MKDOCS)
    done = shiftkit(root, "new", ".", "--defaults")
    assert done.returncode == 0, done.output
    records_at(root, OUTSIDE)
    decide(root)
    built = run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", "site"], root)
    assert built.returncode == 0, built.output
    published = [p.relative_to(root / "site").as_posix() for p in (root / "site").rglob("*")]
    assert "index.html" in published
    assert not [p for p in published if "decision" in p or "use-tabs" in p], published


@pytest.fixture(scope="module")
def tagged_template(tmp_path_factory: pytest.TempPathFactory, isolated_home: Path) -> Path:
    with isolated_environment(isolated_home):
        source = snapshot_repository(tmp_path_factory.mktemp("template") / "shiftkit")
        git_ok(source, "tag", "v0.9.0")
    return source


def copier(cwd: Path, *args: str) -> Result:
    return run([sys.executable, "-m", "copier", *args], cwd, timeout=300)


@pytest.mark.parametrize(("files", "folder"), [(SPHINX, OUTSIDE), ({}, "docs/decisions")])
def test_plain_copier_copy_chooses_as_shiftkit_new_does(
    tagged_template: Path, tmp_path: Path, files: dict[str, str], folder: str
) -> None:
    """copier cannot look at the destination: its default is `auto`, which the template's
    task settles onto the folder `shiftkit new` would choose, in the answers file too."""
    root = repository(tmp_path / "app", files)
    done = copier(tmp_path, "copy", "--trust", "--defaults", str(tagged_template), "app")
    assert done.returncode == 0, done.output
    records_at(root, folder)
    assert not (root / "auto").exists()
    assert 'decisions = "auto"' not in git_ok(root, "show", "HEAD:.shiftkit.toml")


def test_a_plain_copier_copy_into_a_new_folder_gets_docs_decisions(
    tagged_template: Path, tmp_path: Path
) -> None:
    done = copier(tmp_path, "copy", "--trust", "--defaults", str(tagged_template), "fresh")
    assert done.returncode == 0, done.output
    records_at(tmp_path / "fresh", "docs/decisions")


# -- structlog's own docs job --------------------------------------------------------------

SPHINX_BUILD = ["-n", "-T", "-W", "--keep-going", "-b", "html", "-q", "docs"]  # (their tox's)


def sphinx_venv(archive: Path, project: Project) -> Path:
    """structlog's `docs` dependency group (pyproject.toml) and structlog itself, which
    autodoc imports. (furo, their theme, installs: their conf.py runs as it is.)"""
    from test_guests import tool_venv

    group = (
        "cogapp", "furo", "myst-parser", "sphinx", "sphinx-notfound-page",
        "sphinxcontrib-mermaid", "sphinxext-opengraph", "twisted",
    )  # fmt: skip
    return tool_venv(f"sphinx-{project.name}-{project.version}", *group, str(archive))


def sphinx_build(bin_dir: Path, root: Path, out: Path) -> Result:
    return run([str(bin_dir / "sphinx-build"), *SPHINX_BUILD, str(out)], root, timeout=900)


def warnings(done: Result, root: Path) -> list[str]:
    return sorted(
        line.replace(str(root), "ROOT") for line in done.output.splitlines() if "WARNING" in line
    )


def test_structlogs_sphinx_build_passes_after_adoption(
    sdist: Callable[[Project], Path], tmp_path: Path
) -> None:
    """structlog's docs job (`sphinx-build -n -T -W`, myst-parser reading docs/*.md) after
    `shiftkit new .`; its twin, the records moved into docs/ as before, fails it with "document
    isn't included in any toctree". Offline, intersphinx cannot fetch Python's inventory and
    `-n` warns of every standard-library reference before shiftkit is there: then the build
    must warn of exactly what it warned of before (online, as in their CI, it must pass)."""
    archive = sdist(STRUCTLOG)
    bin_dir = sphinx_venv(archive, STRUCTLOG)
    root = unpack(archive, tmp_path, STRUCTLOG)
    before = sphinx_build(bin_dir, root, tmp_path / "before")
    # (their build itself runs: warnings at most, no extension failing, no crash)
    assert "Exception occurred" not in before.output, before.output[-3000:]
    assert "Extension error" not in before.output, before.output[-3000:]

    done = shiftkit(root, "new", ".", "--defaults")
    assert done.returncode == 0, done.output
    records_at(root, OUTSIDE)
    decide(root)
    after = sphinx_build(bin_dir, root, tmp_path / "after")
    assert "toctree" not in after.output, after.output[-3000:]
    if before.returncode == 0:
        assert after.returncode == 0, after.output[-3000:]
    else:
        assert warnings(after, root) == warnings(before, root)

    git_ok(root, "mv", OUTSIDE, "docs/decisions")  # (where they went before 0107)
    inside = sphinx_build(bin_dir, root, tmp_path / "inside")
    assert inside.returncode != 0
    assert re.search(r"decisions/0002-use-tabs\.md: WARNING: document isn't included in any toctree", inside.output), inside.output[-3000:]  # fmt: skip
