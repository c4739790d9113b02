"""Claims across machines: the remote's claim refs (`[shiftkit.claims] ref_prefix`, by default
`refs/shiftkit/claims/*`) are the lock.

Machines that share nothing but a git remote agree through it alone. A claim is one push with
`--force-with-lease=<ref>:` (the server takes it only if the ref does not exist there), read
from the push's own porcelain output; a steal, a heartbeat or a release is leased on the
object it replaces. Only a refused push fetches the claims (to name the holder), and only a
push whose answer never came asks `ls-remote` what is true. The same claim push also looks at
the remote's branch (`Watch`, ADR 0041), so a claim is one round trip unless that branch moved.
The remote's claims are fetched into `refs/shiftkit/remote-claims/<remote>/`, so looking never
touches the local claim refs that the commit hooks compare against.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from shiftkit.core import gitmsg
from shiftkit.core.claim import TIME_FORMAT, ClaimRecord, LocalClaim
from shiftkit.core.config import ClaimsConfig
from shiftkit.core.errors import Refused, ShiftkitError
from shiftkit.edge import claims, gitio

MIRROR = "refs/shiftkit/remote-claims/"
PREFIX = claims.PREFIX  # the default namespace on the server ([shiftkit.claims] ref_prefix)


class Unreachable(ShiftkitError):
    """The remote cannot be asked before anything was sent: nothing was claimed or released."""

    def __init__(self, remote: str, what: str, stderr: str) -> None:
        super().__init__(
            f"claims remote {remote!r}: could not {what} ({gitmsg.detail(stderr)}); nothing was "
            f"claimed or released — check the remote (`git ls-remote {remote}`) and try again",
            exit_code=1,
        )


class Unknown(ShiftkitError):
    """A push that may have reached the server, and a server that cannot be asked now."""

    def __init__(self, remote: str, what: str, feature_id: str, stderr: str) -> None:
        super().__init__(
            f"claims remote {remote!r}: {what} got no answer ({gitmsg.detail(stderr)}) and the "
            f"remote cannot be asked now, so whether it holds this worktree's claim on "
            f"{feature_id} is unknown; run the same command again once `git ls-remote {remote}` "
            f"answers (this worktree recovers its own claim if it went through)",
            exit_code=1,
        )


class PolicyRefused(Refused):
    """The server's rules (not a race) refused the claim ref: retrying cannot help."""

    def __init__(self, remote: str, ref: str, reason: str, stderr: str) -> None:
        said = gitmsg.remote_says(stderr)
        server = f"remote: {said}" if said else reason or "refused"
        super().__init__(
            f"claims remote {remote!r} refused {ref} by its own rules ({server}); nothing "
            f"changed there — if the host allows only some ref namespaces, set "
            f"[shiftkit.claims] ref_prefix in .shiftkit.toml to one it allows (e.g. "
            f'"refs/heads/shiftkit-claims/")'
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


def tracking_ref(remote: str, branch: str) -> str:
    return f"refs/remotes/{remote}/{branch}"


def _branch_refspec(remote: str, branch: str) -> str:
    return f"+refs/heads/{branch}:{tracking_ref(remote, branch)}"


def fetch(
    root: Path, remote: str, prefix: str = PREFIX, branch: str | None = None
) -> dict[str, claims.Claim]:
    """The remote's claims now (the mirror is pruned to exactly the server's refs); with
    ``branch``, that branch too, in the same connection (when the remote has it)."""
    mirror = mirror_prefix(remote)
    command = ["fetch", "--quiet", "--prune", "--no-tags", remote, f"+{prefix}*:{mirror}*"]
    proc = gitio.run(
        [*command, _branch_refspec(remote, branch)] if branch else command, root, check=False
    )
    if proc.returncode != 0 and branch and "couldn't find remote ref" in proc.stderr:
        proc = gitio.run(command, root, check=False)  # (no such branch there yet)
    if proc.returncode != 0:
        raise Unreachable(remote, "fetch its claims", proc.stderr)
    return {
        name[len(mirror) :]: claims.read_claim(root, name[len(mirror) :], oid)
        for name, oid in gitio.refs(root, mirror).items()
    }


LOOK_FILE = "remote-look.json"
LOOK_SECONDS = 20  # a view's look at the remote's claims stays good this long


def mirrored(root: Path, remote: str) -> dict[str, claims.Claim]:
    """The remote's claims as last fetched (the mirror refs), without asking it."""
    mirror = mirror_prefix(remote)
    return {
        name[len(mirror) :]: claims.read_claim(root, name[len(mirror) :], oid)
        for name, oid in gitio.refs(root, mirror).items()
    }


class Seen(NamedTuple):
    """What a view counts of the remote: its claims, and a line when it could not be asked."""

    claims: dict[str, claims.Claim]
    line: str | None = None


def seen(
    root: Path, common_dir: Path, settings: ClaimsConfig, branch: str | None, fresh: bool = False
) -> Seen:
    """The claims remote's claims for a view (`start`, `next`, `status`, `claims`): one fetch
    of the claim refs and ``branch`` in one connection, reused for `LOOK_SECONDS` (a stamp in
    the git dir) unless ``fresh``; when the remote does not answer, the last fetched copy and
    a line that says so."""
    import json
    import time

    name = settings.remote
    if not name:
        return Seen({})
    stamp = common_dir / "shiftkit" / LOOK_FILE
    try:
        last = json.loads(stamp.read_text(encoding="utf-8"))
        recent = (
            isinstance(last, dict)
            and last.get("remote") == name
            and last.get("branch") == branch
            and 0 <= time.time() - float(last.get("at", 0)) < LOOK_SECONDS
        )
    except (OSError, ValueError, TypeError):
        recent = False
    if recent and not fresh:
        return Seen(mirrored(root, name))
    try:
        found = fetch(root, name, settings.ref_prefix, branch if settings.enabled else None)
    except Unreachable:
        return Seen(
            mirrored(root, name),
            f"remote {name!r} not reachable: local view (its claims and branch as last fetched)",
        )
    from shiftkit.edge.atomic import atomic_write

    stamp.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(stamp, json.dumps({"remote": name, "branch": branch, "at": time.time()}))
    return Seen(found)


def forget_look(common_dir: Path) -> None:
    """The next view asks the remote again (after this clone changed what it holds there)."""
    (common_dir / "shiftkit" / LOOK_FILE).unlink(missing_ok=True)


def _look(root: Path, remote: str, ref: str) -> tuple[bool, str | None]:
    """(could ask, the server's object for ``ref``): one `ls-remote` of that ref."""
    proc = gitio.run(["ls-remote", "--refs", remote, ref], root, check=False)
    if proc.returncode != 0:
        return False, None
    for line in proc.stdout.splitlines():
        oid, _, name = line.partition("\t")
        if name == ref:
            return True, oid
    return True, None


def server_oid(root: Path, remote: str, feature_id: str, prefix: str = PREFIX) -> str | None:
    asked, oid = _look(root, remote, prefix + feature_id)
    if not asked:
        raise Unreachable(remote, "read its claim refs", "ls-remote failed")
    return oid


class Watch:
    """The claims remote's branch, looked at by the claim push itself (ADR 0041). The push
    also sends the branch's id as last fetched, leased on that same id: the lease holds only
    when the server has exactly that id, so the ref is `[up to date]` and nothing is sent
    for it; otherwise it is `[rejected] (stale info)`. Either way the branch stays as it is,
    and ``current`` says whether the last fetch of it is still the truth."""

    def __init__(self, ref: str, expected: str) -> None:
        self.ref, self.expected = ref, expected
        self.current = False

    def args(self) -> tuple[list[str], list[str]]:
        """(the push's lease option, its refspec) for the branch."""
        return [f"--force-with-lease={self.ref}:{self.expected}"], [f"{self.expected}:{self.ref}"]


def watch(root: Path, settings: ClaimsConfig, branch: str | None = None) -> Watch | None:
    """A look at this branch (``branch``: HEAD's, when known) on the claims remote for the
    next claim push; None without a remote, a branch, or a fetched copy of the remote's
    branch to lease on."""
    if not settings.remote or not settings.enabled:
        return None
    branch = branch or gitio.branch(root)
    if branch is None:
        return None
    tracking = tracking_ref(settings.remote, branch)
    oid = gitio.refs(root, tracking).get(tracking)
    return Watch(f"refs/heads/{branch}", oid) if oid else None


def _push(
    root: Path,
    remote: str,
    refspec: str,
    ref: str,
    expected: str,
    look: Watch | None = None,
    also: tuple[str, ...] = (),
) -> tuple[str, str, str]:
    """Push under a lease on ``expected`` ('' = the ref must not exist): (outcome, git's
    reason, stderr), the outcome read from the push's own porcelain output. With ``look``,
    the same push tells whether the remote's branch moved (`Watch`); ``also``: refspecs
    that ride along (pushed plainly, their outcome not read)."""
    options, refspecs = look.args() if look is not None else ([], [])
    refspecs = [*refspecs, *also]
    proc = gitio.run(
        # --no-verify: a claim ref carries no work, so the pre-push audit has nothing to judge
        [
            "push",
            "--porcelain",
            "--no-verify",
            f"--force-with-lease={ref}:{expected}",
            *options,
            remote,
            refspec,
            *refspecs,
        ],
        root,
        check=False,
    )
    if look is not None:
        seen = gitmsg.push_result(proc.stdout, look.ref, proc.returncode)
        look.current = seen.outcome == gitmsg.PUSHED
    result = gitmsg.push_result(proc.stdout, ref, proc.returncode)
    return result.outcome, result.reason, proc.stderr


def acquire(
    root: Path,
    remote: str,
    record: ClaimRecord,
    expected_old: str = "",
    prefix: str = PREFIX,
    look: Watch | None = None,
    also: tuple[str, ...] = (),
) -> str:
    """Take the claim on the server in one lease push, then mirror it in the local claim ref
    (which the commit hooks compare against). A lost race raises ClaimHeld naming the
    server's holder; a refusal by the server's rules raises PolicyRefused (no retry helps).
    With ``look``, the push also tells whether the remote's branch moved (`Watch`); ``also``
    rides along (this clone's usage ref: decision record 0072) — a server whose rules refuse
    the push with it is asked again without it."""
    oid = claims.claim_object(root, record)
    ref = prefix + record.feature
    outcome, reason, stderr = _push(root, remote, f"{oid}:{ref}", ref, expected_old, look, also)
    if outcome == gitmsg.POLICY and also:  # (a hook refusing the push as a whole, for `also`)
        outcome, reason, stderr = _push(root, remote, f"{oid}:{ref}", ref, expected_old, look)
    if outcome == gitmsg.UNKNOWN and gitmsg.never_connected(stderr):
        raise Unreachable(remote, f"push {ref}", stderr)
    if outcome == gitmsg.UNKNOWN:  # it may have reached the server: look, and say what is true
        asked, holder = _look(root, remote, ref)
        if not asked:
            raise Unknown(remote, f"the claim push for {record.feature}", record.feature, stderr)
        if holder != oid:
            if holder is None or holder == expected_old:
                raise Unreachable(remote, f"push {ref}", stderr)  # (it did not arrive)
            raise claims.ClaimHeld(_holder_claim(root, remote, record.feature, holder, prefix))
        outcome = gitmsg.PUSHED
    if outcome != gitmsg.PUSHED:
        held = fetch(root, remote, prefix).get(record.feature)
        if held is not None and held.oid != expected_old:
            raise claims.ClaimHeld(held)
        if outcome == gitmsg.POLICY:
            raise PolicyRefused(remote, ref, reason, stderr)
        raise claims.ClaimHeld(
            held or claims.Claim(record.feature, "", None, "it changed hands while we claimed it")
        )
    gitio.run(["update-ref", claims.ref_name(record.feature), oid], root)
    return oid


def _holder_claim(
    root: Path, remote: str, feature_id: str, holder: str, prefix: str
) -> claims.Claim:
    fetched = fetch(root, remote, prefix).get(feature_id)
    return fetched or claims.Claim(feature_id, holder, None, "the holder's object is missing")


class Released(NamedTuple):
    """What a release found: done (the server no longer holds ``oid``), and, when the claim
    was not ours any more, who holds it now (None: nobody)."""

    ours: bool
    holder: claims.Claim | None = None


def release(root: Path, remote: str, feature_id: str, oid: str, prefix: str = PREFIX) -> Released:
    """Delete the server's claim only if it is still ``oid``. Raises when the server refused
    or could not say (the claim is then still held, as far as anyone can tell)."""
    ref = prefix + feature_id
    outcome, reason, stderr = _push(root, remote, f":{ref}", ref, oid)
    if outcome == gitmsg.UNKNOWN and gitmsg.never_connected(stderr):
        raise Unreachable(remote, f"release {ref}", stderr)
    if outcome == gitmsg.UNKNOWN:
        asked, holder = _look(root, remote, ref)
        if not asked:
            raise Unknown(remote, f"the release of {feature_id}", feature_id, stderr)
        if holder == oid:
            raise Refused(
                f"claims remote {remote!r}: releasing {feature_id} failed "
                f"({gitmsg.detail(stderr)}); {remote} still holds the claim — try again"
            )
        outcome = gitmsg.PUSHED if holder is None else gitmsg.LEASE
    if outcome == gitmsg.POLICY:
        said = gitmsg.remote_says(stderr)
        raise Refused(
            f"claims remote {remote!r} refused to release {feature_id} "
            f"({'remote: ' + said if said else reason}); the claim stays held there and here"
        )
    claims.release_ref(root, feature_id, oid)
    if outcome == gitmsg.PUSHED:
        return Released(True)
    held = fetch(root, remote, prefix).get(feature_id)
    return Released(False, held)


def refresh(
    root: Path, remote: str, held: LocalClaim, beat: str, prefix: str = PREFIX
) -> str | None:
    """Re-point the server's claim at a copy of the record with a new heartbeat, leased on
    the object it replaces; the new object's id, or None when that did not happen."""
    record = held.record._replace(heartbeat=beat)
    oid = claims.claim_object(root, record)
    ref = prefix + held.feature
    outcome, _, _ = _push(root, remote, f"{oid}:{ref}", ref, held.oid)
    if outcome != gitmsg.PUSHED:
        return None
    gitio.run(["update-ref", claims.ref_name(held.feature), oid, held.oid], root, check=False)
    return oid


def fetch_branch(root: Path, remote: str, branch: str, require_answer: bool = False) -> bool:
    """Fetch the remote's ``branch`` into its remote-tracking ref; False when it cannot (no
    such branch there yet, or — unless ``require_answer``, which raises `Unreachable` — no
    answer)."""
    fetched = gitio.run(
        ["fetch", "--quiet", "--no-tags", remote, _branch_refspec(remote, branch)],
        root,
        check=False,
    )
    if fetched.returncode != 0:
        if require_answer and "couldn't find remote ref" not in fetched.stderr:
            raise Unreachable(remote, "reach it", fetched.stderr)
        return False
    return True


def divergence(
    root: Path, remote: str, branch: str, require_answer: bool = False, fetch: bool = True
) -> tuple[int, int] | None:
    """(commits HEAD has that the remote's branch lacks, commits it lacks), after fetching
    that branch (unless not ``fetch``: as last fetched); None when it cannot be fetched (no
    remote branch yet, or — unless ``require_answer``, which raises `Unreachable` — no
    answer) or was never fetched."""
    tracking = tracking_ref(remote, branch)
    if fetch and not fetch_branch(root, remote, branch, require_answer):
        return None
    proc = gitio.run(
        ["rev-list", "--left-right", "--count", f"HEAD...{tracking}"], root, check=False
    )
    ahead, _, behind = proc.stdout.strip().partition("\t")
    if proc.returncode != 0 or not ahead.isdigit() or not behind.isdigit():
        return None
    return int(ahead), int(behind)


def push_branch(root: Path, remote: str, branch: str) -> str | None:
    """Fast-forward the remote's branch to HEAD; None when done, else git's reason."""
    proc = gitio.run(
        ["push", "--quiet", "--porcelain", remote, f"HEAD:refs/heads/{branch}"], root, check=False
    )
    if proc.returncode == 0:
        return None
    rejected = [line for line in proc.stdout.splitlines() if line.startswith("!")]
    if rejected:
        return rejected[0].split("\t")[-1]
    return gitmsg.detail(proc.stderr, f"git push exited {proc.returncode}")


def on_remote(root: Path, remote: str, branch: str, commit: str) -> bool:
    """Whether ``commit`` is in the remote branch as last fetched."""
    tracking = tracking_ref(remote, branch)
    proc = gitio.run(["merge-base", "--is-ancestor", commit, tracking], root, check=False)
    return proc.returncode == 0


def behind_line(
    root: Path,
    settings: ClaimsConfig,
    require_answer: bool = False,
    fetch: bool = True,
    branch: str | None = None,
) -> tuple[str | None, str]:
    """(what to say when this branch (``branch``: HEAD's, when known) is behind the claims
    remote's, the remote-tracking ref): fetches that branch (unless not ``fetch``: the
    caller knows the last fetch is current); nothing to say without a remote, a branch, or
    (unless ``require_answer``: `Unreachable`) an answer."""
    name = settings.remote
    if not name or not settings.enabled:
        return None, ""
    branch = branch or gitio.branch(root)
    if branch is None:
        return None, ""
    counts = divergence(root, name, branch, require_answer, fetch)
    if counts is None or counts[1] == 0:
        return None, ""
    ahead, behind = counts
    how = f"{behind} commit{'s' if behind != 1 else ''} behind {name}/{branch}"
    if ahead:
        how += f" (and {ahead} ahead)"
    return f"{branch} is {how}: `shiftkit sync` catches up", tracking_ref(name, branch)


def keep_alive(root: Path, git_dir: Path, common_dir: Path, claims: ClaimsConfig) -> None:
    """Every command's sign of life: the local heartbeat, and with a claims remote the claim
    ref re-pointed at a fresh heartbeat once `heartbeat_minutes` have passed since the last
    (other machines see only the remote). Never fails a command: a heartbeat that cannot be
    sent now is sent by a later command; a claim lost meanwhile is found at release/finish."""
    from shiftkit.edge import session

    oid = session.beat(git_dir, common_dir)
    if oid is None or not claims.remote or not claims.enabled:
        return
    from shiftkit.edge import state

    held = state.local_claim(git_dir)
    if held is None or held.oid != oid:
        return
    from datetime import datetime, timedelta

    stamp = session.now()
    try:
        since = datetime.strptime(stamp, TIME_FORMAT) - datetime.strptime(
            held.record.last_beat(), TIME_FORMAT
        )
    except ValueError:
        since = timedelta.max
    if since < timedelta(minutes=claims.heartbeat_minutes):
        return
    try:
        fresh = refresh(root, claims.remote, held, stamp, claims.ref_prefix)
    except (ShiftkitError, OSError):
        return
    if fresh is None:
        return
    state.save_local_claim(git_dir, LocalClaim(held.record._replace(heartbeat=stamp), fresh))
    session.forget(common_dir, held.oid)
    session.beat(git_dir, common_dir)
