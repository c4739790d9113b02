"""The parent is the judge: the settings, signers and policy a change is judged by, read from
its parent commit, never from the change itself or the work tree (SPEC sections 7 and 11).

The hooks, `finish`, `audit` and the reference-transaction hook all come here for them.
"""

from __future__ import annotations

import os

from shiftkit.core.config import (
    CONFIG_FILE,
    Config,
    enforcement_changes,
    parse_or_default,
    setting,
)
from shiftkit.core.errors import BadInput
from shiftkit.core.rules import Judge
from shiftkit.edge import gitio

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
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
    # the allowed_signers text of each parent whose policy is "signed" (a merge: every one
    # of them checks the signature); empty: the first parent's ``signers``
    signed: tuple[str | None, ...] = ()


class Other(NamedTuple):
    """A merge's parent after the first: its (config, signers) texts, whether it is in
    protocol history (holds the config, the signers or a feature list), and the
    (config, signers) texts at its common ancestors with the first parent."""

    texts: tuple[str | None, str | None]
    protocol: bool
    bases: tuple[tuple[str | None, str | None], ...]


def names(cfg: Config) -> tuple[str, str, str]:
    return (cfg.features, cfg.progress, cfg.log.archive)


def _config(text: str | None, where: str) -> tuple[Config, str | None]:
    try:
        return parse_or_default(text, f"{CONFIG_FILE} {where}"), None
    except BadInput as exc:
        return Config(), exc.message


def judging(
    parent_texts: Sequence[str | None],
    proposed_texts: Sequence[str | None],
    has_parent: bool,
    others: Sequence[Other] = (),
    first_protocol: bool = True,
) -> Judging:
    """From the (config, signers) texts at the parent and in the proposed tree. A parent
    config that does not parse (committed past the hooks) judges with the defaults.
    ``others``: a merge's other parents — every parent is a judge (`merge_judge`)."""
    parent_config_text, parent_signers = parent_texts
    proposed_config_text, proposed_signers = proposed_texts
    proposed, problem = _config(proposed_config_text, "in this change")
    if not has_parent:
        return Judging(proposed, proposed, Judge(config_problem=problem), proposed_signers)
    parent, _ = _config(parent_config_text, "at the parent")
    if others:
        sides = [(parent, parent_signers, first_protocol)] + [
            (_config(o.texts[0], "at a parent")[0], o.texts[1], o.protocol) for o in others
        ]
        bases = [tuple((_config(b[0], "")[0], b[1]) for b in o.bases) for o in others]
        judge, signed = merge_judge(sides, bases, (proposed, proposed_signers), problem)
        return Judging(parent, proposed, judge, parent_signers, signed)
    changes = tuple(enforcement_changes(parent, proposed)) if problem is None else ()
    judge = Judge(changes, problem, parent_signers != proposed_signers, parent.people.policy)
    return Judging(parent, proposed, judge, parent_signers)


Settings = tuple[Config, "str | None"]


def merge_judge(
    parents: Sequence[tuple[Config, str | None, bool]],
    bases: Sequence[Sequence[Settings]],
    proposed: Settings,
    problem: str | None,
) -> tuple[Judge, tuple[str | None, ...]]:
    """Every parent is a judge (decision record 0028): a merge's settings and signers are
    compared with each parent in protocol history (``parents``: config, signers, in protocol
    history), the first included. A value that differs from a parent's is a change against
    that parent, unless another parent changed it since their common ancestors (``bases``:
    the settings there, for each parent after the first) while this one kept it: that change
    was judged on its own side. The strictest policy of the judges applies, and under
    "signed" each signed judge's allowed signers must accept the signature. Returns the
    judge and those allowed-signers texts."""
    changes: dict[str, None] = {}
    signers_changed = False
    signed: list[str | None] = []
    policies = []

    def between(i: int, m: int) -> Sequence[Settings]:
        if i == 0 and m > 0:
            return bases[m - 1]
        if m == 0 and i > 0:
            return bases[i - 1]
        return ()  # (two parents after the first: their ancestors are not read; strict)

    def excused(value: object, i: int, read: Callable[[Settings], object]) -> bool:
        for m, (cfg, signers, _) in enumerate(parents):
            found = between(i, m)
            if m == i or not found or read((cfg, signers)) != value:
                continue
            mine = read((parents[i][0], parents[i][1]))
            if all(read(b) == mine for b in found):
                return True
        return False

    for i, (cfg, signers, protocol) in enumerate(parents):
        if not protocol:
            continue
        policies.append(cfg.people.policy)
        if cfg.people.policy == "signed":
            signed.append(signers)
        if problem is None:
            for key in enforcement_changes(cfg, proposed[0]):
                value = setting(proposed[0], key)
                if not excused(value, i, lambda s, k=key: setting(s[0], k)):  # type: ignore[misc]
                    changes[key] = None
        if signers != proposed[1] and not excused(proposed[1], i, lambda s: s[1]):
            signers_changed = True
    policy = "signed" if "signed" in policies else parents[0][0].people.policy
    judge = Judge(tuple(changes), problem, signers_changed, policy)
    return judge, tuple(signed)


def at_revisions(
    root: Path | str, parent: str | None, proposed_prefix: str, others: Sequence[str] = ()
) -> Judging:
    """``parent``: a commit (None for a root commit); ``proposed_prefix``: ``REV:`` for a
    commit or ``:`` for the index; ``others``: a merge's other parents."""
    specs = [f"{proposed_prefix}{name}" for name in SETTINGS_FILES]
    if parent is not None:
        specs = [f"{parent}:{name}" for name in SETTINGS_FILES] + specs
    texts = gitio.read_blobs(root, specs)
    if parent is None:
        return judging((None, None), texts, has_parent=False)
    if not others:
        return judging(texts[:2], texts[2:], has_parent=True)
    return _merge_judging(root, parent, others, texts[:2], texts[2:])


def _merge_judging(
    root: Path | str,
    first: str,
    others: Sequence[str],
    first_texts: Sequence[str | None],
    proposed_texts: Sequence[str | None],
) -> Judging:
    """`judging` of a merge: the settings at every parent and at the common ancestors of
    each other parent with the first."""
    bases = [gitio.merge_bases(root, first, other) for other in others]
    revs = [*others, *(oid for found in bases for oid in found)]
    texts = gitio.read_blobs(root, [f"{rev}:{name}" for rev in revs for name in SETTINGS_FILES])
    pairs = [(texts[2 * i], texts[2 * i + 1]) for i in range(len(revs))]
    protocol = protocol_parents(
        root, [first, *others], [(first_texts[0], first_texts[1]), *pairs[: len(others)]]
    )
    result, at = [], len(others)
    for index, found in enumerate(bases):
        result.append(Other(pairs[index], protocol[index + 1], tuple(pairs[at : at + len(found)])))
        at += len(found)
    return judging(first_texts, proposed_texts, True, result, protocol[0])


def protocol_parents(
    root: Path | str, parents: Sequence[str], texts: Sequence[tuple[str | None, str | None]]
) -> list[bool]:
    """Whether each parent is in protocol history: it holds the config, the allowed
    signers, or the feature list its config names."""
    names = [_config(config, "")[0].features for config, _ in texts]
    held = gitio.object_ids(
        root, [f"{rev}:{name}" for rev, name in zip(parents, names, strict=True)]
    )
    return [
        config is not None or signers is not None or found is not None
        for (config, signers), found in zip(texts, held, strict=True)
    ]


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


def signatures_problem(root: Path | str, commit: str, settings: Judging) -> str | None:
    """`signature_problem` against each judge under the "signed" policy (a merge's parents:
    every one of them), or the first parent's signers."""
    for signers in settings.signed or (settings.signers,):
        problem = signature_problem(root, commit, signers)
        if problem is not None:
            return problem
    return None
