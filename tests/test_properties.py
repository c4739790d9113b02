"""Properties, checked with hypothesis on real git repositories: real hooks (the pre-commit
framework's, as scaffolded, and the reference-transaction shim), real `shiftkit` commands, no
mocks.

1. Honest shifts always audit clean: any sequence of honest shift operations leaves a history
   that `shiftkit audit` (and `audit --reverify`) passes, and a feature list that says what
   was done.
2. Hook, finish and audit agree: the rules the real `git commit` refuses a change with are
   the rules `shiftkit audit` reports for the same change landed past every hook — up to the
   differences documented at `expected_hook_keys` and `plain_audit_keys`.
3. Any single mutation of a committed flip that changes its tree is refused (by the
   reference-transaction hook, `--no-verify` or not) or, landed past every hook, flagged by
   plain `shiftkit audit`.

Git is slow, so each property runs few examples by default (the whole file takes a few
minutes on two cores). For long runs set ``SHIFTKIT_FUZZ_EXAMPLES`` to an integer: every
property then runs that many generated examples (never fewer than its default), e.g.

    SHIFTKIT_FUZZ_EXAMPLES=200 python -m pytest tests/test_properties.py

Each example works in its own temporary copy of a module-wide base project (tempfile +
shutil.copytree), so no function-scoped fixture is shared between examples.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import string
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    FEATURES,
    LOG,
    REPO_ROOT,
    add_log_entry,
    by_id,
    edit_list,
    flip,
    git,
    git_ok,
    implement,
    ok,
    run,
    session_environment,
    shiftkit,
    write,
)
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

CONFIG = ".shiftkit.toml"
NO_HOOKS = "core.hooksPath=/dev/null/none"  # a path that cannot exist: no hooks at all


def _examples_from_environment() -> int | None:
    raw = os.environ.get("SHIFTKIT_FUZZ_EXAMPLES", "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise pytest.UsageError(f"SHIFTKIT_FUZZ_EXAMPLES={raw!r}: not an integer") from None
    if value < 1:
        raise pytest.UsageError(f"SHIFTKIT_FUZZ_EXAMPLES={raw!r}: must be at least 1")
    return value


FUZZ_EXAMPLES = _examples_from_environment()


def fuzz(default: int) -> Any:
    """Hypothesis settings for a property that runs real git: ``default`` examples, or
    SHIFTKIT_FUZZ_EXAMPLES when that is larger."""
    return settings(
        max_examples=max(default, FUZZ_EXAMPLES or 0),
        deadline=None,
        database=None,
        print_blob=True,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
    )


# The verifiers are `python -m pytest ...`; pytest's plugin autoload (hypothesis's own plugin
# among them) costs seconds per run and nothing the verifiers need.
FAST_VERIFIERS = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


@pytest.fixture(autouse=True)
def fast_verifiers(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in FAST_VERIFIERS.items():
        monkeypatch.setenv(key, value)


@contextmanager
def module_environment(isolated_home: Path) -> Iterator[None]:
    """What the autouse fixtures give a test, for a module-scoped fixture."""
    with pytest.MonkeyPatch.context() as mp:
        for key, value in {**session_environment(isolated_home), **FAST_VERIFIERS}.items():
            mp.setenv(key, value)
        for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "SHIFTKIT_DEBUG"):
            mp.delenv(key, raising=False)
        yield


@contextmanager
def workspace(base: Path) -> Iterator[Path]:
    """One example's own copy of a base project, git dir, hooks and claims included."""
    with tempfile.TemporaryDirectory(prefix="shiftkit-prop-") as folder:
        target = Path(folder) / base.name
        shutil.copytree(base, target, symlinks=True)
        yield target


def head(project: Path) -> str:
    return git_ok(project, "rev-parse", "HEAD").strip()


def read_list(project: Path) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads((project / FEATURES).read_text())["features"]
    return items


def set_config(project: Path, section: str, key: str, value: str) -> None:
    """Set ``key = value`` in ``[section]`` of the work tree's .shiftkit.toml (key present)."""
    path = project / CONFIG
    lines = path.read_text().splitlines()
    start = lines.index(f"[{section}]") + 1
    for index in range(start, len(lines)):
        if lines[index].split("=")[0].strip() == key:
            lines[index] = f"{key} = {value}"
            break
    else:
        raise AssertionError(f"{section}.{key} is not in {CONFIG}")
    path.write_text("\n".join(lines) + "\n")


def audit_json(project: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    result = shiftkit(project, "audit", "--json", *extra)
    assert result.returncode in (0, 1) and "Traceback" not in result.output, result.output
    return result.returncode, json.loads(result.stdout)


def test_the_shiftkit_under_test_is_this_checkout() -> None:
    """The CLI the hooks and these tests run imports the code of this checkout."""
    found = run(["python", "-c", "import shiftkit; print(shiftkit.__file__)"], REPO_ROOT.parent)
    assert found.returncode == 0, found.output
    assert (
        Path(found.stdout.strip()).resolve() == (REPO_ROOT / "shiftkit" / "__init__.py").resolve()
    )
    script = shutil.which("shiftkit")
    assert script is not None
    version = run(["shiftkit", "--version"], REPO_ROOT.parent)
    assert version.returncode == 0 and "shiftkit" in version.stdout, version.output


# == 1. Honest shifts always audit clean ======================================================


@pytest.fixture(scope="module")
def honest_base(
    pristine_calc: Path, tmp_path_factory: pytest.TempPathFactory, isolated_home: Path
) -> Iterator[Path]:
    """The calc project with a short progress log (keep 2, prune above 3), so that honest
    sequences prune it, by `log --prune` and inside finish and revert."""
    base = tmp_path_factory.mktemp("honest") / "project"
    shutil.copytree(pristine_calc, base, symlinks=True)
    with module_environment(isolated_home):
        set_config(base, "shiftkit.log", "keep", "2")
        set_config(base, "shiftkit.log", "block", "1")
        git_ok(base, "add", "-A")
        git_ok(base, "commit", "-q", "-m", "Keep a short progress log")
        yield base


PLAIN_TEXT = st.text(
    alphabet=string.ascii_letters + string.digits + " .,-", min_size=1, max_size=30
).filter(lambda s: bool(s.strip()))
# Notes are the agent's free text: any printable text, several lines, and a few shapes that
# look like the log's own structure.
NOTE_TEXT = st.one_of(
    st.text(alphabet=string.ascii_letters + string.digits + " #|:-\n", min_size=1, max_size=60),
    st.sampled_from(
        [
            "## 2026-01-01 00:00 UTC | F003 | passed | abc1234",
            "line one\n\n## not a header\nline three",
            "[shiftkit] 99 earlier entries archived in progress-archive.txt",
            "ünïcödé ✓ naïve",
        ]
    ),
).filter(lambda s: bool(s.strip()))


@dataclass(frozen=True)
class Unit:
    """claim, (notes), implement, then finish (good) or revert (bad)."""

    pick: int
    good: bool
    notes: tuple[str, ...] = ()
    verify_first: bool = False


@dataclass(frozen=True)
class AddFeature:
    description: str


@dataclass(frozen=True)
class Decide:
    title: str
    why: str
    rejected: str


@dataclass(frozen=True)
class Prune:
    pass


@dataclass(frozen=True)
class DocsCommit:
    text: str


OPERATION = st.one_of(
    st.builds(
        Unit,
        pick=st.integers(0, 7),
        good=st.booleans(),
        notes=st.lists(NOTE_TEXT, max_size=2).map(tuple),
        verify_first=st.booleans(),
    ),
    st.builds(AddFeature, PLAIN_TEXT),
    st.builds(Decide, PLAIN_TEXT, PLAIN_TEXT, PLAIN_TEXT),
    st.just(Prune()),
    st.builds(DocsCommit, PLAIN_TEXT),
)


@dataclass
class Model:
    """What an honest sequence did, to compare with what the files say."""

    passed: set[str] = field(default_factory=set)
    attempts: dict[str, int] = field(default_factory=dict)
    failed_verifies: dict[str, int] = field(default_factory=dict)
    entries: int = 0
    added: dict[str, int] = field(default_factory=dict)  # feature id -> its marker number
    docs: int = 0


CALC_NAMES = {"F001": "add", "F002": "sub", "F003": "mul"}


def write_work(project: Path, model: Model, feature_id: str, good: bool) -> None:
    if feature_id in CALC_NAMES:
        implement(project, CALC_NAMES[feature_id], good)
    elif feature_id in model.added:
        suffix = "txt" if good else "wrong"
        write(project / "notes" / f"added-{model.added[feature_id]}.{suffix}", "done\n")
    else:  # F000, verified by the smoke test: nothing to write, it passes either way
        write(project / "scratch.txt", "an attempt\n")


def apply_operation(project: Path, model: Model, op: Any) -> None:
    if isinstance(op, Unit):
        candidates = [
            f["id"] for f in read_list(project) if not f["passes"] and not f.get("blocked")
        ]
        if not candidates:
            return
        feature_id = candidates[op.pick % len(candidates)]
        ok(project, "claim", feature_id)
        for text in op.notes:
            ok(project, "note", "--", text)  # (a text may start with "-": `--` ends options)
        write_work(project, model, feature_id, op.good)
        if op.verify_first:
            verified = shiftkit(project, "verify")
            expected_pass = op.good or feature_id == "F000"
            assert verified.returncode == (0 if expected_pass else 1), verified.output
            if not expected_pass:
                model.failed_verifies[feature_id] = model.failed_verifies.get(feature_id, 0) + 1
        if op.good:
            ok(project, "finish", "-m", f"work on {feature_id}")
            model.passed.add(feature_id)
        else:
            ok(project, "revert", "--reason", f"{feature_id} is not right yet")
            model.attempts[feature_id] = model.attempts.get(feature_id, 0) + 1
        model.entries += 1
    elif isinstance(op, AddFeature):
        number = len(model.added)
        ok(
            project,
            "add",
            "--description",
            op.description,
            "--step",
            "look",
            "--verify",
            f"test -f notes/added-{number}.txt",
        )
        new_id = read_list(project)[-1]["id"]
        model.added[new_id] = number
        git_ok(project, "add", "-A")
        git_ok(project, "commit", "-q", "-m", f"Add {new_id}: {op.description.strip()}")
    elif isinstance(op, Decide):
        # (outside a claim, `decide` commits its record itself)
        assert "committed docs/decisions/" in ok(
            # (`--` first: a generated title may start with "-", as a person's may)
            project,
            "decide",
            "--why",
            op.why,
            "--rejected",
            op.rejected,
            "--",
            op.title,
        )
    elif isinstance(op, Prune):
        ok(project, "log", "--prune")
    elif isinstance(op, DocsCommit):
        model.docs += 1
        write(project / "docs" / f"notes-{model.docs}.md", f"# Notes\n\n{op.text}\n")
        git_ok(project, "add", "-A")
        git_ok(project, "commit", "-q", "-m", f"Document {op.text.strip()}")
    else:  # pragma: no cover
        raise AssertionError(op)


def count_entries(project: Path) -> int:
    from shiftkit.core import progress

    total = len(progress.parse((project / LOG).read_text()).entries)
    archive = project / "progress-archive.txt"
    if archive.exists():
        total += len(progress.parse(archive.read_text()).entries)
    return total


@fuzz(6)
@given(operations=st.lists(OPERATION, min_size=1, max_size=6))
@example(
    operations=[
        Unit(0, True),
        Unit(0, False, ("a note",), True),
        Unit(0, False),
        Unit(0, False),
        Prune(),
        Unit(1, True),
    ]
)
@example(
    operations=[
        AddFeature("a new thing"),
        Unit(4, True),
        Decide("Use x", "y", "z"),
        DocsCommit("more"),
        Unit(0, True),
        Prune(),
    ]
)
@example(
    operations=[
        Unit(
            1,
            True,
            (
                "## 2026-01-01 00:00 UTC | F003 | passed | abc1234",
                "line one\n\n## not a header\nline three",
            ),
        ),
        Unit(0, False, ("[shiftkit] 99 earlier entries archived in x",)),
        Unit(0, True, ("ünïcödé ✓",)),
        Prune(),
    ]
)
def test_honest_shifts_always_audit_clean(honest_base: Path, operations: list[Any]) -> None:
    with workspace(honest_base) as project:
        start = head(project)
        before = {f["id"] for f in read_list(project) if f["passes"]}
        model = Model()
        for op in operations:
            apply_operation(project, model, op)
        assert git_ok(project, "status", "--porcelain") == "", "an honest shift leaves it clean"
        assert git_ok(project, "for-each-ref", "refs/shiftkit/claims") == "", "no claim is left"

        audit = shiftkit(project, "audit")
        assert audit.returncode == 0, audit.output
        assert " 0 with violations" in audit.stdout, audit.stdout
        reverify = shiftkit(project, "audit", "--reverify", "--since", start)
        assert reverify.returncode == 0, reverify.output

        items = read_list(project)
        passing = {f["id"] for f in items if f["passes"]}
        assert passing == before | model.passed
        for item in items:
            attempts = model.attempts.get(item["id"], 0)
            assert item.get("attempts", 0) == attempts, item
            if attempts >= 3:
                assert item.get("blocked"), item
            elif item.get("blocked"):
                assert model.failed_verifies.get(item["id"], 0) >= 2, item
        assert count_entries(project) == model.entries, "log + archive hold every entry"


# == 2. Hook, finish and audit agree ===========================================================


@pytest.fixture(scope="module")
def judged_base(
    pristine_calc: Path, tmp_path_factory: pytest.TempPathFactory, isolated_home: Path
) -> Iterator[Path]:
    """F000 passing; F001 failed once (attempts 1); F002 claimed by this worktree; F003 open."""
    base = tmp_path_factory.mktemp("judged") / "project"
    shutil.copytree(pristine_calc, base, symlinks=True)
    with module_environment(isolated_home):
        ok(base, "claim", "F000")
        ok(base, "finish", "-m", "the environment builds")
        ok(base, "claim", "F001")
        implement(base, "add", good=False)
        ok(base, "revert", "--reason", "returned the wrong sum")
        ok(base, "claim", "F002")
        yield base


ENFORCEMENT_EDITS = [
    ("shiftkit", "max_attempts", "5"),
    ("shiftkit", "verify_timeout", "60"),
    ("shiftkit.log", "keep", "5"),
    ("shiftkit", "verify", '"true"'),
    ("shiftkit.claims", "enabled", "false"),
]


@dataclass(frozen=True)
class Change:
    """One change to commit: a flip of F002 (with its parts) and/or edits of the protocol."""

    flip: bool = False
    good: bool = True  # the implementation of F002 (only with flip)
    logged: bool = True  # a new log entry about F002 (only with flip)
    named: bool = True  # the message names F002 (only with flip)
    config: int | None = None  # an index into ENFORCEMENT_EDITS, staged
    definition: str | None = None  # a feature whose description is edited
    attempts_down: bool = False  # F001's attempts 1 -> 0, no unblock
    log_rewrite: bool = False  # an existing log entry rewritten in place
    unstaged_config: int | None = None  # an enforcement edit left unstaged

    def stages_something(self) -> bool:
        return (
            self.flip
            or self.config is not None
            or self.definition is not None
            or self.attempts_down
            or self.log_rewrite
        )


@st.composite
def changes(draw: Any) -> Change:
    flip_it = draw(st.booleans())
    optional_edit = st.one_of(st.none(), st.integers(0, len(ENFORCEMENT_EDITS) - 1))
    change = Change(
        flip=flip_it,
        good=draw(st.booleans()) if flip_it else True,
        logged=draw(st.booleans()) if flip_it else True,
        named=draw(st.booleans()) if flip_it else True,
        config=draw(optional_edit),
        definition=draw(st.sampled_from([None, "F003", "F002"])),
        attempts_down=draw(st.booleans()),
        log_rewrite=draw(st.booleans()),
        unstaged_config=draw(optional_edit),
    )
    if not change.stages_something():
        change = Change(flip=True, unstaged_config=change.unstaged_config)
    return change


def make_change(project: Path, change: Change) -> str:
    """Write and stage ``change``; returns the commit message (without trailers)."""
    if change.flip:
        implement(project, "sub", change.good)
        flip(project, "F002", log=change.logged)
    if change.config is not None:
        set_config(project, *ENFORCEMENT_EDITS[change.config])
    if change.definition is not None:
        edit_list(
            project,
            lambda items: by_id(items, change.definition).update(
                description="reworded by the agent"
            ),
        )
    if change.attempts_down:
        edit_list(project, lambda items: by_id(items, "F001").update(attempts=0))
    if change.log_rewrite:
        log = project / LOG
        text = log.read_text()
        assert "returned the wrong sum" in text
        log.write_text(text.replace("returned the wrong sum", "returned a fine sum", 1))
    git_ok(project, "add", "-A")
    if change.unstaged_config is not None:
        set_config(project, *ENFORCEMENT_EDITS[change.unstaged_config])
    if change.flip:
        return "F002: subtract two numbers" if change.named else "Subtract two numbers"
    return "Edit the protocol files"


# The stages of a real `git commit`, in order; it stops at the first that refuses:
# pre-commit refuses with the rules that no override lifts (the message is not known yet),
# commit-msg first checks the message's form (rule 9), then the overridable rules (2, 6, 7)
# and the message half of rule 5. The reference-transaction hook runs after them.
PRE_COMMIT_KEYS = {
    (1, ""),
    (3, ""),
    (4, "definition"),
    (4, "verifier"),
    (5, "log"),
    (8, ""),
    (10, ""),
}
MESSAGE_FORM_KEYS = {(9, "")}


def violation_key(rule: int, text: str) -> tuple[int, str]:
    """A rule and which half of it, from a violation's text."""
    if rule == 5:
        return (5, "message" if "does not name it" in text else "log")
    if rule == 4:
        return (4, "definition" if "changes its definition" in text else "verifier")
    return (rule, "")


def hook_keys(output: str) -> set[tuple[int, str]]:
    return {
        violation_key(int(m[1]), m[2])
        for m in re.finditer(r"rule (\d+)(?: \[\w+\])?: (.*)", output)
    }


def audit_keys(report: dict[str, Any]) -> set[tuple[int, str]]:
    return {violation_key(v["rule"], v["message"]) for v in report["violations"]}


def expected_hook_keys(audited: set[tuple[int, str]]) -> set[tuple[int, str]]:
    """Documented difference 1: `audit` reports every broken rule of a commit at once, while
    `git commit` reports only those of the first stage that refuses."""
    for stage in (PRE_COMMIT_KEYS, MESSAGE_FORM_KEYS):
        if audited & stage:
            return audited & stage
    return audited


def plain_audit_keys(reverified: dict[str, Any]) -> set[tuple[int, str]]:
    """Documented difference 2: plain `audit` cannot know whether a verifier ran; it trusts a
    Shiftkit-Verified trailer that names the commit's tree, so a failing verifier is caught
    only by `audit --reverify` (docs/decisions/0010, Consequences)."""
    return {
        violation_key(v["rule"], v["message"])
        for v in reverified["violations"]
        if not (v["rule"] == 4 and "re-run at this commit" in v["message"])
    }


def land_with_trailers(project: Path, message: str, flip_it: bool) -> str:
    """Commit what is staged past every hook, with the trailers a verified flip carries."""
    if flip_it:
        tree = git_ok(project, "write-tree").strip()
        claim = git_ok(project, "rev-parse", "refs/shiftkit/claims/F002").strip()
        message += (
            f"\n\nShiftkit-Feature: F002\nShiftkit-Verified: {tree}\nShiftkit-Claim: {claim}\n"
        )
    git_ok(project, "-c", NO_HOOKS, "commit", "-q", "--no-verify", "-m", message)
    return head(project)


@fuzz(6)
@given(change=changes())
@example(change=Change(flip=True))  # an honest flip through `git commit`
@example(change=Change(flip=True, good=False))
@example(change=Change(flip=True, logged=False))
@example(change=Change(flip=True, named=False))
@example(change=Change(definition="F003"))
@example(change=Change(attempts_down=True))
@example(change=Change(log_rewrite=True))
@example(change=Change(flip=True, config=0))
@example(change=Change(flip=True, unstaged_config=3))
def test_hook_and_audit_agree(judged_base: Path, change: Change) -> None:
    with workspace(judged_base) as project:
        start = head(project)
        message = make_change(project, change)
        staged = git_ok(project, "write-tree").strip()

        through_hooks = git(project, "commit", "-m", message)
        assert "Traceback" not in through_hooks.output, through_hooks.output
        refused = hook_keys(through_hooks.output)
        if through_hooks.returncode == 0:
            assert not refused, through_hooks.output
            made = head(project)
            assert git_ok(project, "rev-parse", f"{made}^{{tree}}").strip() == staged
            if change.flip:  # the hook added the trailers the landed commit is given below
                body = git_ok(project, "log", "-1", "--format=%B")
                assert f"Shiftkit-Verified: {staged}" in body and "Shiftkit-Feature: F002" in body
            git_ok(project, "-c", NO_HOOKS, "reset", "-q", "--soft", start)
        else:
            assert refused, through_hooks.output
            assert head(project) == start

        landed = land_with_trailers(project, message, change.flip)
        assert git_ok(project, "rev-parse", f"{landed}^{{tree}}").strip() == staged
        code, reverified = audit_json(project, "--since", start, "--reverify")
        audited = audit_keys(reverified)
        assert code == (1 if audited else 0), reverified
        assert all(v["commit"] == landed for v in reverified["violations"]), reverified

        assert refused == expected_hook_keys(audited), (through_hooks.output, reverified)
        plain_code, plain = audit_json(project, "--since", start)
        assert audit_keys(plain) == plain_audit_keys(reverified), (plain, reverified)
        assert plain_code == (1 if audit_keys(plain) else 0)
        if change.unstaged_config not in (None, change.config):  # still only in the work tree
            assert git(project, "diff", "--quiet", "--", CONFIG).returncode == 1


# == 3. Any single mutation of a committed flip is refused or flagged ==========================


@pytest.fixture(scope="module")
def flip_base(
    pristine_calc: Path, tmp_path_factory: pytest.TempPathFactory, isolated_home: Path
) -> Iterator[Path]:
    """HEAD is an honest flip of F001 made by `shiftkit finish`."""
    base = tmp_path_factory.mktemp("flip") / "project"
    shutil.copytree(pristine_calc, base, symlinks=True)
    with module_environment(isolated_home):
        ok(base, "claim", "F001")
        implement(base, "add")
        ok(base, "finish", "-m", "add two numbers")
        assert "Shiftkit-Verified" in git_ok(base, "log", "-1", "--format=%B")
        yield base


@dataclass(frozen=True)
class ByteChange:
    file: int
    offset: int
    xor: int


@dataclass(frozen=True)
class Delete:
    file: int


@dataclass(frozen=True)
class AddFile:
    name: str
    text: str


@dataclass(frozen=True)
class StatusEdit:
    feature: str
    what: str


@dataclass(frozen=True)
class LogEdit:
    append: bool
    text: str


SAFE_NAME = st.from_regex(r"[a-z][a-z0-9]{0,7}(/[a-z][a-z0-9]{0,7})?\.(txt|py|md)", fullmatch=True)
MUTATION = st.one_of(
    st.builds(ByteChange, st.integers(0, 10_000), st.integers(0, 100_000), st.integers(1, 255)),
    st.builds(Delete, st.integers(0, 10_000)),
    st.builds(AddFile, SAFE_NAME, st.text(max_size=40)),
    st.builds(
        StatusEdit,
        st.sampled_from(["F000", "F002", "F003"]),
        st.sampled_from(["attempts", "passes", "blocked", "demote"]),
    ),
    st.builds(LogEdit, st.booleans(), PLAIN_TEXT),
)


def tracked_files(project: Path) -> list[str]:
    names = git_ok(project, "ls-files", "-z").split("\0")
    return sorted(n for n in names if n and not (project / n).is_symlink())


def mutate(project: Path, mutation: Any) -> None:
    files = tracked_files(project)
    if isinstance(mutation, ByteChange):
        path = project / files[mutation.file % len(files)]
        data = bytearray(path.read_bytes())
        if not data:
            data = bytearray(b"\0")
        index = mutation.offset % len(data)
        data[index] ^= mutation.xor
        path.write_bytes(bytes(data))
    elif isinstance(mutation, Delete):
        (project / files[mutation.file % len(files)]).unlink()
    elif isinstance(mutation, AddFile):
        path = project / mutation.name
        write(path, (path.read_text() if path.exists() else "") + mutation.text + "\n")
    elif isinstance(mutation, StatusEdit):

        def change(items: list[dict[str, Any]]) -> None:
            item = by_id(items, mutation.feature)
            if mutation.what == "attempts":
                item["attempts"] = item.get("attempts", 0) + 1
            elif mutation.what == "passes":
                item["passes"] = not item["passes"]
            elif mutation.what == "blocked":
                item["blocked"] = {
                    "reason": "stuck",
                    "since": "2026-11-30T00:00:00Z",
                    "attempts": 3,
                }
            else:
                item["passes"] = False
                item["attempts"] = item.get("attempts", 0) + 2

        edit_list(project, change)
    elif isinstance(mutation, LogEdit):
        log = project / LOG
        if mutation.append:
            add_log_entry(project, "F001", "passed")
        else:
            log.write_text(log.read_text().replace("add two numbers", mutation.text.strip(), 1))
    else:  # pragma: no cover
        raise AssertionError(mutation)


@fuzz(10)
@given(mutation=MUTATION)
@example(mutation=ByteChange(0, 0, 1))
@example(mutation=Delete(0))
@example(mutation=AddFile("extra.txt", "x"))
@example(mutation=StatusEdit("F000", "demote"))
@example(mutation=LogEdit(False, "changed words"))
def test_a_mutated_flip_is_refused_or_flagged(flip_base: Path, mutation: Any) -> None:
    with workspace(flip_base) as project:
        honest = head(project)
        verified_tree = git_ok(project, "rev-parse", "HEAD^{tree}").strip()
        mutate(project, mutation)
        git_ok(project, "add", "-A")
        if git_ok(project, "write-tree").strip() == verified_tree:
            # (an edit that the index does not see, e.g. a StatusEdit that writes the same
            # document, or text that git ignores: nothing to judge)
            assert git_ok(project, "status", "--porcelain", "--untracked-files=no") == ""
            return

        amend = git(project, "commit", "--amend", "--no-verify", "-C", "HEAD")
        assert amend.returncode != 0, amend.output
        assert "reference-transaction refused" in amend.output, amend.output
        assert "Traceback" not in amend.output, amend.output
        assert head(project) == honest

        git_ok(project, "-c", NO_HOOKS, "commit", "-q", "--amend", "--no-verify", "-C", "HEAD")
        mutated = head(project)
        assert mutated != honest
        assert git_ok(project, "rev-parse", "HEAD^{tree}").strip() != verified_tree
        audit = shiftkit(project, "audit")
        assert audit.returncode == 1, audit.output
        flagged = [line for line in audit.stdout.splitlines() if line.startswith(mutated[:7])]
        assert flagged and all("rule " in line for line in flagged), audit.stdout
