"""`shiftkit hook pre-commit` and `shiftkit hook commit-msg FILE`.

This is the hot path: every commit runs it. The common commit (feature list and log not
staged) imports no click, jsonschema, pathlib or dataclasses and parses no TOML or JSON: it
asks git once for the staged names and returns. Everything else is imported when needed.
"""

from __future__ import annotations

import os
import sys

from shiftkit.core.errors import OK, REFUSED, BadInput

TYPE_CHECKING = False  # typing itself is not imported on the hot path
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path
    from typing import Any

    from shiftkit.core import features, messages
    from shiftkit.core import rules as rules_mod
    from shiftkit.core.claim import LocalClaim
    from shiftkit.core.config import Config
    from shiftkit.edge.judge import Judging

DEFAULT_NAMES = ("features.json", "claude-progress.txt", "progress-archive.txt")
CONFIG_FILE = ".shiftkit.toml"
SETTINGS_FILES = (CONFIG_FILE, ".shiftkit/allowed_signers")
LEDGER_FILE = ".shiftkit/ledger.jsonl"  # (shiftkit.core.ledger.LEDGER_FILE, not imported here)
DEFAULT_DECISIONS = "docs/decisions"  # (the default of core.config's `decisions`)


def beat(root: str) -> None:
    """A commit is a sign of life: refresh this worktree's claim's heartbeat (a file)."""
    from shiftkit.edge import heartbeat, verdicts

    git_dir = own_git_dir(root)  # (not gitio.git_dirs: no pathlib on a commit's path)
    if git_dir is None:
        return
    try:
        heartbeat.beat(git_dir, verdicts.common_of(git_dir))
    except (OSError, ValueError):
        pass


def worktree_root() -> str:
    # git runs hooks at the top of the work tree; ask git only when run by hand elsewhere.
    if os.path.exists(".git"):
        return os.getcwd()
    from shiftkit.edge import gitio

    return str(gitio.toplevel())


def staged_entries(root: str) -> dict[str, tuple[str, str]]:
    """Each staged path with its blob at HEAD and in the index (zeros when absent)."""
    from shiftkit.edge import gitio

    code, out, err = gitio.plumb(
        ["diff", "--cached", "--raw", "-z", "--no-abbrev", "--no-renames"], root
    )
    if code != 0:
        raise BadInput(f"git diff --cached failed: {err.decode(errors='replace').strip()}")
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    entries = {}
    for meta, name in zip(fields[0::2], fields[1::2], strict=False):  # (a final empty field)
        _, _, head_blob, staged_blob, _ = meta.split(" ", 4)
        entries[name] = (head_blob, staged_blob)
    return entries


def head_config_text(root: str) -> str | None:
    """HEAD's `.shiftkit.toml`: the judge's, never the work tree's (which an unstaged edit
    could loosen)."""
    from shiftkit.edge import gitio

    code, out, _ = gitio.plumb(["cat-file", "blob", f"HEAD:{CONFIG_FILE}"], root)
    return out.decode("utf-8", "surrogateescape") if code == 0 else None


def maybe_relevant(config_text: str | None, staged: Sequence[str]) -> bool:
    """False when none of the feature list, log, archive or settings can be among ``staged``,
    decided without parsing TOML: a configured name must appear literally in the config."""
    if any(n in staged for n in SETTINGS_FILES) or any(n in staged for n in DEFAULT_NAMES):
        return True
    if config_text is None:
        return False
    # (an escape could spell a name that does not appear literally)
    return "\\" in config_text or any(name in config_text for name in staged)


_PROTOCOL_FILES = frozenset((*DEFAULT_NAMES, *SETTINGS_FILES, LEDGER_FILE))


def config_needed(staged: Sequence[str]) -> bool:
    """Whether `maybe_relevant` or `maybe_decision` would read HEAD's config for ``staged``:
    not when a protocol file is staged (relevant whatever the config says) and every staged
    path lies at the top or in the default decision folder."""
    if not any(n in staged for n in (*SETTINGS_FILES, *DEFAULT_NAMES)):
        return True
    return any(
        name.rpartition("/")[0] not in ("", DEFAULT_DECISIONS)
        for name in staged
        if name not in _PROTOCOL_FILES
    )


def settings_if_watched(root: str, staged: Sequence[str], head: str | None) -> Judging | None:
    """The judging settings when a file they name (or a settings file) is staged."""
    from shiftkit.edge import gitio, judge

    git_dir = own_git_dir(root)
    others: list[str] = []
    if git_dir is not None and head is not None and merging(root):
        from pathlib import Path

        others = gitio.merge_parents(Path(git_dir))
    settings = judge.at_revisions(root, head, ":", others)
    if others:
        return settings  # (a merge is judged against every parent, whatever it stages)
    watched = (*judge.names(settings.parent), *judge.names(settings.proposed), *SETTINGS_FILES)
    return settings if any(name in staged for name in watched) else None


def pre_commit(root: str) -> int:
    staged = staged_entries(root)
    if not staged:
        return OK
    names = list(staged)
    config_text = head_config_text(root) if config_needed(names) else None
    problems = unit_file_violations(root, config_text, names, merging(root))
    if problems:
        return _refuse(problems)
    if not maybe_relevant(config_text, names):
        return OK
    from shiftkit.edge import gitio

    head = gitio.head_oid(root)  # (once: the hook runs before the commit moves it)
    settings = settings_if_watched(root, names, head)
    if settings is None:
        return OK
    return _check(root, settings, staged, head, message_file=None)


def unit_file_violations(
    root: str, config_text: str | None, staged: Sequence[str], merging: bool
) -> list[messages.Violation]:
    """Rules 12 and 13, read only when the ledger, or a file that may be a decision record,
    is staged — and always for a merge, whose result can lose the other parent's lines or
    bring its records while matching HEAD: the ledger keeps its past lines, no decision
    number is taken twice."""
    problems = ledger_violations(root) if merging or LEDGER_FILE in staged else []
    if merging or maybe_decision(config_text, staged):
        problems += decision_violations(root, staged, merging)
    return problems


def merging(root: str) -> bool:
    """Whether a merge is being committed: MERGE_HEAD in this worktree's git dir."""
    git_dir = own_git_dir(root)
    return git_dir is not None and os.path.exists(os.path.join(git_dir, "MERGE_HEAD"))


def own_git_dir(root: str) -> str | None:
    """This worktree's git dir (a linked worktree's `.git` is a file naming it), told with a
    stat or two and no import: this is the path of every commit."""
    from_env = os.environ.get("GIT_DIR")
    if from_env:
        return os.path.join(root, from_env)
    dot = os.path.join(root, ".git")
    if os.path.isdir(dot):
        return dot
    try:
        with open(dot, encoding="utf-8") as handle:
            return os.path.join(root, handle.read().split("gitdir:", 1)[1].strip())
    except (OSError, IndexError):
        return None


def maybe_decision(config_text: str | None, staged: Sequence[str]) -> bool:
    """False when no path of ``staged`` can lie in the decision records' folder, decided
    without parsing TOML: a configured folder must appear literally in the config."""
    # (a staged path's folder, or the path itself: the folder replaced by a symlink; not the
    # protocol's own files, whose folders no config names for records)
    others = [name for name in staged if name not in _PROTOCOL_FILES]
    folders = {name.rpartition("/")[0] for name in others} | set(others)
    if DEFAULT_DECISIONS in folders:
        return True
    if config_text is None:
        return False
    return "\\" in config_text or any(f and f in config_text for f in folders)


def decision_violations(
    root: str, staged: Sequence[str], merging: bool = False
) -> list[messages.Violation]:
    """Rule 13 on the staged tree: the records in the folder HEAD's settings name, against
    HEAD's (and a merge's other parents')."""
    import posixpath

    from shiftkit.edge import gitio, judge, revisions

    head = gitio.head_oid(root)
    folder = posixpath.normpath(judge.at_revisions(root, head, ":").parent.decisions)
    if not merging and not any(folder in (name, name.rpartition("/")[0]) for name in staged):
        return []
    git_dir, _ = gitio.git_dirs(root)  # type: ignore[arg-type]
    parents = [*([head] if head else []), *gitio.merge_parents(git_dir)]
    # The tree the commit will have (`git ls-files` would also list intent-to-add files).
    staged_tree = gitio.write_tree(root)  # type: ignore[arg-type]
    return revisions.decision_numbers(root, staged_tree, parents, folder)


def ledger_violations(root: str) -> list[messages.Violation]:
    """Rule 12, read only when the ledger is staged: the staged ledger keeps every line of
    HEAD's (and of a merge's other parents') and adds only entries."""
    from shiftkit.core import rules
    from shiftkit.edge import gitio

    git_dir, _ = gitio.git_dirs(root)  # type: ignore[arg-type]
    revs = ["HEAD", *gitio.merge_parents(git_dir)]
    texts = gitio.read_blobs(root, [f"{rev}:{LEDGER_FILE}" for rev in revs] + [f":{LEDGER_FILE}"])
    return rules.rule12_ledger(texts[:-1], texts[-1])


def commit_msg(root: str, message_file: str) -> int:
    try:
        with open(message_file, encoding="utf-8") as handle:
            raw = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise BadInput(f"{message_file}: cannot read the commit message: {reason}") from None
    from shiftkit.core import subjects

    # Rule 9 as `messages.check_message` asks it, without importing `messages` (its `re` and
    # `enum` are a third of this hook's start-up) unless there is a violation to make.
    if subjects.subject_problem(raw) is not None:
        from shiftkit.core import messages

        return _refuse(messages.check_message(raw))
    staged = staged_entries(root)
    names = list(staged)
    config_text = head_config_text(root) if config_needed(names) else None
    if merging(root):  # (a merge runs no pre-commit hook)
        problems = unit_file_violations(root, config_text, names, merging=True)
        if problems:
            return _refuse(problems)
    if not merging(root) and not maybe_relevant(config_text, names):
        # the common commit: no JSON, no TOML (rule 14 reads a cached ground, if anything)
        return protected_only(root, staged, config_text, raw, config_needed(names))
    from shiftkit.edge import gitio

    head = gitio.head_oid(root)  # (once: the hook runs before the commit moves it)
    verdict = _pre_commit_verdict(root, staged, head)
    if verdict is not None:  # the pre-commit stage judged exactly this change
        return _conclude_from_record(root, verdict, message_file, raw, head)
    settings = settings_if_watched(root, names, head)
    if settings is None:
        return protected_only(root, staged, config_text, raw, config_needed(names))
    return _check(root, settings, staged, head, message_file=message_file, message=raw)


def protected_only(
    root: str,
    staged: dict[str, tuple[str, str]],
    config_text: str | None,
    message: str,
    config_read: bool,
) -> int:
    """Rule 14 on a commit that stages no feature list, log or settings (so `_check` does not
    run): the staged rows against HEAD's ground, read from its cache; the override trailer
    of the message covers it, as it covers rule 14 in `rules.evaluate`."""
    from shiftkit.core import protected
    from shiftkit.edge import protection

    rows, pairs = protection.staged_rows(staged)
    if not protected.may_touch(rows, _PROTOCOL_FILES):
        return OK
    from shiftkit.core import messages
    from shiftkit.edge import gitio

    if not config_read:
        config_text = head_config_text(root)
    _, common = gitio.git_dirs(root)  # type: ignore[arg-type]
    ground = protection.cached_ground(root, common, "HEAD", config_text)
    if ground is None:
        return OK  # (HEAD holds no list: this commit establishes one)
    texts = protection.texts(root, rows, pairs, ground.decisions)
    found = protected.violations(ground, rows, texts)
    if not found:
        return OK
    kept, overridden, reason = messages.apply_override(found, message)
    for item in overridden:
        print(f"shiftkit: {item} — overridden: {reason}", file=sys.stderr)
    return _refuse(kept) if kept else OK


def _change_key(
    git_dir: Path, staged: dict[str, tuple[str, str]], head: str | None
) -> list[object]:
    """What makes a staged change the same change: HEAD, every staged path and blob, a merge's
    other parents, and this worktree's claim — not the settings, which HEAD fixes."""
    from shiftkit.edge import gitio, state

    return [
        head,
        sorted([name, *blobs] for name, blobs in staged.items()),
        gitio.merge_parents(git_dir),
        state.local_claim_key(git_dir),
    ]


def _pre_commit_verdict(
    root: str, staged: dict[str, tuple[str, str]], head: str | None
) -> dict[str, Any] | None:
    from shiftkit.edge import gitio, state

    git_dir, _ = gitio.git_dirs(root)  # type: ignore[arg-type]
    record = state.read_json(state.worktree_state(git_dir) / RECORD)
    if isinstance(record, dict) and record.get("key") == _change_key(git_dir, staged, head):
        return record
    return None


def _conclude_from_record(
    root: str, record: dict[str, Any], message_file: str, message: str, head: str | None
) -> int:
    from pathlib import Path

    from shiftkit.core import messages

    deferred = [messages.Violation(*v) for v in record["deferred"]]
    found = deferred + messages.rule5_message(record["flips"], message)
    kept, overridden, reason = messages.apply_override(found, message)
    return _conclude(
        Path(root),
        kept,
        overridden,
        reason,
        record.get("earned", record["flips"]),
        record["verified"],
        message_file,
        message,
        record.get("claim"),
        record.get("approve") is True,
        head,
    )


RECORD = "hook-check.json"


def _check(
    root: str,
    settings: Judging,
    staged: dict[str, tuple[str, str]],
    head: str | None,
    message_file: str | None,
    message: str | None = None,
) -> int:
    """The rules over the staged change. The pre-commit stage checks all but the message's
    and records what it found; the commit-msg stage reuses that record for the same staged
    change, so the lists are read once per commit."""
    from pathlib import Path

    from shiftkit.core import messages
    from shiftkit.edge import gitio, state

    top = Path(root)
    git_dir, common = gitio.git_dirs(top)
    held = state.local_claim(git_dir)
    merging = gitio.merge_parents(git_dir)
    key = _change_key(git_dir, staged, head)
    record_path = state.worktree_state(git_dir) / RECORD
    # Under the signed policy a person action's signature exists only once the commit does:
    # the reference-transaction hook must judge those commits itself.
    approve = settings.judge.policy != "signed"
    report, verified = _evaluate(
        top, settings, git_dir, common, merging, held, message, head, staged
    )
    # (the commit's own flip: re-marks, passes a repair restores, carry no trailer of theirs)
    earned = [f for f in report.flips if f not in report.remarks]
    claim_oid = held.oid if held and earned == [held.feature] else None
    if message is None:
        blocking = [v for v in report.violations if v.rule not in messages.OVERRIDABLE]
        if blocking:
            return _refuse(blocking)
        rows = [list(v) for v in report.violations if v.rule in messages.OVERRIDABLE]
        state.write_json(
            record_path,
            {
                "key": key,
                "deferred": rows,
                "flips": report.flips,
                "earned": earned,
                "verified": verified,
                "claim": claim_oid,
                "approve": approve,
            },
        )
        return OK
    return _conclude(
        top,
        report.violations,
        report.overridden,
        report.override_reason,
        earned,
        verified,
        message_file,
        message,
        claim_oid,
        approve,
        head,
    )


def _conclude(
    top: Path,
    kept: Sequence[messages.Violation],
    overridden: Sequence[messages.Violation],
    reason: str | None,
    flips: Sequence[str],
    verified: str | None,
    message_file: str | None,
    message: str,
    claim_oid: str | None,
    approve: bool,
    head: str | None,
) -> int:
    for item in overridden:
        print(f"shiftkit: {item} — overridden: {reason}", file=sys.stderr)
    if kept:
        return _refuse(kept)
    if message_file is not None and len(flips) == 1:
        _add_trailers(top, message_file, message, flips[0], verified, claim_oid)
    if message_file is not None and approve:
        _record_approval(top, message_file, verified, head)
    return OK


def _record_approval(
    top: Path, message_file: str, staged_tree: str | None, head: str | None
) -> None:
    """The change this commit makes passed every rule: say so for the reference-transaction
    hook, keyed by parents, tree and final message (local evidence, like the verify cache)."""
    from shiftkit.core import subjects
    from shiftkit.edge import gitio, state

    git_dir, _ = gitio.git_dirs(top)
    parents = [*([head] if head else []), *gitio.merge_parents(git_dir)]
    with open(message_file, encoding="utf-8", errors="surrogateescape") as handle:
        final = handle.read()
    tree = staged_tree or gitio.write_tree(top)  # (a flip's verified tree is the staged tree)
    state.mark_approved(git_dir, subjects.approval_key(parents, tree, final))


def _evaluate(
    top: Path,
    settings: Judging,
    git_dir: Path,
    common: Path,
    merging: list[str],
    held: LocalClaim | None,
    message: str | None,
    head: str | None,
    staged: dict[str, tuple[str, str]],
) -> tuple[rules_mod.Report, str | None]:
    """Every rule of this stage (all but the message's at pre-commit); returns the report and
    the staged tree when the flip's verifier passed on it."""
    from shiftkit.core import rules
    from shiftkit.edge import claims, gitio, judge, snapshot

    cfg = settings.parent  # the judge: HEAD's settings, whatever the commit or work tree say
    revs = ["HEAD", *merging] if head is not None else []
    parents, blobs, proposed, staged_blob = snapshot.read_staged_change(
        top, revs, judge.names(cfg), common, judge.names(settings.proposed)
    )
    if not revs:
        parents = [rules.Side(None, None, None)]
    staged_valid = snapshot.known_valid(common, staged_blob)
    tree_cache: list[str] = []

    def staged_tree() -> str:
        if not tree_cache:
            tree_cache.append(gitio.write_tree(top))
        return tree_cache[0]

    evidence = StagedEvidence(top, common, cfg, staged_tree)
    claim_problem = claims.current_problem(top, held) if held and cfg.claims.enabled else None
    report = rules.evaluate(
        parents,
        proposed,
        rules_to_check=rules.ALL,
        names=judge.names(cfg),
        message=message,
        claimed=held.feature if held else None,
        claims_enabled=cfg.claims.enabled,
        claim_problem=claim_problem,
        verification=evidence.verification,
        **snapshot.trust(parents, blobs, common),
        known_valid=staged_valid,
        checked=snapshot.checked_list(common, staged_blob) if staged_valid else None,
        judge=settings.judge._replace(changed=_staged_change(top, cfg, revs, staged)),
        merge_base=snapshot.merge_base(top, revs, judge.names(cfg)[0], common)
        if len(revs) > 1
        else None,
    )
    snapshot.record(common, staged_blob, report)
    return report, evidence.verified


def _staged_change(
    top: Path, cfg: Config, revs: Sequence[str], staged: dict[str, tuple[str, str]]
) -> rules_mod.Changed:
    """Rule 14's rows: the staged paths against HEAD; for a merge, those that differ from
    every parent (the rest was judged on its own side)."""
    from shiftkit.edge import gitio, protection

    rows, pairs = protection.staged_rows(staged)
    for other in revs[1:]:
        args = ["diff", "--cached", "--raw", "-z", "--no-renames", "--no-abbrev", other]
        code, out, _ = gitio.plumb(args, top)
        kept = {path for _, path in protection.raw_rows(out)[0]} if code == 0 else set()
        rows = [row for row in rows if row[1] in kept]
    return protection.changed(top, cfg, rows, {path: pairs[path] for _, path in rows})


class StagedEvidence:
    """Rule 4's evidence for the staged tree: the cache, or the verifier run now — on the
    work tree only when it is exactly the staged tree, else in a temporary checkout."""

    def __init__(
        self, top: Path, common: Path, cfg: Config, staged_tree: Callable[[], str]
    ) -> None:
        self.top, self.common, self.cfg, self.staged_tree = top, common, cfg, staged_tree
        self.verified: str | None = None

    def verification(self, feature: features.Feature | None) -> str | None:
        from shiftkit.core import features
        from shiftkit.edge import verify

        command = features.effective_verify(feature, self.cfg.verify) if feature else None
        if feature is None or command is None:
            return "it has no verify command (and no project-wide 'verify' is set)"
        key = verify.cache_command(command, self.cfg.verify_in)
        tree = self.staged_tree()
        if verify.is_cached(self.common, tree, key):
            self.verified = tree
            return None
        if self.cfg.verify_in == "worktree":
            problem = _work_tree_differs(self.top)
            if problem is not None:
                return problem
        print(f"shiftkit: running the verifier of {feature.id}: {command}", file=sys.stderr)
        if self.cfg.verify_in == "checkout":
            outcome = verify.run_in_checkout(
                self.top,
                tree,
                command,
                self.cfg.init,
                self.cfg.verify_timeout,
                junit=self.cfg.junit,
            )
        else:
            from shiftkit.edge import readsets

            timeout, junit = self.cfg.verify_timeout, self.cfg.junit
            outcome = readsets.run_measured(
                self.common,
                feature.id,
                command,
                self.top,
                tree,
                lambda prefix: verify.run_verifier(
                    command, self.top, timeout, junit=junit, prefix=prefix
                ),
            )
            changed = _work_tree_differs(self.top)
            if outcome.ok and changed is not None:
                return f"its verifier changed the work tree: {changed}"
        if not outcome.ok:
            print(outcome.tail(10), file=sys.stderr)
            return f"its verifier fails on the staged tree ({outcome.summary()})"
        verify.record_pass(self.common, tree, key)
        self.verified = tree
        return None


def _work_tree_differs(top: Path) -> str | None:
    """Why the work tree is not exactly the staged tree, so a verifier run there would not
    judge what is committed (or None)."""
    from shiftkit.edge import verify

    hidden = verify.hidden_paths(top)
    if hidden:
        return (
            f"{hidden[0]} is marked skip-worktree/assume-unchanged, so the work tree is not "
            f"the staged tree; clear it with `git update-index --no-skip-worktree "
            f"--no-assume-unchanged {hidden[0]}`"
        )
    extra = verify.unstaged_paths(top)
    if extra:
        return (
            f"the work tree holds unstaged changes or untracked files ({extra[0]}"
            f"{' and more' if len(extra) > 1 else ''}), so its verifier cannot run on exactly "
            f'the staged tree; stage, stash or ignore them (or set verify_in = "checkout")'
        )
    return None


def _add_trailers(
    top: Path,
    message_file: str,
    message: str,
    feature_id: str,
    verified_tree: str | None,
    claim_oid: str | None,
) -> None:
    """Shiftkit-Feature, Shiftkit-Verified when this tree passed and Shiftkit-Claim under a
    claim, if the message lacks them."""
    from shiftkit.core import messages
    from shiftkit.edge import gitio

    present = messages.trailers(message)
    wanted = []
    if "Shiftkit-Feature" not in present:
        wanted.append(f"Shiftkit-Feature: {feature_id}")
    if "Shiftkit-Verified" not in present and verified_tree is not None:
        wanted.append(f"Shiftkit-Verified: {verified_tree}")
    if "Shiftkit-Claim" not in present and claim_oid:
        wanted.append(f"Shiftkit-Claim: {claim_oid}")
    if wanted:
        args = ["interpret-trailers", "--in-place"]
        for trailer in wanted:
            args += ["--trailer", trailer]
        code, _, err = gitio.plumb([*args, message_file], top)
        if code != 0:
            raise gitio.GitFailed(args, code, err.decode(errors="replace"))


SHOWN = 10


def _refuse(violations: Sequence[messages.Violation]) -> int:
    for violation in violations[:SHOWN]:
        print(f"shiftkit: commit refused by {violation}", file=sys.stderr)
    if len(violations) > SHOWN:
        print(f"shiftkit: ... and {len(violations) - SHOWN} more violations", file=sys.stderr)
    _say_refused_update()
    return REFUSED


def _say_refused_update() -> None:
    """When the index holds the files of a fetched commit that a refused `git pull` or merge
    staged, that is why the commit breaks the log's and the ledger's rules: say so, and the
    way out (found by an agent trial: the rule 8 and 12 lines alone named the wrong cause)."""
    from pathlib import Path

    from shiftkit.edge import refused_update

    try:
        commit = refused_update.staged(Path.cwd())
    except Exception:  # (a hint on the way to a refusal: never a second failure)
        return
    if commit is not None:
        print(
            f"shiftkit: the index holds the files of the fetched commit {commit[:7]}, staged "
            f"by a `git pull` or merge the reference-transaction hook refused — committing "
            f"them would make the remote's work yours: run `shiftkit sync`, which puts them "
            f"back (your own changes are kept) and brings that commit in, judged",
            file=sys.stderr,
        )
