"""The agents' clones for `shiftkit run --parallel N`: one ordinary clone of the claims
remote each, made like a person's (`git clone`, then `shiftkit install-hooks`), reused on the
next run. Nothing private joins them: only the remote (decision record 0113)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from shiftkit.core.errors import BadInput, Refused
from shiftkit.edge import gitio

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^[^/]+@[^/]+:")


def remote_url(root: Path, name: str) -> str:
    """The claims remote's URL as a clone elsewhere can use it (a relative path made
    absolute: it was relative to this repository)."""
    proc = gitio.run(["remote", "get-url", name], root, check=False)
    url = proc.stdout.strip()
    if proc.returncode != 0 or not url:
        raise BadInput(
            f".shiftkit.toml: 'shiftkit.claims.remote' names {name!r}, which is not a remote "
            f"of this repository (`git remote -v`)"
        )
    if _SCHEME.match(url) or Path(url).is_absolute():
        return url
    return str((root / url).resolve())


def default_folder(root: Path) -> Path:
    """Beside the repository, never inside it (a clone in the work tree would be collected
    by its test runner and its tools): ``../<name>-agents``."""
    return root.parent / f"{root.name}-agents"


def prepare(folder: Path, url: str, remote: str, count: int) -> list[tuple[Path, bool]]:
    """``count`` clones ``folder/agent-1`` … of ``url`` (its remote named ``remote``, as in
    the person's clone), each with shiftkit's hooks: (path, made now). An existing clone of
    the same remote is reused as it is (its loop catches up itself)."""
    places: list[tuple[Path, bool]] = []
    for number in range(1, count + 1):
        place = folder / f"agent-{number}"
        if (place / ".git").exists():
            proc = gitio.run(["remote", "get-url", remote], place, check=False)
            if proc.returncode != 0 or proc.stdout.strip() != url:
                raise Refused(
                    f"{place} is a clone, but not of {url} (its {remote!r} is "
                    f"{proc.stdout.strip() or 'missing'}); move it away or give "
                    f"`--clones` another folder"
                )
            places.append((place, False))
            continue
        if place.exists() and any(place.iterdir()):
            raise Refused(
                f"{place} exists and is not a clone; move it away or give `--clones` another folder"
            )
        folder.mkdir(parents=True, exist_ok=True)
        cloned = gitio.run(
            ["clone", "--quiet", "--origin", remote, url, str(place)], folder, check=False
        )
        if cloned.returncode != 0:
            raise Refused(f"could not clone {url} into {place}: {cloned.stderr.strip()}")
        hooks = subprocess.run(
            [sys.executable, "-m", "shiftkit", "install-hooks", "--force"],
            cwd=place,
            capture_output=True,
            text=True,
            check=False,
        )
        if hooks.returncode != 0:
            said = (hooks.stderr or hooks.stdout).strip().splitlines()
            raise Refused(
                f"{place}: `shiftkit install-hooks` failed ({said[-1] if said else 'no output'})"
            )
        places.append((place, True))
    return places
