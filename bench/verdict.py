"""What judging a verifier by its own report and by everything its checkout gained costs.

Run: python bench/verdict.py [--rounds N]
Bars (decision records 0051, 0052): a pytest verifier of 20 tests run with its JUnit XML report
read (`verify.run_verifier`) ÷ the same command by its exit code only (`verify.run_command`)
<= 1.15. The checkout's listing after a run (`verify.checkout_changes`: tracked changes and every
untracked file, ignored ones too) ÷ the listing it replaced (`git status -uall`), in a checkout
holding an ignored `.venv/` of 2,000 files and `__pycache__/` folders: shown, no bar (both are
a few milliseconds beside a verifier's run).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import Row, bench_env, ms, print_rows, scratch, sh, side_by_side

from shiftkit.edge import verify

TESTS = 20
VENV_FILES = 2000


def build(home: Path, env: dict[str, str]) -> Path:
    project = home / "verdict-bench"
    (project / "tests").mkdir(parents=True)
    body = "".join(f"def test_{i}():\n    assert {i} + 1 == {i + 1}\n\n\n" for i in range(TESTS))
    (project / "tests" / "test_many.py").write_text(body)
    (project / ".gitignore").write_text(".venv/\n__pycache__/\n.pytest_cache/\n")
    sh(["git", "init", "-q"], project, env)
    sh(["git", "add", "-A"], project, env)
    sh(["git", "commit", "-q", "-m", "Bench: twenty tests"], project, env)
    for n in range(VENV_FILES):
        folder = project / ".venv" / "lib" / f"pkg{n // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{n}.py").write_text("x = 1\n")
    return project


def figures(rounds: int = 5) -> list[Row]:
    home = scratch()
    env = bench_env(home)
    project = build(home, env)
    command = f"{sys.executable} -m pytest -q -p no:cacheprovider tests/test_many.py"
    environment = {**env, "PYTHONDONTWRITEBYTECODE": "1"}

    def judged() -> None:
        outcome = verify.run_verifier(command, project, 300, environment)
        if not outcome.ok:
            raise SystemExit(f"bench: the judged run failed\n{outcome.output}")

    def plain() -> None:
        outcome = verify.run_command(command, project, 300, environment)
        if not outcome.ok:
            raise SystemExit(f"bench: the plain run failed\n{outcome.output}")

    runs = side_by_side({"judged": judged, "plain": plain}, rounds)
    subprocess.run(command.split(), cwd=project, env=env, capture_output=True)  # the caches

    def listing() -> None:
        if verify.checkout_changes(project):
            raise SystemExit("bench: the checkout lists changes")

    def old_listing() -> None:
        subprocess.run(
            ["git", "status", "--porcelain", "-z", "--untracked-files=all"],
            cwd=project,
            env=env,
            capture_output=True,
            check=True,
        )

    lists = side_by_side({"new": listing, "old": old_listing}, rounds * 4)
    shutil.rmtree(home, ignore_errors=True)
    return [
        Row(
            f"pytest verifier ({TESTS} tests) judged by its report ÷ by its exit code",
            runs["judged"] / runs["plain"],
            f"{ms(runs['judged'])} vs {ms(runs['plain'])}",
            1.15,
        ),
        Row(
            f"checkout listing, ignored files too ÷ git status (a {VENV_FILES}-file .venv/)",
            lists["new"] / lists["old"],
            f"{ms(lists['new'])} vs {ms(lists['old'])}",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print_rows("a verifier's verdict", figures(args.rounds))


if __name__ == "__main__":
    main()
