"""The parent is the judge: the settings, signers and policy a change is judged by, read from
its parent commit, never from the change itself or the work tree (SPEC sections 7 and 11).

The hooks, `finish`, `audit` and the reference-transaction hook all come here for them.
"""

from __future__ import annotations

import os

from shiftkit.core.config import CONFIG_FILE, Config, enforcement_changes, parse_or_default
from shiftkit.core.errors import BadInput
from shiftkit.core.rules import Judge
from shiftkit.edge import gitio

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from typing import NamedTuple
else:
    from typing import NamedTuple

SIGNERS_FILE = ".shiftkit/allowed_signers"
SETTINGS_FILES = (CONFIG_FILE, SIGNERS_FILE)


class Judging(NamedTuple):
    """The parent's configuration (the judge's), the proposed one, and what changed."""

    parent: Config
    proposed: Config
    judge: Judge
    signers: str | None  # the parent's allowed_signers text


def names(cfg: Config) -> tuple[str, str, str]:
    return (cfg.features, cfg.progress, cfg.log.archive)


def _config(text: str | None, where: str) -> tuple[Config, str | None]:
    try:
        return parse_or_default(text, f"{CONFIG_FILE} {where}"), None
    except BadInput as exc:
        return Config(), exc.message


def judging(
    parent_texts: Sequence[str | None], proposed_texts: Sequence[str | None], has_parent: bool
) -> Judging:
    """From the (config, signers) texts at the parent and in the proposed tree. A parent
    config that does not parse (committed past the hooks) judges with the defaults."""
    parent_config_text, parent_signers = parent_texts
    proposed_config_text, proposed_signers = proposed_texts
    proposed, problem = _config(proposed_config_text, "in this change")
    if not has_parent:
        return Judging(proposed, proposed, Judge(config_problem=problem), proposed_signers)
    parent, _ = _config(parent_config_text, "at the parent")
    changes = tuple(enforcement_changes(parent, proposed)) if problem is None else ()
    judge = Judge(changes, problem, parent_signers != proposed_signers, parent.people.policy)
    return Judging(parent, proposed, judge, parent_signers)


def at_revisions(root: Path | str, parent: str | None, proposed_prefix: str) -> Judging:
    """``parent``: a commit (None for a root commit); ``proposed_prefix``: ``REV:`` for a
    commit or ``:`` for the index."""
    specs = [f"{proposed_prefix}{name}" for name in SETTINGS_FILES]
    if parent is not None:
        specs = [f"{parent}:{name}" for name in SETTINGS_FILES] + specs
    texts = gitio.read_blobs(root, specs)
    if parent is None:
        return judging((None, None), texts, has_parent=False)
    return judging(texts[:2], texts[2:], has_parent=True)


_SIGNATURE_PROBLEMS = {
    "N": "the commit is not signed",
    "B": "its signature is bad",
    "U": "it is signed by a key that .shiftkit/allowed_signers (at the parent) does not list",
    "X": "its signature has expired",
    "Y": "it is signed by an expired key",
    "R": "it is signed by a revoked key",
    "E": "its signature cannot be checked here (missing key or tool)",
}


def signature_problem(root: Path | str, commit: str, signers: str | None) -> str | None:
    """None when ``commit`` carries a good signature by a key in ``signers`` (the parent's
    allowed_signers text), checked by git itself; else why not."""
    import tempfile

    if not signers or not signers.strip():
        return "the parent commit has no .shiftkit/allowed_signers to check a signature against"
    fd, path = tempfile.mkstemp(prefix="shiftkit-signers-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(signers)
        shown = gitio.run(
            [
                "-c",
                f"gpg.ssh.allowedSignersFile={path}",
                "log",
                "-1",
                "--format=%G?%x00%GF%x00%GP",
                commit,
            ],
            root,
            check=False,
        )
    finally:
        os.unlink(path)
    status, _, rest = shown.stdout.strip().partition("\0")
    fingerprint, _, primary = rest.partition("\0")
    if status != "G":
        return _SIGNATURE_PROBLEMS.get(status, f"git reports signature status {status!r}")
    if fingerprint.startswith("SHA256:"):
        return None  # SSH: git found the key among the allowed signers' principals
    # GPG: git trusts its keyring; the project lists the fingerprints it accepts.
    listed = signers.upper()
    if any(fp and fp.upper() in listed for fp in (fingerprint, primary)):
        return None
    return _SIGNATURE_PROBLEMS["U"]
