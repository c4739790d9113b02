"""Usage records on a ref of shiftkit's own, one per clone (decision record 0065): no commit of
their own on the shared branch.

Usage that no unit's commit takes (a session's wrap-up after `finish`, a session that claimed
nothing) is moved from the worktree's waiting entries onto ``<usage prefix><clone id>``: a
commit whose tree holds ``ledger.jsonl``, this clone's lines, only ever appended, its parent
the ref's last commit. `sync` and the SessionEnd hook push it, and `claim`'s push carries it
(decision record 0072); `cost`, `report` and `audit` fetch every clone's into
``refs/shiftkit/remote-usage/<remote>/`` and read them with the committed ledger (each entry
once, by id; a line that is not an entry is left out, and `audit` names it). The namespace
is the claims ref prefix's sibling: ``…/claims/`` → ``…/usage/``.
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


def every(root: Path, claims_prefix: str) -> list[tuple[str, str]]:
    """(``<ref>:ledger.jsonl``, its text) of every clone's usage ref known here: those in the
    usage namespace itself (this clone's; every clone's in the remote's own repository) and
    those fetched into the mirror; a text seen under two names once (what `audit` reads)."""
    refs = [*gitio.refs(root, prefix(claims_prefix)), *gitio.refs(root, MIRROR)]
    found = gitio.read_blobs_with_ids(root, [f"{ref}:{FILE}" for ref in refs])
    result, seen = [], set()
    for ref, blob in zip(refs, found, strict=True):
        if blob is None or blob[0] in seen:
            continue
        seen.add(blob[0])
        result.append((f"{ref}:{FILE}", blob[1]))
    return result


def entries(root: Path, claims_prefix: str) -> list[Entry]:
    """Every usage-ref entry known here (`every`), each id once; a line that is not an entry
    is left out (`ledger.read_lines`, with which `audit` names such lines)."""
    return ledger.read_lines(every(root, claims_prefix))[0]


def append(root: Path, claims_prefix: str, clone: str, new: list[Entry]) -> bool:
    """Append ``new`` (the ones the ref lacks, by id) to this clone's ref, a new commit whose
    parent is the last; whether anything was added."""
    ref = own_ref(claims_prefix, clone)
    old = _text(root, ref)
    have = {e.id for e in ledger.read_lines([(ref, old)])[0]}  # (a bad line: not a crash)
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


def unshared(root: Path, remote: str, claims_prefix: str, clone: str) -> str | None:
    """The refspec that shares this clone's usage ref, for a push to ``remote`` that goes
    anyway (`claim`'s): None when there is no ref, or the remote had it as last fetched."""
    ref = own_ref(claims_prefix, clone)
    mirror = f"{MIRROR}{remote}/{clone}"
    listing = gitio.out(["for-each-ref", "--format=%(refname) %(objectname)", ref, mirror], root)
    found = dict(line.split(" ", 1) for line in listing.splitlines())
    oid = found.get(ref)
    if oid is None or found.get(mirror) == oid:
        return None
    return f"{ref}:{ref}"


# A fetch nobody watches asks for no password: it fails, and what was fetched last is read.
NO_PROMPT = {"GIT_TERMINAL_PROMPT": "0"}


def fetch(root: Path, remote: str, claims_prefix: str) -> str | None:
    """Every clone's usage ref from the remote into the mirror; None when done, else why
    not (git's reason)."""
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
        env=NO_PROMPT,
        check=False,
    )
    if proc.returncode == 0:
        return None
    from shiftkit.core import gitmsg

    return gitmsg.detail(proc.stderr, f"git fetch exited {proc.returncode}")
