"""The agent's ground, pure (decision record 0086): `code` globs, what inside them stays the
person's, and the property the allowlist exists for — files an agent adds or changes
outside `code` (named as pytest, Python's import system and setuptools read them) never
change the tree a verdict runs on."""

from __future__ import annotations

from conftest import fuzz_examples
from hypothesis import given, settings
from hypothesis import strategies as st

from shiftkit.core import ground
from shiftkit.core.ground import Entry

CODE = ("src/**", "tests/unit/**")
PROTOCOL = frozenset({"features.json", "claude-progress.txt"})
PERSON = [
    Entry("100644", "a" * 40, "pyproject.toml"),
    Entry("100644", "b" * 40, "src/pkg/__init__.py"),
    Entry("100644", "c" * 40, "src/pkg/core.py"),
    Entry("100644", "d" * 40, "tests/unit/test_core.py"),
    Entry("100644", "e" * 40, "tests/accept/test_feature.py"),
    Entry("100644", "f" * 40, "features.json"),
]
# Names Python, pytest and setuptools read or run before a test.
RUNNER_NAMES = [
    "conftest.py",
    "__init__.py",
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
    "sitecustomize.py",
    "usercustomize.py",
    "evil.pth",
    "pytest.py",
    "_pytest/__init__.py",
    "x-1.0.dist-info/entry_points.txt",
    "x.egg-info/entry_points.txt",
    "init.sh",
]
FOLDERS = ["", "tests/", "tests/unit/", "tests/accept/", "src/", "src/pkg/", "htmlcov/", "build/"]


def test_globs() -> None:
    assert ground.in_code("src/pkg/a.py", ("src/**",))
    assert ground.in_code("src/pkg/a.py", ("src",))
    assert not ground.in_code("srcx/a.py", ("src/**",))
    assert ground.in_code("mod.py", ("mod.py",))
    assert ground.in_code("a/b/c.py", ("**/*.py",))
    assert not ground.in_code("a/b/c.txt", ("**/*.py",))


def test_what_runs_before_the_tests_stays_the_persons_inside_code() -> None:
    tests = ground.test_folders(["tests/unit/test_core.py"])
    assert tests == {"", "tests", "tests/unit"}
    owned = ground.persons_inside_code
    assert owned("tests/unit/__init__.py", tests)
    assert owned("src/pkg/conftest.py", tests)
    assert owned("src/x.pth", tests)
    assert owned("src/x-1.0.dist-info/entry_points.txt", tests)
    assert not owned("src/pkg/__init__.py", tests)  # (the package itself: the agent's)
    assert not owned("tests/unit/test_new.py", tests)


def test_inference() -> None:
    assert ground.infer(["src/a/__init__.py", "tests/test_a.py"]) == ["src/**", "tests/**"]
    assert ground.infer(["slugify/__init__.py", "test.py", "setup.py"]) == [
        "slugify/**",
        "test.py",
    ]
    assert ground.infer(["README.md", "tests/test_x.py"]) == []


@settings(max_examples=fuzz_examples(300), deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(FOLDERS), st.sampled_from(RUNNER_NAMES), st.integers(0, 9)),
        max_size=8,
    )
)
def test_files_outside_the_ground_change_no_verdict(added: list[tuple[str, str, int]]) -> None:
    base = ground.assemble(PERSON, PERSON, CODE, PROTOCOL)
    judged = {entry.path: entry for entry in PERSON}
    for folder, name, version in added:
        path = folder + name
        if ground.judged_from_commit(path, CODE, PROTOCOL, ground.test_folders(judged)):
            continue  # (the agent's own ground: judged as committed)
        judged[path] = Entry("100644", str(version) * 40, path)
    assert ground.assemble(judged.values(), PERSON, CODE, PROTOCOL) == base
