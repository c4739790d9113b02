"""The last local guard: git's `reference-transaction` hook, which `--no-verify` does not skip,
and the `pre-push` hook.

On `prepared`, every commit that an update of a branch under refs/heads/ would make reachable
for the first time is judged against its real parent by the same rule functions as `audit`
(`commits.judge_commit`), with verifier evidence from the local cache only. It catches
`--no-verify`, `commit-tree` + `update-ref`, `cherry-pick`, `--amend` and `rebase` results
that break a rule. The shim filters in shell first, so updates of other refs never start
Python (see docs/decisions/0010).
"""

from __future__ import annotations

import os
import sys

from shiftkit.core.errors import OK, REFUSED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from shiftkit.edge import revisions

SHOWN = 10


def branch_updates(stdin: bytes) -> list[tuple[str, str, str]]:
    """(old, new, ref) of each update that moves a branch to a commit (not a deletion)."""
    updates = []
    for line in stdin.decode("utf-8", "surrogateescape").splitlines():
        parts = line.split(" ", 2)
        if len(parts) != 3:
            continue
        old, new, ref = parts
        if ref.startswith("refs/heads/") and new.strip("0"):
            updates.append((old, new, ref))
    return updates


def main(state: str, stdin: bytes) -> int:
    if state != "prepared":
        return OK
    updates = branch_updates(stdin)
    if not updates:
        return OK
    root = _work_tree()
    if root is None:
        print(
            "shiftkit: reference-transaction cannot find this repository's git dir, so the "
            "branch update cannot be judged; run git from the work tree",
            file=sys.stderr,
        )
        return REFUSED
    from shiftkit.edge import verdicts
    from shiftkit.edge.revisions import read_commits

    tips = [new for _, new, _ in updates]
    common = _common_dir(root)
    if common and len(verdicts.judged(common, tips)) == len(set(tips)):
        return OK  # a verdict covers the commit and everything it reaches (decision 0043)
    # New to this machine's judges: reachable from the new tips, from no local branch (each
    # moved through this hook; a symbolic ref is no branch), and without a verdict here.
    # Remote-tracking refs and tags are not evidence: any fetch points them anywhere. (HEAD
    # is left out: a rebase moves it before the branch.)
    walked = read_commits(root, [*tips, "--not", *verdicts.branch_evidence(root)])
    known = verdicts.judged(common, [commit.oid for commit in walked]) if common else set()
    fresh = [commit for commit in walked if commit.oid not in known]
    found = {commit.oid: judge_new_commit(root, commit) for commit in fresh}
    if any(found.values()):
        found = _unaccepted(root, fresh, found)
    problems = [
        f"{commit.oid[:7]} {commit.subject[:50]!r}: {violation}"
        for commit in fresh
        for violation in found[commit.oid]
    ]
    if not problems and common:
        # Only when every new commit passed: a verdict then vouches for all it reaches.
        verdicts.record(common, [commit.oid for commit in fresh])
    if not problems:
        return OK
    refused = [commit.oid for commit in fresh if found[commit.oid]]
    if not _fetched(root, tips) and all(_fetched(root, [oid]) for oid in refused):
        # A merge of another clone's commits (`git fetch` + `git merge`): what is refused is
        # only theirs, which no judge here has run yet; that is `sync`'s to do, and the rule
        # lines about a teammate's commits would only mislead (issue 36 item 4).
        print(
            f"shiftkit: the merge was not made: it brings {len(refused)} commit"
            f"{'s' if len(refused) != 1 else ''} from another clone that no judge here has "
            "passed yet; `shiftkit sync` puts back the files git staged, judges those commits "
            "here (re-running each flip's verifier), merges and pushes",
            file=sys.stderr,
        )
        return REFUSED
    for line in problems[:SHOWN]:
        print(f"shiftkit: reference-transaction refused {line}", file=sys.stderr)
    if len(problems) > SHOWN:
        print(f"shiftkit: ... and {len(problems) - SHOWN} more violations", file=sys.stderr)
    if _fetched(root, tips):
        print(
            "shiftkit: the branch was not moved: these commits came from another clone and "
            "no judge here has passed them; git may already have staged their files — "
            "`shiftkit sync` puts those back, judges the commits here (re-running each "
            "flip's verifier) and then moves the branch",
            file=sys.stderr,
        )
        return REFUSED
    print(
        "shiftkit: the branch was not moved; make the change through the hooks "
        "(`shiftkit finish`, a plain `git commit`), or as a person with `shiftkit override`",
        file=sys.stderr,
    )
    return REFUSED


def _unaccepted(
    root: str, fresh: list[revisions.Commit], found: dict[str, list[object]]
) -> dict[str, list[object]]:
    """``found`` (each new commit's violations) without those of the commits a person
    accepted in one of the new commits (`acceptance.honoured`, decision record 0082)."""
    from shiftkit.core import acceptance
    from shiftkit.edge import gitio

    accepted = acceptance.honoured(
        [(commit.oid, commit.message) for commit in fresh],
        lambda oid: bool(found.get(oid)),
        lambda older, newer: gitio.is_ancestor(root, older, newer),
    )
    return {oid: [] if oid in accepted else problems for oid, problems in found.items()}


def _fetched(root: str, tips: list[str]) -> bool:
    """Whether a refused tip is held by a remote-tracking ref, a tag or FETCH_HEAD (a pull
    from a URL updates no tracking ref): fetched, not made here (asked only on the way to a
    refusal)."""
    from shiftkit.edge import gitio

    # (several --contains: a ref that contains any of them)
    contains = [f"--contains={tip}" for tip in tips]
    code, out, _ = gitio.plumb(
        ["for-each-ref", "--count=1", *contains, "refs/remotes/", "refs/tags/"], root
    )
    if code == 0 and out.strip():
        return True
    code, out, _ = gitio.plumb(["rev-parse", "-q", "--verify", "FETCH_HEAD^{commit}"], root)
    fetch_head = out.decode().strip() if code == 0 else ""
    return bool(fetch_head) and any(
        gitio.plumb(["merge-base", "--is-ancestor", tip, fetch_head], root)[0] == 0 for tip in tips
    )


def _common_dir(root: str) -> str | None:
    from shiftkit import hooks
    from shiftkit.edge import verdicts

    git_dir = hooks.own_git_dir(root)
    return None if git_dir is None else verdicts.common_of(git_dir)


def _work_tree() -> str | None:
    """The work tree's top (git runs hooks there), without pathlib or subprocess: this is
    the path of every commit. Git run inside the git dir (`cd .git`, `git -C .git`, or a
    repository made bare by `core.bare`) has no work tree: then the absolute git dir, from
    which the judges read history just as well — no branch moves unjudged because of where
    git was run (issue 19's red team). None: not even a git dir (refused)."""
    if os.path.exists(".git"):
        return os.getcwd()
    from shiftkit.edge import gitio

    code, out, _ = gitio.plumb(["rev-parse", "--show-toplevel"], os.getcwd())
    top = out.decode("utf-8", "surrogateescape").strip()
    if code == 0 and top:
        return top
    code, out, _ = gitio.plumb(["rev-parse", "--absolute-git-dir"], os.getcwd())
    git_dir = out.decode("utf-8", "surrogateescape").strip()
    if code != 0 or not git_dir:
        return None
    os.environ["GIT_DIR"] = git_dir  # (git gave the hook a relative one: ".")
    os.environ.pop("GIT_WORK_TREE", None)
    return git_dir


def judge_new_commit(root_text: str, commit: revisions.Commit) -> list[object]:
    """The violations of one new commit; the common commit (nothing the rules protect
    changed) costs one `git diff-tree`, one read of its parent's config and rule 9."""
    # An acceptance lets other commits stand: it is judged in full, every time.
    accepts = "Shiftkit-Accept" in commit.message  # (core.messages.ACCEPT_KEY)
    if not accepts and _approved(root_text, commit):
        return []  # the commit hooks judged exactly this change (rule 9 included)
    if len(commit.parents) == 1 and not accepts and not _touches_protected(root_text, commit):
        from shiftkit.core import subjects

        problem = subjects.subject_problem(commit.message)
        return [] if problem is None else [f"rule 9: {problem}"]
    from pathlib import Path

    from shiftkit.edge import commits, gitio, verify

    root = Path(root_text)
    _, common = gitio.git_dirs(root)

    def evidence(feature: object, command: str, verify_in: str) -> str | None:
        if verify.is_cached(common, commit.tree, verify.cache_command(command, verify_in)):
            return None
        return (
            "its verifier has not passed on this tree here (a commit made past the hooks, "
            "or a rebase or cherry-pick that made a new tree: run `shiftkit verify`, or merge "
            "instead; a commit fetched from another clone: `shiftkit sync`, or `shiftkit "
            "audit --reverify REV`, re-verifies it here)"
        )

    def claim_check(feature_id: str, claim_oid: str) -> str | None:
        current = current_claim(root, feature_id)
        if current == claim_oid:
            return None
        return (
            f"the claim it names ({claim_oid[:7]}) is not the current claim on {feature_id} "
            f"({'none' if not current else current[:7]}; a commit fetched from another "
            "clone: `shiftkit sync`, or `shiftkit audit --reverify REV`, judges it here)"
        )

    report = commits.judge_commit(root, common, commit, evidence, claim_check)
    return list(report.violations)


def _approved(root_text: str, commit: revisions.Commit) -> bool:
    """Whether the commit hooks of this worktree accepted exactly this change (parents, tree,
    message): local evidence, as forgeable as the verify cache and checked the same way by
    CI's audit. Costs a hash and a stat: no pathlib, no subprocess."""
    from shiftkit import hooks
    from shiftkit.core import subjects

    git_dir = hooks.own_git_dir(root_text)
    if git_dir is None:
        return False
    folder = os.path.join(git_dir, "shiftkit", "approved")
    if not os.path.isdir(folder):
        return False  # (no approval yet in this worktree: nothing to hash the commit for)
    key = subjects.approval_key(commit.parents, commit.tree, commit.message)
    return os.path.isfile(os.path.join(folder, key))


def current_claim(root: Path, feature_id: str) -> str:
    from shiftkit.edge import claims, gitio

    ref = claims.ref_name(feature_id)
    return gitio.run(["rev-parse", "-q", "--verify", ref], root, check=False).stdout.strip()


def _touches_protected(root: str, commit: revisions.Commit) -> bool:
    from shiftkit import hooks
    from shiftkit.core import protected
    from shiftkit.edge import gitio, protection

    code, out, _ = gitio.plumb(
        [
            "diff-tree",
            "-r",
            "--no-renames",
            "--raw",
            "-z",
            "--no-abbrev",
            commit.parents[0],
            commit.oid,
        ],
        root,
    )
    if code != 0:
        return True
    rows, _ = protection.raw_rows(out)
    changed = [name for _, name in rows]
    if not changed:
        return False
    code, text, _ = gitio.plumb(
        ["cat-file", "blob", f"{commit.parents[0]}:{hooks.CONFIG_FILE}"], root
    )
    config_text = text.decode("utf-8", "surrogateescape") if code == 0 else None
    if (
        hooks.maybe_relevant(config_text, changed)
        or hooks.LEDGER_FILE in changed
        or hooks.maybe_decision(config_text, changed)
    ):
        return True
    if not protected.may_touch(rows, hooks._PROTOCOL_FILES):
        return False
    # Rule 14's ground, as the commit-msg hook reads it (texts are not read: a row that may
    # touch it is judged in full by `judge_commit`).
    common = _common_dir(root) or root
    ground = protection.cached_ground(root, common, commit.parents[0], config_text)
    return ground is not None and bool(protected.changes(ground, rows))


# -- pre-push: `audit --reverify` on what is being pushed ------------------------------------


def pre_push(root: str, remote: str, stdin: bytes) -> int:
    from pathlib import Path

    from shiftkit.commands import audit, outgoing
    from shiftkit.edge.context import open_context

    ctx = open_context(Path(root))
    lines = stdin.decode("utf-8", "surrogateescape").splitlines()
    reserved = reserved_ref(ctx.config.claims.ref_prefix, [line.split() for line in lines])
    if reserved:
        print(f"shiftkit: push refused: {reserved}", file=sys.stderr)
        return REFUSED
    tips, held, updates, moves = [], [], [], []
    for line in lines:
        parts = line.split()
        # Only branches carry work; claim refs and tags are not audited.
        if len(parts) == 4 and parts[2].startswith("refs/heads/"):
            updates.append((parts[1], parts[2], parts[3]))
            if parts[1].strip("0"):
                moves.append(outgoing.Update(parts[0], parts[1], parts[2]))
            if parts[1].strip("0"):
                tips.append(parts[1])
            if parts[1].strip("0") and parts[3].strip("0"):
                held.append(parts[3])
    dropping = drops_commits(ctx.root, updates)
    if dropping:
        print(f"shiftkit: push refused: {dropping}", file=sys.stderr)
        return REFUSED
    if not tips:
        return OK
    # What the remote lacks, by what the remote itself holds: the values it advertised for
    # the refs pushed (stdin) and its branches now — never the local refs/remotes/*, which
    # any fetch can point anywhere (decision record 0028).
    held += advertised_heads(ctx.root, remote)
    known = _existing(ctx.root, held)
    selected = audit.protocol_commits(ctx.root, [*tips, "--not", *known], ctx.config.features, tips)
    if selected:

        def say(text: str) -> None:
            print(f"shiftkit: {text}", file=sys.stderr)

        findings = audit.audit_commits(ctx, selected, reverify=True, say=say)
        bad = [f for f in findings if f.violations]
        if bad:
            print(audit.render(bad, len(selected)), file=sys.stderr)
            print(
                "shiftkit: push refused: `shiftkit audit --reverify` fails on the commits pushed",
                file=sys.stderr,
            )
            return REFUSED
    # The publish gate (decision records 0056, 0075): what the pushed commits can break.
    refusal = outgoing.gate_push(ctx, moves, known)
    if refusal is None:
        return OK
    print(f"shiftkit: {refusal}", file=sys.stderr)
    return REFUSED


def reserved_ref(claims_prefix: str, rows: list[list[str]]) -> str | None:
    """Why a push may not write or delete a ref in shiftkit's own namespaces on the remote
    (the claims' ``ref_prefix``, the usage refs beside it), or None. shiftkit's own pushes
    of them skip this hook (`--no-verify`); by hand — a branch named like a claim under a
    ``refs/heads/`` prefix, `git push --all` — they would plant or drop a claim unseen."""
    from shiftkit.edge import usage_ref

    spaces = ((claims_prefix, "claims"), (usage_ref.prefix(claims_prefix), "usage refs"))
    for parts in rows:
        if len(parts) != 4:
            continue
        for space, what in spaces:
            if parts[2].startswith(space):
                verb = "writes" if parts[1].strip("0") else "deletes"
                return (
                    f"it {verb} {parts[2]}, in shiftkit's {what} namespace ({space}): "
                    f"claims are taken with `shiftkit claim` and let go with `shiftkit "
                    f"release`; push the branches you mean by name"
                )
    return None


def drops_commits(root: Path, updates: list[tuple[str, str, str]]) -> str | None:
    """Why a push would drop commits the remote's branches hold (a deletion, a force push
    that is not a fast-forward), or None. Other clones may hold those commits: a person's
    to do (`git push --no-verify`), never an agent's."""
    from shiftkit.edge import gitio

    for local, ref, remote_oid in updates:
        branch = ref.removeprefix("refs/heads/")
        if not remote_oid.strip("0"):
            continue  # a new branch on the remote
        if not local.strip("0"):
            return f"it deletes {branch} on the remote (a person's to do)"
        proc = gitio.run(["merge-base", "--is-ancestor", remote_oid, local], root, check=False)
        if proc.returncode != 0:
            return (
                f"the remote's {branch} has commits this push would drop (not a fast-forward); "
                f"`shiftkit sync` merges them in first (a force push is a person's to do)"
            )
    return None


def advertised_heads(root: Path, remote: str) -> list[str]:
    """The commits the remote's branches point at, asked of the remote (none when it cannot
    be reached: then only what the push itself names is taken as held)."""
    from shiftkit.edge import gitio

    code, out, _ = gitio.plumb(["ls-remote", "--heads", "--", remote], root)
    if code != 0:
        return []
    return [line.split()[0] for line in out.decode("utf-8", "replace").splitlines() if line]


def _existing(root: Path, oids: list[str]) -> list[str]:
    """Those of ``oids`` that are commits in this repository."""
    from shiftkit.edge import gitio

    unique = list(dict.fromkeys(oids))
    found = gitio.object_ids(root, [f"{oid}^{{commit}}" for oid in unique])
    return [oid for oid, there in zip(unique, found, strict=True) if there is not None]
