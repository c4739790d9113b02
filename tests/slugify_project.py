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
import sys
import tarfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import seeding
from seeding import FUNCTION_EDIT, MODULE, TEST, Seed, apply, git, reset

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


_SL = "slugify/slugify.py"
SEEDS: tuple[Seed, ...] = (
    # slugify/slugify.py: each function, most at the same size (a stat sees nothing)
    Seed(
        "smart_truncate: short strings cut",
        _SL,
        "len(string) < max_length",
        "len(string) > max_length",
        FUNCTION_EDIT,
    ),
    Seed(
        "smart_truncate: word lengths",
        _SL,
        "next_len < max_length",
        "next_len > max_length",
        FUNCTION_EDIT,
    ),
    Seed(
        "smart_truncate: save_order inverted",
        _SL,
        "if save_order:",
        "if not save_order:",
        FUNCTION_EDIT,
    ),
    Seed(
        "smart_truncate: separators kept",
        _SL,
        "string = string.strip(separator)",
        "string = string.strip(' '      )",
        FUNCTION_EDIT,
    ),
    Seed("slugify: uppercased", _SL, "text = text.lower()", "text = text.upper()", FUNCTION_EDIT),
    Seed(
        "slugify: no transliteration",
        _SL,
        "text = unidecode.unidecode(text)",
        "text = text  # unidecode.unidecode",
        FUNCTION_EDIT,
    ),
    Seed(
        "slugify: stopwords kept",
        _SL,
        "if w not in stopwords_lower]",
        "if w     in stopwords_lower]",
        FUNCTION_EDIT,
    ),
    Seed(
        "slugify: replacements reversed",
        _SL,
        "text.replace(old, new)",
        "text.replace(new, old)",
        FUNCTION_EDIT,
    ),
    Seed(
        "slugify: truncation skipped",
        _SL,
        "if max_length > 0:",
        "if max_length > 9:",
        FUNCTION_EDIT,
    ),
    Seed(
        "slugify: separator ignored",
        _SL,
        "if separator != DEFAULT_SEPARATOR:",
        "if separator == DEFAULT_SEPARATOR:",
        FUNCTION_EDIT,
    ),
    # slugify/slugify.py: its constants
    Seed("constant: entity pattern", _SL, r"r'&(%s);'", r"r'&(%s):'", MODULE),
    Seed("constant: decimal pattern", _SL, r"r'&#(\d+);'", r"r'&#(\d+):'", MODULE),
    Seed(
        "constant: hexadecimal pattern",
        _SL,
        r"r'&#x([\da-fA-F]+);'",
        r"r'&#X([\da-fA-F]+);'",
        MODULE,
    ),
    Seed("constant: allowed characters", _SL, r"r'[^-a-z0-9]+'", r"r'[^-a-y0-9]+'", MODULE),
    Seed("constant: duplicate dashes", _SL, r"r'-{2,}'", r"r'-{3,}'", MODULE),
    Seed("constant: numbers pattern", _SL, r"r'(?<=\d),(?=\d)'", r"r'(?<=\d);(?=\d)'", MODULE),
    Seed(
        "constant: default separator",
        _SL,
        "DEFAULT_SEPARATOR = '-'",
        "DEFAULT_SEPARATOR = '_'",
        MODULE,
    ),
    # slugify/special.py, slugify/__init__.py, slugify/__main__.py
    Seed(
        "special: German pre-translation",
        "slugify/special.py",
        "(u'ä', u'ae')",
        "(u'ä', u'aa')",
        MODULE,
    ),
    Seed(
        "special: add_uppercase_char",
        "slugify/special.py",
        "char_list.insert(0, upper_dict)",
        "char_list.append(upper_dict)  ",
        FUNCTION_EDIT,
    ),
    Seed(
        "special: a name error at import",
        "slugify/special.py",
        "CYRILLIC + GERMAN + GREEK",
        "CYRILLIC + GERMAN + GREKK",
        MODULE,
    ),
    Seed(
        "__init__: special no longer exported",
        "slugify/__init__.py",
        "from .special import *\n",
        "",
        MODULE,
    ),
    Seed("__init__: the version", "slugify/__init__.py", "'5.0.2'", "'5.0.3'", MODULE),
    Seed(
        "__main__: --no-entities",
        "slugify/__main__.py",
        "dest='entities'",
        "dest='entitiez'",
        FUNCTION_EDIT,
    ),
    Seed(
        "__main__: replacement separator",
        "slugify/__main__.py",
        "SEP = '->'",
        "SEP = '=>'",
        FUNCTION_EDIT,
    ),
    Seed(
        "__main__: words joined",
        "slugify/__main__.py",
        '" ".join(args.input_string)',
        '"-".join(args.input_string)',
        FUNCTION_EDIT,
    ),
    # the tests' own data, the test settings, and files nobody runs
    Seed(
        "test data: an expected slug",
        "test.py",
        '"jaja-lol-mememeoo-a"',
        '"jaja-lol-mememeoo-b"',
        TEST,
    ),
    Seed("test data: a CLI default", "test.py", "'max_length': 0,", "'max_length': 1,", TEST),
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


PACKAGE = ("slugify/__init__.py", "slugify/__main__.py", "slugify/slugify.py", "slugify/special.py")


def every_seed(project: Path) -> list[Seed]:
    """The hand-written seeds and those generated from the source (`seeding.generated`:
    every function of slugify/ raising, every literal of its assignments changed, every
    Python file unparsable)."""
    return [*SEEDS, *seeding.generated(project, PACKAGE, ("test.py", "setup.py"))]


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
    verifies = {description: verifier(site, nodes) for description, nodes in groups.items()}
    return adopt_features(run, "python-slugify 5.0.2", verifies)


def adopt_features(run: Run, name: str, verifies: Mapping[str, str]) -> dict[str, str]:
    """`adopt` for any project unpacked in the folder ``run`` runs in (``name``: what it is,
    for the first commit; ``verifies``: each feature's description → its verify command)."""
    run(["git", "init", "-q"])
    run(["git", "add", "-A"])
    run(["git", "commit", "-q", "-m", f"{name}, from its sdist"])
    # (`code` unset: these sets measure the work tree's reads, as before decision 0086)
    run(["shiftkit", "new", ".", "--defaults", "--data", "code=none"])
    commands: dict[str, str] = {}
    for number, (description, command) in enumerate(verifies.items(), start=1):
        run(["shiftkit", "add", "--description", description, "--step", "run its tests",
             "--verify", command])  # fmt: skip
        commands[f"F{number:03d}"] = command
    run(["git", "add", "-A"])
    run(["git", "commit", "-q", "-m", f"{name}'s features, by its own tests"])
    for feature_id in ["F000", *commands]:
        run(["shiftkit", "claim", feature_id])
        run(["shiftkit", "finish", "-m", f"{feature_id} passes"])
    # CI's check at HEAD: every verifier again, one after another in one checkout (so all
    # but the first import the project from the bytecode the first wrote), each recording
    # its read set at HEAD's tree.
    run(["shiftkit", "check", "-j", "1"])
    return commands


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
        broken = seeding.suite_failures(checkout, commands) if site is not None else None
        if broken is not None:
            failing |= broken & selected
            alone = [feature_id for feature_id in commands if feature_id not in selected]
        for feature_id in alone:
            if not verify.run_verifier(commands[feature_id], checkout, 300).ok:
                failing.add(feature_id)
    return frozenset(failing)


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
