"""An `init` that installs the project never rewrites the developer's environment (issue 35
item 2; decision record 0098).

`init = "pip install -e ."` in a temporary checkout ran the developer's `pip`: it replaced the
developer's editable install of the project with one pointing into the checkout, which was
deleted a moment later (`import PKG` failed afterwards). So a checkout whose `init` runs gets a
private virtual environment beside it, layered over the interpreter `python3` on the verifier's
`PATH` names: created without pip (`python -m venv --without-pip`, tens of milliseconds), its
`site-packages` holding one `.pth` that adds the developer's environment's `site-packages`
after its own (so pytest, pip and every dependency are found), and `pip`/`pip3` scripts that
run that pip *in* the overlay. Its `bin` goes first on `PATH` and `VIRTUAL_ENV` names it for
`init` and every verifier in that checkout: what `init` installs lands in the overlay (pip
leaves a distribution of the developer's environment alone: "outside environment") and is
removed with the checkout. Nothing of the developer's environment is written.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

# checkout folder -> (the overlay's folder, the developer's environment's prefix)
_OVERLAYS: dict[str, tuple[str, str]] = {}

_PROBE = (
    "import sys, sysconfig, json; p = sysconfig.get_paths(); "
    "print(json.dumps([getattr(sys, '_base_executable', sys.executable), p['purelib'], "
    "p['platlib'], sys.prefix, '%d.%d.%d' % sys.version_info[:3], "
    "'python%d.%d' % sys.version_info[:2]]))"
)
PERSON_ENVIRONMENT = "SHIFTKIT_PERSON_ENVIRONMENT"  # (the imports shim leaves it in place)
_PIP = "#!{python}\nimport sys\nfrom pip._internal.cli.main import main\nsys.exit(main())\n"


def make(checkout: Path, env: dict[str, str]) -> None:
    """A private environment for ``checkout`` over the `python3` ``env``'s `PATH` finds
    (nothing when there is none, or it cannot make one: `init` then runs as before). Laid out
    by hand as `venv` would (`pyvenv.cfg`, `bin/python` linking the base interpreter, an empty
    `site-packages`): one probe of the interpreter, no second Python start."""
    import json

    found = env.get("PATH")
    interpreter = shutil.which("python3", path=found) or shutil.which("python", path=found)
    if interpreter is None or str(checkout) in _OVERLAYS:
        return
    clean = {k: v for k, v in env.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    try:
        probed = subprocess.run(
            [interpreter, "-c", _PROBE], capture_output=True, text=True, env=clean, timeout=60
        )
        base, purelib, platlib, prefix, version, name = json.loads(probed.stdout)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return
    folder = checkout.parent / "venv"
    site = folder / "lib" / name / "site-packages"
    bin_folder = folder / "bin"
    site.mkdir(parents=True, exist_ok=True)
    bin_folder.mkdir(exist_ok=True)
    home = os.path.dirname(base)
    (folder / "pyvenv.cfg").write_text(
        f"home = {home}\ninclude-system-site-packages = false\nversion = {version}\n",
        encoding="utf-8",
    )
    for link in ("python", "python3", name):
        (bin_folder / link).symlink_to(base)
    python = bin_folder / "python"
    directories = [purelib] + ([platlib] if platlib != purelib else [])
    lines = "".join(f"import site; site.addsitedir({entry!r})\n" for entry in directories)
    # (named to sort after what `pip install -e` writes there: the overlay's own comes first)
    (site / "zz_shiftkit_person_environment.pth").write_text(lines, encoding="utf-8")
    for script_name in ("pip", "pip3"):
        script = bin_folder / script_name
        script.write_text(_PIP.format(python=python), encoding="utf-8")
        script.chmod(0o755)
    _OVERLAYS[str(checkout)] = (str(folder), prefix)


def forget(checkout: Path) -> None:
    _OVERLAYS.pop(str(checkout), None)


def variables(cwd: Path, env: dict[str, str]) -> dict[str, str]:
    """``env`` with the overlay of checkout ``cwd`` first on `PATH` (unchanged when it has
    none)."""
    found = _OVERLAYS.get(str(cwd))
    if found is None:
        return env
    folder, prefix = found
    path = os.pathsep.join([str(Path(folder, "bin")), *([env["PATH"]] if env.get("PATH") else [])])
    return {**env, "PATH": path, "VIRTUAL_ENV": folder, PERSON_ENVIRONMENT: prefix}
