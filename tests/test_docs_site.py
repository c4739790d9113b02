"""The documentation site builds with `mkdocs build --strict`, every internal link of the built
site and of the README resolves (page and anchor), the README stays a door (at most 150 lines),
and the generated command reference names every command `shiftkit --help` can reach
(decision record 0094)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import click
import pytest
from conftest import REPO_ROOT

from shiftkit.cli import cli
from shiftkit.core.config import ENFORCEMENT_KEYS, Config

README = REPO_ROOT / "README.md"
README_MAX_LINES = 150


class Anchors(HTMLParser):
    """A built page's element ids and the hrefs of its links."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(str(found["id"]))
        if tag == "a" and found.get("href"):
            self.hrefs.append(str(found["href"]))


def read(page: Path) -> Anchors:
    parsed = Anchors()
    parsed.feed(page.read_text(encoding="utf-8"))
    return parsed


def broken_links(site: Path) -> list[str]:
    """Every internal link of the built site whose page or anchor does not exist."""
    site = site.resolve()
    pages = {page: read(page) for page in site.rglob("*.html")}
    broken = []
    for page, parsed in pages.items():
        for href in parsed.hrefs:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith("mailto:"):
                continue
            # (404.html links from the site's root: it is served at any depth)
            base = site if parts.path.startswith("/") else page.parent
            path = unquote(parts.path).lstrip("/")
            target = (base / path).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{page.relative_to(site)}: {href} (no such page)")
            elif parts.fragment and target in pages and parts.fragment not in pages[target].ids:
                broken.append(f"{page.relative_to(site)}: {href} (no such anchor)")
    return broken


def commands(group: click.Group, prefix: str = "shiftkit") -> list[str]:
    """Every command a person can reach, nested ones included (hidden ones are not shown)."""
    found = []
    for name, command in sorted(group.commands.items()):
        if command.hidden:
            continue
        found.append(f"{prefix} {name}")
        if isinstance(command, click.Group):
            found.extend(commands(command, f"{prefix} {name}"))
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stdout + built.stderr
    return folder


def test_the_site_builds_strict_and_every_internal_link_resolves(site: Path) -> None:
    assert (site / "index.html").is_file()
    assert broken_links(site) == []


def test_a_broken_link_and_a_missing_anchor_are_found(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "index.html").write_text('<h1 id="top"></h1><a href="a/">a</a><a href="#top">t</a>')
    (tmp_path / "a" / "index.html").write_text(
        '<a href="../index.html#top">ok</a><a href="../b/">b</a><a href="../#gone">g</a>'
    )
    assert broken_links(tmp_path) == [
        "a/index.html: ../b/ (no such page)",
        "a/index.html: ../#gone (no such anchor)",
    ]


def test_every_decision_record_is_in_the_sites_nav(site: Path) -> None:
    records = sorted(path.stem for path in (REPO_ROOT / "docs" / "decisions").glob("[0-9]*.md"))
    nav = (site / "index.html").read_text(encoding="utf-8")
    missing = [record for record in records if f"decisions/{record}/" not in nav]
    assert len(records) > 80 and missing == []


def test_the_generated_reference_names_every_command(site: Path) -> None:
    page = (site / "reference" / "commands" / "index.html").read_text(encoding="utf-8")
    ids = read(site / "reference" / "commands" / "index.html").ids
    every = commands(cli)
    assert len(every) > 35
    missing = [name for name in every if name.replace(" ", "-") not in ids]
    assert missing == []
    assert "--steal" in page and "--budget-usd" in page  # the options, as --help gives them
    assert "Sentinel" not in page  # (the table style shows click 8.3's UNSET default by name)


def test_the_readme_is_a_door() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def test_every_link_of_the_readme_resolves() -> None:
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    assert len(targets) > 20
    missing = [
        target
        for target in targets
        if not urlsplit(target).scheme
        and not (REPO_ROOT / unquote(urlsplit(target).path)).is_file()
    ]
    assert missing == []


def test_the_configuration_page_names_every_key_and_marks_the_enforcement_ones() -> None:
    text = (REPO_ROOT / "docs" / "reference" / "configuration.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `([a-z_]+)` \| .* \|\s*(yes)?\s*\|$", text, flags=re.M))
    sections = {"log", "claims", "people", "cost", "prices"}
    keys = [key for key in Config._fields if key not in sections]
    keys += [
        f"{section}.{key}"
        for section in ("log", "claims", "people")
        for key in getattr(Config(), section)._fields
    ]
    named = {key: rows.get(key.rsplit(".", 1)[-1]) for key in keys}
    assert [key for key, mark in named.items() if mark is None] == []
    assert sorted(key for key, mark in named.items() if mark == "yes") == sorted(ENFORCEMENT_KEYS)
