"""The README and the documentation pages are true: their runnable blocks run, no sentence is
said twice on a page, and the feature-list page's example is a valid list naming every field of
the packaged schema. (The site itself — it builds, its links resolve — is test_docs_site.py.)"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import pytest
from conftest import REPO_ROOT, run

from shiftkit.core import resources

README = REPO_ROOT / "README.md"
DOCS = REPO_ROOT / "docs"
# The documentation pages (the decision records are records, tested by test_decisions.py).
PAGES = sorted(path for path in DOCS.rglob("*.md") if "decisions" not in path.parts)
# Runnable blocks run in the order a reader meets them: each reading in a folder of its own,
# its pages top to bottom (the first shift works in the project the scaffold page made).
READINGS = {
    "the README": [README],
    "getting started": [
        DOCS / "getting-started" / "scaffold.md",
        DOCS / "getting-started" / "adopt.md",
        DOCS / "getting-started" / "first-shift.md",
    ],
}
FEATURE_LIST = DOCS / "reference" / "feature-list.md"
FIRST_SHIFT = DOCS / "getting-started" / "first-shift.md"
COMMANDS = DOCS / "reference" / "commands.md"
RUNNABLE = "<!-- runnable -->"
EXAMPLE = "<!-- feature-list-example -->"
FENCE = "```"
MIN_WORDS = 8


class Block(NamedTuple):
    line: int  # where its code starts, 1-based
    text: str


def marked_blocks(text: str, marker: str, language: str, name: str = "README.md") -> list[Block]:
    """The fenced blocks of `language` on the line right under `marker`; a marker above
    anything else is an error, so a marker cannot silently mark nothing."""
    lines = text.splitlines()
    blocks: list[Block] = []
    for index, line in enumerate(lines):
        if line.strip() != marker:
            continue
        opening = lines[index + 1].strip() if index + 1 < len(lines) else ""
        if opening != FENCE + language:
            raise AssertionError(
                f"{name}:{index + 1}: {marker} is not right above {FENCE}{language}"
            )
        end = next((at for at in range(index + 2, len(lines)) if lines[at].strip() == FENCE), None)
        if end is None:
            raise AssertionError(f"{name}:{index + 2}: the block never closes")
        blocks.append(Block(index + 3, "\n".join(lines[index + 2 : end]) + "\n"))
    return blocks


def run_blocks(blocks: list[Block], folder: Path, name: str = "README.md") -> list[str]:
    """Run each block with `sh -e` in `folder`, in order (a block may use what an earlier one
    made: the README reads top to bottom); the failures, each naming its line."""
    failures = []
    for block in blocks:
        done = subprocess.run(
            ["sh", "-e", "-c", block.text],
            cwd=folder,
            env=dict(os.environ),
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-15:])
            failures.append(f"{name}:{block.line}: exit {done.returncode}\n{block.text}{tail}")
    return failures


def prose(text: str) -> str:
    """The README without its fenced blocks and HTML comments."""
    text = re.sub(r"^```.*?^```[ \t]*$", "", text, flags=re.S | re.M)
    return re.sub(r"<!--.*?-->", "", text, flags=re.S)


def sentences(text: str) -> list[str]:
    """Sentences of the prose, whitespace normalized; paragraphs, headings, list items and
    table cells end a sentence."""
    text = re.sub(r"^[ \t]*(?:[-*+]|\d+\.|#+)[ \t]+", "\n\n", prose(text), flags=re.M)
    found = []
    for chunk in re.split(r"\n\s*\n|\|", text):
        for sentence in re.split(r"(?<=[.!?:;])\s+", " ".join(chunk.split())):
            if len(sentence.split()) >= MIN_WORDS:
                found.append(sentence)
    return found


def repeated(text: str) -> list[str]:
    """Sentences said more than once (letter case aside)."""
    seen: dict[str, str] = {}
    counts: Counter[str] = Counter()
    for sentence in sentences(text):
        key = sentence.casefold()
        seen.setdefault(key, sentence)
        counts[key] += 1
    return [seen[key] for key, n in counts.items() if n > 1]


def name(path: Path) -> str:
    return str(path.relative_to(REPO_ROOT))


def runnable(path: Path) -> list[Block]:
    return marked_blocks(path.read_text(encoding="utf-8"), RUNNABLE, "sh", name(path))


def test_the_docs_mark_the_offline_blocks_runnable() -> None:
    assert runnable(README), "the README's quick start runs"
    blocks = [block for path in READINGS["getting started"] for block in runnable(path)]
    assert len(blocks) >= 3
    code = "".join(block.text for block in blocks)
    for command in ("shiftkit new", "shiftkit claim", "shiftkit finish", "shiftkit check"):
        assert command in code
    read = {path for paths in READINGS.values() for path in paths}
    unread = [name(path) for path in [README, *PAGES] if runnable(path) and path not in read]
    assert unread == [], "a page with runnable blocks belongs in a reading"


@pytest.mark.parametrize("reading", sorted(READINGS))
def test_every_runnable_block_exits_0(reading: str, tmp_path: Path) -> None:
    failures = [
        failure
        for path in READINGS[reading]
        for failure in run_blocks(runnable(path), tmp_path, name(path))
    ]
    assert not failures, "\n\n".join(failures)


def test_a_failing_block_is_reported_with_its_line(tmp_path: Path) -> None:
    text = f"# x\n\n{RUNNABLE}\n```sh\ntrue\n```\n\n{RUNNABLE}\n```sh\ntrue\nfalse\ntrue\n```\n"
    failures = run_blocks(marked_blocks(text, RUNNABLE, "sh"), tmp_path)
    assert len(failures) == 1 and failures[0].startswith("README.md:10: exit 1")


def test_a_marker_above_no_block_is_an_error() -> None:
    with pytest.raises(AssertionError, match="not right above"):
        marked_blocks(f"{RUNNABLE}\n\n```sh\ntrue\n```\n", RUNNABLE, "sh")


@pytest.mark.parametrize("path", [README, *PAGES], ids=name)
def test_no_sentence_of_a_page_is_said_twice(path: Path) -> None:
    assert repeated(path.read_text(encoding="utf-8")) == []


def test_a_sentence_said_twice_is_found() -> None:
    said = "The scaffold's files are committed on top in one commit."
    text = f"{said} Something else entirely.\n\n| a | {said.lower()} |\n\n- {said}\n  more\n"
    assert repeated(text) == [said]
    assert repeated(text.replace(said, "Short one.")) == []


def test_the_feature_list_example_is_valid_and_every_field_is_explained(
    tmp_path: Path,
) -> None:
    text = FEATURE_LIST.read_text(encoding="utf-8")
    (example,) = marked_blocks(text, EXAMPLE, "json", name(FEATURE_LIST))
    path = tmp_path / "example.json"
    path.write_text(example.text)
    result = run(["shiftkit", "validate", str(path)], tmp_path)
    assert result.returncode == 0, result.output
    document = json.loads(example.text)
    assert document["$schema"] == ".shiftkit/features.schema.json"
    schema = json.loads(resources.schema_path().read_text())
    for field in schema["$defs"]["feature"]["properties"]:
        assert f"| `{field}` |" in text, field
    loading = FIRST_SHIFT.read_text(encoding="utf-8")
    loading = loading[loading.index("## Loading a feature list") :]
    loading = loading[: loading.index("\n## ", 1)]
    for command in ("shiftkit add", "shiftkit new DIR --features FILE", "shiftkit import FILE"):
        assert command in loading


def test_the_commands_page_names_the_help_sections_as_help_shows_them() -> None:
    from shiftkit.cli import SECTIONS

    titles = [re.sub(r" \(.*\)$", "", title) for title, _ in SECTIONS]
    named = ", ".join(title[0].lower() + title[1:] for title in titles)
    count = {3: "three", 4: "four", 5: "five"}[len(titles)]
    text = " ".join(COMMANDS.read_text(encoding="utf-8").split())
    assert f"`shiftkit --help` lists them in {count} sections — {named} —" in text
