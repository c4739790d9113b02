"""What test runners and installers write on their own — caches and environments — named
once (decision record 0052): re-verification ignores these in its temporary checkout, and
the scaffold's `.gitignore` lists them (tests/test_runner_files.py holds the two together).
Anything else that `init` or a verifier leaves there is a file the judged tree does not hold."""

from __future__ import annotations

from fnmatch import fnmatchcase

# Folders, wherever they are: caches a runner rebuilds, environments an install step fills.
RUNNER_DIRS = (
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".tox",
    ".nox",
    ".venv",
    "venv",
    ".eggs",
    "*.egg-info",
    "htmlcov",
    "node_modules",
)
# Files, wherever they are.
RUNNER_FILES = ("*.pyc", "*.pyo", ".coverage", ".coverage.*")
# What only caches results (rebuilt by the next run, never installed): a checkout drops these
# after `init`, so bytecode or a "last failed" list that init planted is never what runs.
PURE_CACHES = ("__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis")
PURE_CACHE_FILES = ("*.pyc", "*.pyo")


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in patterns)


def is_runner_output(path: str) -> bool:
    """Whether ``path`` (relative, `/`-separated; a folder ends with `/`) lies in one of
    `RUNNER_DIRS` or is one of `RUNNER_FILES`."""
    folder = path.endswith("/")
    parts = [part for part in path.split("/") if part]
    if not parts:
        return False
    folders = parts if folder else parts[:-1]
    if any(_matches(part, RUNNER_DIRS) for part in folders):
        return True
    return not folder and _matches(parts[-1], RUNNER_FILES)


def is_pure_cache(path: str) -> bool:
    """Whether ``path`` (as `is_runner_output` takes it) is itself a pure cache — a folder of
    `PURE_CACHES` or a file of `PURE_CACHE_FILES` — lying in no environment folder (what an
    install put into `.venv/` stays)."""
    folder = path.endswith("/")
    parts = [part for part in path.split("/") if part]
    if not parts or any(_matches(part, RUNNER_DIRS) for part in parts[:-1]):
        return False
    return _matches(parts[-1], PURE_CACHES if folder else PURE_CACHE_FILES)


def gitignore_lines() -> list[str]:
    """The `.gitignore` patterns that cover the list (folders with a trailing `/`)."""
    return [f"{name}/" for name in RUNNER_DIRS] + list(RUNNER_FILES)
