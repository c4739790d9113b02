"""The real agent harnesses for the tests: Claude Code and Codex CLI, pinned, installed from npm
into a cache folder once, and run offline against the scripted model of `model_server`.

`binary(name)` installs the pinned package when its cache lacks it (`npm install --prefix`);
without npm the tests that need a harness are skipped with the reason, except in CI
(``CI=true``), where a missing harness is a failure. `.ci/run` installs Node and npm and calls
`python tests/harnesses.py` first, so the suite's first test does not wait for npm.

Both run offline: Claude Code with its non-essential traffic, telemetry and updater off, Codex
with analytics and the update check off, and both with an HTTP(S) proxy that refuses every host
but 127.0.0.1, so a request that is not the scripted model's fails instead of leaving the
machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from needs import missing

CLAUDE = "claude"
CODEX = "codex"
PACKAGES = {
    CLAUDE: ("@anthropic-ai/claude-code", "2.1.332"),
    CODEX: ("@openai/codex", "0.169.0"),
}
CLAUDE_MODEL = "claude-sonnet-4-5"
CODEX_MODEL = "gpt-5.5"  # in Codex 0.169's model catalog: its own tools, not a fallback's
REFUSING_PROXY = "http://127.0.0.1:9"  # the discard port: nothing listens, so it is refused


def cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "shiftkit-tests" / "npm"


def _prefix(name: str) -> Path:
    package, version = PACKAGES[name]
    return cache() / f"{package.replace('/', '+')}@{version}"


def _bin(name: str) -> Path:
    return _prefix(name) / "node_modules" / ".bin" / name


def install(name: str) -> Path | str:
    """The pinned harness's binary, installed into the cache when missing; a string: why it
    cannot be."""
    found = _bin(name)
    if found.is_file() and os.access(found, os.X_OK):
        return found
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not installed (apt-get install nodejs npm; .ci/run installs it)"
    package, version = PACKAGES[name]
    prefix = _prefix(name)
    prefix.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [
            npm,
            "install",
            "--prefix",
            str(prefix),
            "--no-audit",
            "--no-fund",
            f"{package}@{version}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0 or not found.is_file():
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-1:] or ["no output"]
        return f"npm install {package}@{version} failed: {tail[0]}"
    return found


def binary(name: str) -> Path:
    """The harness's binary for a test: skipped (locally) or failed (in CI) without it."""
    found = install(name)
    if isinstance(found, Path):
        return found
    missing(f"{name}: {found}")


def version(name: str) -> str:
    """The installed harness's version line, or why there is none (for the report header)."""
    found = _bin(name)
    if not found.is_file():
        return f"{name}: not installed (the first test that needs it installs it)"
    proc = subprocess.run([str(found), "--version"], capture_output=True, text=True, timeout=60)
    return f"{name}: {proc.stdout.strip() or proc.stderr.strip()} ({found})"


def _offline() -> dict[str, str]:
    return {
        "HTTPS_PROXY": REFUSING_PROXY,
        "HTTP_PROXY": REFUSING_PROXY,
        "https_proxy": REFUSING_PROXY,
        "http_proxy": REFUSING_PROXY,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }


@dataclass
class Harness:
    """One harness set up for one test: its binary, environment and home folder."""

    name: str
    binary: Path
    env: dict[str, str]
    home: Path

    def command(self, prompt: str, *extra: str) -> list[str]:
        if self.name == CLAUDE:
            return [
                str(self.binary),
                "-p",
                "--output-format",
                "json",
                "--dangerously-skip-permissions",
                *extra,
                prompt,
            ]
        return [str(self.binary), "exec", "--json", *extra, prompt]

    def run(self, project: Path, prompt: str, *extra: str, timeout: float = 110) -> Result:
        proc = subprocess.run(
            self.command(prompt, *extra),
            cwd=project,
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def transcripts(self) -> list[Path]:
        """The session files the harness wrote: Claude Code's transcripts, Codex's rollouts."""
        where = self.home / ("projects" if self.name == CLAUDE else "sessions")
        return sorted(p for p in where.glob("**/*.jsonl") if p.is_file())


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str

    def json_lines(self) -> list[dict[str, object]]:
        found = []
        for line in self.stdout.splitlines():
            if line.startswith("{"):
                try:
                    value = json.loads(line)
                except ValueError:
                    continue
                if isinstance(value, dict):
                    found.append(value)
        return found


def claude(url: str, home: Path) -> Harness:
    """Claude Code against the scripted model at ``url``, its config and transcripts under
    ``home`` (`CLAUDE_CONFIG_DIR`)."""
    home.mkdir(parents=True, exist_ok=True)
    env = {
        **_offline(),
        "CLAUDE_CONFIG_DIR": str(home),
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-ant-scripted-model",
        "ANTHROPIC_MODEL": CLAUDE_MODEL,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        # Claude Code refuses --dangerously-skip-permissions as root unless it is told it runs
        # in a sandbox (CI runs as root here).
        "IS_SANDBOX": "1",
    }
    return Harness(CLAUDE, binary(CLAUDE), env, home)


def codex_config(url: str, trusted: list[Path] = ()) -> str:  # type: ignore[assignment]
    lines = [
        f'model = "{CODEX_MODEL}"',
        'model_provider = "scripted"',
        "check_for_update_on_startup = false",
        "[analytics]",
        "enabled = false",
        "[feedback]",
        "enabled = false",
        "[model_providers.scripted]",
        'name = "scripted model"',
        f'base_url = "{url}/v1"',
        'wire_api = "responses"',
        'env_key = "SCRIPTED_API_KEY"',
        "request_max_retries = 0",
        "stream_max_retries = 0",
    ]
    for root in trusted:
        lines += [f"[projects.{json.dumps(str(root))}]", 'trust_level = "trusted"']
    return "\n".join(lines) + "\n"


def codex(url: str, home: Path, trusted: list[Path] = ()) -> Harness:  # type: ignore[assignment]
    """Codex CLI against the scripted model at ``url``, with ``home`` as `CODEX_HOME` (its
    config names the model provider and the projects trusted)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(codex_config(url, list(trusted)), encoding="utf-8")
    env = {**_offline(), "CODEX_HOME": str(home), "SCRIPTED_API_KEY": "sk-scripted-model"}
    return Harness(CODEX, binary(CODEX), env, home)


if __name__ == "__main__":  # `.ci/run`: install both before the suite, one line each
    failed = False
    for name in PACKAGES:
        got = install(name)
        failed = failed or not isinstance(got, Path)
        print(version(name) if isinstance(got, Path) else f"{name}: {got}")
    sys.exit(1 if failed else 0)
