"""A property test over the allowlist (issue 35; decision records 0086 and 0112): with
`code = ["calc/**"]` set by the person, no agent commit adding or changing files outside `code`
changes a verdict, whatever the files are named and whatever they hold.

The names are drawn from what pytest, Python's import system and setuptools read (a
`conftest.py` at any depth, runner settings files, `tests/__init__.py`, `sitecustomize.py`,
`*.pth`, `*.dist-info`/`*.egg-info` entry points, a shadow `pytest.py`/`_pytest`, a root
`calc.py` shadowing the package, `.pytest_cache`, `init.sh`, the person's own tests), the
contents from payloads that make the tests no-ops, exit early, or patch `calc.ops`. Three
levels, from fast to slow:

- the pure assembly (`core.ground.assemble`), many examples: no such file of the judged tree
  reaches the assembled tree;
- the assembled tree of a real git history (`edge.assemble.assembled`), random plain commits,
  a person's commits and merges: outside `code`, the tree a verdict runs on is the person's
  state exactly, and inside it the agent's files are the judged commit's;
- the verdicts themselves, a few examples: a fresh clone's `check --isolated --no-demote` and
  `audit --reverify --isolated` say what the committed implementation deserves.

The twins: without `code` the same commit fools `check --isolated`, and a merge commit that
brings a file of its own (an "evil merge", found by this property) is judged like any commit.
Bounded by default; `SHIFTKIT_FUZZ=long` or `SHIFTKIT_FUZZ_EXAMPLES=N` searches longer.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import (
    NO_HOOKS,
    Result,
    copy_of,
    forced_flip,
    fuzz_examples,
    git_ok,
    implement,
    isolated_environment,
    ok,
    shiftkit,
    write,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_code_ground import feature_of, set_code

from shiftkit.core import ground
from shiftkit.core.ground import Entry

# -- what an agent writes: names pytest, the import system and setuptools read, and payloads ---

NOOP = "import _pytest.python\n\n_pytest.python.Function.runtest = lambda self: None\n"
PATCH_RIGHT = "import calc.ops\n\ncalc.ops.add = lambda a, b: a + b\n"
PATCH_WRONG = "import calc.ops\n\ncalc.ops.add = lambda a, b: 0\n"
EXIT_0 = "import os\n\nos._exit(0)\n"
EXIT_1 = "raise SystemExit(1)\n"
SKIP = "import pytest\n\npytest.skip('not today', allow_module_level=True)\n"
SHADOW = (  # a module `calc` that is a package of its own making, `calc.ops` included
    "import sys\nimport types\n\nops = types.ModuleType('calc.ops')\n"
    "ops.add = lambda a, b: a + b\nops.sub = lambda a, b: 0\nsys.modules['calc.ops'] = ops\n"
    "__path__ = []\n"
)
PYTHON = (NOOP, PATCH_RIGHT, PATCH_WRONG, EXIT_0, EXIT_1, SKIP, SHADOW)
PTH = ("import os; os._exit(0)\n", "import calc._plugin\n", "calc\n")
# Runner options that load the agent's plugin (inside `code`), run nothing or select nothing.
OPTIONS = ("-p calc._plugin", "--co", "-k nothing", "-x --noconftest -p no:python")
INI = tuple(f"[pytest]\naddopts = {o}\n" for o in OPTIONS)
SETUP_CFG = tuple(f"[tool:pytest]\naddopts = {o}\n" for o in OPTIONS)
PYPROJECT = tuple(f'[tool.pytest.ini_options]\naddopts = "{o}"\n' for o in OPTIONS)
PYTEST_TOML = tuple(f"[pytest]\naddopts = {o.split()!r}\n".replace("'", '"') for o in OPTIONS)
ENTRY_POINTS = ("[pytest11]\nnoop = calc._plugin\n", "[console_scripts]\npytest = calc._plugin\n")
INIT = tuple(
    f"#!/usr/bin/env bash\nprintf '%s' '{body}' > tests/__init__.py\nexit 0\n"
    for body in ("import calc.ops; calc.ops.add = lambda a, b: a + b", "raise SystemExit(1)")
)
CACHE = ('{"tests/test_add.py::test_add": true}\n', "{}\n")
ORACLE = (
    "def test_add():\n    pass\n",
    "def test_sub():\n    assert False\n",
    "import pytest\n\npytestmark = pytest.mark.skip\n\n\ndef test_add():\n    assert 0\n",
)
PLUGIN = ("calc/_plugin.py", NOOP)  # (the agent's own module, inside `code`: loaded by nothing)

# (path, the payloads it may hold); every path lies outside `code`, or inside it but among the
# files that run or configure the runner before the tests (decision record 0086).
FILES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("conftest.py", PYTHON),
    ("tests/conftest.py", PYTHON),
    ("tests/deep/er/conftest.py", PYTHON),
    ("calc/conftest.py", PYTHON),
    ("tests/__init__.py", PYTHON),
    ("sitecustomize.py", PYTHON),
    ("usercustomize.py", PYTHON),
    ("calc/sitecustomize.py", PYTHON),
    ("pytest.py", PYTHON),
    ("_pytest/__init__.py", PYTHON),
    ("tests/pytest.py", PYTHON),
    ("calc.py", (SHADOW,)),
    ("tests/calc.py", (SHADOW,)),
    ("evil.pth", PTH),
    ("tests/evil.pth", PTH),
    ("calc/evil.pth", PTH),
    ("pytest.ini", INI),
    (".pytest.ini", INI),
    ("tests/pytest.ini", INI),
    ("calc/pytest.ini", INI),
    ("tox.ini", INI),
    ("setup.cfg", SETUP_CFG),
    ("pyproject.toml", PYPROJECT),
    ("pytest.toml", PYTEST_TOML),
    (".pytest.toml", PYTEST_TOML),
    ("ci_tools-1.0.dist-info/entry_points.txt", ENTRY_POINTS),
    ("calc/ci_tools-1.0.dist-info/entry_points.txt", ENTRY_POINTS),
    ("ci_tools.egg-info/entry_points.txt", ENTRY_POINTS),
    ("htmlcov/x.egg-info/entry_points.txt", ENTRY_POINTS),
    ("init.sh", INIT),
    (".pytest_cache/v/cache/lastfailed", CACHE),
    ("tests/test_add.py", ORACLE),
    ("tests/test_sub.py", ORACLE),
)
RUNS_BEFORE_THE_TESTS = frozenset(
    {"conftest.py", "sitecustomize.py", "usercustomize.py", "pytest.ini", ".pytest.ini", "tox.ini"}
    | {"setup.cfg", "pytest.toml", ".pytest.toml"}
)


def the_agents(path: str) -> bool:
    """Whether a verdict may read ``path`` from the judged commit, said independently of
    `core.ground` for the paths this test writes: under `calc/`, but not what runs or configures
    the runner there (the package's own `__init__.py` and modules are the agent's)."""
    name = path.rsplit("/", 1)[-1]
    return (
        path.startswith("calc/")
        and name not in RUNS_BEFORE_THE_TESTS
        and not name.endswith(".pth")
        and ".dist-info/" not in path
        and ".egg-info/" not in path
    )


def files_outside() -> st.SearchStrategy[dict[str, str]]:
    """One agent change outside its ground: 1-4 of FILES, each with one of its payloads."""
    one = st.sampled_from(FILES).flatmap(
        lambda item: st.tuples(st.just(item[0]), st.sampled_from(item[1]))
    )
    return st.lists(one, min_size=1, max_size=4, unique_by=lambda pair: pair[0]).map(dict)


# -- level 1: the pure assembly, many examples -------------------------------------------------

PERSON = [
    Entry("100644", "a" * 40, "calc/__init__.py"),
    Entry("100644", "b" * 40, "calc/ops.py"),
    Entry("100644", "c" * 40, "tests/test_add.py"),
    Entry("100644", "d" * 40, "tests/test_sub.py"),
    Entry("100755", "e" * 40, "init.sh"),
    Entry("100644", "f" * 40, "features.json"),
]
PROTOCOL = frozenset({"features.json", "claude-progress.txt"})


@settings(max_examples=fuzz_examples(500), deadline=None)
@given(
    outside=files_outside(),
    inside=st.dictionaries(
        st.sampled_from(["calc/ops.py", "calc/__init__.py", "calc/arith.py", "calc/sub/x.py"]),
        st.integers(0, 9),
        max_size=3,
    ),
    removed=st.sets(st.sampled_from([e.path for e in PERSON if e.path != "features.json"])),
    mode=st.sampled_from(["100644", "100755", "120000"]),
)
def test_no_file_outside_the_ground_reaches_the_assembled_tree(
    outside: dict[str, str], inside: dict[str, int], removed: set[str], mode: str
) -> None:
    """Whatever the judged tree adds, changes or removes outside `code`, the assembled tree
    holds the person's versions there, and the judged commit's own files inside it."""
    judged = {e.path: e for e in PERSON if e.path not in removed}
    for path, payload in outside.items():
        judged[path] = Entry(mode, f"{abs(hash(payload)) % 10**40:040d}", path)
    for path, version in inside.items():
        judged[path] = Entry("100644", str(version) * 40, path)
    made = {e.path: e for e in ground.assemble(judged.values(), PERSON, (CODE_GLOB,), PROTOCOL)}
    person = {e.path: e for e in PERSON}
    for path in set(made) | set(judged) | set(person):
        source = judged if the_agents(path) or path in PROTOCOL else person
        assert made.get(path) == source.get(path), path


CODE_GLOB = "calc/**"


# -- level 2: the assembled tree of a real history, in-process ---------------------------------


@dataclass(frozen=True)
class Step:
    """One commit of a random history: an agent's plain commit, a person's (an override
    trailer), or an agent's merge of a side branch that brings ``files`` in the merge itself."""

    kind: str  # "agent", "person" or "merge"
    files: dict[str, str]  # path -> text ("" removes it)
    inside: str  # a new text of calc/ops.py ("" leaves it)


def steps() -> st.SearchStrategy[list[Step]]:
    inside = st.sampled_from(
        ["", "def add(a, b):\n    return a + b\n", "def add(a, b):\n    return 0\n"]
    )
    removal = st.sampled_from(["tests/test_add.py", "init.sh", "tests/__init__.py"]).map(
        lambda path: {path: ""}
    )
    files = st.one_of(files_outside(), files_outside(), removal)
    step = st.builds(Step, st.sampled_from(["agent", "agent", "person", "merge"]), files, inside)
    return st.lists(step, min_size=1, max_size=4)


def _git(root: Path, *args: str, input: str | None = None, index: str | None = None) -> str:
    env = {**os.environ, **({"GIT_INDEX_FILE": index} if index else {})}
    done = subprocess.run(
        ["git", *args], cwd=root, input=input, capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def commit(root: Path, parents: list[str], files: dict[str, str], message: str) -> str:
    """A commit of the first parent's tree with ``files`` written ("" removes), made with
    plumbing: no hook, no work tree, no ref."""
    with tempfile.TemporaryDirectory(prefix="shiftkit-prop-") as folder:
        index = os.path.join(folder, "index")
        _git(root, "read-tree", parents[0], index=index)
        for path, text in files.items():
            if text:
                blob = _git(root, "hash-object", "-w", "--stdin", input=text)
                mode = "100755" if path.endswith(".sh") else "100644"
                _git(
                    root,
                    "update-index",
                    "--add",
                    "--cacheinfo",
                    f"{mode},{blob},{path}",
                    index=index,
                )
            else:
                _git(root, "update-index", "--force-remove", path, index=index)
        tree = _git(root, "write-tree", index=index)
    args = [arg for parent in parents for arg in ("-p", parent)]
    return _git(root, "commit-tree", tree, *args, "-m", message)


def entries(root: Path, rev: str) -> dict[str, tuple[str, str]]:
    listing = _git(root, "ls-tree", "-r", "-z", "--full-tree", rev)
    found = {}
    for line in filter(None, listing.split("\0")):
        info, _, path = line.partition("\t")
        mode, _, oid = info.split(" ")
        found[path] = (mode, oid)
    return found


@pytest.fixture(scope="module")
def grounded(
    pristine_calc: Path, tmp_path_factory: pytest.TempPathFactory, isolated_home: Path
) -> Iterator[Path]:
    """A calc project whose person has set `code`."""
    with isolated_environment(isolated_home):
        project = copy_of(pristine_calc, tmp_path_factory.mktemp("grounded"))
        set_code(project)
        yield project


def play(root: Path, history: list[Step]) -> tuple[str, dict[str, tuple[str, str] | None]]:
    """The tip of ``history`` played on HEAD, and what the person's state holds at each path
    a step wrote (None: nothing), by the model: a person's commit sets it, nothing else."""
    head = _git(root, "rev-parse", "HEAD")
    base = entries(root, head)
    person: dict[str, tuple[str, str] | None] = {}
    tip = head
    for n, step in enumerate(history):
        inside = {"calc/ops.py": step.inside} if step.inside else {}
        if step.kind == "merge":
            side = commit(root, [head], {"calc/note.py": f"N = {n}\n"}, "A note")
            merged = {"calc/note.py": f"N = {n}\n", **inside, **step.files}
            tip = commit(root, [tip, side], merged, "Merge the notes")
        else:
            trailer = "\n\nShiftkit-Override: a person's change" if step.kind == "person" else ""
            tip = commit(root, [tip], {**inside, **step.files}, f"Change files{trailer}")
        if step.kind == "person":  # (what it changed: writing a file as it was is no change)
            before, now = entries(root, f"{tip}^"), entries(root, tip)
            person.update({p: now.get(p) for p in step.files if now.get(p) != before.get(p)})
    return tip, {path: person.get(path, base.get(path)) for path in base | person}


@settings(
    max_examples=fuzz_examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(history=steps())
def test_outside_the_ground_the_assembled_tree_is_the_persons(
    grounded: Path, history: list[Step]
) -> None:
    from shiftkit.edge import assemble

    tip, person = play(grounded, history)
    judged = entries(grounded, tip)
    made = entries(
        grounded, assemble.assembled(grounded, _git(grounded, "rev-parse", f"{tip}^{{tree}}"), tip)
    )
    written = {p for step in history for p in step.files} | set(person)
    for path in written | set(made) | set(judged):
        if the_agents(path) or path in PROTOCOL:
            assert made.get(path) == judged.get(path), path
        else:
            assert made.get(path) == person.get(path), (path, history)


def test_a_merge_that_brings_a_file_of_its_own_is_judged_like_a_commit(grounded: Path) -> None:
    """Found by the property above (decision record 0112): a merge commit whose tree holds a
    file neither parent has (an "evil merge") shows no change in a plain `git log`, so its
    `conftest.py` stood in the person's state and reached every verdict. Its honest twin: the
    same file in a person's merge (an override trailer) is the person's."""
    from shiftkit.edge import assemble

    head = _git(grounded, "rev-parse", "HEAD")
    side = commit(grounded, [head], {"calc/note.py": "N = 1\n"}, "A note")
    files = {"calc/note.py": "N = 1\n", "tests/conftest.py": NOOP}
    for message, reaches in (
        ("Merge the notes", False),
        ("Merge the notes\n\nShiftkit-Override: a person's conftest", True),
    ):
        merge = commit(grounded, [head, side], files, message)
        tree = _git(grounded, "rev-parse", f"{merge}^{{tree}}")
        made = entries(grounded, assemble.assembled(grounded, tree, merge))
        assert ("tests/conftest.py" in made) is reaches, message
        assert "calc/note.py" in made


# -- level 3: the verdicts, on a fresh clone -----------------------------------------------------


@pytest.fixture(scope="module")
def judged(
    pristine_calc: Path, tmp_path_factory: pytest.TempPathFactory, isolated_home: Path
) -> Iterator[Path]:
    """A calc project whose person has set `code`, with `sub` finished honestly (passing) and
    `add` still open: the agent's commits are played on copies of it."""
    with isolated_environment(isolated_home):
        project = copy_of(pristine_calc, tmp_path_factory.mktemp("judged"))
        set_code(project)
        ok(project, "claim", feature_of(project, "sub"))
        implement(project, "sub")
        ok(project, "finish", "-m", "subtract two numbers")
        yield project


def agent_commits(project: Path, shape: str, files: dict[str, str], good: bool) -> str:
    """`add` implemented (well or not) and marked passing past every hook, with ``files``
    in the same commit ("one"), in a plain commit before it ("before"), or brought by a merge
    of a side branch before it ("merge"); `add`'s feature id."""
    feature = feature_of(project, "add")
    files = {**files, PLUGIN[0]: PLUGIN[1]}
    if shape == "before":
        for path, text in files.items():
            write(project / path, text)
        git_ok(project, *NO_HOOKS, "add", "-A")
        git_ok(project, *NO_HOOKS, "commit", "-q", "--no-verify", "-m", "Tidy the test setup")
    elif shape == "merge":
        head = _git(project, "rev-parse", "HEAD")
        side = commit(project, [head], {"calc/note.py": "N = 1\n"}, "A note")
        merged = commit(project, [head, side], {"calc/note.py": "N = 1\n", **files}, "Merge")
        git_ok(project, *NO_HOOKS, "reset", "-q", "--hard", merged)
    implement(project, "add", good=good)
    forced_flip(project, feature, "add two numbers", files if shape == "one" else {})
    return feature


def fresh_clone(project: Path) -> Path:
    clone = project.parent / "clone"
    git_ok(project.parent, "clone", "-q", str(project), str(clone))
    return clone


def verdicts(clone: Path, *features: str) -> tuple[Result, Result, dict[str, bool]]:
    """A fresh clone's `check --isolated --no-demote` and `audit --reverify --isolated`, and
    whether each of ``features`` passed both (None-free: a feature either judge fails is
    failing)."""
    checked = shiftkit(clone, "check", "--isolated", "--no-demote")
    audited = shiftkit(clone, "audit", "--reverify", "--isolated")
    failing = {
        feature: f"FAILED {feature}" in checked.stdout
        or any(
            f"[{feature}]" in line and "fails when re-run" in line
            for line in audited.stdout.splitlines()
        )
        for feature in features
    }
    return checked, audited, {feature: not failed for feature, failed in failing.items()}


@settings(
    max_examples=fuzz_examples(8, subprocess_runs=True),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    shape=st.sampled_from(["one", "before", "merge"]),
    files=files_outside(),
    good=st.booleans(),
)
def test_no_file_outside_the_ground_changes_a_verdict(
    judged: Path, shape: str, files: dict[str, str], good: bool
) -> None:
    """Whatever the agent commits outside `code`, a fresh clone's two judges say `add` passes
    exactly when its committed implementation is right, and `sub` (honest, passing) passes."""
    home = Path(tempfile.mkdtemp(prefix="shiftkit-allowlist-"))
    try:
        project = copy_of(judged, home)
        add = agent_commits(project, shape, files, good)
        sub = feature_of(project, "sub")
        checked, audited, passed = verdicts(fresh_clone(project), add, sub)
        said = f"{shape}, good={good}, {sorted(files)}:\n{checked.output}\n{audited.output}"
        assert passed == {add: good, sub: True}, said
        assert checked.returncode == (0 if good else 1), said
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_without_the_ground_the_same_commit_fools_the_judges(calc: Path) -> None:
    """The twin that shows what the allowlist closes: the property's commit (a broken `add`,
    a `tests/__init__.py` that patches `calc.ops`), judged without `code`, passes a fresh
    clone's `check --isolated`; with `code`, it fails there (the property above)."""
    add = agent_commits(calc, "one", {"tests/__init__.py": PATCH_RIGHT}, good=False)
    checked, _, passed = verdicts(fresh_clone(calc), add)
    assert checked.returncode == 0 and passed == {add: True}, checked.output


def test_an_evil_merge_changes_no_verdict_and_audit_names_its_files(
    judged: Path, tmp_path: Path
) -> None:
    """Decision record 0112, end to end: a broken `add` whose `tests/__init__.py` came in a
    merge of its own fails a fresh clone's `check --isolated` and `audit --reverify
    --isolated` (before: both passed it), and `audit` lists the merge's file as not judged."""
    project = copy_of(judged, tmp_path)
    add = agent_commits(project, "merge", {"tests/__init__.py": PATCH_RIGHT}, good=False)
    checked, audited, passed = verdicts(fresh_clone(project), add)
    assert checked.returncode == 1 and passed == {add: False}, checked.output + audited.output
    assert "Merge: tests/__init__.py" in audited.stdout, audited.stdout
