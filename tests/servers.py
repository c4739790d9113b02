"""Real git servers on 127.0.0.1, for the tests and the benchmarks: `git daemon`, and
`git http-backend` run as CGI by lighttpd (the distribution's package). Each serves the bare
repositories under one folder, with push enabled, in its own process group, so ``stop``
ends the server and every process it started."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

TRANSPORTS = ("daemon", "http")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _git(args: list[str], cwd: Path) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


class Server:
    """One server process serving ``base``; ``url(name)`` is the URL of ``base/name``."""

    scheme = ""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def url(self, name: str) -> str:
        raise NotImplementedError

    def command(self) -> list[str]:
        raise NotImplementedError

    def serve(self, bare: Path) -> None:
        """Make ``bare`` (under ``base``) take pushes over this transport."""

    def start(self) -> None:
        log = (self.base / f"{self.scheme}-server.log").open("ab")
        self.proc = subprocess.Popen(self.command(), start_new_session=True, stdout=log, stderr=log)
        log.close()
        (self.base / "server.pgid").write_text(str(self.proc.pid))
        for _ in range(200):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        log_text = (self.base / f"{self.scheme}-server.log").read_text(errors="replace")
        raise AssertionError(f"{self.scheme} server did not start on {self.port}: {log_text}")

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        self.proc = None


class Daemon(Server):
    """`git daemon --enable=receive-pack`."""

    scheme = "git"

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"

    def command(self) -> list[str]:
        return [
            "git",
            "daemon",
            "--reuseaddr",
            "--export-all",
            "--enable=receive-pack",
            f"--base-path={self.base}",
            "--listen=127.0.0.1",
            f"--port={self.port}",
            str(self.base),
        ]


def lighttpd() -> str | None:
    """The lighttpd binary (Debian puts it in /usr/sbin, often off a user's PATH)."""
    found = shutil.which("lighttpd") or shutil.which("lighttpd", path="/usr/sbin:/usr/local/sbin")
    return found


def http_backend() -> Path | None:
    exec_path = subprocess.run(
        ["git", "--exec-path"], capture_output=True, text=True, check=False
    ).stdout.strip()
    backend = Path(exec_path) / "git-http-backend"
    return backend if exec_path and backend.is_file() else None


def http_missing() -> str | None:
    """Why the HTTP server cannot run here (None: it can)."""
    if lighttpd() is None:
        return "lighttpd is not installed (apt-get install lighttpd; .ci/run installs it)"
    if http_backend() is None:
        return "git-http-backend is not in `git --exec-path`"
    return None


LIGHTTPD_CONF = """\
server.document-root = "{base}"
server.bind = "127.0.0.1"
server.port = {port}
server.errorlog = "{base}/http-error.log"
server.modules = ("mod_alias", "mod_cgi", "mod_setenv")
alias.url = ("/git" => "{backend}")
$HTTP["url"] =~ "^/git" {{
  cgi.assign = ("" => "")
  setenv.set-environment = (
    "GIT_PROJECT_ROOT" => "{base}",
    "GIT_HTTP_EXPORT_ALL" => "1",
    "PATH" => "{path}",
  )
}}
"""


class Http(Server):
    """lighttpd with mod_cgi running `git http-backend` (smart HTTP, anonymous push)."""

    scheme = "http"

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/git/{name}"

    def command(self) -> list[str]:
        binary, backend = lighttpd(), http_backend()
        assert binary is not None and backend is not None, http_missing()
        conf = self.base / "lighttpd.conf"
        conf.write_text(
            LIGHTTPD_CONF.format(
                base=self.base, port=self.port, backend=backend, path=os.environ["PATH"]
            )
        )
        return [binary, "-D", "-f", str(conf)]

    def serve(self, bare: Path) -> None:
        # Without an authenticated user, http-backend takes pushes only when told to.
        _git(["config", "http.receivepack", "true"], bare)


def server(transport: str, base: Path) -> Server:
    return {"daemon": Daemon, "http": Http}[transport](base)
