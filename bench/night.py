"""The night, measured: `shiftkit run --agent claude --parallel 3` with the real Claude Code CLI
(pinned, tests/harnesses.py) against the scripted model on 127.0.0.1 (tests/model_server.py),
on a 30-feature project whose features need a shared base (F002-F030 depend on F001 and
their verifiers read its file). Three adversities (`script`): one session dies mid-feature
(its agent hangs past `--session-timeout` with the feature half done), one makes a plain
commit that breaks every feature, one drops its finished commit. Then the remote is replayed
commit by commit.

Run: python bench/night.py [--features N] [--agents K] [--agent claude|codex] [--timeout S]
Prints: wall time, sessions, human steps (0: the run ended by itself with exit 0), commits on
the remote's main where a feature marked passing fails (replayed: every verifier of every
passing feature at every commit), features finished twice, bookkeeping commits (sync merges,
re-marks) as a share of the remote's commits since the team started, and the team's spend
as shiftkit counted it beside what the model served.
Bars (issue 36): 0 human steps, 0 lies, 0 double work, bookkeeping <= 10 %, cost within 1 %.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

import harnesses  # noqa: E402
from _common import bench_env  # noqa: E402
from model_server import ModelServer, Step, history, shell, shift  # noqa: E402


def sh(args: list[str], cwd: Path, env: dict[str, str], check: bool = True) -> str:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise SystemExit(f"night: {' '.join(args)} failed in {cwd}:\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def project(root: Path, n: int, env: dict[str, str]) -> tuple[Path, Path, dict[str, str]]:
    """The scaffold, F000 done, ``n`` features, shared through a bare remote; the work each
    feature's script does."""
    place = root / "night"
    sh(["shiftkit", "new", str(place), "--defaults"], root, env)
    sh(["shiftkit", "claim", "F000"], place, env)
    sh(["shiftkit", "finish", "-m", "the environment builds"], place, env)
    work = {"F001": "echo base > base.txt"}
    sh(["shiftkit", "add", "--description", "the base", "--step", "s",
        "--verify", "test -f base.txt"], place, env)  # fmt: skip
    for k in range(2, n + 1):
        name = f"f{k}.txt"
        sh(["shiftkit", "add", "--description", f"part {k}", "--step", "s", "--depends-on",
            "F001", "--verify", f"test -f base.txt && test -f {name}"], place, env)  # fmt: skip
        work[f"F{k:03d}"] = f"echo done > {name}"
    config = place / ".shiftkit.toml"
    config.write_text(config.read_text().replace('remote = ""', 'remote = "origin"'))
    sh(["git", "add", "-A"], place, env)
    sh(["git", "commit", "-q", "-m", "The night's features, shared through origin"], place, env)
    bare = root / "remote.git"
    sh(["git", "init", "-q", "--bare", str(bare)], root, env)
    sh(["git", "remote", "add", "origin", str(bare)], place, env)
    sh(["git", "push", "-q", "origin", "main"], place, env)
    return place, bare, work


def script(work: dict[str, str], dies: str, breaks: str, abandons: str) -> Any:
    """`shift`, with three adversities, each the first time its feature is taken: the
    session on ``dies`` half does it and then hangs (past `--session-timeout`); the one on
    ``breaks``, once its feature is finished, makes a plain commit that deletes the base every
    other feature reads; the one on ``abandons`` drops its finished commit
    (`git reset --hard HEAD~1`)."""
    base = shift(work)
    done: set[str] = set()
    after = {
        breaks: "git rm -q base.txt && git commit -q -m 'Tidy: the base file is not needed'",
        abandons: "git reset -q --hard HEAD~1",
    }

    def next_step(server: ModelServer, body: dict[str, Any]) -> Step:
        format_ = "anthropic" if "messages" in body else "responses"
        calls, outputs = history(body)
        claimed = next((f for f in work if outputs and f"claimed {f}" in outputs[0]), None)
        if claimed in after and len(calls) == 3 and claimed not in done:
            done.add(claimed)
            return Step(calls=[shell(format_, after[claimed])], input_tokens=4200)
        step = base(server, body)
        for call in step.calls:
            given = call.input if isinstance(call.input, dict) else {}
            command = str(given.get("command") or given.get("cmd") or "")  # (Claude's, Codex's)
            if command == work[dies] and dies not in done:
                done.add(dies)
                return Step(calls=[shell(format_, f"{work[dies]} && sleep 3600")])
        return step

    return next_step


def served(server: ModelServer) -> float:
    return sum(
        s.input_tokens + 0.1 * s.cache_read + 1.25 * s.cache_write + 5 * s.output_tokens
        for s in server.answered()
    )


def replay(bare: Path, since: str, root: Path, env: dict[str, str]) -> tuple[int, int]:
    """(commits replayed, commits where a feature marked passing fails): every commit of the
    remote's main after ``since``, every passing feature's verifier run on its tree."""
    clone = root / "replay"
    sh(["git", "clone", "-q", str(bare), str(clone)], root, env)
    commits = sh(["git", "rev-list", f"{since}..main"], clone, env).split()
    lies = 0
    for commit in commits:
        sh(["git", "checkout", "-q", "--force", commit], clone, env)
        sh(["git", "clean", "-q", "-f", "-d"], clone, env)
        items = json.loads((clone / "features.json").read_text())["features"]
        for item in items:
            if item.get("passes") is True and item.get("verify"):
                ok = subprocess.run(["sh", "-c", item["verify"]], cwd=clone, env=env).returncode
                if ok != 0:
                    lies += 1
                    print(f"  LIE at {commit[:9]}: {item['id']} marked passing fails")
                    break
    return len(commits), lies


def done_twice(bare: Path, since: str, env: dict[str, str]) -> int:
    """Features finished while their parent commit already marked them passing: work done
    twice. (Finishing a feature again after a break demoted it is its repair, not that.)"""
    rows = sh(["git", "log", "--format=%H %P%x00%s", f"{since}..main"], bare, env).splitlines()
    twice = 0
    for row in rows:
        ids, subject = row.split("\0", 1)
        _, *parents = ids.split()
        if ": make " not in subject.lower() or len(parents) != 1:
            continue
        feature = subject.split(":", 1)[0]
        before = json.loads(sh(["git", "show", f"{parents[0]}:features.json"], bare, env))
        twice += any(i["id"] == feature and i.get("passes") is True for i in before["features"])
    return twice


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--features", type=int, default=30)
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--agent", choices=("claude", "codex"), default="claude")
    parser.add_argument("--timeout", type=float, default=120.0, help="--session-timeout")
    options = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="shiftkit-night-"))
    home = root / "home"
    home.mkdir()
    env = bench_env(home)
    place, bare, work = project(root, options.features, env)
    since = sh(["git", "rev-parse", "main"], bare, env).strip()
    # (on 30 features: F010, F012, F018; proportionally on fewer)
    dies, breaks, abandons = (
        f"F{max(1, round(options.features * k / 30)):03d}" for k in (10, 12, 18)
    )
    codex = options.agent == "codex"
    model_name = harnesses.CODEX_MODEL if codex else harnesses.CLAUDE_MODEL
    with ModelServer(script(work, dies, breaks, abandons), model=model_name) as server:
        if codex:
            clones = [root / "night-agents" / f"agent-{i}" for i in range(1, options.agents + 1)]
            harness = harnesses.codex(server.url, root / "codex-home", clones)
        else:
            harness = harnesses.claude(server.url, root / "claude-home")
        path = f"{harness.binary.parent}{os.pathsep}{env['PATH']}"
        run_env = {**env, **harness.env, "PATH": path}
        started = time.monotonic()
        proc = subprocess.run(
            ["shiftkit", "run", "--agent", options.agent, "--parallel", str(options.agents),
             "--session-timeout", str(options.timeout), "--max-sessions", "40",
             *(["--dangerously-bypass-hook-trust"] if codex else [])],
            cwd=place, env=run_env, capture_output=True, text=True,
        )  # fmt: skip
        wall = time.monotonic() - started
        model = served(server)
    (root / "run.log").write_text(proc.stdout + proc.stderr)
    lines = proc.stdout.splitlines()
    project_line = next((x for x in reversed(lines) if x.startswith("project: ")), "")
    counted = (
        float(project_line.split("spent ", 1)[1].split(" fresh", 1)[0].replace(",", ""))
        if "spent " in project_line
        else 0.0
    )
    subjects = sh(["git", "log", "--format=%s%x00%P", f"{since}..main"], bare, env).splitlines()
    merges = sum(1 for s in subjects if len(s.split("\0")[1].split()) > 1)
    remarks = sum(1 for s in subjects if "re-mark" in s.split("\0")[0].lower())
    twice = done_twice(bare, since, env)
    items = json.loads(sh(["git", "show", "main:features.json"], bare, env))["features"]
    passing = sum(1 for item in items if item.get("passes") is True)
    sessions = sum(1 for x in lines if x.startswith("[agent-") and "] session " in x and " · " in x)
    replayed, lies = replay(bare, since, root, env)
    bookkeeping = (merges + remarks) / max(1, len(subjects))
    print(
        f"night: {options.agents} {options.agent} agents, {options.features} features; a "
        f"session dies on "
        f"{dies}, a plain commit after {breaks} deletes what every feature reads, the finished "
        f"commit of {abandons} is dropped"
    )
    print(f"  ended: exit {proc.returncode} ({lines[-1] if lines else 'no output'})")
    print(f"  wall time {wall:,.0f} s; {sessions} sessions; {passing}/{len(items)} passing")
    print(f"  human steps: {0 if proc.returncode == 0 else 'the run did not finish by itself'}")
    print(f"  lies: {lies} of {replayed} remote commits replayed")
    print(f"  double work: {twice} features finished while already passing")
    print(
        f"  bookkeeping: {merges} sync merges + {remarks} re-marks of {len(subjects)} commits "
        f"= {bookkeeping:.0%} (bar 10 %)"
    )
    print(
        f"  cost: shiftkit counted {counted:,.0f} fresh-equivalent tokens, the model served "
        f"{model:,.0f} ({abs(counted - model) / max(model, 1):.2%} apart; bar 1 %); "
        f"{counted / max(passing, 1):,.0f} per passing feature"
    )
    print(f"  the run's output: {root / 'run.log'}")
    return 0 if proc.returncode == 0 and lies == 0 and twice == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
