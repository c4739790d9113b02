"""Usage records on a ref of shiftkit's own, one per clone (decision record 0065): no commit of
their own on the shared branch.

Usage that no unit's commit takes (a session's wrap-up after `finish`, a session that claimed
nothing) is moved from the worktree's waiting entries onto ``<usage prefix><clone id>``: a
commit whose tree holds ``ledger.jsonl``, this clone's lines, only ever appended, its parent
the ref's last commit. `sync` and the SessionEnd hook push it; `cost` and `report` fetch every
clone's into ``refs/shiftkit/remote-usage/<remote>/`` and read them with the committed ledger
(each entry once, by id). The namespace is the claims ref prefix's sibling: ``…/claims/`` →
``…/usage/``.
"""

from __future__ import annotations

from pathlib import Path

from shiftkit.core import ledger
from shiftkit.core.ledger import Entry
from shiftkit.edge import gitio

FILE = "ledger.jsonl"
MIRROR = "refs/shiftkit/remote-usage/"
_IDENTITY = {
    "GIT_AUTHOR_NAME": "shiftkit",
    "GIT_AUTHOR_EMAIL": "usage@shiftkit.invalid",
    "GIT_COMMITTER_NAME": "shiftkit",
    "GIT_COMMITTER_EMAIL": "usage@shiftkit.invalid",
}


def prefix(claims_prefix: str) -> str:
    """The usage refs' namespace beside the claims': ``refs/shiftkit/claims/`` →
    ``refs/shiftkit/usage/``, ``refs/heads/shiftkit-claims/`` → ``refs/heads/shiftkit-usage/``."""
    head, _, last = claims_prefix.rstrip("/").rpartition("/")
    name = last.replace("claims", "usage") if "claims" in last else f"{last}-usage"
    return f"{head}/{name}/"


def own_ref(claims_prefix: str, clone: str) -> str:
    return prefix(claims_prefix) + clone


def _text(root: Path, ref: str) -> str:
    return gitio.read_blobs(root, [f"{ref}:{FILE}"])[0] or ""


def texts(root: Path, claims_prefix: str, clone: str) -> list[tuple[str, str]]:
    """(ref, ledger text) of this clone's own ref and of every clone's as last fetched."""
    refs = [own_ref(claims_prefix, clone), *gitio.refs(root, MIRROR)]
    found = gitio.read_blobs(root, [f"{ref}:{FILE}" for ref in refs])
    return [(ref, text) for ref, text in zip(refs, found, strict=True) if text]


def entries(root: Path, claims_prefix: str, clone: str) -> list[Entry]:
    """Every usage-ref entry known here; a ref whose text does not parse is skipped (it is
    nobody's bookkeeping to trust)."""
    from shiftkit.core.errors import BadInput

    result: list[Entry] = []
    for ref, text in texts(root, claims_prefix, clone):
        try:
            result += ledger.parse(text, ref)
        except BadInput:
            continue
    return result


def append(root: Path, claims_prefix: str, clone: str, new: list[Entry]) -> bool:
    """Append ``new`` (the ones the ref lacks, by id) to this clone's ref, a new commit whose
    parent is the last; whether anything was added."""
    ref = own_ref(claims_prefix, clone)
    old = _text(root, ref)
    have = {e.id for e in ledger.parse(old, ref)} if old else set()
    fresh = [e for e in new if e.id not in have]
    if not fresh:
        return False
    text = (old if not old or old.endswith("\n") else old + "\n") + ledger.dumps(fresh)
    blob = gitio.run(["hash-object", "-w", "--stdin"], root, input=text).stdout.strip()
    tree = gitio.run(["mktree"], root, input=f"100644 blob {blob}\t{FILE}\n").stdout.strip()
    parent = gitio.refs(root, ref).get(ref)
    args = ["commit-tree", tree, "-m", f"usage of clone {clone}"]
    if parent:
        args += ["-p", parent]
    commit = gitio.run(args, root, env=_IDENTITY).stdout.strip()
    gitio.run(["update-ref", ref, commit, *([parent] if parent else [])], root)
    return True


def push(root: Path, remote: str, claims_prefix: str, clone: str) -> str | None:
    """Push this clone's usage ref (it is this clone's alone: a plain push that only adds);
    None when done or when there is nothing to push, else git's reason."""
    ref = own_ref(claims_prefix, clone)
    if not gitio.refs(root, ref):
        return None
    proc = gitio.run(
        ["push", "--quiet", "--porcelain", "--no-verify", remote, f"{ref}:{ref}"],
        root,
        check=False,
    )
    if proc.returncode == 0:
        return None
    from shiftkit.core import gitmsg

    return gitmsg.detail(proc.stderr + proc.stdout, f"git push exited {proc.returncode}")


def fetch(root: Path, remote: str, claims_prefix: str) -> bool:
    """Every clone's usage ref from the remote into the mirror; False when it cannot."""
    proc = gitio.run(
        [
            "fetch",
            "--quiet",
            "--prune",
            "--no-tags",
            remote,
            f"+{prefix(claims_prefix)}*:{MIRROR}{remote}/*",
        ],
        root,
        check=False,
    )
    return proc.returncode == 0
