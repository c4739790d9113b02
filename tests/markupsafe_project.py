"""MarkupSafe adopted with shiftkit: the second real project whose read sets are measured
through shiftkit's own `finish` and checked against seeded changes (decision records 0071 and
0116; issue 37). Used by `bench/readset.py` and `tests/test_readset_markupsafe.py`.

The project is MarkupSafe 3.0.2 as published on PyPI (its sdist, which carries its tests),
vendored under `tests/data/markupsafe/` (BSD-3-Clause: see tests/data/README.md), no
dependency. Its C speedups (`_speedups.c`) are not built: the sdist is unpacked as a checkout,
never installed, so `markupsafe` imports `_escape_inner` from `_native.py` and every line the
tests execute is Python that coverage sees. (Built, the speedups would run `_escape_inner` in
C: a change of `_speedups.c` is no change of any file a verifier reads — the compiled module
is built from it, not tracked — at either grain; the tests run both implementations, and
`tests/conftest.py` skips the speedups' half when they are absent: the verifiers select the
pure-Python half alone, ``-k _native``.)
"""

from __future__ import annotations

import shutil
import tarfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import seeding
import slugify_project
from seeding import FUNCTION_EDIT, MODULE, TEST, Seed

DATA = Path(__file__).resolve().parent / "data" / "markupsafe"
SDIST = DATA / "markupsafe-3.0.2.tar.gz"

_E = "tests/test_escape.py::"
_M = "tests/test_markupsafe.py::"
# The features: groups of MarkupSafe's own tests, one pytest verifier each.
GROUPS: dict[str, tuple[str, ...]] = {
    "escaping of strings and special characters": (_E + "test_escape",),
    "escaping of proxies and str subclasses": (_E + "test_proxy", _E + "test_subclass"),
    "objects with __html__, exceptions included": (
        _M + "test_html_interop",
        "tests/test_exception_custom_html.py::test_exception_custom_html",
    ),
    "Markup concatenation, repetition, splitting and type": (
        _M + "test_adding",
        _M + "test_mul",
        _M + "test_splitting",
        _M + "test_type_behavior",
    ),
    "% interpolation escapes its arguments": (
        _M + "test_string_interpolation",
        _M + "test_missing_interpol",
        _M + "test_tuple_interpol",
        _M + "test_dict_interpol",
    ),
    "str.format and format_map escape their arguments": (
        _M + "test_format",
        _M + "test_format_map",
        _M + "test_formatting_empty",
        _M + "test_formatting_with_objects",
    ),
    "custom formatting through __html_format__": (
        _M + "test_custom_formatting",
        _M + "test_complex_custom_formatting",
    ),
    "unescaping and stripping tags": (_M + "test_escaping", _M + "test_unescape"),
    "escape_silent, soft_str and escape's return type": (
        _M + "test_escape_silent",
        _M + "test_soft_str",
        _M + "test_escape_return_type",
    ),
    "escaping does not leak": ("tests/test_leak.py::test_markup_leaks",),
}

_I = "src/markupsafe/__init__.py"
# Hand-written edits of single functions that change a result without raising, and a few
# module-level and test edits (the generated seeds are in `seeding`).
SEEDS: tuple[Seed, ...] = (
    Seed("escape: __html__ ignored", _I, 'if hasattr(s, "__html__"):', "if False:", FUNCTION_EDIT),
    Seed(
        "escape_silent: None as 'None'",
        _I,
        "if s is None:\n        return Markup()",
        "if s is None:\n        return Markup('None')",
        FUNCTION_EDIT,
    ),
    Seed(
        "soft_str: Markup converted",
        _I,
        "if not isinstance(s, str):\n        return str(s)",
        "if not isinstance(s, Markup):\n        return str(s)",
        FUNCTION_EDIT,
    ),
    Seed(
        "Markup.__add__: operands swapped",
        _I,
        "return self.__class__(super().__add__(self.escape(value)))",
        "return self.__class__(self.escape(value).__add__(self))",
        FUNCTION_EDIT,
    ),
    Seed(
        "Markup.__mod__: a tuple not escaped",
        _I,
        "value = tuple(_MarkupEscapeHelper(x, self.escape) for x in value)",
        "value = tuple(value)",
        FUNCTION_EDIT,
    ),
    Seed(
        "Markup.striptags: whitespace kept",
        _I,
        'value = " ".join(value.split())',
        "value = value",
        FUNCTION_EDIT,
    ),
    Seed(
        "Markup.split: plain strings",
        _I,
        "return [self.__class__(v) for v in super().split(sep, maxsplit)]",
        "return [str(v) for v in super().split(sep, maxsplit)]",
        FUNCTION_EDIT,
    ),
    Seed(
        "EscapeFormatter.format_field: __html_format__ ignored",
        _I,
        'if hasattr(value, "__html_format__"):',
        'if hasattr(value, "__html_fmt__"):',
        FUNCTION_EDIT,
    ),
    Seed(
        "_native._escape_inner: quotes kept",
        "src/markupsafe/_native.py",
        '.replace("\'", "&#39;")',
        "",
        FUNCTION_EDIT,
    ),
    Seed(
        "module: Markup without __slots__",
        _I,
        "    __slots__ = ()\n",
        "",
        MODULE,
    ),
    Seed(
        "module: the speedups preferred no longer",
        _I,
        "try:\n    from ._speedups import _escape_inner\nexcept ImportError:\n"
        "    from ._native import _escape_inner",
        "from ._native import _escape_inner",
        MODULE,
    ),
    Seed(
        "test data: an expected escape",
        "tests/test_escape.py",
        '"abcd&amp;&gt;&lt;&#39;&#34;efgh"',
        '"abcd&amp;&gt;&lt;&#39;&#34;efgX"',
        TEST,
    ),
    Seed(
        "conftest: the speedups' half no longer skipped",
        "tests/conftest.py",
        "marks=pytest.mark.skipif(_speedups is None",
        "marks=pytest.mark.skipif(False and _speedups is None",
        TEST,
    ),
    Seed("README edited", "README.md", "# MarkupSafe", "# Markupsafe"),
    Seed("CHANGES edited", "CHANGES.rst", None, "\nVersion 3.0.3\n"),
    Seed("_speedups.c edited", "src/markupsafe/_speedups.c", None, "\n/* an edit */\n"),
    Seed(
        "pyproject.toml: warnings no longer errors",
        "pyproject.toml",
        'filterwarnings = [\n    "error",\n]',
        "filterwarnings = []",
    ),
    Seed("a failing root conftest.py", "conftest.py", None, "raise SystemExit(4)\n"),
    Seed("tests/conftest.py deleted", "tests/conftest.py", "", None),
    Seed("_native.py deleted", "src/markupsafe/_native.py", "", None),
    Seed("an unused module added", "src/markupsafe/helpers.py", None, "X = 1\n"),
)

PACKAGE = (_I, "src/markupsafe/_native.py")
OTHERS = (
    "tests/conftest.py",
    "tests/test_escape.py",
    "tests/test_exception_custom_html.py",
    "tests/test_leak.py",
    "tests/test_markupsafe.py",
    "setup.py",
    "docs/conf.py",
)


def every_seed(project: Path) -> list[Seed]:
    """The hand-written seeds and those generated from the source (`seeding.generated`)."""
    return [*SEEDS, *seeding.generated(project, PACKAGE, OTHERS)]


def unpack(into: Path) -> Path:
    """MarkupSafe's sdist unpacked (its generated metadata left out): the project."""
    safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # (3.11.4 on)
    with tarfile.open(SDIST) as opened:
        opened.extractall(into, **safe)
    project = into / "markupsafe"
    (into / "markupsafe-3.0.2").rename(project)
    (project / "PKG-INFO").unlink()
    shutil.rmtree(project / "src" / "MarkupSafe.egg-info")
    return project


def verifier(nodes: Sequence[str], python: str = "python") -> str:
    """The verify command running ``nodes``' pure-Python half (``-k _native``): the
    speedups' half would be skipped, and shiftkit takes a skipped test for no pass (decision
    record 0051)."""
    return f"PYTHONPATH=src {python} -m pytest -q -k _native -p no:cacheprovider " + " ".join(nodes)


def adopt(run: slugify_project.Run, groups: Mapping[str, Sequence[str]] = GROUPS) -> dict[str, str]:
    """`slugify_project.adopt` for MarkupSafe: feature id → verify command."""
    verifies = {description: verifier(nodes) for description, nodes in groups.items()}
    return slugify_project.adopt_features(run, "MarkupSafe 3.0.2", verifies)
