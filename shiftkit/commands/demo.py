"""`shiftkit demo`: scaffold a sample project and play a few shifts in it, through the real
hooks, with a scripted stand-in for the agent's model."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from shiftkit.commands import scaffold
from shiftkit.core.errors import Refused
from shiftkit.edge import gitio

DEMO_IDENTITY = {
    "GIT_AUTHOR_NAME": "shiftkit demo",
    "GIT_AUTHOR_EMAIL": "demo@shiftkit.invalid",
    "GIT_COMMITTER_NAME": "shiftkit demo",
    "GIT_COMMITTER_EMAIL": "demo@shiftkit.invalid",
}

INITIAL_FEATURES = {
    "features": [
        {
            "id": "F001",
            "category": "functional",
            "description": "A todo item can be added and listed",
            "steps": ["add('milk')", "items() lists 'milk'"],
            "verify": "python3 -m unittest -q tests/test_add.py",
            "passes": False,
        },
        {
            "id": "F002",
            "category": "functional",
            "description": "A todo item can be completed",
            "steps": ["add('milk')", "complete('milk')", "'milk' is done"],
            "verify": "python3 -m unittest -q tests/test_complete.py",
            "passes": False,
        },
    ]
}

VERIFIERS = {
    "tests/test_add.py": (
        "import unittest\nfrom todo.store import Store\n\n\nclass T(unittest.TestCase):\n"
        "    def test_add(self):\n        s = Store()\n        s.add('milk')\n"
        "        self.assertEqual(s.items(), ['milk'])\n"
    ),
    "tests/test_complete.py": (
        "import unittest\nfrom todo.store import Store\n\n\nclass T(unittest.TestCase):\n"
        "    def test_complete(self):\n        s = Store()\n        s.add('milk')\n"
        "        s.complete('milk')\n        self.assertTrue(s.is_done('milk'))\n"
    ),
}

STORE_V1 = (
    "class Store:\n    def __init__(self):\n        self._items = []\n\n"
    "    def add(self, title):\n        self._items.append(title)\n\n"
    "    def items(self):\n        return list(self._items)\n"
)
STORE_BUGGY = STORE_V1 + (
    "\n    def complete(self, title):\n        pass\n\n"
    "    def is_done(self, title):\n        return False\n"
)
STORE_V2 = STORE_V1.replace("self._items = []", "self._items = []\n        self._done = set()") + (
    "\n    def complete(self, title):\n        self._done.add(title)\n\n"
    "    def is_done(self, title):\n        return title in self._done\n"
)


# The stand-in agent `shiftkit run` starts for each session: it does what a model would (claim,
# write code, finish or revert) and prints a result shaped like `claude -p --output-format
# json`'s. Its third session writes a broken F002; the fourth gets it right.
STAND_IN_AGENT = (
    "import json, os, subprocess, sys\n"
    "FILES = "
    + repr(
        {
            "F000": {"todo/__init__.py": '"""A small todo library."""\n'},
            "F001": {"todo/store.py": STORE_V1},
        }
    )
    + "\n"
    "F002 = " + repr([STORE_BUGGY, STORE_V2]) + "\n"
    "count_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'sessions')\n"
    "n = int(open(count_file).read()) + 1 if os.path.exists(count_file) else 1\n"
    "open(count_file, 'w').write(str(n))\n"
    "def sk(*args):\n"
    "    proc = subprocess.run(['shiftkit', *args], capture_output=True, text=True)\n"
    "    for line in (proc.stdout + proc.stderr).strip().splitlines():\n"
    "        print('  (agent) $ shiftkit ' + args[0] + ': ' + line, file=sys.stderr)\n"
    "    return proc\n"
    "claimed = sk('claim').stdout.split('claimed ', 1)[1].split(':', 1)[0]\n"
    "files = FILES.get(claimed) or {'todo/store.py': F002[min(n - 3, 1)]}\n"
    "for name, text in files.items():\n"
    "    os.makedirs(os.path.dirname(name), exist_ok=True)\n"
    "    open(name, 'w').write(text)\n"
    "if sk('finish', '-m', {'F000': 'create the todo package', 'F001': 'add and list todo "
    "items'}.get(claimed, 'complete todo items')).returncode != 0:\n"
    "    sk('revert', '--reason', 'complete() was a stub; is_done() never true')\n"
    "print(json.dumps({'type': 'result', 'subtype': 'success', 'is_error': False,\n"
    "    'num_turns': 6, 'result': 'done', 'session_id': f'demo-session-{n}',\n"
    "    'total_cost_usd': 0.04 + 0.01 * n, 'usage': {'input_tokens': 900 + 100 * n,\n"
    "    'cache_creation_input_tokens': 3000, 'cache_read_input_tokens': 20000 * n,\n"
    "    'output_tokens': 400 + 50 * n}}))\n"
)


def run(directory: Path | None) -> int:
    target = (directory or Path(tempfile.mkdtemp(prefix="shiftkit-demo-")) / "todo-app").resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    if not gitio.has_identity(target.parent):
        # A fresh machine has no git identity; the demo's commits use a demo one.
        os.environ.update(DEMO_IDENTITY)
    initial = target.parent / "initial-features.json"
    initial.write_text(json.dumps(INITIAL_FEATURES, indent=2) + "\n", encoding="utf-8")

    _title(f"Initializer: scaffold {target} (copier template, hooks, first commit)")
    scaffold.new(
        target,
        {
            "project_name": "todo-app",
            "goal": "A small todo library, built one verified feature at a time.",
            "smoke_command": "python3 -c 'import todo'",
        },
        defaults=True,
        features_file=initial,
        quiet=True,
    )
    shell = _Shell(target)
    shell.shiftkit("status")
    for name, text in VERIFIERS.items():
        _write(target / name, text)
    # Python writes bytecode beside what it imports: in a verifier's clean checkout that is a
    # change, which fails the verifier, unless ignored (a machine without
    # PYTHONDONTWRITEBYTECODE, which is nearly every one).
    ignore = target / ".gitignore"
    ignored = ignore.read_text(encoding="utf-8") if ignore.is_file() else ""
    if "__pycache__/" not in ignored.split():
        ending = "" if not ignored or ignored.endswith("\n") else "\n"
        _write(ignore, f"{ignored}{ending}__pycache__/\n")
    shell.git("add", "-A")
    shell.git("commit", "-q", "-m", "Add the verifiers for F001 and F002")

    _title("Four shifts through `shiftkit run`, with a scripted stand-in for the agent")
    agent = target.parent / "stand-in-agent.py"
    agent.write_text(STAND_IN_AGENT, encoding="utf-8")
    print(
        "  (expected: the first start check's smoke test fails, as there is no `todo` package "
        "yet; making it is F000, the first shift's feature)",
        flush=True,
    )
    shell.shiftkit("run", "--agent", f"{sys.executable} {agent}", "--max-sessions", "6")

    _title("The hooks refuse what the protocol forbids")
    features_path = target / "features.json"
    committed = features_path.read_text(encoding="utf-8")
    document = json.loads(committed)
    document["features"][2]["description"] = "A todo item can be completed, more or less"
    _write(features_path, json.dumps(document, indent=2) + "\n")
    shell.git(
        "commit",
        "-am",
        "Relax the completion feature",
        refused="rule 2: a committed feature's definition never changes; append a new one",
    )
    shell.git("checkout", "-q", "HEAD", "--", "features.json")
    _write(target / "NOTES.md", "scratch\n")
    shell.git("add", "NOTES.md")
    shell.git("commit", "-m", "wip", refused="rule 9: a commit's subject must say what changed")
    shell.git("reset", "-q", "NOTES.md")
    (target / "NOTES.md").unlink()

    _title("Where the project stands, and what it cost")
    shell.shiftkit("status")
    shell.git("log", "--oneline")
    shell.shiftkit("cost")
    print(f"\nThe demo project is in {target}; `cd` there and try `shiftkit start`.")
    return 0


def _title(text: str) -> None:
    print(f"\n=== {text}", flush=True)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"  (agent) wrote {path.name}", flush=True)


class _Shell:
    def __init__(self, root: Path) -> None:
        self.root = root

    def shiftkit(self, *args: str) -> None:
        self._run(["shiftkit", *args], None)

    def git(self, *args: str, refused: str | None = None) -> None:
        self._run(["git", *args], refused)

    def _run(self, argv: list[str], refused: str | None) -> None:
        """Run ``argv`` as a shell would show it, its output printed as it comes; ``refused``:
        it must fail, and why, in one line."""
        command = shlex.join(argv)
        print(f"$ {command}", flush=True)
        proc = subprocess.Popen(
            argv,
            cwd=self.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        )
        for line in proc.stdout or ():
            if line.strip():
                print(f"  {line.rstrip()}", flush=True)
        code = proc.wait()
        if (code != 0) != (refused is not None):
            raise Refused(f"demo: `{command}` exited {code} unexpectedly")
        if refused is not None:
            print(f"  => refused (exit {code}), as it must be: {refused}", flush=True)
