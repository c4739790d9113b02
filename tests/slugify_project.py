"""python-slugify adopted with shiftkit: a real project whose read sets are measured through
shiftkit's own `finish`, and seeded breaks of its source to check them against (decision
record 0071). Shared by `tests/test_readset_real.py` and `bench/readset.py`.

The project is python-slugify 5.0.2 as published on PyPI (its sdist, which carries its tests
in `test.py`), its one dependency text-unidecode 1.3 unpacked outside the checkout (as an
installed package would be) and put on the verifiers' `PYTHONPATH`. Both sdists are vendored
under `tests/data/python-slugify/` (MIT and Artistic/GPL: see tests/data/README.md), so
nothing is fetched while measuring.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

DATA = Path(__file__).resolve().parent / "data" / "python-slugify"
SDIST = DATA / "python-slugify-5.0.2.tar.gz"
UNIDECODE = DATA / "text-unidecode-1.3.tar.gz"

_S = "test.py::TestSlugification::"
_C = "test.py::TestCommandParams::"
# The features: groups of python-slugify's own tests, one pytest verifier each.
GROUPS: dict[str, tuple[str, ...]] = {
    "separators and non-word characters": tuple(
        _S + name
        for name in (
            "test_extraneous_seperators",
            "test_non_word_characters",
            "test_custom_separator",
            "test_multi_character_separator",
        )
    ),
    "transliteration of accented, Cyrillic and eastern text": tuple(
        _S + name
        for name in (
            "test_phonetic_conversion_of_eastern_scripts",
            "test_accented_text",
            "test_accented_text_with_non_word_characters",
            "test_cyrillic_text",
        )
    ),
    "truncation to a length, on word boundaries, in order": tuple(
        _S + name
        for name in (
            "test_max_length",
            "test_max_length_cutoff_not_required",
            "test_word_boundary",
            "test_save_order",
        )
    ),
    "stopwords removed": tuple(
        _S + name
        for name in (
            "test_stopword_removal",
            "test_stopword_removal_casesensitive",
            "test_multiple_stopword_occurances",
            "test_differently_cased_stopword_match",
            "test_multiple_stopwords",
            "test_stopwords_with_different_separator",
        )
    ),
    "HTML entities, decimal and hexadecimal references": tuple(
        _S + f"test_html_{kind}_{state}"
        for kind in ("entities", "decimal", "hexadecimal")
        for state in ("on", "off")
    ),
    "numbers kept": tuple(
        _S + name
        for name in (
            "test_starts_with_number",
            "test_contains_numbers",
            "test_ends_with_number",
            "test_numbers_only",
            "test_numbers_and_symbols",
        )
    ),
    "regex patterns and replacements": tuple(
        _S + name
        for name in (
            "test_regex_pattern_keep_underscore",
            "test_regex_pattern_keep_underscore_with_underscore_as_separator",
            "test_replacements",
            "test_replacements_german_umlaut_custom",
        )
    ),
    "smart_truncate on its own": ("test.py::TestUtils",),
    "command-line options": tuple(
        _C + name
        for name in (
            "test_defaults",
            "test_negative_flags",
            "test_affirmative_flags",
            "test_valued_arguments",
            "test_replacements_right",
            "test_replacements_wrong",
        )
    ),
    "command-line text from arguments and stdin": tuple(
        _C + name
        for name in (
            "test_text_in_cli",
            "test_text_in_cli_multi",
            "test_text_in_stdin",
            "test_two_text_sources_fails",
            "test_multivalued_options_with_text",
        )
    ),
}


class Seed(NamedTuple):
    """One seeded change of the project: ``path`` rewritten by replacing ``old`` (once, it
    must be there) with ``new``; ``old`` None: ``new`` is the whole text of a new file; ``new``
    None: the file deleted."""

    name: str
    path: str
    old: str | None
    new: str | None


_SL = "slugify/slugify.py"
SEEDS: tuple[Seed, ...] = (
    # slugify/slugify.py: each function, most at the same size (a stat sees nothing)
    Seed(
        "smart_truncate: short strings cut",
        _SL,
        "len(string) < max_length",
        "len(string) > max_length",
    ),
    Seed("smart_truncate: word lengths", _SL, "next_len < max_length", "next_len > max_length"),
    Seed("smart_truncate: save_order inverted", _SL, "if save_order:", "if not save_order:"),
    Seed(
        "smart_truncate: separators kept",
        _SL,
        "string = string.strip(separator)",
        "string = string.strip(' '      )",
    ),
    Seed("slugify: uppercased", _SL, "text = text.lower()", "text = text.upper()"),
    Seed(
        "slugify: no transliteration",
        _SL,
        "text = unidecode.unidecode(text)",
        "text = text  # unidecode.unidecode",
    ),
    Seed(
        "slugify: stopwords kept",
        _SL,
        "if w not in stopwords_lower]",
        "if w     in stopwords_lower]",
    ),
    Seed("slugify: replacements reversed", _SL, "text.replace(old, new)", "text.replace(new, old)"),
    Seed("slugify: truncation skipped", _SL, "if max_length > 0:", "if max_length > 9:"),
    Seed(
        "slugify: separator ignored",
        _SL,
        "if separator != DEFAULT_SEPARATOR:",
        "if separator == DEFAULT_SEPARATOR:",
    ),
    # slugify/slugify.py: its constants
    Seed("constant: entity pattern", _SL, r"r'&(%s);'", r"r'&(%s):'"),
    Seed("constant: decimal pattern", _SL, r"r'&#(\d+);'", r"r'&#(\d+):'"),
    Seed("constant: hexadecimal pattern", _SL, r"r'&#x([\da-fA-F]+);'", r"r'&#X([\da-fA-F]+);'"),
    Seed("constant: allowed characters", _SL, r"r'[^-a-z0-9]+'", r"r'[^-a-y0-9]+'"),
    Seed("constant: duplicate dashes", _SL, r"r'-{2,}'", r"r'-{3,}'"),
    Seed("constant: numbers pattern", _SL, r"r'(?<=\d),(?=\d)'", r"r'(?<=\d);(?=\d)'"),
    Seed("constant: default separator", _SL, "DEFAULT_SEPARATOR = '-'", "DEFAULT_SEPARATOR = '_'"),
    # slugify/special.py, slugify/__init__.py, slugify/__main__.py
    Seed("special: German pre-translation", "slugify/special.py", "(u'ä', u'ae')", "(u'ä', u'aa')"),
    Seed(
        "special: add_uppercase_char",
        "slugify/special.py",
        "char_list.insert(0, upper_dict)",
        "char_list.append(upper_dict)  ",
    ),
    Seed(
        "special: a name error at import",
        "slugify/special.py",
        "CYRILLIC + GERMAN + GREEK",
        "CYRILLIC + GERMAN + GREKK",
    ),
    Seed(
        "__init__: special no longer exported",
        "slugify/__init__.py",
        "from .special import *\n",
        "",
    ),
    Seed("__init__: the version", "slugify/__init__.py", "'5.0.2'", "'5.0.3'"),
    Seed("__main__: --no-entities", "slugify/__main__.py", "dest='entities'", "dest='entitiez'"),
    Seed("__main__: replacement separator", "slugify/__main__.py", "SEP = '->'", "SEP = '=>'"),
    Seed(
        "__main__: words joined",
        "slugify/__main__.py",
        '" ".join(args.input_string)',
        '"-".join(args.input_string)',
    ),
    # the tests' own data, the test settings, and files nobody runs
    Seed(
        "test data: an expected slug", "test.py", '"jaja-lol-mememeoo-a"', '"jaja-lol-mememeoo-b"'
    ),
    Seed("test data: a CLI default", "test.py", "'max_length': 0,", "'max_length': 1,"),
    Seed(
        "setup.cfg: pytest options",
        "setup.cfg",
        None,
        "[tool:pytest]\naddopts = --no-such-option\n",
    ),
    Seed("README edited", "README.md", "# Python Slugify", "# Python slugify"),
    Seed("CHANGELOG edited", "CHANGELOG.md", None, "## 5.0.3\n"),
    # deletions
    Seed("special.py deleted", "slugify/special.py", "", None),
    Seed("__main__.py deleted", "slugify/__main__.py", "", None),
    Seed("test.py deleted", "test.py", "", None),
    # additions that shadow or fail
    Seed(
        "a text_unidecode.py shadowing the dependency",
        "text_unidecode.py",
        None,
        "raise ImportError\n",
    ),
    Seed("an html package shadowing the standard library's", "html/__init__.py", None, ""),
    Seed("a failing root conftest.py", "conftest.py", None, "raise SystemExit(4)\n"),
    Seed("a pytest.py shadowing pytest", "pytest.py", None, "raise SystemExit(3)\n"),
    Seed("a pytest.ini with an unknown option", "pytest.ini", None, "[pytest]\naddopts = --nope\n"),
    Seed("an unused module added", "slugify/helpers.py", None, "X = 1\n"),
)


def unpack(into: Path) -> tuple[Path, Path]:
    """(the project: python-slugify's sdist unpacked as a fresh git repository with one commit,
    the folder holding text_unidecode to put on PYTHONPATH)."""
    _extract(SDIST, into)
    project = into / "python-slugify"
    (into / "python-slugify-5.0.2").rename(project)
    for generated in ("PKG-INFO", "python_slugify.egg-info"):
        _remove(project / generated)
    site = into / "site-packages"
    _extract(UNIDECODE, into)
    (into / "text-unidecode-1.3" / "src").rename(site)
    return project, site


def _extract(archive: Path, into: Path) -> None:
    safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # (3.11.4 on)
    with tarfile.open(archive) as opened:
        opened.extractall(into, **safe)


def _remove(path: Path) -> None:
    import shutil

    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()


def verifier(site: Path, nodes: Sequence[str], python: str = "python") -> str:
    return f"PYTHONPATH={site} {python} -m pytest -q -p no:cacheprovider " + " ".join(nodes)


Run = Callable[[Sequence[str]], str]  # an argv run in the project, its stdout (fails loudly)


def adopt(
    project: Path, site: Path, run: Run, groups: Mapping[str, Sequence[str]] = GROUPS
) -> dict[str, str]:
    """Commit the sdist, adopt shiftkit (`shiftkit new . --defaults`), add one feature per
    group and finish each through a claim, as a user would — every verifier passes under
    `finish`, which records its read set — then run CI's `check` at HEAD. Returns feature id
    → verify command."""
    run(["git", "init", "-q"])
    run(["git", "add", "-A"])
    run(["git", "commit", "-q", "-m", "python-slugify 5.0.2, from its sdist"])
    # (`code` unset: these sets measure the work tree's reads, as before decision 0086)
    run(["shiftkit", "new", ".", "--defaults", "--data", "code=none"])
    commands: dict[str, str] = {}
    for number, (description, nodes) in enumerate(groups.items(), start=1):
        command = verifier(site, nodes)
        run(["shiftkit", "add", "--description", description, "--step", "run its tests",
             "--verify", command])  # fmt: skip
        commands[f"F{number:03d}"] = command
    run(["git", "add", "-A"])
    run(["git", "commit", "-q", "-m", "python-slugify's features, by its own tests"])
    for feature_id in ["F000", *commands]:
        run(["shiftkit", "claim", feature_id])
        run(["shiftkit", "finish", "-m", f"{feature_id} passes"])
    # CI's check at HEAD: every verifier again, one after another in one checkout (so all
    # but the first import python-slugify from the bytecode the first wrote), each recording
    # its read set at HEAD's tree.
    run(["shiftkit", "check", "-j", "1"])
    return commands


def apply(project: Path, seed: Seed) -> None:
    path = project / seed.path
    if seed.new is None:
        path.unlink()
        return
    if seed.old is None:
        before = path.read_text(encoding="utf-8") if path.exists() else ""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(before + seed.new, encoding="utf-8")
        return
    text = path.read_text(encoding="utf-8")
    if seed.old not in text:
        raise ValueError(f"seed {seed.name!r}: {seed.old!r} is not in {seed.path}")
    path.write_text(text.replace(seed.old, seed.new, 1), encoding="utf-8")


def git(project: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=project, capture_output=True, text=True, check=True
    ).stdout


def reset(project: Path) -> None:
    git(project, "reset", "-q", "--hard")
    git(project, "clean", "-q", "-f", "-d")  # (ignored caches kept: a user's work tree)


class Outcome(NamedTuple):
    seed: Seed
    failing: frozenset[str]  # the features whose verifiers fail on the seeded tree
    selected: frozenset[str]  # those the read-set map says the change affects


Select = Callable[[str], Iterable[str]]  # a tree → the features a move to it affects


def measure(
    project: Path,
    commands: Mapping[str, str],
    seeds: Iterable[Seed] = SEEDS,
    select: Select | None = None,
    site: Path | None = None,
) -> list[Outcome]:
    """Each seed applied to the work tree in turn: the features the read-set map selects for
    the move from HEAD's tree to the seeded tree (``select``, by default
    `readsets.affected_at` over the sets shiftkit recorded), and the truth, in a fresh
    temporary checkout of the seeded tree as shiftkit's gate runs them: every verifier run —
    or, given ``site``, python-slugify's whole suite run once (its JUnit report says which
    groups fail) and only the verifiers of the features not selected run on their own, so
    recall stays exact while a run of ten verifiers costs one or two."""
    from shiftkit.edge import readsets

    def by_map(tree: str) -> list[str]:
        return readsets.affected_at(project, project / ".git", commands, tree)

    chooser = select or by_map
    found = []
    for seed in seeds:
        apply(project, seed)
        git(project, "add", "-A")
        tree = git(project, "write-tree").strip()
        selected = frozenset(chooser(tree))
        failing = _truth(project, tree, commands, selected, site)
        reset(project)
        found.append(Outcome(seed, failing, selected))
    return found


def _truth(
    project: Path,
    tree: str,
    commands: Mapping[str, str],
    selected: frozenset[str],
    site: Path | None,
) -> frozenset[str]:
    from shiftkit.edge import verify

    failing = set()
    with verify.temporary_checkout(project, tree) as checkout:
        alone = list(commands)
        if site is not None:
            broken = _suite_failures(checkout, site, commands)
            failing |= broken & selected
            alone = [feature_id for feature_id in commands if feature_id not in selected]
        for feature_id in alone:
            if not verify.run_verifier(commands[feature_id], checkout, 300).ok:
                failing.add(feature_id)
    return frozenset(failing)


def _suite_failures(checkout: Path, site: Path, commands: Mapping[str, str]) -> set[str]:
    """The features one run of every group's tests says fail (all of them when the run
    breaks down before its report)."""
    import tempfile
    import xml.etree.ElementTree as ET

    from shiftkit.edge import verify

    nodes = {
        feature_id: command.split(" -p no:cacheprovider ", 1)[1].split()
        for feature_id, command in commands.items()
    }
    every = sorted({node for group in nodes.values() for node in group})
    with tempfile.TemporaryDirectory(prefix="slugify-report-") as folder:
        report = Path(folder) / "junit.xml"
        ran = verify.run_command(
            verifier(site, every) + f" --junitxml={report} -o junit_family=xunit1", checkout, 300
        )
        if ran.exit_code not in (0, 1) or not report.exists():
            return set(commands)
        cases = ET.parse(report).getroot().iter("testcase")
        outcome = {}
        for case in cases:
            bad = any(child.tag in ("failure", "error", "skipped") for child in case)
            module, _, cls = case.get("classname", "").rpartition(".")
            outcome[f"{module}.py::{cls}::{case.get('name')}"] = bad
    failing = set()
    for feature_id, group in nodes.items():
        for node in group:
            ran_here = [
                bad for name, bad in outcome.items() if name == node or name.startswith(node + "::")
            ]
            if not ran_here or any(ran_here):
                failing.add(feature_id)
    return failing


class Figures(NamedTuple):
    hit: int  # breaks selected
    breaks: int  # (feature, seed) pairs that fail
    selected: int  # (feature, seed) pairs selected
    seeds: int
    missed: tuple[tuple[str, str], ...]  # (seed, feature) breaks not selected

    @property
    def recall(self) -> float:
        return self.hit / self.breaks if self.breaks else 1.0

    @property
    def precision(self) -> float:
        return self.hit / self.selected if self.selected else 1.0


def figures(outcomes: Sequence[Outcome]) -> Figures:
    missed = tuple(
        (one.seed.name, feature_id)
        for one in outcomes
        for feature_id in sorted(one.failing - one.selected)
    )
    return Figures(
        sum(len(one.failing & one.selected) for one in outcomes),
        sum(len(one.failing) for one in outcomes),
        sum(len(one.selected) for one in outcomes),
        len(outcomes),
        missed,
    )


def use_environment(home: Path) -> None:
    """A git identity and config of the measurement's own in ``os.environ`` (shiftkit's
    functions and the verifiers read it), the running interpreter's `shiftkit` first on
    PATH, and bytecode written as by default (some sandboxes export PYTHONDONTWRITEBYTECODE)."""
    config = home / "gitconfig"
    config.write_text("[init]\n\tdefaultBranch = main\n")
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ.update(
        {
            "GIT_AUTHOR_NAME": "Slug Tester",
            "GIT_AUTHOR_EMAIL": "slug@shiftkit.invalid",
            "GIT_COMMITTER_NAME": "Slug Tester",
            "GIT_COMMITTER_EMAIL": "slug@shiftkit.invalid",
            "GIT_CONFIG_GLOBAL": str(config),
            "GIT_CONFIG_NOSYSTEM": "1",
            "PRE_COMMIT_HOME": str(home / "pre-commit"),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        }
    )
