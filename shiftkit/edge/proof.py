"""`audit --strict` under the `signed` policy: the policy at each judged commit and its
parents, read in one batch, and the signature of each commit that set `signed` checked
against its own allowed signers (`core.proof`, decision record 0101)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from shiftkit.core import proof
from shiftkit.core.config import CONFIG_FILE, parse_or_default
from shiftkit.core.errors import BadInput
from shiftkit.edge import gitio, judge, revisions


class Proof(NamedTuple):
    verdict: proof.Verdict
    signers: dict[str, str]  # each good anchor -> the signer git names (its principal)


def _policy(text: str | None) -> str:
    try:
        return parse_or_default(text).people.policy
    except BadInput:
        return "trailer"  # (a config that does not parse judges with the defaults)


def policy_at(root: Path | str, rev: str) -> str:
    """The people policy the tree of ``rev`` sets."""
    return _policy(gitio.read_blobs(root, [f"{rev}:{CONFIG_FILE}"])[0])


def prove(root: Path, commits: Sequence[revisions.Commit], acted: set[str]) -> Proof:
    """`core.proof.verdict` over ``commits`` (oldest first); ``acted``: those with a person
    action."""
    revs = list(
        dict.fromkeys([*(c.oid for c in commits), *(p for c in commits for p in c.parents)])
    )
    texts = gitio.read_blobs(root, [f"{rev}:{CONFIG_FILE}" for rev in revs])
    parsed: dict[str | None, str] = {}
    policy = {
        rev: parsed.setdefault(text, _policy(text)) for rev, text in zip(revs, texts, strict=True)
    }
    judged = [
        proof.Judged(c.oid, policy[c.oid], tuple(policy[p] for p in c.parents), c.oid in acted)
        for c in commits
    ]
    problems = {oid: anchor_problem(root, oid) for oid in proof.anchors(judged)}
    verdict = proof.verdict(
        judged, problems, lambda older, newer: gitio.is_ancestor(root, older, newer)
    )
    return Proof(verdict, {oid: signer(root, oid) for oid in verdict.anchors})


def anchor_problem(root: Path, oid: str) -> str | None:
    """None when ``oid`` is signed by a key its own `.shiftkit/allowed_signers` lists."""
    signers = gitio.read_blobs(root, [f"{oid}:{judge.SIGNERS_FILE}"])[0]
    if not signers or not signers.strip():
        return f"its tree lists no key in {judge.SIGNERS_FILE}"
    problem = judge.signature_problem(root, oid, signers)
    return problem.replace(" (at the parent)", " (its own)") if problem else None


def signer(root: Path, oid: str) -> str:
    """Who signed ``oid`` as its own allowed signers name them, with the key's fingerprint."""
    signers = gitio.read_blobs(root, [f"{oid}:{judge.SIGNERS_FILE}"])[0] or ""
    fd, path = tempfile.mkstemp(prefix="shiftkit-signers-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(signers)
        shown = gitio.run(
            ["-c", f"gpg.ssh.allowedSignersFile={path}", "log", "-1", "--format=%GS %GF", oid],
            root,
            check=False,
        ).stdout.strip()
    finally:
        os.unlink(path)
    return shown or "?"
