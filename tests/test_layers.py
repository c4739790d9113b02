"""The layers of the code, visible in the tree and kept so: entry points (`main`, `cli`,
`hooks`, `transaction`) -> `commands/` -> `edge/` -> `core/`. A module imports from its own
layer and the ones below it, never above; `core/` does no git, subprocess or file I/O."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "shiftkit"
RANK = {"core": 0, "edge": 1, "commands": 2, "entry": 3}
# What the pure core may not import, even lazily inside a function.
IMPURE = {"subprocess", "git", "shiftkit.edge", "shiftkit.commands", "tempfile", "shutil", "socket"}


def layer_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) >= 2 and parts[1] in RANK:
        return parts[1]
    return "entry"


def module_name(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    return ".".join(relative.parts).removesuffix(".__init__")


def imports_of(path: Path) -> list[tuple[int, str]]:
    """Every module an import statement names (TYPE_CHECKING ones included), with its line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "shiftkit":  # from shiftkit import core, edge, ...
                found += [(node.lineno, f"shiftkit.{alias.name}") for alias in node.names]
            else:
                found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
                found.append((node.lineno, node.module))
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=[module_name(p) for p in MODULES])
def test_imports_point_down_the_layers(path: Path) -> None:
    own = layer_of(module_name(path))
    upward = [
        f"line {line}: {name}"
        for line, name in imports_of(path)
        if name.startswith("shiftkit.") and RANK[layer_of(name)] > RANK[own]
    ]
    assert not upward, f"{module_name(path)} ({own}) imports from a layer above it: {upward}"


@pytest.mark.parametrize("path", sorted((PACKAGE / "core").glob("*.py")), ids=lambda p: p.stem)
def test_the_core_is_pure(path: Path) -> None:
    impure = [
        f"line {line}: {name}"
        for line, name in imports_of(path)
        if any(name == bad or name.startswith(bad + ".") for bad in IMPURE)
    ]
    assert not impure, f"shiftkit.core.{path.stem} is not pure: {impure}"


def test_every_module_is_in_a_layer_and_the_layers_exist() -> None:
    assert {p.name for p in PACKAGE.iterdir() if p.is_dir() and not p.name.startswith("_")} >= set(
        RANK
    ) - {"entry"}
    entry = {p.stem for p in PACKAGE.glob("*.py")}
    assert entry == {"__init__", "__main__", "main", "cli", "githooks", "hooks", "transaction"}, (
        entry
    )


def test_the_import_check_catches_an_upward_import(tmp_path: Path) -> None:
    """The test above can fail: an edge module importing a command is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("from shiftkit.commands import shift\nimport subprocess\n")
    names = [name for _, name in imports_of(bad)]
    assert "shiftkit.commands.shift" in names and "subprocess" in names
    assert RANK[layer_of("shiftkit.commands.shift")] > RANK["edge"]
