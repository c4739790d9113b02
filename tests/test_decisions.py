"""`shiftkit decide` writes records and index lines the whitespace hooks leave unchanged."""

from __future__ import annotations

from pathlib import Path

from fixers import fixed

from shiftkit.commands import decisions


def test_a_record_from_untidy_arguments_passes_the_fixers(tmp_path: Path) -> None:
    folder = tmp_path / "docs" / "decisions"
    path = decisions.decide(
        folder,
        "  Use SQLite \n for storage  ",
        "\n\nOne file   \r\nis enough.\t\n\n",
        ["Postgres: a server to run  ", "  flat files\r\nno queries  "],
        decision="SQLite,   in WAL mode  \n",
    )
    text = path.read_text()
    assert text.startswith("# 1. Use SQLite for storage\n")
    assert "## Context\n\nOne file\nis enough.\n\n## Decision\n\nSQLite,   in WAL mode\n\n" in text
    assert text.endswith("- Postgres: a server to run\n- flat files\nno queries\n")
    index = (folder / "README.md").read_text()
    assert index.endswith("- [0001](0001-use-sqlite-for-storage.md) Use SQLite for storage\n")
    assert fixed(text, path.name) == {} and fixed(index, "README.md") == {}


def test_the_index_keeps_its_own_line_endings(tmp_path: Path) -> None:
    folder = tmp_path / "decisions"
    folder.mkdir()
    (folder / "README.md").write_bytes(b"# Decision records\r\n\r\n- [0001](x.md) X\r\n")
    (folder / "0001-x.md").write_text("# 1. X\n")
    decisions.decide(folder, "Y", "why", ["no"])
    index = (folder / "README.md").read_bytes()
    assert index.endswith(b"- [0001](x.md) X\r\n- [0002](0002-y.md) Y\r\n")
    assert fixed(index.decode(), "README.md") == {}
