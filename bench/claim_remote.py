"""What a remote adds to a claim: `shiftkit claim` and `shiftkit release` through a real
server on 127.0.0.1 (`git daemon`; `git http-backend` behind lighttpd), less the same commands
with no claims remote, in units of one `git push` of a new ref to the same server. Bar 1.5 for
the claim (issue 20: one lease push, where it once took about three round trips) and for the
release (one lease push); the pair is reported. The claim push also looks at the remote's
branch (ADR 0041: a no-op lease on its last fetched id), so a claim whose branch did not move
is that one push and nothing else. Every case is measured side by side in one run; the
servers are started here and always stopped.

Run alone: python bench/claim_remote.py [--rounds N]
"""

from __future__ import annotations

import itertools
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import servers
from _common import (
    NO_HOOKS,
    Row,
    bench_env,
    make_project,
    ms,
    scratch,
    sh,
    side_by_side,
    time_once,
)

BAR = 1.5
FEATURE = "F0003"  # make_project's list: the second half does not pass yet


def _set_remote(project: Path, remote: str, env: dict[str, str]) -> None:
    config = project / ".shiftkit.toml"
    text = config.read_text()
    config.write_text(re.sub(r'^remote = "[^"]*"', f'remote = "{remote}"', text, flags=re.M))
    sh(["git", "add", ".shiftkit.toml"], project, env)
    message = f"Bench: claims through {remote!r}"
    sh(["git", *NO_HOOKS, "commit", "-q", "--no-verify", "-m", message], project, env)


def _clone(url: str, place: Path, env: dict[str, str], remote: str) -> Path:
    sh(["git", "clone", "-q", url, str(place)], place.parent, env)
    if not remote:
        _set_remote(place, "", env)  # (the served project names origin: take it back out)
    sh(["shiftkit", "install-hooks", "--force"], place, env)
    sh(["shiftkit", "start", "--no-check"], place, env)
    return place


class Pair:
    """`shiftkit claim` then `shiftkit release` in one clone, each timed on its own (the
    first pair, side_by_side's warm-up, is left out)."""

    def __init__(self, place: Path, env: dict[str, str]) -> None:
        self.place, self.env = place, env
        self.claims: list[float] = []
        self.releases: list[float] = []

    def __call__(self) -> None:
        self.claims.append(
            time_once(lambda: sh(["shiftkit", "claim", FEATURE], self.place, self.env))
        )
        self.releases.append(time_once(lambda: sh(["shiftkit", "release"], self.place, self.env)))

    def medians(self) -> tuple[float, float]:
        return statistics.median(self.claims[1:]), statistics.median(self.releases[1:])


def _push_new_ref(place: Path, url: str, env: dict[str, str]) -> Callable[[], None]:
    count = itertools.count()

    def action() -> None:
        ref = f"refs/bench/push-{next(count)}"
        sh(["git", "push", "-q", "--no-verify", url, f"HEAD:{ref}"], place, env)

    return action


def figures(rounds: int = 11) -> list[Row]:
    missing = servers.http_missing()
    transports = [t for t in servers.TRANSPORTS if t != "http" or missing is None]
    home = scratch()
    env = bench_env(home)
    project = make_project(home, "project", 4, env)
    _set_remote(project, "origin", env)
    bare = home / "remote.git"
    sh(["git", "clone", "-q", "--bare", str(project), str(bare)], home, env)
    running: dict[str, servers.Server] = {}
    for name in transports:  # each server its own folder (its log, its pgid file)
        base = home / f"served-{name}"
        base.mkdir()
        sh(["git", "clone", "-q", "--bare", str(project), str(base / "remote.git")], home, env)
        running[name] = servers.server(name, base)
        running[name].serve(base / "remote.git")
    try:
        for server in running.values():
            server.start()
        pairs = {"no remote": Pair(_clone(str(bare), home / "alone", env, ""), env)}
        actions: dict[str, Callable[[], None]] = {"no remote": pairs["no remote"]}
        for name, server in running.items():
            url = server.url("remote.git")
            pairs[name] = Pair(_clone(url, home / name, env, "origin"), env)
            actions[name] = pairs[name]
            pusher = home / f"pusher-{name}"
            sh(["git", "clone", "-q", str(bare), str(pusher)], home, env)
            actions[f"push {name}"] = _push_new_ref(pusher, url, env)
        medians = side_by_side(actions, rounds)
    finally:
        for server in running.values():
            server.stop()
    if missing is not None:
        print(f"bench/claim_remote.py: no HTTP row: {missing}", file=sys.stderr)
    alone_claim, alone_release = pairs["no remote"].medians()
    alone = medians["no remote"]
    rows = []
    for name, server in running.items():
        push = medians[f"push {name}"]
        claim, release = pairs[name].medians()
        where = f"{server.scheme}://"
        rows += [
            Row(
                f"what a remote adds to a claim, {where} (in pushes)",
                (claim - alone_claim) / push,
                f"({ms(claim)} - {ms(alone_claim)} no remote) / {ms(push)} one push",
                BAR,
            ),
            Row(
                f"what a remote adds to a release, {where} (in pushes)",
                (release - alone_release) / push,
                f"({ms(release)} - {ms(alone_release)} no remote) / {ms(push)} one push",
                BAR,
            ),
            Row(
                f"what a remote adds to claim + release, {where} (in pushes)",
                (medians[name] - alone) / push,
                f"({ms(medians[name])} - {ms(alone)} no remote) / {ms(push)} one push",
            ),
        ]
    return rows


if __name__ == "__main__":
    import argparse

    from _common import print_rows

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=11)
    rows = figures(parser.parse_args().rounds)
    print_rows("bench/claim_remote.py", rows)
