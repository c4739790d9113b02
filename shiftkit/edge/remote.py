"""Claims across machines: the remote's `refs/shiftkit/claims/*` are the lock.

Machines that share nothing but a git remote agree through it alone. A claim is pushed with
`--force-with-lease=<ref>:` (the server takes it only if the ref does not exist there), a
steal or a release is leased on the object it replaces, and `git ls-remote` confirms the
server holds our object before anyone is told the feature is theirs. The remote's claims are
fetched into `refs/shiftkit/remote-claims/<remote>/`, so looking never touches the local
claim refs that the commit hooks compare against.
"""

from __future__ import annotations

from pathlib import Path

from shiftkit.core.claim import ClaimRecord
from shiftkit.core.errors import ShiftkitError
from shiftkit.edge import claims, gitio

MIRROR = "refs/shiftkit/remote-claims/"


class Unreachable(ShiftkitError):
    """The remote cannot be asked: nothing was claimed or released anywhere."""

    def __init__(self, remote: str, what: str, stderr: str) -> None:
        detail = stderr.strip().splitlines()[-1] if stderr.strip() else "no answer"
        super().__init__(
            f"claims remote {remote!r}: could not {what} ({detail}); nothing was claimed or "
            f"released — check the remote (`git ls-remote {remote}`) and try again",
            exit_code=1,
        )


def mirror_prefix(remote: str) -> str:
    return f"{MIRROR}{remote}/"


def require_remote(root: Path, remote: str) -> None:
    if gitio.run(["remote", "get-url", remote], root, check=False).returncode != 0:
        from shiftkit.core.errors import BadInput

        raise BadInput(
            f".shiftkit.toml: 'shiftkit.claims.remote' names {remote!r}, which is not a remote "
            f"of this repository (`git remote -v`); add it or leave the key empty"
        )


def fetch(root: Path, remote: str) -> dict[str, claims.Claim]:
    """The remote's claims now (the mirror is pruned to exactly the server's refs)."""
    prefix = mirror_prefix(remote)
    proc = gitio.run(
        ["fetch", "--quiet", "--prune", "--no-tags", remote, f"+{claims.PREFIX}*:{prefix}*"],
        root,
        check=False,
    )
    if proc.returncode != 0:
        raise Unreachable(remote, "fetch its claims", proc.stderr)
    return {
        name[len(prefix) :]: claims.read_claim(root, name[len(prefix) :], oid)
        for name, oid in gitio.refs(root, prefix).items()
    }


def server_oid(root: Path, remote: str, feature_id: str) -> str | None:
    ref = claims.ref_name(feature_id)
    proc = gitio.run(["ls-remote", "--refs", remote, ref], root, check=False)
    if proc.returncode != 0:
        raise Unreachable(remote, "read its claim refs", proc.stderr)
    for line in proc.stdout.splitlines():
        oid, _, name = line.partition("\t")
        if name == ref:
            return oid
    return None


def _push(root: Path, remote: str, refspec: str, ref: str, expected: str) -> bool:
    """Push under a lease on ``expected`` ('' = the ref must not exist); False when the
    server's ref was not what we expected."""
    proc = gitio.run(
        # --no-verify: a claim ref carries no work, so the pre-push audit has nothing to judge
        [
            "push",
            "--quiet",
            "--porcelain",
            "--no-verify",
            f"--force-with-lease={ref}:{expected}",
            remote,
            refspec,
        ],
        root,
        check=False,
    )
    if proc.returncode == 0:
        return True
    # `--porcelain` marks a ref the server would not take with "!": a lease that did not
    # hold, or a concurrent push that locked the ref first ("[remote rejected]"). Any other
    # failure means we never got an answer.
    if any(line.startswith("!") and ref in line for line in proc.stdout.splitlines()):
        return False
    raise Unreachable(remote, f"push {ref}", proc.stderr or proc.stdout)


def acquire(root: Path, remote: str, record: ClaimRecord, expected_old: str = "") -> str:
    """Take the claim on the server, then mirror it in the local claim ref (which the commit
    hooks compare against). A lost race raises ClaimHeld naming the server's holder."""
    oid = claims.claim_object(root, record)
    ref = claims.ref_name(record.feature)
    pushed = _push(root, remote, f"{oid}:{ref}", ref, expected_old)
    holder = server_oid(root, remote, record.feature)
    if not pushed or holder != oid:
        raise claims.ClaimHeld(_holder_claim(root, remote, record.feature, holder))
    gitio.run(["update-ref", ref, oid], root)
    return oid


def _holder_claim(root: Path, remote: str, feature_id: str, holder: str | None) -> claims.Claim:
    if holder is None:  # taken and given back already: still lost
        return claims.Claim(feature_id, "", None, "it changed hands while we claimed it")
    fetched = fetch(root, remote).get(feature_id)
    return fetched or claims.Claim(feature_id, holder, None, "the holder's object is missing")


def release(root: Path, remote: str, feature_id: str, oid: str) -> bool:
    """Delete the server's claim only if it is still ``oid``; False when it was not ours."""
    ref = claims.ref_name(feature_id)
    if not _push(root, remote, f":{ref}", ref, oid):
        return False
    claims.release_ref(root, feature_id, oid)
    return True


def push_branch(root: Path, remote: str, branch: str) -> str | None:
    """Fast-forward the remote's branch to HEAD; None when done, else git's reason."""
    proc = gitio.run(
        ["push", "--quiet", "--porcelain", remote, f"HEAD:refs/heads/{branch}"], root, check=False
    )
    if proc.returncode == 0:
        return None
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    return lines[-1] if lines else f"git push exited {proc.returncode}"


def on_remote(root: Path, remote: str, branch: str, commit: str) -> bool:
    """Whether ``commit`` is in the remote branch as last fetched."""
    tracking = f"refs/remotes/{remote}/{branch}"
    proc = gitio.run(["merge-base", "--is-ancestor", commit, tracking], root, check=False)
    return proc.returncode == 0
