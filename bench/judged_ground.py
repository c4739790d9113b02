"""What judging exactly the tree costs a verifier run (issue "Exactly the tree").

A setuptools src-layout project installed with `pip install -e .` into a developer's venv; its
verifier imports the package and sleeps 1 s. In the same temporary checkout, side by side:

  plain     the command run by /bin/sh with the caller's whole environment (what a verifier
            cost before: it imported the developer's work tree)
  judged    `verify.run_command`: the person's environment only (decision record 0088), the
            tree's own pytest plugins blocked (0097), imports redirected from the work tree to
            the checkout (0087), the run ended when its shell exits (0095)
  overlay   the same after `overlay_venv.make`, the private environment an installing `init`
            gets (0098), laid out each round

Run: python bench/judged_ground.py [--rounds N]
Bar: judged / plain <= 1.10 and overlay / plain <= 1.10 (a 1 s verifier).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from _common import NO_HOOKS, Row, bench_env, ms, print_rows, scratch, sh, side_by_side

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

VERIFIER = "python -c 'import judged, time; time.sleep(1); print(judged.WHERE)'"


def build(home: Path, env: dict[str, str]) -> tuple[Path, dict[str, str]]:
    """The project, committed with its code saying "tree"; the developer's venv holds it
    editable, and the work tree (uncommitted) says "work tree". (project, the venv's env)."""
    project = home / "judged-bench"
    package = project / "src" / "judged"
    package.mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "judged"\nversion = "0"\n'
    )
    (package / "__init__.py").write_text('WHERE = "tree"\n')
    sh(["git", "init", "-q"], project, env)
    sh(["git", "add", "-A"], project, env)
    sh(["git", *NO_HOOKS, "commit", "-q", "-m", "The project"], project, env)
    (package / "__init__.py").write_text('WHERE = "work tree"\n')
    venv = home / "venv"
    sh([sys.executable, "-m", "venv", str(venv)], home, env)
    developer = {
        **env,
        "PATH": f"{venv / 'bin'}{os.pathsep}{env['PATH']}",
        "VIRTUAL_ENV": str(venv),
    }
    sh(["pip", "install", "-q", "-e", "."], project, developer)
    return project, developer


def figures(rounds: int = 7) -> list[Row]:
    from shiftkit.edge import gitio, overlay_venv, verify

    home = scratch()
    project, developer = build(home, bench_env(home))
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(developer)
    try:
        tree = gitio.out(["rev-parse", "HEAD^{tree}"], project).strip()
        with verify.temporary_checkout(project, tree) as target:

            def plain() -> None:
                # (the old way: the developer's editable install wins, so the work tree is judged)
                done = subprocess.run(
                    ["/bin/sh", "-c", VERIFIER], cwd=target, env=developer, capture_output=True
                )
                assert done.stdout.strip() == b"work tree", done.stdout + done.stderr

            def judged() -> None:
                outcome = verify.run_command(VERIFIER, target, 60)
                assert outcome.ok and outcome.output.strip() == "tree", outcome.output

            def overlay() -> None:
                overlay_venv.forget(target)
                shutil.rmtree(target.parent / "venv", ignore_errors=True)
                overlay_venv.make(target, verify.verifier_environment(os.environ))
                outcome = verify.run_command(VERIFIER, target, 60)
                assert outcome.ok and outcome.output.strip() == "tree", outcome.output

            times = side_by_side({"plain": plain, "judged": judged, "overlay": overlay}, rounds)
            overlay_venv.forget(target)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(home, ignore_errors=True)
    rows = [
        Row(
            "1 s verifier, judged / plain",
            times["judged"] / times["plain"],
            f"{ms(times['judged'])} vs {ms(times['plain'])}",
            1.10,
        ),
        Row(
            "1 s verifier, init's venv laid / plain",
            times["overlay"] / times["plain"],
            f"{ms(times['overlay'])} vs {ms(times['plain'])}",
            1.10,
        ),
    ]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    rows = figures(args.rounds)
    print_rows(f"judging exactly the tree, {args.rounds} interleaved rounds", rows)
    if any(row.verdict == "FAIL" for row in rows):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
